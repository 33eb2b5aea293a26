"""The gang room's metrics (docs/gangs.md, "What is written where"), owned by the process's
:class:`~workload_map.gangs.runtime.GangRuntime` and rendered by ``prometheus_client``.

The webhook adapter and the leader's controller count into them; the watcher registers them in
the operator's registry when it starts (every replica: a standby exports its webhook counts and
zeros for the leader's), so importing this module registers nothing.

The counters are plain numbers under one lock, read by :meth:`GangMetrics.collect` at scrape
time as ``prometheus_client`` counter families: a pod admission counts three of them, and
three ``Counter.inc`` calls (each its own lock and checks) were about 1.5 % of the webhook's
decision time (issue 20 item 9). ``tests/gangs/test_metrics.py`` keeps the scrape text
byte-identical to what ``prometheus_client.Counter`` objects of the same names render.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator

from prometheus_client import CollectorRegistry, Gauge
from prometheus_client.core import CounterMetricFamily, Metric
from prometheus_client.registry import Collector

__all__ = ["COUNTERS", "GENERIC_WORKLOAD_STATES", "GangMetrics"]

#: the states of the GenericWorkload probe (``gangs.probe``), each a series of its gauge
GENERIC_WORKLOAD_STATES = ("works", "dropped", "absent", "error", "unknown")

#: (attribute of :class:`GangMetrics`, counter name, help), in the order of the scrape
COUNTERS = (
    (
        "webhook_requests",
        "workloadmap_gangs_webhook_requests_total",
        "Pod admissions seen by the gang webhook.",
    ),
    (
        "webhook_patched",
        "workloadmap_gangs_webhook_patched_total",
        "Pods the gang webhook patched.",
    ),
    (
        "webhook_cache_misses",
        "workloadmap_gangs_webhook_cache_misses_total",
        "Admissions whose owner was not cached in time.",
    ),
    (
        "webhook_errors",
        "workloadmap_gangs_webhook_errors_total",
        "Admissions that failed (admitted unchanged).",
    ),
    (
        "webhook_seconds",
        "workloadmap_gangs_webhook_seconds_total",
        "Time spent deciding admissions.",
    ),
    (
        "reconciles",
        "workloadmap_gangs_reconciles_total",
        "Workload reconciles by the gang controller.",
    ),
    (
        "reconcile_errors",
        "workloadmap_gangs_reconcile_errors_total",
        "Reconciles that failed (retried).",
    ),
    (
        "writes",
        "workloadmap_gangs_writes_total",
        "Creates, patches and deletes of scheduling objects.",
    ),
    (
        "missed_members",
        "workloadmap_gangs_missed_members_total",
        "Gang members found created without their group reference.",
    ),
    (
        "pods_deleted",
        "workloadmap_gangs_pods_deleted_total",
        "Unbound missed members deleted (delete-unbound mode).",
    ),
)


class GangMetrics(Collector):
    """One process's gang counters and gauges (unregistered until :meth:`register`).

    The counters are attributes (read them, never assign them: :meth:`admitted`,
    :meth:`reconciled` and :meth:`executed` add under the lock, so threads lose no count).
    """

    def __init__(self, priority_classes: Callable[[], int]) -> None:
        self._lock = threading.Lock()
        self.webhook_requests = 0
        self.webhook_patched = 0
        self.webhook_cache_misses = 0
        self.webhook_errors = 0
        self.webhook_seconds = 0.0
        self.reconciles = 0
        self.reconcile_errors = 0
        self.writes = 0
        self.missed_members = 0
        self.pods_deleted = 0
        self.priority_classes = Gauge(
            "workloadmap_gangs_priority_classes",
            "PriorityClasses watched (their values order the minResources fill).",
            registry=None,
        )
        self.priority_classes.set_function(priority_classes)
        self.generic_workload = Gauge(
            "workloadmap_gangs_generic_workload",
            "Whether pods keep spec.schedulingGroup (probe at start).",
            ["state"],
            registry=None,
        )
        self.set_generic_workload("unknown")

    def admitted(self, seconds: float, patched: bool, cache_miss: bool, failed: bool) -> None:
        """One pod admission, decided in ``seconds``."""
        with self._lock:
            self.webhook_requests += 1
            self.webhook_seconds += seconds
            if patched:
                self.webhook_patched += 1
            if cache_miss:
                self.webhook_cache_misses += 1
            if failed:
                self.webhook_errors += 1

    def reconciled(self) -> None:
        """One reconcile of a workload, counted before its writes."""
        with self._lock:
            self.reconciles += 1

    def reconcile_failed(self) -> None:
        """Its writes failed (the workload is retried)."""
        with self._lock:
            self.reconcile_errors += 1

    def executed(self, writes: int, missed_members: int, pods_deleted: int) -> None:
        """What one reconcile's execution wrote."""
        with self._lock:
            self.writes += writes
            self.missed_members += missed_members
            self.pods_deleted += pods_deleted

    def set_generic_workload(self, state: str) -> None:
        """1 for the probe's state, 0 for every other (all five series always present)."""
        for name in GENERIC_WORKLOAD_STATES:
            self.generic_workload.labels(name).set(int(state == name))

    def collect(self) -> Iterator[Metric]:
        with self._lock:
            values = [getattr(self, attribute) for attribute, _, _ in COUNTERS]
        for (_, name, documentation), value in zip(COUNTERS, values, strict=True):
            yield CounterMetricFamily(name, documentation, value=value)
        yield from self.priority_classes.collect()
        yield from self.generic_workload.collect()

    def register(self, registry: CollectorRegistry) -> None:
        registry.register(self)
