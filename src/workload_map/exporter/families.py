"""The ``workloadmap_*`` metric families: names, types, help texts and labels, in exposition order.

Declared so that the exposition carries exactly the documented names: info families are named
without ``_info`` (the client appends it), counters without ``_total``, and phases are a plain
gauge with a ``phase`` label (a ``StateSet`` would name the label after the metric). The
collector (:mod:`workload_map.exporter.collector`) fills them; ``docs/metrics.md`` lists them.
"""

from __future__ import annotations

from dataclasses import dataclass

from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    InfoMetricFamily,
    Metric,
)

from workload_map.model import SEVERITY_ORDER

__all__ = ["FAMILIES", "PHASES", "Family", "label_name"]

#: every generic phase, most severe first (one phase series each)
PHASES = SEVERITY_ORDER
WORKLOAD_LABELS = ("namespace", "workload", "kind", "group")
STATES = ("desired", "current", "ready", "pending", "held")


@dataclass(frozen=True)
class Family:
    """One metric family: its base name, type (gauge, info or counter), help and labels."""

    name: str
    type: str
    help: str
    labels: tuple[str, ...]

    @property
    def exposed(self) -> str:
        """The name samples carry in the text format."""
        suffix = {"info": "_info", "counter": "_total"}.get(self.type, "")
        return self.name + suffix

    def header(self) -> str:
        kind = "gauge" if self.type == "info" else self.type
        text = self.help.replace("\\", r"\\").replace("\n", r"\n")
        return f"# HELP {self.exposed} {text}\n# TYPE {self.exposed} {kind}\n"

    def metric(self, labels: tuple[str, ...] | None = None) -> Metric:
        names = list(labels if labels is not None else self.labels)
        if self.type == "info":
            return InfoMetricFamily(self.name, self.help, labels=names)
        if self.type == "counter":
            return CounterMetricFamily(self.name, self.help, labels=names)
        return GaugeMetricFamily(self.name, self.help, labels=names)


def _f(name: str, kind: str, text: str, *labels: str) -> Family:
    return Family(name, kind, text, labels)


