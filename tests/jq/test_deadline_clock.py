"""The jq deadline counts the evaluating thread's CPU time, not wall time.

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

from workload_map import jq
from workload_map.jq import cpuclock


def _busy_gil_holder(stop: threading.Event) -> None:
    while not stop.is_set():
        sum(range(5_000_000))  # one C call: holds the GIL for tens of milliseconds at a time


# Each test below gives its evaluation a budget many times the CPU it needs (the work is a few
# milliseconds to 0.1 s), so that a slower machine or a garbage collection charged to the thread
# cannot trip it: what they check is that the *wait* is not charged.


def test_waiting_is_not_charged() -> None:
    # `debug` calls the stderr hook: sleeping there is wall time without CPU time, then the
    # program does enough work to look at the clock many times
    prog = jq.compile("[range(3) | debug] | [range(20000)] | length")
    waited = time.monotonic()
    out = prog.all(None, limits=jq.Limits(timeout=1.0), stderr=lambda _t: time.sleep(0.4))
    assert out == [20000]
    assert time.monotonic() - waited >= 1.2  # more than the whole budget went by


def test_another_thread_holding_the_gil_is_not_charged() -> None:
    stop = threading.Event()
    holder = threading.Thread(target=_busy_gil_holder, args=(stop,), daemon=True)
    holder.start()
    try:
        prog = jq.compile("[range(100000)] | length")
        started_wall, started_cpu = time.monotonic(), time.thread_time()
        out = prog.all(None, limits=jq.Limits(timeout=0.5))
        wall, cpu = time.monotonic() - started_wall, time.thread_time() - started_cpu
    finally:
        stop.set()
        holder.join()
    assert out == [100000]
    # the holder keeps the GIL for most of the time (wall is about 25x CPU here), so the
    # evaluation ran past its budget on the wall clock without a deadline error
    assert cpu < 0.5 < wall


def test_full_collections_are_not_charged() -> None:
    # a full collection walks the whole process (here a million tracked lists, tens of ms each
    # time): it is owed to everything else the process holds, not to the evaluation that
    # happened to trigger it
    heap = [[] for _ in range(1_000_000)]
    started = time.thread_time()
    gc.collect()
    # the budget is two collections' worth (on any machine's speed) plus 0.1 s for the work
    # itself (about 0.02 s); the hook runs eight collections
    budget = 2 * (time.thread_time() - started) + 0.1
    prog = jq.compile("[range(8) | debug] | [range(20000)] | length")
    started = time.thread_time()
    out = prog.all(None, limits=jq.Limits(timeout=budget), stderr=lambda _t: gc.collect())
    spent = time.thread_time() - started
    assert out == [20000]
    assert spent > budget  # the collections alone took more CPU than the whole budget
    before_clock, before_cpu = cpuclock.clock(), time.thread_time()
    gc.collect()
    gc.collect(0)  # a young collection: cheap, and charged
    taken, cpu = cpuclock.clock() - before_clock, time.thread_time() - before_cpu
    assert taken < cpu / 2
    assert len(heap) == 1_000_000


def test_work_past_the_budget_still_stops() -> None:
    prog = jq.compile("[range(100000000)] | length")
    started = time.thread_time()
    with pytest.raises(jq.JqDeadlineError):
        prog.all(None, limits=jq.Limits(timeout=0.05))
    assert time.thread_time() - started < 1.0


def _deep(n: int) -> Any:
    v: Any = 0
    for _ in range(n):
        v = [v]
    return v


def test_deep_stack_retry_carries_the_remaining_budget(monkeypatch: pytest.MonkeyPatch) -> None:
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
    roomy = jq.Limits(timeout=5.0, max_depth=100_000)  # the evaluation itself takes ~0.05 s
    assert jq.compile(walk % ".").all(deep, limits=roomy) == [0]
    limits = jq.Limits(timeout=0.3, max_depth=100_000)
    assert retries
    started = time.process_time()  # the deep thread's CPU included
    with pytest.raises(jq.JqDeadlineError):
        jq.compile(walk % "[range(100000000)] | length").all(deep, limits=limits)
    assert len(retries) == 2
    assert time.process_time() - started < 3.0
