"""A jq deadline clock that counts work instead of reading the machine's time (issue 26).

The engine reads its deadline clock through one seam, ``workload_map.jq.closures.clock`` (and
``program.clock`` for ``Limits.on_slow``). ``WorkClock`` replaces it for a test: time is the
number of Python profile events (each call and return of a Python or C function, on every
thread, the deep-stack retry's included) since it was installed, times ``seconds_per_event``.
An evaluation then sees the same clock on any machine under any load, so a test can assert
exactly how far past its deadline an evaluation ran and how much work ran between two looks at
the clock (``longest_gap``), never a number of seconds.

One C call is one event whatever it does: the engine's long C-speed steps are bounded by size
instead (``workload_map.jq.meter``), and tested by the units they spend.

Example::

    def test_stops(work_clock: WorkClock) -> None:
        limits = jq.Limits(timeout=work_clock.seconds(50_000))  # a deadline of 50 000 events
        with work_clock.measure() as run, pytest.raises(jq.JqDeadlineError):
            jq.compile("[range(1e9)] | length").all(None, limits=limits)
        assert run.events < 2 * 50_000 and run.longest_gap < GAP
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from types import FrameType
from typing import Any

import pytest

from workload_map.jq import closures, program

__all__ = ["Measured", "WorkClock", "installed"]


@dataclass
class Measured:
    """What one measured evaluation did: profile events in all, and the most of them between
    two readings of the clock (its start and its end count as readings)."""

    events: int = 0
    longest_gap: int = 0


class WorkClock:
    """The deadline clock as a count of profile events (see the module's text)."""

    def __init__(self, seconds_per_event: float = 1e-6) -> None:
        self.seconds_per_event = seconds_per_event
        self.events = 0
        self._last = 0
        self._gap = 0

    def seconds(self, events: int) -> float:
        """The deadline (``Limits.timeout``) that ``events`` events of work reach."""
        return events * self.seconds_per_event

    def _profile(self, _frame: FrameType, _event: str, _arg: Any) -> None:
        self.events += 1

    def __call__(self) -> float:
        """The engine's reading of the clock: also closes a gap between two readings."""
        n = self.events
        if n - self._last > self._gap:
            self._gap = n - self._last
        self._last = n
        return n * self.seconds_per_event

    @contextmanager
    def measure(self) -> Iterator[Measured]:
        """Measure the evaluation run inside the block (filled in when the block ends)."""
        out = Measured()
        start = self._last = self.events
        self._gap = 0
        try:
            yield out
        finally:
            self()  # the end of the evaluation ends its last gap
            out.events = self.events - start
            out.longest_gap = self._gap


@contextmanager
def installed(clock: WorkClock) -> Iterator[WorkClock]:
    """``clock`` as the jq deadline clock, counting on this thread and on threads started
    meanwhile (the deep-stack retry starts one per evaluation)."""
    saved = closures.clock, program.clock, sys.getprofile()
    closures.clock = clock
    program.clock = clock  # type: ignore[attr-defined]
    threading.setprofile(clock._profile)
    sys.setprofile(clock._profile)
    try:
        yield clock
    finally:
        sys.setprofile(saved[2])
        threading.setprofile(None)  # type: ignore[arg-type]
        closures.clock, program.clock = saved[0], saved[1]  # type: ignore[attr-defined]


@pytest.fixture
def work_clock() -> Iterator[WorkClock]:
    """A test's jq deadlines on the work-counting clock."""
    with installed(WorkClock()) as clock:
        yield clock