SYNC = _f(
    "workloadmap_exporter_last_sync_timestamp_seconds",
    "gauge",
    "When every watch cache of the exporter last completed a full list (Unix time).",
)
RESTARTS = _f(
    "workloadmap_exporter_watch_restarts",
    "counter",
    "Watches that had to list again (410 Gone, lost connection) since start.",
)
LEADER = _f(
    "workloadmap_exporter_leader",
    "gauge",
    "1 on the replica that exports workload series, 0 on the others.",
)
SYNCED = _f(
    "workloadmap_exporter_synced",
    "gauge",
    "1 once every watch cache has synced and every workload was evaluated once; 0 before "
    "(a restart): no workload or definition series are served then, so a scrape in that "
    "window records no workload as gone.",
)
ERRORS = _f(
    "workloadmap_exporter_evaluation_errors",
    "counter",
    "Workload evaluations that failed, by definition.",
    "definition",
)
DEFINITION = _f(
    "workloadmap_definition",
    "info",
    "Every definition: the one in force per workload kind, and unusable cluster Kartas.",
    "definition",
    "group",
    "version",
    "kind",
    "origin",
)
DEFINITION_READY = _f(
    "workloadmap_definition_ready",
    "gauge",
    "1 when the definition is valid and in force (and, for a cluster Karta, the operator's "
    "Ready condition is not False).",
    "definition",
    "origin",
)
WORKLOAD = _f(
    "workloadmap_workload",
    "info",
    "One series per workload of a kind a definition covers.",
    *WORKLOAD_LABELS,
    "version",
    "uid",
    "definition",
    "definition_origin",
    "top_level",
)
POD = _f(
    "workloadmap_pod_workload",
    "info",
    "Joins each pod to its top-level workload, component, instance and pod group.",
    "namespace",
    "pod",
    "uid",
    "workload",
    "kind",
    "component",
    "instance",
    "replica",
    "pod_group",
)
PHASE = _f(
    "workloadmap_workload_phase",
    "gauge",
    "1 for every generic phase the workload matches, 0 for the others.",
    *WORKLOAD_LABELS,
    "phase",
)
PHASE_SINCE = _f(
    "workloadmap_workload_phase_since_timestamp_seconds",
    "gauge",
    "When the workload entered each of its current phases (Unix time): source=status from "
    "its conditions' lastTransitionTime through the definition, source=exporter the time this "
    "exporter first saw it in the phase (resets when the exporter restarts).",
    *WORKLOAD_LABELS,
    "phase",
    "source",
)
GENERATION = _f(
    "workloadmap_workload_generation",
    "gauge",
    "metadata.generation of the workload (where the kind has one).",
    *WORKLOAD_LABELS,
)
OBSERVED_GENERATION = _f(
    "workloadmap_workload_observed_generation",
    "gauge",
    "status.observedGeneration of the workload (where its controller writes one).",
    *WORKLOAD_LABELS,
)
PODS = _f(
    "workloadmap_workload_pods",
    "gauge",
    "Pods of the workload: desired by the spec, current (active), ready, pending (active, on "
    "no node) and held (on a node, not finished; terminating included).",
    *WORKLOAD_LABELS,
    "state",
)
COMPONENT_PODS = _f(
    "workloadmap_component_pods",
    "gauge",
    "Pods of one component instance: desired, current, ready, pending and held.",
    *WORKLOAD_LABELS,
    "component",
    "instance",
    "state",
)
RESOURCES = _f(
    "workloadmap_workload_resources",
    "gauge",
    "Resources by state: requested by the spec's desired pods, pending (requested by active pods "
    "on no node), held (requested by pods on a node, not finished) (cpu in cores, memory in "
    "bytes, extended resources in units).",
    *WORKLOAD_LABELS,
    "resource",
    "state",
)
COMPONENT_RESOURCES = _f(
    "workloadmap_component_resources",
    "gauge",
    "Resources by state per component instance (same units and states).",
    *WORKLOAD_LABELS,
    "component",
    "instance",
    "resource",
    "state",
)
REQUESTS = _f(
    "workloadmap_workload_resource_requests",
    "gauge",
    "Deprecated (workloadmap_workload_resources): source=spec by the desired pods, source=pods "
    "by active pods, bound or not (cpu in cores, memory in bytes, extended resources in units).",
    *WORKLOAD_LABELS,
    "resource",
    "source",
)
COMPONENT_REQUESTS = _f(
    "workloadmap_component_resource_requests",
    "gauge",
    "Deprecated (workloadmap_component_resources): per component instance (same units and "
    "sources).",
    *WORKLOAD_LABELS,
    "component",
    "instance",
    "resource",
    "source",
)
GANG_MIN = _f(
    "workloadmap_gang_min_members",
    "gauge",
    "The minimum member count of each pod group (gang) the definition implies.",
    *WORKLOAD_LABELS,
    "pod_group",
)
GANG_PODS = _f(
    "workloadmap_gang_pods",
    "gauge",
    "Member pods of each pod group: total (active) and scheduled (bound to a node).",
    *WORKLOAD_LABELS,
    "pod_group",
    "state",
)
REFERENCES = _f(
    "workloadmap_workload_references",
    "gauge",
    "Objects each reference of the workload's definition resolved to (0 or 1 for a lookup, "
    "the count for a list). reason is empty when it resolved, else missing, forbidden, "
    "unserved, invalid, error or truncated: the workload's other series then leave out what "
    "the object would add.",
    *WORKLOAD_LABELS,
    "reference",
    "object_kind",
    "object",
    "reason",
)

#: in exposition order
FAMILIES = (
    SYNC,
    RESTARTS,
    LEADER,
    SYNCED,
    ERRORS,
    DEFINITION,
    DEFINITION_READY,
    WORKLOAD,
    POD,
    PHASE,
    PHASE_SINCE,
    GENERATION,
    OBSERVED_GENERATION,
    PODS,
    COMPONENT_PODS,
    RESOURCES,
    COMPONENT_RESOURCES,
    REQUESTS,
    COMPONENT_REQUESTS,
    GANG_MIN,
    GANG_PODS,
    REFERENCES,
)
PER_WORKLOAD = FAMILIES[7:]


def label_name(key: str) -> str:
    """A Kubernetes label key as a Prometheus label name, as kube-state-metrics does."""
    return "label_" + "".join(c if c.isalnum() or c == "_" else "_" for c in key)
