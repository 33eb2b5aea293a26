"""hack/run-tests.py, `make test`'s two tiers: both run, both summaries print, either failing
fails the run, and a last plain line adds them up (CI reads the closing line)."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "hack" / "run-tests.py"


def _runner() -> ModuleType:
    name = "wlmap_run_tests"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, SCRIPT)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # before exec: its dataclasses look their module up
        spec.loader.exec_module(module)
    return sys.modules[name]


def test_summaries_are_read_plain_or_coloured() -> None:
    summary = _runner()._summary
    text, counts = summary(
        "x\n= 6 failed, 8889 passed, 60 skipped, 4 xfailed, 13 errors in 537.84s (0:08:57) =\n"
    )
    assert text.startswith("6 failed, 8889 passed")
    assert counts == {"failed": 6, "passed": 8889, "skipped": 60, "xfailed": 4, "error": 13}
    coloured = "\x1b[32m== \x1b[1m2 failed\x1b[0m, \x1b[32m12 passed\x1b[0m in 3.12s ==\x1b[0m\n"
    assert summary(coloured)[1] == {"failed": 2, "passed": 12}
    assert summary("no tests ran in 0.01s\n") == ("no tests ran in 0.01s", {})
    assert summary("a crash, no summary\n") == ("", {})


def test_either_tier_failing_fails_the_run() -> None:
    runner = _runner()

    def code(*codes: int) -> int:
        return int(runner._exit_code([runner.Tier(str(c), [], code=c) for c in codes]))

    assert code(0, 0) == 0
    assert code(1, 0) == 1 and code(0, 1) == 1 and code(0, 2) == 2
    assert code(5, 0) == 0 and code(0, 5) == 0  # a selection that only one tier has
    assert code(5, 5) == 5  # nothing ran at all: CI's "ran no test"


def test_integration_tests_live_in_the_integration_folder() -> None:
    """The integration tier collects tests/integration alone: a test marked elsewhere would
    be deselected by the unit tier and never collected by the integration one."""
    marked = re.compile(r"mark\.integration\b|pytestmark\s*=.*\bintegration\b")
    stray = [
        str(path.relative_to(ROOT))
        for path in sorted((ROOT / "tests").rglob("*.py"))
        if "integration" not in path.relative_to(ROOT / "tests").parts[:1]
        and path.name != Path(__file__).name
        and marked.search(path.read_text(encoding="utf-8"))
    ]
    assert stray == []


def test_both_tiers_run_and_report(tmp_path: Path) -> None:
    (tmp_path / "test_unit.py").write_text("def test_a():\n    pass\n\ndef test_b():\n    pass\n")
    (tmp_path / "test_live.py").write_text(
        "import pytest\n\n@pytest.mark.integration\ndef test_live():\n    assert False\n"
    )
    run = subprocess.run(
        [sys.executable, str(SCRIPT), "--workers", "2", "-p", "no:cacheprovider", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    out = run.stdout
    assert run.returncode == 1, out[-3000:]
    # (under xdist the workers deselect, and the summary does not count them)
    assert "run-tests: unit tier: exit 0: 2 passed" in out, out[-3000:]
    assert "run-tests: integration tier: exit 1: 1 failed, 2 deselected" in out, out[-3000:]
    assert out.splitlines()[-1] == "total: 2 passed, 1 failed, 0 skipped"
    assert "-n 2 --dist loadfile" in out  # the unit tier ran in parallel processes
