"""Completion of the kubectl forms (``get jobset <TAB>``, several names, ``TYPE,TYPE``), through
the real bash script, and the ``kubectl_complete-wlmap`` entry point ``kubectl wlmap <TAB>`` runs."""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.test_completion_live import _api
from workload_map.cli.main import kubectl_complete

SRC = str(Path(__file__).resolve().parents[2] / "src")


def test_space_form_several_names_and_comma_types(wlmap) -> None:
    api = _api()
    assert wlmap(["__complete", "get", "jobset", ""], api=api).out.splitlines() == ["train", "tune"]
    # a name already given is not offered again; describe takes one name only
    assert wlmap(["__complete", "get", "jobset", "train", ""], api=api).out.splitlines() == ["tune"]
    assert wlmap(["__complete", "describe", "jobset", "train", ""], api=api).out == ""
    assert wlmap(["__complete", "get", "jobset/train", "jobset/"], api=api).out.splitlines() == [
        "jobset/train",
        "jobset/tune",
    ]
    types = wlmap(["__complete", "get", "jobsets,"]).out.splitlines()
    assert "jobsets,pytorchjob" in types and all(t.startswith("jobsets,") for t in types)


def test_kubectl_complete_protocol(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Cobra's protocol: candidates, then ``:4`` (no files) or ``:0`` (files) on the last line."""
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "none"))

    def run(*words: str) -> list[str]:
        out = io.StringIO()
        monkeypatch.setattr(sys, "argv", ["kubectl_complete-wlmap", *words])
        monkeypatch.setattr(sys, "stdout", out)
        kubectl_complete()
        return out.getvalue().splitlines()

    lines = run("get", "")
    assert lines[-1] == ":4" and "jobset" in lines[:-1]
    assert run("describe", "-f", "") == [":0"]
    assert run("__complete", "describe", "-f", "") == [":0"]
    assert run("")[-1] == ":4" and "verify" in run("")


def _bash_complete(words: list[str], env: dict[str, str]) -> list[str]:
    script = subprocess.run(
        [sys.executable, "-m", "workload_map.cli", "completion", "bash"],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    ).stdout
    quoted = " ".join(f"'{w}'" for w in words)
    program = (
        f"{script}\nCOMP_WORDS=({quoted}); COMP_CWORD={len(words) - 1}; "
        '_wlmap_complete; printf "%s\\n" "${COMPREPLY[@]}"'
    )
    done = subprocess.run(
        ["bash", "-c", program], capture_output=True, text=True, env=env, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return [line for line in done.stdout.splitlines() if line]


@pytest.mark.skipif(shutil.which("bash") is None, reason="no bash on this machine")
def test_bash_script_completes_types_and_the_word_under_the_cursor(tmp_path: Path) -> None:
    bindir = tmp_path / "bin"
    bindir.mkdir()
    wrapper = bindir / "wlmap"
    wrapper.write_text(f'#!/bin/sh\nexec {sys.executable} -m workload_map.cli "$@"\n')
    wrapper.chmod(0o755)
    env = {
        "PATH": f"{bindir}{os.pathsep}/usr/bin:/bin",
        "HOME": str(tmp_path),
        "KUBECONFIG": str(tmp_path / "none"),
        "PYTHONPATH": SRC,  # this checkout's sources, not the installed ones
    }
    types = _bash_complete(["wlmap", "get", "job"], env)
    assert "jobset" in types and all(t.startswith("job") for t in types)
    assert _bash_complete(["wlmap", "ver"], env) == ["verify"]


def test_kubectl_plugin_completion_end_to_end(tmp_path: Path) -> None:
    """``kubectl wlmap <TAB>``: kubectl finds kubectl_complete-wlmap on PATH and relays it."""
    kubectl = shutil.which("kubectl")
    cached = (
        Path(os.environ.get("WLMAP_CACHE") or Path.home() / ".cache" / "workload-map")
        / "bin"
        / "kubectl"
    )
    if cached.is_file():
        kubectl = str(cached)
    if kubectl is None:
        pytest.skip("no kubectl here (hack/build-apiserver.sh WLMAP_EXTRA_TOOLS=kubectl)")
    bindir = tmp_path / "bin"
    bindir.mkdir()
    for name, code in (
        ("kubectl-wlmap", "from workload_map.cli.main import entry; entry()"),
        (
            "kubectl_complete-wlmap",
            "from workload_map.cli.main import kubectl_complete; kubectl_complete()",
        ),
    ):
        exe = bindir / name
        exe.write_text(f"#!{sys.executable}\n{code}\n")
        exe.chmod(0o755)
    env = {
        "PATH": f"{bindir}{os.pathsep}/usr/bin:/bin",
        "HOME": str(tmp_path),
        "KUBECONFIG": str(tmp_path / "none"),
        "PYTHONPATH": SRC,  # this checkout's sources, not the installed ones
    }
    done = subprocess.run(
        [kubectl, "__complete", "wlmap", "get", "jobs"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    lines = done.stdout.splitlines()
    assert "jobset" in lines and lines[-1] == ":4", done.stdout + done.stderr
    assert all(line.startswith("jobs") for line in lines[:-1])
