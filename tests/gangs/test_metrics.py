"""The gang counters are plain numbers read at scrape time (issue 20 item 9: three
``Counter.inc`` per admission cost the webhook): the scrape must stay what ``prometheus_client``
counters of the same names rendered, byte for byte, and no count may be lost between threads."""

from __future__ import annotations

import threading

from prometheus_client import Counter, Gauge, generate_latest

from workload_map.gangs.metrics import COUNTERS, GENERIC_WORKLOAD_STATES, GangMetrics
from workload_map.operator.metrics import process_registry


def _reference(counts: dict[str, float], classes: int, state: str) -> bytes:
    """The text the former ``Counter``/``Gauge`` objects render for the same values."""
    registry = process_registry()
    for attribute, name, documentation in COUNTERS:
        counter = Counter(name, documentation, registry=registry)
        if counts[attribute]:
            counter.inc(counts[attribute])
    gauge = Gauge(
        "workloadmap_gangs_priority_classes",
        "PriorityClasses watched (their values order the minResources fill).",
        registry=registry,
    )
    gauge.set_function(lambda: classes)
    probe = Gauge(
        "workloadmap_gangs_generic_workload",
        "Whether pods keep spec.schedulingGroup (probe at start).",
        ["state"],
        registry=registry,
    )
    for name in GENERIC_WORKLOAD_STATES:
        probe.labels(name).set(int(name == state))
    return generate_latest(registry)


def _scrape(metrics: GangMetrics) -> bytes:
    registry = process_registry()
    metrics.register(registry)
    return generate_latest(registry)


def test_the_scrape_is_what_prometheus_client_counters_render() -> None:
    metrics = GangMetrics(lambda: 3)
    zero = {attribute: 0.0 for attribute, _, _ in COUNTERS}
    assert _scrape(metrics) == _reference(zero, 3, "unknown")
    metrics.admitted(0.25, True, False, False)
    metrics.admitted(0.5, False, True, False)
    metrics.admitted(0.125, False, False, True)
    metrics.reconciled()
    metrics.reconciled()
    metrics.reconcile_failed()
    metrics.executed(4, 2, 1)
    metrics.executed(1, 0, 0)
    metrics.set_generic_workload("dropped")
    counts = {
        **zero,
        "webhook_requests": 3,
        "webhook_patched": 1,
        "webhook_cache_misses": 1,
        "webhook_errors": 1,
        "webhook_seconds": 0.875,
        "reconciles": 2,
        "reconcile_errors": 1,
        "writes": 5,
        "missed_members": 2,
        "pods_deleted": 1,
    }
    text = _scrape(metrics)
    assert text == _reference(counts, 3, "dropped")
    assert b"workloadmap_gangs_webhook_seconds_total 0.875\n" in text
    assert b"workloadmap_gangs_writes_total 5.0\n" in text


def test_no_count_is_lost_between_threads() -> None:
    metrics = GangMetrics(lambda: 0)
    per_thread, threads = 20_000, 4

    def admit() -> None:
        for _ in range(per_thread):
            metrics.admitted(0.0, True, False, False)

    workers = [threading.Thread(target=admit) for _ in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    registry = process_registry()
    metrics.register(registry)
    total = per_thread * threads
    assert registry.get_sample_value("workloadmap_gangs_webhook_requests_total") == total
    assert registry.get_sample_value("workloadmap_gangs_webhook_patched_total") == total
