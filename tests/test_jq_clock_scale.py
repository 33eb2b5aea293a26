"""--jq-clock-scale: jq deadlines in the test process see a machine FACTOR times slower."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _pytest(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    test = tmp_path / "test_budget.py"
    # 20 ms of CPU under a 1 s deadline: room for a 3x slower machine, none for a 1000x one
    test.write_text(
        "from workload_map import jq\n"
        "def test_budget():\n"
        "    out = jq.compile('[range(20000)] | length').all(None, limits=jq.Limits(timeout=1.0))\n"
        "    assert out == [20000]\n"
    )
    # the project's conftest as a plugin: the test file lives outside tests/
    plugins = ["-p", "no:cacheprovider", "-p", "tests.conftest"]
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", *plugins, str(test), *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_a_scaled_clock_finds_work_with_too_little_room(tmp_path: Path) -> None:
    assert _pytest(tmp_path, "--jq-clock-scale=3").returncode == 0
    slow = _pytest(tmp_path, "--jq-clock-scale=1000")
    assert slow.returncode == 1
    assert "JqDeadlineError" in slow.stdout


def test_a_bad_scale_is_a_usage_error_naming_the_option(tmp_path: Path) -> None:
    done = _pytest(tmp_path, "--jq-clock-scale=fast")
    assert done.returncode == 4
    assert "--jq-clock-scale: expected a number, got 'fast'" in done.stderr
