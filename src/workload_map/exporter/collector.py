"""The ``workloadmap_*`` metric families, computed from the inventory at each scrape.

A ``prometheus_client`` custom collector: ``collect()`` reads the watch-fed
:class:`~workload_map.cluster.inventory.Inventory` (no API call per scrape) and yields one
family per metric. Families are built so that the exposition carries exactly the documented
names: info families are named without ``_info`` (the client appends it), counters without
``_total``, and phases are a plain gauge with a ``phase`` label (a ``StateSet`` would name the
label after the metric).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    InfoMetricFamily,
    Metric,
)

from workload_map.cluster.inventory import Entry, Inventory

__all__ = ["PHASES", "ExporterHealth", "LabelPolicy", "WorkloadCollector", "label_name"]

#: every generic phase, in the reference's severity order (the web view's chip order)
PHASES = (
    "Failed",
    "Degraded",
    "Suspending",
    "Resuming",
    "Suspended",
    "Initializing",
    "Running",
    "Completed",
    "Undefined",
)
_WORKLOAD = ["namespace", "workload", "kind", "group"]
_STATES = ("desired", "current", "ready")


def label_name(key: str) -> str:
    """A Kubernetes label key as a Prometheus label name, as kube-state-metrics does."""
    out = "".join(c if c.isalnum() or c == "_" else "_" for c in key)
    return "label_" + out


@dataclass(frozen=True)
class LabelPolicy:
    """Which workload labels are copied onto ``workloadmap_workload_info`` (an allowlist)."""

    workload_labels: tuple[str, ...] = ()


@dataclass
class ExporterHealth:
    """What the exporter knows about its own feed (set by whoever runs the watches)."""

    last_sync: float | None = None
    watch_restarts: int = 0
    #: False on a replica that is not the leader: it exports its health only, so that two
    #: replicas never duplicate a workload series (duplicates break ``group_left`` joins)
    is_leader: Callable[[], bool] = lambda: True
    informers: list[Any] = field(default_factory=list)

    def restarts(self) -> int:
        relists = sum(max(0, int(getattr(i, "lists", 1)) - 1) for i in self.informers)
        return self.watch_restarts + relists


def _workload_labels(e: Entry) -> list[str]:
    return [e.namespace, e.name, e.gvk.kind, e.gvk.group]


def _nodes(nodes: Iterable[Any]) -> Iterator[Mapping[str, Any]]:
    for node in nodes:
        if isinstance(node, Mapping):
            yield node
            yield from _nodes(node.get("children") or ())


def _resources(summary: Any) -> dict[str, float]:
    """describe's resources summary as Prometheus base units by resource name."""
    if not isinstance(summary, Mapping):
        return {}
    out: dict[str, float] = {}
    if summary.get("cpuMillis"):
        out["cpu"] = float(summary["cpuMillis"]) / 1000.0
    if summary.get("memoryBytes"):
        out["memory"] = float(summary["memoryBytes"])
    by_resource = summary.get("byResource")
    if isinstance(by_resource, Mapping):
        for name, value in by_resource.items():
            if value:
                out[str(name)] = float(value)
    if summary.get("gpus") and "nvidia.com/gpu" not in out:
        out["nvidia.com/gpu"] = float(summary["gpus"])
    return out


def _active(pod: Mapping[str, Any]) -> bool:
    meta = pod.get("metadata") or {}
    status = pod.get("status") or {}
    if isinstance(meta, Mapping) and meta.get("deletionTimestamp"):
        return False
    return not (isinstance(status, Mapping) and status.get("phase") in ("Succeeded", "Failed"))


def _scheduled(pod: Mapping[str, Any]) -> bool:
    spec = pod.get("spec") or {}
    return isinstance(spec, Mapping) and bool(spec.get("nodeName"))


def _held(pods: Iterable[Mapping[str, Any]]) -> dict[str, float]:
    """What active pods request, by the scheduler's rule, in base units."""
    from workload_map.engine.resources import add, pod_request, summarize

    total = add(*(pod_request(p.get("spec")) for p in pods if _active(p)))
    return _resources(summarize(total))


