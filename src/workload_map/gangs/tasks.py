"""The tasks of a gang and the requests of its minimum (Volcano ``minTaskMember``, ``minResources``).

A *task* is one pod-bearing (component, instance) of a gang, the unit Volcano's
``minTaskMember`` counts and a pod names in its ``volcano.sh/task-spec`` annotation. It is named
by the instance id where the Karta enumerates instances from the object (``instanceIdPath``:
PyTorchJob replica types, JobSet replicated jobs, Ray worker groups; the names the kinds' own
controllers put in ``volcano.sh/task-spec``), else by the component (an LWS ``leader`` and
``worker``). A task's minimum is its instance's minimum (``minReplicas``, else ``replicas``, the
reference's rule the engine sums for the gang), divided among the gang instances of one
definition (one per LWS group). The split is *known* only when the task minimums add up to the
engine's minimum for the gang (and for each v2 subgroup); otherwise — a stated minimum, pods
created after admission, gang instances of unequal shapes — no task minimum is written and
only ``minMember`` holds, as for a Volcano Job whose ``minAvailable`` is below its replicas.

``minResources`` follows what the peers' controllers compute: with a known split, each task's
minimum times the effective request of one of its pods; otherwise the first ``minMember`` pods in
task order, tasks sorted by the value of their pods' priority class, highest first (Volcano's job
controller and the Kubeflow training operator sort the same way, a class they cannot find
counting 0; values come from the built-in ``system-*`` classes and the ``priorities`` given,
equal values keep the spec order, where the peers' unstable sort leaves it open); the engine's
reservation where it names one (pods created after admission). The arithmetic is ours because
no library maps a Karta's instances onto these fields.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from workload_map.engine import EngineError, PodGroup, Workload
from workload_map.engine.quantities import to_millis, to_units
from workload_map.engine.resources import instance_request
from workload_map.gangs.naming import dns_label
from workload_map.model import Karta

__all__ = ["BUILTIN_PRIORITIES", "Task", "TaskPlan", "plan_tasks", "quantities", "totals_of"]

#: the engine's count of DRA claims, not a resource name
_CLAIMS = "resourceClaims"

#: the PriorityClasses every cluster has (k8s.io/api scheduling: SystemCriticalPriority = 2e9,
#: node-critical 1000 above it); any other class's value must be given
BUILTIN_PRIORITIES: Mapping[str, int] = {
    "system-cluster-critical": 2_000_000_000,
    "system-node-critical": 2_000_001_000,
}


@dataclass(frozen=True)
class Task:
    """One task of one gang instance: its pods (desired) and the minimum the gang needs."""

    name: str
    component: str
    instance: str
    minimum: int
    pods: int
    per_pod: Mapping[str, int]


@dataclass
class TaskPlan:
    """The gang's tasks (minimums, only when the split is known) and its minimum's requests."""

    tasks: dict[str, int] = field(default_factory=dict)
    #: (component, instance) -> task name, for the pods' ``volcano.sh/task-spec``
    task_of: dict[tuple[str, str], str] = field(default_factory=dict)
    min_resources: dict[str, str] = field(default_factory=dict)
    rule: str = ""
    #: (component, instance) -> the effective request of one of its pods, the amounts
    #: ``min_resources`` is made of (a member that cannot join takes its own out again)
    per_pod: dict[tuple[str, str], dict[str, int]] = field(default_factory=dict)


@dataclass
class _Slot:
    component: str
    instance: str
    minimum: int
    pods: int
    per_pod: dict[str, int]
    priority_class: str | None = None


def quantities(totals: Mapping[str, int]) -> dict[str, str]:
    """Totals as Kubernetes quantities: CPU in cores or ``m``, the rest in whole units."""
    out: dict[str, str] = {}
    for name, value in sorted(totals.items()):
        if not value or name == _CLAIMS:
            continue
        if name == "cpu":
            out[name] = str(value // 1000) if value % 1000 == 0 else f"{value}m"
        else:
            out[name] = str(value)
    return out


def totals_of(amounts: Mapping[str, object]) -> dict[str, int]:
    """Quantities (as :func:`quantities` writes them) back to totals: CPU in millicores, the
    rest in whole units, with the engine's rounding."""
    return {
        str(name): to_millis(value) if name == "cpu" else to_units(value)
        for name, value in amounts.items()
    }


def _add(into: dict[str, int], per_pod: Mapping[str, int], count: int) -> None:
    for name, value in per_pod.items():
        into[name] = into.get(name, 0) + value * count


def _by_priority(slots: Sequence[_Slot], priorities: Mapping[str, int]) -> list[_Slot]:
    """The slots by their priority class's value, highest first; an unknown class counts 0
    (as the peers read a class they cannot find); equal values keep their order."""

    def value(slot: _Slot) -> int:
        name = slot.priority_class
        if not name:
            return 0
        return priorities.get(name, BUILTIN_PRIORITIES.get(name, 0))

    return sorted(slots, key=lambda slot: -value(slot))


def _fill(slots: Sequence[_Slot], minimum: int) -> dict[str, int]:
    """The requests of the first ``minimum`` pods, slot by slot in order."""
    totals: dict[str, int] = {}
    left = minimum
    for slot in slots:
        take = min(slot.pods, left)
        _add(totals, slot.per_pod, take)
        left -= take
        if left <= 0:
            break
    return totals


