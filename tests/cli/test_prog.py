"""How wlmap names itself: ``kubectl wlmap`` when run as kubectl's plugin, and help examples
that work upstream (JobSet has no ``js`` short name in the CRD)."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

from workload_map.cli.main import main, program_name


def test_program_name() -> None:
    assert program_name("/usr/local/bin/kubectl-wlmap") == "kubectl wlmap"
    assert program_name("wlmap") == "wlmap"


def test_plugin_usage_line() -> None:
    out = io.StringIO()
    assert main(["--help"], io.StringIO(), out, io.StringIO(), prog="kubectl wlmap") == 0
    assert out.getvalue().startswith("usage: kubectl wlmap")
    err = io.StringIO()
    main(["get", "--bogus"], io.StringIO(), io.StringIO(), err, prog="kubectl wlmap")
    assert "kubectl wlmap get --help" in err.getvalue()


def test_installed_plugin_script_says_kubectl_wlmap() -> None:
    script = Path(sys.executable).parent / "kubectl-wlmap"
    done = subprocess.run([str(script), "--help"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.startswith("usage: kubectl wlmap")


def test_help_examples_use_names_that_exist_upstream() -> None:
    for command in (["--help"], ["get", "--help"], ["describe", "--help"]):
        out = io.StringIO()
        main(command, io.StringIO(), out, io.StringIO())
        assert "js/" not in out.getvalue(), command
