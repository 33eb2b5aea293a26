"""The gang room's metrics (docs/gangs.md, "What is written where"): ``prometheus_client``
counters and gauges, owned by the process's :class:`~workload_map.gangs.runtime.GangRuntime`.

The webhook adapter and the leader's controller count into them; the watcher registers them in
the operator's registry when it starts (every replica: a standby exports its webhook counts and
zeros for the leader's), so importing this module registers nothing.
"""

from __future__ import annotations

from collections.abc import Callable

from prometheus_client import CollectorRegistry, Counter, Gauge

__all__ = ["GENERIC_WORKLOAD_STATES", "GangMetrics"]

#: the states of the GenericWorkload probe (``gangs.probe``), each a series of its gauge
GENERIC_WORKLOAD_STATES = ("works", "dropped", "absent", "error", "unknown")


def _counter(name: str, documentation: str) -> Counter:
    return Counter(name, documentation, registry=None)


class GangMetrics:
    """One process's gang counters and gauges (unregistered until :meth:`register`)."""

    def __init__(self, priority_classes: Callable[[], int]) -> None:
        self.webhook_requests = _counter(
            "workloadmap_gangs_webhook_requests_total", "Pod admissions seen by the gang webhook."
        )
        self.webhook_patched = _counter(
            "workloadmap_gangs_webhook_patched_total", "Pods the gang webhook patched."
        )
        self.webhook_cache_misses = _counter(
            "workloadmap_gangs_webhook_cache_misses_total",
            "Admissions whose owner was not cached in time.",
        )
        self.webhook_errors = _counter(
            "workloadmap_gangs_webhook_errors_total",
            "Admissions that failed (admitted unchanged).",
        )
        self.webhook_seconds = _counter(
            "workloadmap_gangs_webhook_seconds_total", "Time spent deciding admissions."
        )
        self.reconciles = _counter(
            "workloadmap_gangs_reconciles_total", "Workload reconciles by the gang controller."
        )
        self.reconcile_errors = _counter(
            "workloadmap_gangs_reconcile_errors_total", "Reconciles that failed (retried)."
        )
        self.writes = _counter(
            "workloadmap_gangs_writes_total",
            "Creates, patches and deletes of scheduling objects.",
        )
        self.missed_members = _counter(
            "workloadmap_gangs_missed_members_total",
            "Gang members found created without their group reference.",
        )
        self.pods_deleted = _counter(
            "workloadmap_gangs_pods_deleted_total",
            "Unbound missed members deleted (delete-unbound mode).",
        )
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

    def set_generic_workload(self, state: str) -> None:
        """1 for the probe's state, 0 for every other (all five series always present)."""
        for name in GENERIC_WORKLOAD_STATES:
            self.generic_workload.labels(name).set(int(state == name))

    def collectors(self) -> tuple[Counter | Gauge, ...]:
        return (
            self.webhook_requests,
            self.webhook_patched,
            self.webhook_cache_misses,
            self.webhook_errors,
            self.webhook_seconds,
            self.reconciles,
            self.reconcile_errors,
            self.writes,
            self.missed_members,
            self.pods_deleted,
            self.priority_classes,
            self.generic_workload,
        )

    def register(self, registry: CollectorRegistry) -> None:
        for collector in self.collectors():
            registry.register(collector)
