"""The operator's GC pause metric and the one-time freeze after its caches synced."""

from __future__ import annotations

import gc
import threading

from prometheus_client import CollectorRegistry

from workload_map.operator.gcpauses import METRIC, GcPauses, settle_when


def _registry(pauses: GcPauses) -> CollectorRegistry:
    """A registry holding ``pauses`` alone, as the operator's holds it."""
    registry = CollectorRegistry()
    registry.register(pauses)
    return registry


class StepClock:
    """Moves one second at each look, never otherwise: a collection timed by it (a look at its
    start, one at its stop) takes exactly one second, whatever the machine's speed."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        self.now += 1.0
        return self.now


def test_collections_are_timed_per_generation() -> None:
    pauses = GcPauses(clock=StepClock())
    try:
        gc.collect(0)
        gc.collect(2)
    finally:
        pauses.close()
    assert len(pauses.samples[0]) >= 1 and len(pauses.samples[2]) >= 1
    # each pause from its own start to its own stop: one step of the clock, per generation
    assert set(pauses.samples[0]) == set(pauses.samples[2]) == {1.0}
    scraped = _registry(pauses)
    count = scraped.get_sample_value(f"{METRIC}_count", {"generation": "2"})
    assert count == len(pauses.samples[2])
    seen = len(pauses.samples[2])
    gc.collect()
    assert len(pauses.samples[2]) == seen  # closed: no more samples


def test_freezes_once_when_ready_and_not_before() -> None:
    ready = threading.Event()
    stopping = threading.Event()
    polled = threading.Event()
    polls: list[bool] = []

    def is_ready() -> bool:
        polls.append(ready.is_set())
        if len(polls) >= 2:
            polled.set()
        return polls[-1]

    pauses = GcPauses(clock=StepClock())
    before = gc.get_freeze_count()
    try:
        thread = settle_when(is_ready, stopping, pauses)
        # the settler has looked twice and found the caches not synced (waited for, not a
        # sleep: a sleep can end on a loaded machine before the settler looked at all)
        assert polled.wait(60) and polls[:2] == [False, False]
        # no freeze yet: a freeze would add every live object; the count may still drop, as
        # objects the test suite froze earlier are freed (CI saw 12 fewer in 0.7 s)
        assert pauses.freezes == 0 and gc.get_freeze_count() <= before
        keep = [{"cached": [i]} for i in range(1000)]  # long-lived objects, like a cache
        ready.set()
        # a full collection of this test process (thousands of tests' objects by now, late in
        # the suite) on a loaded machine takes seconds: waited for generously, not timed
        thread.join(60)
        assert not thread.is_alive()
        assert pauses.freezes == 1
        assert gc.get_freeze_count() >= before + len(keep)
        scraped = _registry(pauses)
        assert scraped.get_sample_value("workloadmap_operator_gc_freezes_total") == 1
        # the settle collection is timed apart from the pauses requests can meet: at least
        # the full collection (one step of the clock; another thread's young collection in
        # that moment counts to it too)
        assert pauses.settle_seconds >= 1.0 and not pauses.settling
        assert pauses.settle_seconds == int(pauses.settle_seconds)  # whole collections
        settle = scraped.get_sample_value("workloadmap_operator_gc_settle_seconds")
        assert settle == pauses.settle_seconds
    finally:
        stopping.set()
        pauses.close()
        gc.unfreeze()


def test_stopping_ends_the_wait() -> None:
    stopping = threading.Event()
    thread = settle_when(lambda: False, stopping)
    stopping.set()
    thread.join(60)  # a bound for a hang, not a speed target: the thread ends at the event
    assert not thread.is_alive()


def test_a_failing_readiness_check_only_delays_the_freeze() -> None:
    stopping = threading.Event()
    calls: list[int] = []

    def flaky() -> bool:
        calls.append(1)
        if len(calls) < 3:
            raise RuntimeError("not yet")
        return True

    pauses = GcPauses()
    try:
        thread = settle_when(flaky, stopping, pauses)
        thread.join(60)  # two retries 0.5 s apart, then a full collection (as above)
        assert not thread.is_alive() and pauses.freezes == 1 and len(calls) == 3
    finally:
        stopping.set()
        pauses.close()
        gc.unfreeze()  # else every later test runs with this process's whole heap frozen
        gc.unfreeze()
