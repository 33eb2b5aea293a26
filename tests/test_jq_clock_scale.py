"""--jq-clock-scale: jq deadlines in the test process see a machine FACTOR times slower."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _pytest(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    test = tmp_path / "test_budget.py"
    # the CPU clock under the scale is injected: each look at it is a millisecond, and the
    # program looks a few dozen times (every 1024 elements collected), so its tens of
    # milliseconds under a 1 s deadline have room for a 3x slower machine and none for a 1000x
    # one, whatever the speed or load of the machine running this test
    test.write_text(
        "import itertools\n"
        "from workload_map import jq\n"
        "from workload_map.jq import cpuclock\n"
        "def test_budget(monkeypatch):\n"
        "    looks = itertools.count()\n"
        "    monkeypatch.setattr(cpuclock, 'clock', lambda: next(looks) * 0.001)\n"
        "    out = jq.compile('[range(20000)] | length').all(None, limits=jq.Limits(timeout=1.0))\n"
        "    assert out == [20000]\n"
        "    assert 10 < next(looks) < 100\n"
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
