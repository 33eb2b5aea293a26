"""The jq deadline counts the evaluating thread's CPU time, not wall time.

No test here reads the machine's time: the thread clock is injected (``thread_time``) or the
deadline runs on the work-counting clock (``workclock``).

A descheduled evaluation (a loaded machine, another thread holding the GIL) must not be charged
for the wait, nor for a full garbage collection of the whole process, while work past the
budget still stops; the deep-stack retry, which evaluates on
another thread with its own CPU clock, carries the remaining budget there and back.
"""

from __future__ import annotations

import gc
import threading
import time
from typing import Any

import pytest

from tests.jq.workclock import WorkClock
from workload_map import jq
from workload_map.jq import closures, cpuclock


class _FakeThreadTime:
    """An injected ``cpuclock.thread_time``: CPU seconds pass when a test says."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def thread_time(monkeypatch: pytest.MonkeyPatch) -> _FakeThreadTime:
    fake = _FakeThreadTime()
    monkeypatch.setattr(cpuclock, "thread_time", fake)
    return fake


def test_the_deadline_reads_the_threads_cpu_clock(thread_time: _FakeThreadTime) -> None:
    # the clock is the evaluating thread's CPU time (time.thread_time): a thread that waits
    # (a sleep, a loaded machine, another thread holding the GIL) is not charged, by definition
    before = cpuclock.clock()
    thread_time.now += 1.5
    assert cpuclock.clock() - before == pytest.approx(1.5)
    # and an evaluation's deadline is read through the engine's one clock seam
    assert closures.Ctx(1.0, 10).remaining() is not None


def test_waiting_is_not_charged() -> None:
    # `debug` calls the stderr hook: three sleeps there (1.2 s of wall time) against a budget
    # of 1.0 s, then enough work to look at the clock many times; no deadline error
    prog = jq.compile("[range(3) | debug] | [range(20000)] | length")
    out = prog.all(None, limits=jq.Limits(timeout=1.0), stderr=lambda _t: time.sleep(0.4))
    assert out == [20000]


def test_full_collections_are_not_charged(thread_time: _FakeThreadTime) -> None:
    # a full collection walks the whole process: it is owed to everything else the process
    # holds, not to the evaluation that happened to trigger it. The injected thread clock
    # advances 5 s during each collection; the deadline clock sees none of a full one and
    # all of a young one
    slow: list[int] = []  # the generation of the next explicit collection, to be slowed
    here = threading.get_ident()

    def slow_collection(phase: str, info: dict[str, int]) -> None:
        # only the collections the test asks for: an automatic one may run at any time, on
        # this thread or another one a previous test left running
        if phase != "start" or threading.get_ident() != here:
            return
        if slow and info.get("generation") == slow[0]:
            slow.pop()
            thread_time.now += 5.0

    gc.callbacks.append(slow_collection)  # after cpuclock's: it sees the start first
    try:
        before = cpuclock.clock()
        slow.append(2)
        gc.collect()
        assert cpuclock.clock() - before == pytest.approx(0.0, abs=1e-9)
        before = cpuclock.clock()
        slow.append(0)
        gc.collect(0)
        assert cpuclock.clock() - before == pytest.approx(5.0)
        # and an evaluation whose full collections took 8 x 5 s does not hit its 1 s deadline
        prog = jq.compile("[range(8) | debug] | [range(20000)] | length")
        out = prog.all(None, limits=jq.Limits(timeout=1.0), stderr=lambda _t: gc.collect())
        assert out == [20000]
    finally:
        gc.callbacks.remove(slow_collection)


def test_work_past_the_budget_still_stops(work_clock: WorkClock) -> None:
    prog = jq.compile("[range(100000000)] | length")
    with work_clock.measure() as run, pytest.raises(jq.JqDeadlineError):
        prog.all(None, limits=jq.Limits(timeout=work_clock.seconds(50_000)))
    assert run.events < 2 * 50_000


def _deep(n: int) -> Any:
    v: Any = 0
    for _ in range(n):
        v = [v]
    return v


def test_deep_stack_retry_carries_the_remaining_budget(
    monkeypatch: pytest.MonkeyPatch, work_clock: WorkClock
) -> None:
    # a jq recursion 3000 deep overflows the Python stack: the evaluation is retried on a
    # deep-stack thread (its own CPU clock), where the rest of the same budget must apply
    from workload_map.jq import program

    retries: list[str] = []
    real = program.run_deep

    def spy(fn: Any) -> Any:
        retries.append(threading.current_thread().name)
        return real(fn)

    monkeypatch.setattr(program, "run_deep", spy)
    deep = _deep(3000)
    walk = 'def f: if type == "array" then (.[0] | f) + 0 else %s end; f'  # no tail call
    roomy = jq.Limits(timeout=None, max_depth=100_000)
    with work_clock.measure() as whole:
        assert jq.compile(walk % ".").all(deep, limits=roomy) == [0]
    assert retries
    # the deadline leaves room for the walk, not for the spin at its bottom
    deadline = 2 * whole.events
    limits = jq.Limits(timeout=work_clock.seconds(deadline), max_depth=100_000)
    with work_clock.measure() as run, pytest.raises(jq.JqDeadlineError):
        jq.compile(walk % "[range(100000000)] | length").all(deep, limits=limits)
    assert len(retries) == 2
    assert run.events < 2 * deadline
