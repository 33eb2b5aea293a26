"""The shared vocabulary of gang planning: what a workload should have, per gang and per object.

A :class:`Plan` is what :func:`workload_map.gangs.planner.plan` decides for one workload (its
gangs, the decisions as events); the objects it lists are built by
:mod:`workload_map.gangs.objects`. The admission webhook, the controller and the reconciler read
these types; the API versions are those of the backends' objects.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from workload_map.engine import Workload
from workload_map.gangs.naming import dns_subdomain

__all__ = [
    "COMPOSITE_API",
    "COSCHEDULING_API",
    "MAX_TEMPLATES",
    "NATIVE_API",
    "VOLCANO_API",
    "Composite",
    "Decision",
    "Gang",
    "Plan",
    "WorkloadRef",
    "metadata_of",
    "workload_object_name",
    "workload_ref",
]

NATIVE_API = "scheduling.k8s.io/v1beta1"
#: ``CompositePodGroup`` is served at v1alpha3 only in v1.37
COMPOSITE_API = "scheduling.k8s.io/v1alpha3"
COSCHEDULING_API = "scheduling.x-k8s.io/v1alpha1"
VOLCANO_API = "scheduling.volcano.sh/v1beta1"
#: ``WorkloadMaxPodGroupTemplates`` in k8s.io/api scheduling/v1beta1
MAX_TEMPLATES = 8


@dataclass(frozen=True)
class WorkloadRef:
    api_version: str
    kind: str
    name: str
    namespace: str
    uid: str | None

    @property
    def group(self) -> str:
        return self.api_version.split("/")[0] if "/" in self.api_version else ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "apiVersion": self.api_version,
            "kind": self.kind,
            "name": self.name,
            "namespace": self.namespace,
            "uid": self.uid,
        }


@dataclass(frozen=True)
class Decision:
    """One decision, as an event: a CamelCase reason and a message built from fields."""

    reason: str
    message: str
    warning: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "reason": self.reason,
            "message": self.message,
            "type": "Warning" if self.warning else "Normal",
        }


@dataclass
class Gang:
    """One gang instance and the object that enforces it."""

    name: str  # the object's name (a DNS subdomain)
    group: str  # describe's group name
    definition: str
    template: str  # the native pod-group template (a DNS label)
    backend: str
    scheduler: str
    min_count: int
    rule: str
    keys: tuple[str, ...] = ()
    pods: tuple[str, ...] = ()
    tasks: dict[str, int] = field(default_factory=dict)
    task_of_pod: dict[str, str] = field(default_factory=dict)
    min_resources: dict[str, str] = field(default_factory=dict)
    #: (component, instance) -> one pod's request, what ``min_resources`` was summed from
    pod_requests: dict[tuple[str, str], dict[str, int]] = field(default_factory=dict)
    priority_class: str | None = None
    standalone: bool = False  # native: no workloadRef (see the module docstring)
    #: native: the node-label key all members share a domain of (``schedulingConstraints``)
    topology_key: str | None = None
    #: the placement as stated and resolved (``gangs.topology.Placement``), for the decision
    placement: dict[str, Any] | None = None
    #: native: the CompositePodGroup this gang is a child of (one of its subgroups)
    parent: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            **({"topologyKey": self.topology_key} if self.topology_key else {}),
            "name": self.name,
            "group": self.group,
            "definition": self.definition,
            "template": self.template,
            "backend": self.backend,
            "scheduler": self.scheduler,
            "minCount": self.min_count,
            "rule": self.rule,
            "keys": list(self.keys),
            "pods": list(self.pods),
            "tasks": dict(self.tasks),
            "minResources": dict(self.min_resources),
            "standalone": self.standalone,
        }


@dataclass
class Composite:
    """One native composite group: a gang whose subgroups are its child PodGroups."""

    name: str
    group: str
    definition: str
    template: str
    min_groups: int
    rule: str
    children: tuple[str, ...]
    priority_class: str | None = None
    topology_key: str | None = None
    placement: dict[str, Any] | None = None


@dataclass
class Plan:
    """What a workload should have: handled or not (and why), its gangs and their objects."""

    workload: WorkloadRef
    handled: bool
    reason: str
    gangs: list[Gang] = field(default_factory=list)
    objects: list[dict[str, Any]] = field(default_factory=list)
    decisions: list[Decision] = field(default_factory=list)
    #: native composite groups (their children are in ``gangs``)
    composites: list[Composite] = field(default_factory=list)
    #: the engine's view of the workload and the pods planned with (placements, for the webhook)
    view: Workload | None = field(default=None, repr=False, compare=False)

    def gang_of(self, group: str) -> Gang | None:
        """The gang for describe's group name, if it gets an object."""
        for gang in self.gangs:
            if gang.group == group:
                return gang
        return None

    def to_dict(self) -> dict[str, Any]:
        return {
            "workload": self.workload.to_dict(),
            "handled": self.handled,
            "reason": self.reason,
            "gangs": [g.to_dict() for g in self.gangs],
            "objects": self.objects,
            "decisions": [d.to_dict() for d in self.decisions],
            **({"composites": [c.name for c in self.composites]} if self.composites else {}),
        }


def metadata_of(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    """An object's ``metadata``, empty where it has none (or not a mapping)."""
    meta = obj.get("metadata")
    # type() first: the ABC check costs a Python call, and a plan asks it many times
    return meta if type(meta) is dict or isinstance(meta, Mapping) else {}


def workload_ref(obj: Mapping[str, Any]) -> WorkloadRef:
    meta = metadata_of(obj)
    uid = meta.get("uid")
    return WorkloadRef(
        api_version=str(obj.get("apiVersion") or ""),
        kind=str(obj.get("kind") or ""),
        name=str(meta.get("name") or meta.get("generateName") or "unnamed"),
        namespace=str(meta.get("namespace") or "default"),
        uid=uid if isinstance(uid, str) and uid else None,
    )


def workload_object_name(ref: WorkloadRef) -> str:
    """The native Workload's name: ``<kind>-<name>``, lower-cased, hashed when too long."""
    return dns_subdomain(f"{ref.kind.lower()}-{ref.name}")
