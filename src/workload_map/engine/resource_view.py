"""The resources view of a workload: desired and actual requests per instance and component.

This is the JSON of ``Workload.resources()`` (``schemas/resources.schema.json``). Desired is one
pod's effective request (``resources.instance_request``) times the pods the instance desires;
actual is what the workload's active pods request now, and is null when no pods are known (a
file). ``readyPods`` counts the active pods that are ready (``pod_status.pod_is_ready``), as
``describe`` and the shared evaluation do.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from workload_map.engine import resources as res
from workload_map.engine.extract import Extractor
from workload_map.engine.pod_status import pod_is_ready
from workload_map.engine.pods import Placement
from workload_map.engine.resources import ResourceSummary, instance_request
from workload_map.engine.structure import Structure
from workload_map.model.views import View, json_field

__all__ = [
    "ComponentResources",
    "InstanceResources",
    "Observed",
    "WorkloadResources",
    "workload_resources",
]


class Observed(Protocol):
    """What the view reads of one workload (``Workload`` provides it, as it does
    ``describe.Described``): its prepared definition, extractor and candidate pods with their
    placements."""

    @property
    def structure(self) -> Structure: ...
    @property
    def extractor(self) -> Extractor: ...
    @property
    def pods(self) -> Sequence[Mapping[str, Any]] | None: ...  # None: no pods known
    @property
    def candidate_pods(self) -> Sequence[Mapping[str, Any]]: ...
    @property
    def placements(self) -> Sequence[Placement]: ...  # one per candidate pod


class InstanceResources(View):
    """One instance: what one pod requests, the pods desired and seen, and their totals."""

    per_pod: ResourceSummary = json_field("perPod")
    desired_pods: int = json_field("desiredPods")
    observed_pods: int | None = json_field("observedPods")
    ready_pods: int | None = json_field("readyPods")
    desired: ResourceSummary = json_field("desired")
    actual: ResourceSummary | None = json_field("actual")


class ComponentResources(View):
    """One pod-bearing component: its instances and their sums."""

    instances: Mapping[str, InstanceResources] = json_field("instances")
    desired_pods: int = json_field("desiredPods")
    observed_pods: int | None = json_field("observedPods")
    desired: ResourceSummary = json_field("desired")
    actual: ResourceSummary | None = json_field("actual")


class WorkloadResources(View):
    """Desired (spec times desired pods) and actual (pods) requests of a workload."""

    components: Mapping[str, ComponentResources] = json_field("components")
    desired: ResourceSummary = json_field("desired")
    actual: ResourceSummary | None = json_field("actual")


def workload_resources(wl: Observed) -> WorkloadResources:
    """Desired and actual requests per instance, per component and for the whole workload."""
    pods_known = wl.pods is not None
    by_instance: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for pod, p in zip(wl.candidate_pods, wl.placements, strict=True):
        if p.attributed and p.active and p.component is not None:  # what pods hold now
            by_instance.setdefault((p.component, p.instance or ""), []).append(pod)
    components: dict[str, ComponentResources] = {}
    workload_desired: res.Totals = {}
    workload_actual: res.Totals = {}
    for name in wl.structure.pod_bearing:
        instances: dict[str, InstanceResources] = {}
        comp_desired: res.Totals = {}
        comp_actual: res.Totals = {}
        for instance_id, inst in wl.extractor.instances(name).items():
            per_pod = instance_request(inst)
            count = inst.desired_pods()
            desired = res.scaled(per_pod, count)
            pods = by_instance.get((name, instance_id), [])
            actual = res.add(*(res.pod_request(p.get("spec")) for p in pods))
            instances[instance_id] = InstanceResources(
                per_pod=ResourceSummary.of(per_pod),
                desired_pods=count,
                observed_pods=len(pods) if pods_known else None,
                ready_pods=sum(1 for p in pods if pod_is_ready(p)) if pods_known else None,
                desired=ResourceSummary.of(desired),
                actual=ResourceSummary.of(actual) if pods_known else None,
            )
            comp_desired = res.add(comp_desired, desired)
            comp_actual = res.add(comp_actual, actual)
        components[name] = ComponentResources(
            instances=instances,
            desired_pods=sum(i.desired_pods for i in instances.values()),
            observed_pods=sum(i.observed_pods or 0 for i in instances.values())
            if pods_known
            else None,
            desired=ResourceSummary.of(comp_desired),
            actual=ResourceSummary.of(comp_actual) if pods_known else None,
        )
        workload_desired = res.add(workload_desired, comp_desired)
        workload_actual = res.add(workload_actual, comp_actual)
    return WorkloadResources(
        components=components,
        desired=ResourceSummary.of(workload_desired),
        actual=ResourceSummary.of(workload_actual) if pods_known else None,
    )
