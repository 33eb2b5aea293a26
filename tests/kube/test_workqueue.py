"""The controllers' work queue: dedup, no concurrent reconcile of a key, retries with backoff."""

from __future__ import annotations

import threading
import time

from workload_map.kube.workqueue import WorkQueue


def wait_until(cond, timeout: float = 30.0) -> bool:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(0.01)
    return False


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

    def rec(key: str) -> None:
        nonlocal active, peak, calls
        with lock:
            active += 1
            calls += 1
            peak = max(peak, active)
        time.sleep(0.05)
        with lock:
            active -= 1

    q = WorkQueue("t", rec, workers=4)
    q.start()
    q.add("k")
    time.sleep(0.01)
    q.add("k")  # while active: reconciled once more afterwards
    assert wait_until(lambda: calls == 2 and q.idle())
    q.stop()
    assert peak == 1


def test_failures_retry_with_backoff_and_requeue_after() -> None:
    attempts: list[float] = []

    def rec(key: str) -> float | None:
        attempts.append(time.monotonic())
        if len(attempts) < 3:
            raise RuntimeError("boom")
        return None

    q = WorkQueue("t", rec, workers=1, base_delay=0.05)
    q.start()
    q.add("k")
    assert wait_until(lambda: len(attempts) == 3, timeout=30)
    q.stop()
    # each retry waits at least its doubled delay (0.05 s, then 0.1 s); lower bounds only: a
    # loaded machine can stretch the first gap past the second, never shorten either
    assert attempts[1] - attempts[0] >= 0.05
    assert attempts[2] - attempts[1] >= 0.1
