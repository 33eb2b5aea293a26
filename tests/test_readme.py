"""Every example in README.md runs: Python blocks are executed, `$ wlmap …` lines are run in-process.

A console line's output lines that the README shows under it must appear in what the command
prints; the command must exit 0. ``echo 'TEXT' | wlmap …`` feeds TEXT on standard input.
"""

from __future__ import annotations

import io
import re
import shlex
from pathlib import Path

import pytest

from workload_map.cli.main import main

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
BLOCKS = re.findall(r"```(\w+)\n(.*?)```", README, flags=re.S)


def console_commands() -> list[tuple[str, list[str]]]:
    commands: list[tuple[str, list[str]]] = []
    for lang, body in BLOCKS:
        if lang != "console":
            continue
        for line in body.splitlines():
            if line.startswith("$ "):
                commands.append((line[2:], []))
            elif commands and line.strip():
                commands[-1][1].append(line)
    return commands


def python_blocks() -> list[str]:
    return [body for lang, body in BLOCKS if lang == "python"]


def test_readme_has_examples() -> None:
    assert console_commands() and python_blocks()
    assert "make demo" in README and "make test" in README


@pytest.mark.parametrize("code", python_blocks())
def test_python_example(code: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    exec(compile(code, "README.md", "exec"), {"__name__": "readme_example"})


@pytest.mark.parametrize(("command", "shown"), console_commands(), ids=lambda v: str(v)[:60])
def test_console_example(command: str, shown: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    stdin_text = ""
    match = re.fullmatch(r"echo '(.*)' \| (.*)", command)
    if match:
        stdin_text, command = match.group(1) + "\n", match.group(2)
    argv = shlex.split(command)
    if argv[0] == "make":
        return  # set-up commands; CI runs them
    assert argv[0] == "wlmap", command
    out, err = io.StringIO(), io.StringIO()
    code = main(argv[1:], io.StringIO(stdin_text), out, err)
    assert code == 0, f"{command}: exit {code}\n{err.getvalue()}"
    printed = out.getvalue()
    for line in shown:
        assert line.strip() in printed, f"{command}: README shows {line!r}; got\n{printed}"


def test_make_demo_runs() -> None:
    """`make demo` (hack/demo.sh) describes every bundled example and exits 0."""
    import os
    import subprocess
    import sys

    wlmap = Path(sys.executable).with_name("wlmap")
    if not wlmap.exists():
        pytest.skip(f"no wlmap entry point beside {sys.executable} (not a venv install)")
    env = {**os.environ, "WLMAP": str(wlmap), "NO_COLOR": "1"}
    demo = subprocess.run(
        ["bash", str(ROOT / "hack" / "demo.sh")],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert demo.returncode == 0, demo.stderr
    script = (ROOT / "hack" / "demo.sh").read_text()
    for command in re.findall(r"^run (.+)$", script, flags=re.M):
        assert f"$ wlmap {command}" in demo.stdout
    assert demo.stdout.count("Phase: ") >= 4
    # what the examples are meant to show on stderr: warnings (a pod of another JobSet), no more
    assert all(line.startswith("warning: ") for line in demo.stderr.splitlines()), demo.stderr
