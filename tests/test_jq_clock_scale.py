"""--jq-clock-scale: jq deadlines in the test process see a machine FACTOR times slower.

The option's hook (``tests/conftest.py``'s ``_scale_jq_clock``) is called here in-process on a
stand-in config, with the jq clock restored afterwards; that pytest hands the option to it, in
every xdist worker too, is checked end to end by ``test_run_tests.py``'s run of the runner.
"""

from __future__ import annotations

import itertools

import pytest

from tests.conftest import _scale_jq_clock
from workload_map import jq
from workload_map.jq import closures, cpuclock, program


class _Config:
    def __init__(self, scale: str) -> None:
        self.scale = scale

    def getoption(self, name: str) -> str:
        assert name == "--jq-clock-scale"
        return self.scale


@pytest.fixture
def scaled(monkeypatch: pytest.MonkeyPatch) -> None:
    """The hook may replace the jq clocks: they are restored after the test. The CPU clock
    under the scale is injected: each look at it is a millisecond, and the program below looks a
    few dozen times (every 1024 elements collected), so its tens of milliseconds under a 1 s
    deadline have room for a 3x slower machine and none for a 1000x one, whatever the speed or
    load of the machine running this test."""
    monkeypatch.setattr(closures, "clock", closures.clock)
    monkeypatch.setattr(program, "clock", program.clock)
    monkeypatch.delenv("WLMAP_JQ_CLOCK_SCALE", raising=False)
    looks = itertools.count()
    monkeypatch.setattr(cpuclock, "clock", lambda: next(looks) * 0.001)


def _budget() -> list[object]:
    prog = jq.compile("[range(20000)] | length")
    return list(prog.all(None, limits=jq.Limits(timeout=1.0)))


@pytest.mark.usefixtures("scaled")
def test_a_scaled_clock_leaves_room_for_a_slower_machine() -> None:
    _scale_jq_clock(_Config("3"))  # type: ignore[arg-type]
    assert _budget() == [20000]


@pytest.mark.usefixtures("scaled")
def test_a_scaled_clock_finds_work_with_too_little_room() -> None:
    _scale_jq_clock(_Config("1000"))  # type: ignore[arg-type]
    with pytest.raises(jq.JqDeadlineError):
        _budget()


@pytest.mark.usefixtures("scaled")
@pytest.mark.parametrize(
    ("scale", "message"),
    [("fast", "expected a number, got 'fast'"), ("0", "expected a positive number, got '0'")],
)
def test_a_bad_scale_is_a_usage_error_naming_the_option(scale: str, message: str) -> None:
    with pytest.raises(pytest.UsageError, match=f"--jq-clock-scale: {message}"):
        _scale_jq_clock(_Config(scale))  # type: ignore[arg-type]