def _from_summary(summary: Mapping[str, Any]) -> dict[str, int]:
    """The engine's reservation (describe's resource summary) as totals."""
    totals: dict[str, int] = {}
    if summary.get("cpuMillis"):
        totals["cpu"] = int(summary["cpuMillis"])
    if summary.get("memoryBytes"):
        totals["memory"] = int(summary["memoryBytes"])
    for name, value in (summary.get("byResource") or {}).items():
        totals[str(name)] = int(value)
    return totals


def _slots(wl: Workload, karta: Karta, members: set[str], peers: int) -> list[_Slot] | None:
    """Every pod-bearing instance of the members, per gang instance; None when uneven."""
    out: list[_Slot] = []
    for component in karta.components():
        if component.name not in members:
            continue
        try:
            instances = wl.instances(component.name)
        except EngineError:
            continue  # a component the object breaks has no pods to count
        for instance_id, inst in instances.items():
            if not inst.describes_pods:
                continue
            minimum = inst.scale.reference_minimum() if inst.scale is not None else 0
            pods = inst.desired_pods()
            if minimum % peers or pods % peers:
                return None
            try:
                per_pod = instance_request(inst)
            except EngineError:
                per_pod = {}
            spec = inst.pod_spec_view() or {}
            priority = spec.get("priorityClassName")
            out.append(
                _Slot(
                    component.name,
                    instance_id,
                    minimum // peers,
                    pods // peers,
                    per_pod,
                    priority if isinstance(priority, str) else None,
                )
            )
    return out


def _names(karta: Karta, slots: Sequence[_Slot]) -> dict[tuple[str, str], str]:
    """Each slot's task name: its instance id where the object names instances, else its
    component; both where that name would be taken twice."""

    def plain(slot: _Slot) -> str:
        comp = karta.component(slot.component)
        by_instance = comp is not None and comp.instance_id_path and slot.instance
        return dns_label(slot.instance if by_instance else slot.component)

    counts: dict[str, int] = {}
    for slot in slots:
        counts[plain(slot)] = counts.get(plain(slot), 0) + 1
    out: dict[tuple[str, str], str] = {}
    for slot in slots:
        name = plain(slot)
        if counts[name] > 1 and slot.instance:
            name = dns_label(f"{slot.component}-{slot.instance}")
        out[(slot.component, slot.instance)] = name
    return out


def _subtree(karta: Karta, name: str) -> set[str]:
    return {name, *(c.name for c in karta.iter_descendants(name))}


def _proportional(slots: Sequence[_Slot], minimum: int) -> dict[str, int]:
    """The members' desired requests scaled from their desired pods to the minimum (the
    fallback where gang instances are uneven and no pod order can be told)."""
    pods = sum(s.pods for s in slots)
    if pods <= 0:
        return {}
    desired: dict[str, int] = {}
    for slot in slots:
        _add(desired, slot.per_pod, slot.pods)
    return {name: math.ceil(value * minimum / pods) for name, value in desired.items()}


def plan_tasks(
    wl: Workload,
    karta: Karta,
    group: PodGroup,
    members: set[str],
    peers: int = 1,
    priorities: Mapping[str, int] | None = None,
) -> TaskPlan:
    """The tasks and minimum requests of ``group`` (see the module docstring).

    ``members``: the components whose pods the gang counts; ``peers``: the gang instances of
    the same definition (an alpha gang per LWS group), among which each instance's pods are
    divided; ``priorities``: PriorityClass values by name (beyond the built-in ones), which
    order the tasks when the first ``minMember`` pods fill ``minResources``.
    """
    out = TaskPlan()
    per_gang = _slots(wl, karta, members, max(peers, 1))
    if per_gang is None:
        even = _slots(wl, karta, members, 1) or []
        out.rule = f"the instances do not divide evenly among {peers} gangs: no task minimums"
        out.min_resources = quantities(_proportional(even, group.min_member))
        out.per_pod = {(s.component, s.instance): dict(s.per_pod) for s in even}
        return out
    slots: list[_Slot] = per_gang
    out.per_pod = {(s.component, s.instance): dict(s.per_pod) for s in slots}
    names = _names(karta, slots)
    tasks: list[tuple[str, int, list[_Slot]]] = []  # (name, minimum, its slots in order)
    if group.sub_groups:
        for sub in group.sub_groups:
            if sub.min_member <= 0:
                continue
            inside = [s for s in slots if s.component in _subtree(karta, sub.name)]
            if sum(s.minimum for s in inside) == sub.min_member:
                tasks.extend(
                    (names[(s.component, s.instance)], s.minimum, [s]) for s in inside if s.minimum
                )
            else:  # the subgroup's minimum is the engine's own: one task for all of it
                tasks.append((dns_label(sub.name), sub.min_member, inside))
    else:
        tasks = [(names[(s.component, s.instance)], s.minimum, [s]) for s in slots if s.minimum]
    unique = len({n for n, _, _ in tasks}) == len(tasks)
    known = unique and sum(m for _, m, _ in tasks) == group.min_member
    totals: dict[str, int]
    if group.min_resources is not None:
        totals = _from_summary(group.min_resources)
        out.rule = "the engine's reservation (pods created after admission included)"
    elif known:
        totals = {}
        for _, minimum, inside in tasks:
            _add(totals, _fill(inside, minimum), 1)
        out.rule = "each task's minimum times its pods' requests"
    else:
        totals = _fill(_by_priority(slots, priorities or {}), group.min_member)
        out.rule = f"the first {group.min_member} pods in task order (by priority class)"
    out.min_resources = quantities(totals)
    if known:
        out.tasks = {name: minimum for name, minimum, _ in tasks}
        for name, _, inside in tasks:
            for s in inside:
                out.task_of[(s.component, s.instance)] = name
    return out
