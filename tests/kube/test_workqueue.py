"""The controllers' work queue: dedup, no concurrent reconcile of a key, retries with backoff."""

from __future__ import annotations

import itertools
import threading
import time

import pytest

import workload_map.kube.workqueue as workqueue_module
from workload_map.kube.workqueue import WorkQueue


def wait_until(cond, timeout: float = 30.0) -> bool:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(0.01)
    return False


class FakeClock:
    """The queue's ``time`` module with a monotonic clock that moves only when the test says:
    a backoff is checked by the moment its key becomes due, not by how long a machine took."""

    def __init__(self) -> None:
        self.now = 1000.0

    def monotonic(self) -> float:
        return self.now


def test_keys_queued_twice_are_reconciled_once() -> None:
    seen: list[str] = []
    gate = threading.Event()

    def rec(key: str) -> None:
        gate.wait(5)
        seen.append(key)

    q = WorkQueue("t", rec, workers=1)
    for key in ["a", "b", "a", "a", "b"]:
        q.add(key)
    q.start()
    gate.set()
    assert wait_until(q.idle)
    q.stop()
    assert sorted(seen) == ["a", "b"]


def test_never_two_workers_on_one_key_and_dirty_requeue() -> None:
    active = 0
    peak = 0
    calls = 0
    lock = threading.Lock()
    entered = threading.Event()
    release = threading.Event()

    def rec(key: str) -> None:
        nonlocal active, peak, calls
        with lock:
            active += 1
            calls += 1
            peak = max(peak, active)
        entered.set()
        # the first reconcile holds the key until the test has queued it again (events, not a
        # sleep: on a loaded machine a sleep says nothing about which thread runs first)
        release.wait(30)
        with lock:
            active -= 1

    q = WorkQueue("t", rec, workers=4)
    q.start()
    q.add("k")
    assert entered.wait(30)
    q.add("k")  # while active: reconciled once more afterwards, never alongside
    release.set()
    assert wait_until(lambda: calls == 2 and q.idle())
    q.stop()
    assert peak == 1


def test_failures_retry_with_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = FakeClock()
    monkeypatch.setattr(workqueue_module, "time", clock)
    attempts: list[float] = []

    def rec(key: str) -> float | None:
        attempts.append(clock.now)
        if len(attempts) < 3:
            raise RuntimeError("boom")
        return None

    q = WorkQueue("t", rec, workers=1, base_delay=0.05)
    q.start()
    try:
        q.add("k")
        # each failure puts the key back after its doubled delay (0.05 s, then 0.1 s): idle (the
        # key not due) until the clock reaches it, retried once it has
        for tried, delay in ((1, 0.05), (2, 0.1)):
            assert wait_until(lambda tried=tried: len(attempts) == tried and q.idle())
            due = attempts[-1] + delay
            clock.now = due - 0.001
            assert q.idle() and len(attempts) == tried
            clock.now = due  # the retry itself is waited for next
        assert wait_until(lambda: len(attempts) == 3 and q.idle())
    finally:
        q.stop()
    assert [b - a for a, b in itertools.pairwise(attempts)] == pytest.approx([0.05, 0.1])


def test_a_requeue_after_comes_back_when_due(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = FakeClock()
    monkeypatch.setattr(workqueue_module, "time", clock)
    calls: list[float] = []

    def rec(key: str) -> float | None:
        calls.append(clock.now)
        return 0.2 if len(calls) == 1 else None  # success, and look again in 0.2 s

    q = WorkQueue("t", rec, workers=1)
    q.start()
    try:
        q.add("r")
        assert wait_until(lambda: len(calls) == 1 and q.idle())
        clock.now = calls[0] + 0.199
        assert q.idle() and len(calls) == 1
        clock.now = calls[0] + 0.2
        assert wait_until(lambda: len(calls) == 2 and q.idle())
    finally:
        q.stop()
    assert calls[1] - calls[0] == pytest.approx(0.2)


def test_pending_counts_queued_and_active_keys_and_is_zero_when_idle() -> None:
    # the operator exports this count as its "idle" signal (karta_queue_pending)
    release = threading.Event()
    started: list[str] = []

    def reconcile(key: str) -> None:
        started.append(key)
        release.wait(60)

    q = WorkQueue("t", reconcile, workers=1)
    assert q.pending() == 0 and q.idle()
    q.add("a")
    q.add("b")
    q.add("b")  # deduplicated
    assert q.pending() == 2
    q.start()
    try:
        assert wait_until(lambda: started == ["a"])
        q.add("a")  # again while active: still one pending key for it
        assert q.pending() == 2 and not q.idle()
        release.set()
        assert wait_until(q.idle)
        assert q.pending() == 0 and started == ["a", "b", "a"]
    finally:
        release.set()
        q.stop()