class WorkloadCollector:
    """Yields the ``workloadmap_*`` families from ``inventory`` at each ``collect()``."""

    def __init__(
        self,
        inventory: Inventory,
        *,
        health: ExporterHealth | None = None,
        labels: LabelPolicy | None = None,
    ) -> None:
        self.inventory = inventory
        self.health = health or ExporterHealth()
        self.labels = labels or LabelPolicy()

    def describe(self) -> list[Metric]:
        return []  # no families at registration time (they come from the caches)

    def collect(self) -> Iterator[Metric]:
        if not self.health.is_leader():
            yield from self._health()
            return
        entries = self.inventory.entries()  # first: evaluating counts the errors reported below
        yield from self._health()
        yield from self._definitions()
        yield from self._workloads(entries)

    # -- families -------------------------------------------------------------------------

    def _health(self) -> Iterator[Metric]:
        sync = GaugeMetricFamily(
            "workloadmap_exporter_last_sync_timestamp_seconds",
            "When every watch cache of the exporter last completed a full list (Unix time).",
        )
        if self.health.last_sync is not None:
            sync.add_metric([], self.health.last_sync)
        yield sync
        restarts = CounterMetricFamily(
            "workloadmap_exporter_watch_restarts",
            "Watches that had to list again (410 Gone, lost connection) since start.",
        )
        restarts.add_metric([], float(self.health.restarts()))
        yield restarts
        leader = GaugeMetricFamily(
            "workloadmap_exporter_leader",
            "1 on the replica that exports workload series, 0 on the others.",
        )
        leader.add_metric([], 1.0 if self.health.is_leader() else 0.0)
        yield leader
        errors = CounterMetricFamily(
            "workloadmap_exporter_evaluation_errors",
            "Workload evaluations that failed, by definition.",
            labels=["definition"],
        )
        for name, count in sorted(self.inventory.errors.items()):
            errors.add_metric([name], float(count))
        yield errors

    def _definitions(self) -> Iterator[Metric]:
        info = InfoMetricFamily(
            "workloadmap_definition",
            "Every definition: the one in force per workload kind, and unusable cluster Kartas.",
            labels=["definition", "group", "version", "kind", "origin"],
        )
        ready = GaugeMetricFamily(
            "workloadmap_definition_ready",
            "1 when the definition is valid and in force (and, for a cluster Karta, the "
            "operator's Ready condition is not False).",
            labels=["definition", "origin"],
        )
        in_force = {(d.name, d.origin): d for d in self.inventory.definitions()}
        for (name, origin), d in sorted(in_force.items()):
            gvk = d.gvk
            assert gvk is not None
            info.add_metric([name, gvk.group, gvk.version, gvk.kind, origin], {})
            ready.add_metric([name, origin], 1.0 if _operator_ready(d.raw) else 0.0)
        for name, definition in self.inventory.cluster_kartas().items():
            if (name, "cluster") in in_force:
                continue
            if definition is None:  # invalid: known by name only
                info.add_metric([name, "", "", "", "cluster"], {})
            else:  # valid but overridden by another Karta of the same kind
                gvk = definition.gvk
                assert gvk is not None
                info.add_metric([name, gvk.group, gvk.version, gvk.kind, "cluster"], {})
            ready.add_metric([name, "cluster"], 0.0)
        yield info
        yield ready

    def _workloads(self, entries: Sequence[Entry]) -> Iterator[Metric]:
        copied = list(self.labels.workload_labels)
        info = InfoMetricFamily(
            "workloadmap_workload",
            "One series per workload of a kind a definition covers.",
            labels=[
                *_WORKLOAD,
                "version",
                "uid",
                "definition",
                "definition_origin",
                "top_level",
                *(label_name(k) for k in copied),
            ],
        )
        pod_info = InfoMetricFamily(
            "workloadmap_pod_workload",
            "Joins each pod to its top-level workload, component, instance and pod group.",
            labels=[
                "namespace",
                "pod",
                "uid",
                "workload",
                "kind",
                "component",
                "instance",
                "replica",
                "pod_group",
            ],
        )
        phase = GaugeMetricFamily(
            "workloadmap_workload_phase",
            "1 for every generic phase the workload matches, 0 for the others.",
            labels=[*_WORKLOAD, "phase"],
        )
        pods = GaugeMetricFamily(
            "workloadmap_workload_pods",
            "Pods of the workload: desired by the spec, current (active) and ready.",
            labels=[*_WORKLOAD, "state"],
        )
        comp_pods = GaugeMetricFamily(
            "workloadmap_component_pods",
            "Pods of one component instance: desired, current (active) and ready.",
            labels=[*_WORKLOAD, "component", "instance", "state"],
        )
        requests = GaugeMetricFamily(
            "workloadmap_workload_resource_requests",
            "Resources requested: source=spec by the desired pods, source=pods by active pods "
            "(cpu in cores, memory in bytes, extended resources in units).",
            labels=[*_WORKLOAD, "resource", "source"],
        )
        comp_requests = GaugeMetricFamily(
            "workloadmap_component_resource_requests",
            "Resources requested per component instance (same units and sources).",
            labels=[*_WORKLOAD, "component", "instance", "resource", "source"],
        )
        gang_min = GaugeMetricFamily(
            "workloadmap_gang_min_members",
            "The minimum member count of each pod group (gang) the definition implies.",
            labels=[*_WORKLOAD, "pod_group"],
        )
        gang_pods = GaugeMetricFamily(
            "workloadmap_gang_pods",
            "Member pods of each pod group: total (active) and scheduled (bound to a node).",
            labels=[*_WORKLOAD, "pod_group", "state"],
        )
        for e in entries:
            wl = _workload_labels(e)
            meta = e.obj.get("metadata") or {}
            obj_labels = meta.get("labels") if isinstance(meta, Mapping) else None
            obj_labels = obj_labels if isinstance(obj_labels, Mapping) else {}
            info.add_metric(
                [
                    *wl,
                    e.gvk.version,
                    e.uid,
                    e.definition.name,
                    e.definition.origin,
                    "true" if e.top_level else "false",
                    *(str(obj_labels.get(k, "")) for k in copied),
                ],
                {},
            )
            view = e.view
            if view is None:
                continue
            matched = set(view.get("phases") or ())
            for p in PHASES:
                phase.add_metric([*wl, p], 1.0 if p in matched else 0.0)
            if e.error is not None:
                continue  # counts of a half-evaluated workload would mislead: error counted
            counts = view.get("pods") or {}
            for state in _STATES:
                value = counts.get(state)
                if isinstance(value, int):
                    pods.add_metric([*wl, state], float(value))
            by_name = {
                str((p.get("metadata") or {}).get("name")): p for p in e.pods if isinstance(p, dict)
            }
            for resource, value in sorted(_resources(view.get("resources")).items()):
                requests.add_metric([*wl, resource, "spec"], value)
            for resource, value in sorted(_held(e.pods).items()):
                requests.add_metric([*wl, resource, "pods"], value)
            placed: dict[str, tuple[str, str, str]] = {}
            for node in _nodes(view.get("components") or ()):
                component = str(node.get("component") or node.get("name") or "")
                instance = str(node.get("instance") or "")
                replica = node.get("replica")
                node_pods = [str(p.get("name")) for p in node.get("pods") or () if p.get("name")]
                for name in node_pods:
                    placed[name] = (component, instance, "" if replica is None else str(replica))
                if replica is not None:
                    continue  # replica split nodes repeat their parent's counts in part
                replicas = node.get("replicas") or {}
                for state in _STATES:
                    value = replicas.get(state)
                    if isinstance(value, int):
                        comp_pods.add_metric([*wl, component, instance, state], float(value))
                for resource, value in sorted(_resources(node.get("resources")).items()):
                    comp_requests.add_metric([*wl, component, instance, resource, "spec"], value)
                held = _held(_subtree_pods(node, by_name))
                for resource, value in sorted(held.items()):
                    comp_requests.add_metric([*wl, component, instance, resource, "pods"], value)
            groups: dict[str, str] = {}
            for group in view.get("podGroups") or ():
                name = str(group.get("name") or "")
                members = [str(m) for m in group.get("pods") or ()]
                for m in members:
                    groups.setdefault(m, name)
                if isinstance(group.get("minMember"), int):
                    gang_min.add_metric([*wl, name], float(group["minMember"]))
                member_pods = [by_name[m] for m in members if m in by_name]
                active = [p for p in member_pods if _active(p)]
                gang_pods.add_metric([*wl, name, "total"], float(len(active)))
                gang_pods.add_metric(
                    [*wl, name, "scheduled"], float(sum(1 for p in active if _scheduled(p)))
                )
            if not e.top_level:
                continue  # a pod joins only its top-level workload
            for name, pod in sorted(by_name.items()):
                component, instance, replica = placed.get(name, ("", "", ""))
                pod_info.add_metric(
                    [
                        e.namespace,
                        name,
                        str((pod.get("metadata") or {}).get("uid") or ""),
                        e.name,
                        e.gvk.kind,
                        component,
                        instance,
                        replica,
                        groups.get(name, ""),
                    ],
                    {},
                )
        yield info
        yield pod_info
        yield phase
        yield pods
        yield comp_pods
        yield requests
        yield comp_requests
        yield gang_min
        yield gang_pods


def _subtree_pods(
    node: Mapping[str, Any], by_name: Mapping[str, dict[str, Any]]
) -> list[dict[str, Any]]:
    names = [str(p.get("name")) for n in _nodes([node]) for p in n.get("pods") or ()]
    return [by_name[n] for n in dict.fromkeys(names) if n in by_name]


def _operator_ready(raw: Mapping[str, Any] | None) -> bool:
    """False only when the operator set Ready=False on the Karta (no status: not known → 1)."""
    if raw is None:
        return True
    status = raw.get("status")
    conditions = status.get("conditions") if isinstance(status, Mapping) else None
    for c in conditions if isinstance(conditions, list) else ():
        if isinstance(c, Mapping) and c.get("type") == "Ready":
            return c.get("status") != "False"
    return True
