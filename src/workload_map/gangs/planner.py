"""The scheduling objects a workload should have, per backend, from its Karta and its pods.

Pure: a workload object, its Karta and (optionally) its pods in; the desired Workload and
PodGroup objects out, with every decision that shaped them. The gangs and their minimums are
the engine's (``Workload.pod_groups()``); this module only maps them onto each scheduler's API
and applies the rules those APIs impose:

- a gang of one gets no object; a gang the engine sizes 0 (zero replicas) gets none either;
  but a Volcano gang of one whose other pods are created after admission gets ``minMember: 1``
  and the whole gang's ``minResources`` (they are reserved for at admission);
- a suspended workload has none (its gangs are released), a finished one none;
- native: one ``scheduling.k8s.io/v1beta1`` Workload with one pod-group template per gang
  definition (at most 8: more, and the PodGroups are made standalone, without ``workloadRef``),
  one PodGroup per gang instance; templates of a Workload that exists already cannot change,
  so a gang whose template it lacks is made standalone too;
- coscheduling and Volcano: one PodGroup per gang instance, ``minResources`` the requests of
  the gang's minimum and, for Volcano gangs of several tasks, ``minTaskMember`` per task
  (``workload_map.gangs.tasks``);
- KAI: nothing (KAI groups pods itself).

Priority (native): kube-scheduler refuses every member of a pod group whose priority differs
from the group's, and ranks members by the group's priority in preemption, so a native PodGroup
names the priority class its members run with (:func:`_member_priority`; the class only: the
Priority admission plugin fills ``priority``). Members without a class take the cluster's
``globalDefault`` class (``GangConfig.default_priority_class``), as the plugin gives it to pods
and pod groups alike. Members whose classes resolve to different values can share no pod group:
such a gang gets no object and its pods schedule one by one (event ``MixedPriorities``).
Disruption (native): a gang is one unit in preemption, ``disruptionMode: {all: {}}`` (the API's
default is ``single``, which lets the scheduler preempt a subset of a running gang); the
workload's annotation ``workload-map.run.ai/gang-disruption-mode: single`` asks for the API's.
Topology (native): a required placement level becomes ``schedulingConstraints.topology`` where
the API server keeps the field (:mod:`workload_map.gangs.topology`, :func:`_placement`).
Composite (native): a gang whose subgroups make up its minimum becomes one ``CompositePodGroup``
(``minGroupCount`` = its subgroups) with a child PodGroup per subgroup, where the cluster serves
them (:func:`_composites`); the Workload then holds ``compositePodGroupTemplates`` only.

The backend of a gang is the one its pods' ``spec.schedulerName`` selects (the pods' when
known, else their templates'); a gang whose members name different schedulers gets no object.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from workload_map.engine import EngineError, PodGroup, Workload
from workload_map.engine.references import Resolver
from workload_map.gangs.config import (
    ANNOTATION_DECISION,
    ANNOTATION_DISRUPTION,
    ANNOTATION_QUEUE,
    ANNOTATION_TIMEOUT,
    COSCHEDULING,
    KAI,
    LABEL_MANAGED_BY,
    LABEL_WORKLOAD,
    LABEL_WORKLOAD_KIND,
    LABEL_WORKLOAD_UID,
    MANAGED_BY,
    NATIVE,
    VOLCANO,
    VOLCANO_QUEUE_ANNOTATION,
    GangConfig,
)
from workload_map.gangs.jobs import taken_over
from workload_map.gangs.naming import dns_label, dns_subdomain, label_value
from workload_map.gangs.policy import left_alone, opt_in
from workload_map.gangs.tasks import BUILTIN_PRIORITIES, plan_tasks
from workload_map.gangs.topology import constraints, placement
from workload_map.model import Karta

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
    "SpecMemo",
    "WorkloadRef",
    "member_components",
    "owned_metadata",
    "plan",
    "pod_specs",
    "template_names",
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

_RELEASED = ("Suspended", "Suspending")
_FINISHED = ("Completed", "Failed")


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


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    meta = obj.get("metadata")
    return meta if isinstance(meta, Mapping) else {}


def workload_ref(obj: Mapping[str, Any]) -> WorkloadRef:
    meta = _meta(obj)
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


def pod_specs(wl: Workload) -> list[tuple[str, dict[str, Any]]]:
    """(component, pod spec) of every instance the object describes, in definition order."""
    out: list[tuple[str, dict[str, Any]]] = []
    for component in wl.karta.components():
        try:
            instances = wl.instances(component.name)
        except EngineError:
            continue  # a component the object breaks has no templates to read
        for inst in instances.values():
            if not inst.describes_pods:
                continue
            spec = inst.pod_spec_view()
            if spec is None and isinstance(inst.fragmented_pod_spec, dict):
                spec = inst.fragmented_pod_spec
            if isinstance(spec, dict):
                out.append((component.name, spec))
    return out


def member_components(karta: Karta, group: PodGroup) -> set[str]:
    """The components whose pods a gang counts (their descendants included)."""
    gang = karta.gang_scheduling
    if gang is None:
        return set()
    if gang.pod_group is not None:
        return {c.name for c in karta.components()}
    names: set[str] = set()
    for definition in gang.pod_groups:
        if definition.name != group.definition:
            continue
        for member in definition.members:
            names.add(member.component_name)
            names.update(c.name for c in karta.iter_descendants(member.component_name))
    return names


def _timeout(obj: Mapping[str, Any], config: GangConfig) -> int:
    value = (_meta(obj).get("annotations") or {}).get(ANNOTATION_TIMEOUT)
    try:
        seconds = int(value) if value is not None else config.schedule_timeout_seconds
    except (TypeError, ValueError):
        return config.schedule_timeout_seconds
    return seconds if seconds > 0 else config.schedule_timeout_seconds


#: the label KubeRay reads a RayCluster's queue from and Volcano's job controller puts on pods
VOLCANO_QUEUE_LABEL = "volcano.sh/queue-name"


#: the native ``disruptionMode`` values a workload's annotation may ask for
DISRUPTION_MODES = ("all", "single")


def _disruption(obj: Mapping[str, Any], out: Plan) -> dict[str, dict[str, Any]]:
    """The native groups' ``disruptionMode``: ``all`` unless the workload asks for ``single``."""
    value = (_meta(obj).get("annotations") or {}).get(ANNOTATION_DISRUPTION)
    if value is not None and value not in DISRUPTION_MODES:
        out.decisions.append(
            Decision(
                "BadAnnotation",
                f"annotation {ANNOTATION_DISRUPTION}={value!r} is not one of "
                f"{', '.join(DISRUPTION_MODES)}: the default, all, is used",
                warning=True,
            )
        )
        value = None
    return {str(value or "all"): {}}


def _queue(obj: Mapping[str, Any], config: GangConfig) -> str:
    """Our annotation, Volcano's queue annotation (LWS reads it too), the label KubeRay reads."""
    meta = _meta(obj)
    annotations = meta.get("annotations") or {}
    labels = meta.get("labels") or {}
    for source, key in (
        (annotations, ANNOTATION_QUEUE),
        (annotations, VOLCANO_QUEUE_ANNOTATION),
        (labels, VOLCANO_QUEUE_LABEL),
    ):
        value = source.get(key)
        if isinstance(value, str) and value:
            return value
    return config.volcano_queue


def owned_metadata(
    ref: WorkloadRef, name: str, decision: Mapping[str, Any], extra_labels: Mapping[str, str]
) -> dict[str, Any]:
    labels = {
        LABEL_MANAGED_BY: MANAGED_BY,
        LABEL_WORKLOAD: label_value(ref.name),
        LABEL_WORKLOAD_KIND: label_value(ref.kind),
        **extra_labels,
    }
    if ref.uid:
        labels[LABEL_WORKLOAD_UID] = label_value(ref.uid)
    meta: dict[str, Any] = {
        "name": name,
        "namespace": ref.namespace,
        "labels": labels,
        "annotations": {ANNOTATION_DECISION: json.dumps(dict(decision), sort_keys=True)},
    }
    if ref.uid:
        # the garbage collector removes our objects with the workload; not blockOwnerDeletion,
        # which would need permission to update the workload's finalizers
        meta["ownerReferences"] = [
            {
                "apiVersion": ref.api_version,
                "kind": ref.kind,
                "name": ref.name,
                "uid": ref.uid,
                "controller": True,
            }
        ]
    return meta


def _schedulers(
    wl: Workload,
    group: PodGroup,
    members: set[str],
    pods_by_name: Mapping[str, Mapping[str, Any]],
    specs: Sequence[tuple[str, dict[str, Any]]],
) -> tuple[set[str], str | None]:
    """The scheduler names of the gang's pods (known pods, else templates) and a priority class."""
    names: set[str] = set()
    priority: str | None = None
    known = [pods_by_name[p] for p in group.pods if p in pods_by_name]
    sources: Iterable[Mapping[str, Any]]
    if known:
        sources = [_spec(p) for p in known]
    else:
        sources = [spec for component, spec in specs if component in members]
    for spec in sources:
        value = spec.get("schedulerName")
        names.add(value if isinstance(value, str) and value else "default-scheduler")
        pc = spec.get("priorityClassName")
        if priority is None and isinstance(pc, str) and pc:
            priority = pc
    if priority is None and known:  # pods copy their template's; a pod that names none defers
        for component, spec in specs:
            pc = spec.get("priorityClassName")
            if component in members and isinstance(pc, str) and pc:
                return names, pc
    return names, priority


@dataclass(frozen=True)
class _MemberPriority:
    """The priority class one pod group of the gang's members can carry, or why none can."""

    #: the class the group names; None: no member names one and the cluster has no default
    priority_class: str | None
    #: set when the members' classes resolve to different priorities (no group can hold them)
    conflict: str | None = None


def _class_value(name: str, config: GangConfig) -> int | None:
    if not name:
        return 0  # no class and no globalDefault: the plugin gives priority 0
    values = dict(config.priority_values)
    if name in values:
        return values[name]
    return BUILTIN_PRIORITIES.get(name)


def _member_priority(
    group: PodGroup,
    members: set[str],
    pods_by_name: Mapping[str, Mapping[str, Any]],
    specs: Sequence[tuple[str, dict[str, Any]]],
    config: GangConfig,
) -> _MemberPriority:
    """The class a native PodGroup of ``group`` names, from its members' pods and templates.

    Every member template counts (the controller makes the pods from them); a known pod counts
    when it names a class (the Priority admission plugin names the resolved class on every pod
    it admits; a pod naming none is taken as its template's, as in files that abbreviate pods).
    A template naming none runs with the cluster's ``globalDefault`` class, else priority 0.
    Classes of equal value may share a group; different values cannot (the scheduler compares
    each member's priority with the group's).
    """
    default = config.default_priority_class or ""
    counts: dict[str, int] = {}
    for component, spec in specs:
        if component in members:
            pc = spec.get("priorityClassName")
            name = pc if isinstance(pc, str) and pc else default
            counts[name] = counts.get(name, 0) + 1
    for pod_name in group.pods:
        pod = pods_by_name.get(pod_name)
        pc = _spec(pod).get("priorityClassName") if pod is not None else None
        if isinstance(pc, str) and pc:
            counts[pc] = counts.get(pc, 0) + 1
    if not counts:
        return _MemberPriority(default or None)
    # the most used class (then by name): any of equal value would do
    chosen = sorted(counts, key=lambda n: (-counts[n], n))[0]
    if len(counts) > 1:
        values = {name: _class_value(name, config) for name in counts}
        if None in values.values() or len(set(values.values())) > 1:
            shown = ", ".join(
                f"{name or '(none)'}=" + ("unknown" if values[name] is None else str(values[name]))
                for name in sorted(counts)
            )
            return _MemberPriority(
                None,
                f"pod group {group.name}: its pods' priority classes differ ({shown}), and "
                "kube-scheduler binds no member of a pod group whose priority differs from "
                "the group's: no gang is enforced, the pods schedule one by one",
            )
    return _MemberPriority(chosen or None)


def _spec(pod: Mapping[str, Any]) -> Mapping[str, Any]:
    spec = pod.get("spec")
    return spec if isinstance(spec, Mapping) else {}


def _bad_name_only(group: PodGroup) -> bool:
    """Whether the engine's only complaint is the name, which the object's name fixes."""
    return bool(group.error) and str(group.error).startswith(f"pod group name {group.name!r}")


class SpecMemo:
    """What the engine derives from a workload object alone, per version of it; bounded LRU.

    Keyed by (uid, resourceVersion, definition) and held with the Karta it came from (a
    replaced definition never hits). The webhook plans a workload once per new pod and the
    controller once per pod change, while the groups its spec implies without pods stay the
    same for one version of the object; objects without a uid or resourceVersion (files) are
    not kept. A dict in insertion order is the LRU: no library is needed for it.
    """

    def __init__(self, capacity: int = 20_000) -> None:
        self.capacity = capacity
        self.hits = 0
        self.misses = 0
        self._lock = threading.Lock()
        self._items: dict[tuple[Any, ...], tuple[Karta, list[PodGroup], list[str]]] = {}

    def __len__(self) -> int:
        return len(self._items)

    def implied(self, wl: Workload) -> tuple[list[PodGroup], list[str]]:
        """The gangs the object implies without pods, and the engine's notes on them."""
        meta = _meta(wl.obj)
        uid, rv = meta.get("uid"), meta.get("resourceVersion")
        # the referenced objects' versions too: a runtime edited changes its TrainJobs' gangs
        refs = _bound_versions(wl.resolution.bindings)
        key = (
            (str(uid), str(rv), str(wl.definition_name), refs)
            if uid and rv and self.capacity
            else None
        )
        if key is not None:
            with self._lock:
                found = self._items.pop(key, None)
                if found is not None and found[0] is wl.karta:
                    self._items[key] = found  # the most recently used goes last
                    self.hits += 1
                    return found[1], found[2]
        # the references already resolved for this plan (a runtime's template decides gangs)
        implied = Workload(
            wl.karta, wl.obj, definition_name=wl.definition_name, references=wl.resolution
        )
        groups, notes = list(implied.pod_groups()), list(implied.gang_notes())
        if key is not None:
            with self._lock:
                self.misses += 1
                self._items[key] = (wl.karta, groups, notes)
                while len(self._items) > self.capacity:
                    del self._items[next(iter(self._items))]
        return groups, notes


def _bound_versions(bindings: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    """(name, resourceVersions) of a workload's bound references (a list: each object's)."""
    out: list[tuple[str, str]] = []
    for name, value in sorted(bindings.items()):
        items = value if isinstance(value, list) else [value]
        versions = ",".join(
            str(_meta(o).get("resourceVersion") or _meta(o).get("name") or "")
            for o in items
            if isinstance(o, Mapping)
        )
        out.append((name, versions))
    return tuple(out)


#: no memory: every plan derives the implied groups again
_NO_MEMO = SpecMemo(capacity=0)


def _pod_name(pod: Mapping[str, Any]) -> str:
    meta = _meta(pod)
    name = meta.get("name")
    return name if isinstance(name, str) else ""


def plan(
    karta: Karta | Mapping[str, Any] | str,
    obj: Mapping[str, Any],
    pods: Iterable[Mapping[str, Any]] | None = None,
    *,
    namespace_labels: Mapping[str, str] | None = None,
    config: GangConfig | None = None,
    existing_templates: Sequence[str] | None = None,
    force: bool = False,
    memo: SpecMemo | None = None,
    references: Resolver | None = None,
) -> Plan:
    """The scheduling objects ``obj`` should have (see the module docstring for the rules).

    ``existing_templates``: the template names of the native Workload already in the cluster
    (they cannot change). ``force`` skips the opt-in check (``describe`` shows what would be
    done). ``memo`` keeps what depends on the object only, per version of it (the webhook
    and the controller plan one workload many times). ``references`` reads the objects the
    definition references (a TrainJob's runtime: the watch cache's resolver in the cluster).
    """
    config = config or GangConfig()
    pod_list = [dict(p) for p in pods] if pods is not None else None
    # one engine view serves the spec-side questions too (they do not depend on the pods)
    wl_spec = Workload(karta, dict(obj), pods=pod_list, references=references)
    ref = workload_ref(wl_spec.obj)
    out = Plan(workload=ref, handled=False, reason="", view=wl_spec)
    gang = wl_spec.karta.gang_scheduling
    if gang is None or (gang.pod_group is None and not gang.pod_groups):
        out.reason = f"definition {wl_spec.definition_name} has no gang-scheduling instructions"
        return out
    specs = pod_specs(wl_spec)
    alone = left_alone(wl_spec.obj, [s for _, s in specs], config)
    if alone is not None and config.workload_with_job and alone == taken_over(wl_spec.obj):
        # under WorkloadWithJob every root Job is the Job controller's: only the opted-in
        # ones are reported (an event on every Job of the cluster would be noise)
        quiet = opt_in(wl_spec.obj, namespace_labels, config)
        if not quiet.enabled and not force:
            out.reason = quiet.reason
            return out
    if alone is not None:
        out.reason = f"left alone: {alone}"
        out.decisions.append(Decision("LeftAlone", out.reason))
        return out
    choice = opt_in(wl_spec.obj, namespace_labels, config)
    if not choice.enabled and not force:
        out.reason = choice.reason
        return out
    out.handled = True
    out.reason = choice.reason if choice.enabled else f"shown although {choice.reason}"
    phases = wl_spec.phases()
    released = [p for p in phases if p in _RELEASED]
    if released:
        out.decisions.append(
            Decision("GangsReleased", f"the workload is {released[0]}: its gangs are released")
        )
        return out
    finished = [p for p in phases if p in _FINISHED]
    if finished:
        out.decisions.append(
            Decision("GangsRemoved", f"the workload is {finished[0]}: its gangs are removed")
        )
        return out

    groups: dict[str, PodGroup] = {}
    notes: list[str] = []
    # gang instances per definition the spec implies (those whose keys only pods carry too):
    # an alpha gang's instances share its members' pods (tasks.py)
    implied_count: dict[str, int] = {}
    if pod_list is not None and gang.pod_group is None:
        # the alpha form: groups the spec implies that have no pods yet come from a view
        # without pods (the v2 group is the same with or without them)
        implied_groups, implied_notes = (memo if memo is not None else _NO_MEMO).implied(wl_spec)
        for group in implied_groups:
            implied_count[group.definition] = implied_count.get(group.definition, 0) + 1
            if not group.unresolved_keys:
                groups[group.name] = group
        notes.extend(implied_notes)
    for group in wl_spec.pod_groups():
        if pod_list is None:
            implied_count[group.definition] = implied_count.get(group.definition, 0) + 1
        if group.unresolved_keys:
            continue  # keys only pods carry: the gang appears with its first pod
        groups[group.name] = group
    notes.extend(n for n in wl_spec.gang_notes() if n not in notes)
    for note in notes:
        out.decisions.append(Decision("NoGang", note))
    pods_by_name = {_pod_name(p): p for p in pod_list or ()}
    queue, timeout = _queue(wl_spec.obj, config), _timeout(wl_spec.obj, config)
    peers: dict[str, int] = {}
    for group in groups.values():
        peers[group.definition] = peers.get(group.definition, 0) + 1
    for definition, count in implied_count.items():
        peers[definition] = max(peers.get(definition, 0), count)
    placed: dict[str, tuple[str, str]] | None = None  # pod -> (component, instance), for tasks

    for group in sorted(groups.values(), key=lambda g: g.name):
        if group.error is not None and not _bad_name_only(group):
            out.decisions.append(
                Decision("GangError", f"pod group {group.name}: {group.error}", warning=True)
            )
            continue
        # a gang of one needs no object, unless its other pods come after admission and the
        # backend reserves for them (below)
        reserving = group.min_member == 1 and group.created_later > 0
        if group.min_member < 2 and not reserving:
            out.decisions.append(
                Decision(
                    "GroupOfOne",
                    f"pod group {group.name}: minimum {group.min_member}, no object needed",
                )
            )
            continue
        members = member_components(wl_spec.karta, group)
        schedulers, priority = _schedulers(wl_spec, group, members, pods_by_name, specs)
        backends = {config.backend_for(s) for s in schedulers}
        if len(schedulers) != 1 or len(backends) != 1:
            out.decisions.append(
                Decision(
                    "MixedSchedulers",
                    f"pod group {group.name}: its pods name schedulers "
                    f"{', '.join(sorted(schedulers))}: no gang can be enforced",
                    warning=True,
                )
            )
            continue
        scheduler, backend = next(iter(schedulers)), next(iter(backends))
        if backend is None:
            out.decisions.append(
                Decision(
                    "UnknownScheduler",
                    f"pod group {group.name}: scheduler {scheduler} is not configured as a "
                    "gang backend (native, coscheduling, Volcano or KAI)",
                )
            )
            continue
        if backend == NATIVE:
            member_priority = _member_priority(group, members, pods_by_name, specs, config)
            if member_priority.conflict is not None:
                out.decisions.append(
                    Decision("MixedPriorities", member_priority.conflict, warning=True)
                )
                continue
            priority = member_priority.priority_class
        if backend == KAI:
            out.decisions.append(
                Decision(
                    "KaiGroupsItself",
                    f"pod group {group.name}: scheduler {scheduler} is KAI, which groups its "
                    "pods itself: no object",
                )
            )
            continue
        if reserving and backend != VOLCANO:
            # only Volcano's minResources holds the later pods' room at admission (what LWS's
            # provider under LeaderReady and Volcano's Spark integration write)
            out.decisions.append(
                Decision(
                    "GroupOfOne",
                    f"pod group {group.name}: minimum 1 ({group.created_later} pods created "
                    f"after admission, which {backend} does not reserve for), no object needed",
                )
            )
            continue
        tasks: dict[str, int] = {}
        task_of_pod: dict[str, str] = {}
        min_resources: dict[str, str] = {}
        pod_requests: dict[tuple[str, str], dict[str, int]] = {}
        if backend in (COSCHEDULING, VOLCANO):  # native has neither minResources nor tasks
            split = plan_tasks(
                wl_spec,
                wl_spec.karta,
                group,
                members,
                peers.get(group.definition, 1) if gang.pod_group is None else 1,
                dict(config.priority_values),
            )
            min_resources, pod_requests = split.min_resources, split.per_pod
            if backend == VOLCANO and len(split.tasks) > 1:  # a multi-task gang
                tasks = split.tasks
                if placed is None:
                    placed = {
                        p.pod: (p.component, p.instance or "")
                        for p in wl_spec.placements
                        if p.attributed and p.component is not None
                    }
                for pod in group.pods:
                    where = placed.get(pod)
                    task = split.task_of.get(where) if where is not None else None
                    if task is not None:
                        task_of_pod[pod] = task
        topology_key, stated = _placement(group, wl_spec.obj, backend, config, out)
        out.gangs.append(
            Gang(
                # coscheduling finds the group by the pods' label value: one name for both
                name=dns_label(group.name)
                if backend == COSCHEDULING
                else dns_subdomain(group.name),
                group=group.name,
                definition=group.definition,
                template=dns_label(group.definition or "gang"),
                backend=backend,
                scheduler=scheduler,
                min_count=group.min_member,
                rule=group.rule,
                keys=tuple(group.keys),
                pods=tuple(sorted(group.pods)),
                tasks=tasks,
                task_of_pod=task_of_pod,
                min_resources=min_resources,
                pod_requests=pod_requests,
                priority_class=priority,
                topology_key=topology_key,
                placement=stated,
            )
        )
    _composites(out, groups, config, existing_templates, wl_spec.karta, {c for c, _ in specs})
    _native_layout(out, existing_templates)
    disruption = (
        _disruption(wl_spec.obj, out) if any(g.backend == NATIVE for g in out.gangs) else {}
    )
    out.objects = _objects(
        out, choice.reason, queue, timeout, _volcano_annotations(wl_spec.obj), disruption
    )
    return out


def _native_layout(out: Plan, existing: Sequence[str] | None) -> None:
    """Mark native gangs standalone where no template can hold them (see the docstring)."""
    # a composite's children always hold their templates (_composites checked them)
    native = [g for g in out.gangs if g.backend == NATIVE and g.parent is None]
    templates = sorted({g.template for g in native})
    if len(templates) > MAX_TEMPLATES:
        out.decisions.append(
            Decision(
                "TooManyPodGroupTemplates",
                f"{len(templates)} pod-group templates exceed the Workload API's "
                f"{MAX_TEMPLATES}: PodGroups are created without a Workload (standalone)",
                warning=True,
            )
        )
        for g in native:
            g.standalone = True
        return
    if existing is None:
        return
    missing = sorted(set(templates) - set(existing))
    if missing:
        out.decisions.append(
            Decision(
                "TemplatesImmutable",
                f"the existing Workload has no template {', '.join(missing)} and its templates "
                "cannot change: those PodGroups are created standalone",
            )
        )
        for g in native:
            if g.template in missing:
                g.standalone = True


def _decision(g: Gang, opted: str) -> dict[str, Any]:
    return {
        "backend": g.backend,
        "scheduler": g.scheduler,
        "group": g.group,
        "definition": g.definition,
        "minCount": g.min_count,
        "rule": g.rule,
        "keys": list(g.keys),
        "optIn": opted,
        **({"minTaskMember": dict(g.tasks)} if g.tasks else {}),
        **({"topology": dict(g.placement)} if g.placement else {}),
    }


def _volcano_annotations(obj: Mapping[str, Any]) -> dict[str, str]:
    """The workload's ``volcano.sh/*`` annotations, which Volcano's scheduler reads on a
    PodGroup (preemptable, revocable zone, disruption budgets...); LWS's Volcano provider
    copies the same set."""
    annotations = _meta(obj).get("annotations") or {}
    return {
        k: v
        for k, v in annotations.items()
        if isinstance(k, str) and k.startswith("volcano.sh/") and isinstance(v, str)
    }


def _template(
    name: str,
    count: int,
    classes: set[str | None],
    disruption: Mapping[str, Any],
    keys: set[str | None] | None = None,
) -> dict[str, Any]:
    """A native pod-group template; it names a class (and a topology key) only where all its
    gangs share one (PodGroups made from it are ours and name their own: the template is what
    other readers, KAI among them, see)."""
    template: dict[str, Any] = {
        "name": name,
        "schedulingPolicy": {"gang": {"minCount": count}},
        "disruptionMode": dict(disruption),
    }
    (only,) = classes if len(classes) == 1 else (None,)
    if only:
        template["priorityClassName"] = only
    (key,) = keys if keys is not None and len(keys) == 1 else (None,)
    if key:
        template["schedulingConstraints"] = constraints([key])
    return template


def _objects(
    out: Plan,
    opted: str,
    queue: str,
    timeout: int,
    inherited: Mapping[str, str],
    disruption: Mapping[str, Any],
) -> list[dict[str, Any]]:
    ref = out.workload
    objects: list[dict[str, Any]] = []
    native = [g for g in out.gangs if g.backend == NATIVE]
    workload_name = workload_object_name(ref)
    in_templates = [g for g in native if not g.standalone]
    if out.composites:
        objects.extend(_composite_objects(out, opted, workload_name, disruption))
    elif in_templates:
        minimums: dict[str, int] = {}
        classes: dict[str, set[str | None]] = {}
        keys: dict[str, set[str | None]] = {}
        for g in in_templates:
            minimums[g.template] = max(minimums.get(g.template, 0), g.min_count)
            classes.setdefault(g.template, set()).add(g.priority_class)
            keys.setdefault(g.template, set()).add(g.topology_key)
        objects.append(
            {
                "apiVersion": NATIVE_API,
                "kind": "Workload",
                "metadata": owned_metadata(
                    ref,
                    workload_name,
                    {"templates": minimums, "optIn": opted},
                    {},
                ),
                "spec": {
                    "controllerRef": {"apiGroup": ref.group, "kind": ref.kind, "name": ref.name},
                    "podGroupTemplates": [
                        _template(name, count, classes[name], disruption, keys[name])
                        for name, count in sorted(minimums.items())
                    ],
                },
            }
        )
    for g in out.gangs:
        meta = owned_metadata(ref, g.name, _decision(g, opted), {})
        if g.backend == NATIVE:
            spec: dict[str, Any] = {"schedulingPolicy": {"gang": {"minCount": g.min_count}}}
            if g.parent is not None:
                spec["parentCompositePodGroupName"] = g.parent
            if not g.standalone:
                spec["workloadRef"] = {"workloadName": workload_name, "templateName": g.template}
            if g.priority_class:
                # the scheduler ranks and admits members by the group's priority (module doc)
                spec["priorityClassName"] = g.priority_class
            spec["disruptionMode"] = dict(disruption)
            if g.topology_key:
                # immutable: a changed key recreates a group no pod joined (reconcile.py)
                spec["schedulingConstraints"] = constraints([g.topology_key])
            objects.append(
                {"apiVersion": NATIVE_API, "kind": "PodGroup", "metadata": meta, "spec": spec}
            )
        elif g.backend == COSCHEDULING:
            spec = {"minMember": g.min_count, "scheduleTimeoutSeconds": timeout}
            if g.min_resources:
                spec["minResources"] = dict(g.min_resources)
            objects.append(
                {"apiVersion": COSCHEDULING_API, "kind": "PodGroup", "metadata": meta, "spec": spec}
            )
        elif g.backend == VOLCANO:
            meta["annotations"] = {**inherited, **meta["annotations"]}
            spec = {"minMember": g.min_count, "queue": queue}
            if g.tasks:
                spec["minTaskMember"] = dict(g.tasks)
            if g.min_resources:
                spec["minResources"] = dict(g.min_resources)
            if g.priority_class:
                spec["priorityClassName"] = g.priority_class
            objects.append(
                {"apiVersion": VOLCANO_API, "kind": "PodGroup", "metadata": meta, "spec": spec}
            )
    return objects


def _placement(
    group: PodGroup, obj: Mapping[str, Any], backend: str, config: GangConfig, out: Plan
) -> tuple[str | None, dict[str, Any] | None]:
    """The gang's topology key for ``schedulingConstraints`` (None: none written) and its
    placement for the decision annotation; every level not enforced is said in an event."""
    for sub in group.sub_groups if not config.composite_groups else ():
        if sub.topology is not None:
            out.decisions.append(
                Decision(
                    "SubGroupTopologyIgnored",
                    f"pod group {group.name}: subgroup {sub.name} states its own placement, "
                    "which needs composite pod groups; only the group's own placement applies",
                )
            )
    found = placement(group.topology, _meta(obj).get("annotations") or {}, config.kai_topologies)
    if found is None:
        return None, None
    if found.preferred:
        out.decisions.append(
            Decision(
                "TopologyPreferred",
                f"pod group {group.name}: preferred level {found.preferred} ({found.source}) is "
                "kept in the decision annotation only: Kubernetes v1.37 has no preferred placement",
            )
        )
    key = found.key
    if found.required and key is None:
        out.decisions.append(
            Decision(
                "TopologyUnresolved",
                f"pod group {group.name}: required level {found.required} ({found.source}): "
                f"{found.problem}; no placement constraint is written",
                warning=True,
            )
        )
    elif key is not None and (backend != NATIVE or not config.native_topology):
        why = (
            f"the {backend} backend's group has no placement field we write"
            if backend != NATIVE
            else "the API server does not keep schedulingConstraints "
            "(TopologyAwareWorkloadScheduling off)"
        )
        out.decisions.append(
            Decision(
                "TopologyNotEnforced",
                f"pod group {group.name}: required level {found.required} (key {key}) is not "
                f"enforced: {why}",
                warning=True,
            )
        )
        key = None
    note = found.to_dict()
    note["enforced"] = key is not None
    return key, note


def template_names(workload: Mapping[str, Any]) -> list[str]:
    """Every template name of a native Workload: its pod-group templates, its composite
    templates and the pod-group templates nested in them (all immutable)."""
    spec = workload.get("spec") or {}
    names = [str(t.get("name")) for t in spec.get("podGroupTemplates") or []]
    for composite in spec.get("compositePodGroupTemplates") or []:
        names.append(str(composite.get("name")))
        names.extend(str(t.get("name")) for t in composite.get("podGroupTemplates") or [])
    return names


def _composites(
    out: Plan,
    groups: Mapping[str, PodGroup],
    config: GangConfig,
    existing: Sequence[str] | None,
    karta: Karta,
    with_pods: set[str],
) -> None:
    """Turn each native gang whose subgroups make up its minimum into a composite group: the
    gang's name and template go to a ``CompositePodGroup`` (gang ``minGroupCount`` = its
    subgroups), each subgroup becomes a child PodGroup its pods join. Only where the cluster
    serves composites, for 2 to 8 subgroups (the API's templates per level; depth 2 of 4), and
    where an existing Workload already holds those templates (they cannot be added), and
    where every component with pods is in a subgroup (``with_pods``: decided from the spec, so
    the webhook, planning one pod, and the controller agree)."""
    if not config.composite_groups:
        return
    kept: list[Gang] = []
    for gang in out.gangs:
        group = groups.get(gang.group)
        subs = [s for s in group.sub_groups if s.min_member > 0] if group is not None else []
        if (
            group is None
            or gang.backend != NATIVE
            or not 2 <= len(subs) <= MAX_TEMPLATES
            or any(s.error is not None for s in group.sub_groups)
            # a stated minimum, or members outside every subgroup: not a sum of gangs
            or sum(s.min_member for s in subs) != gang.min_count
            or not with_pods <= _covered(karta, group)
        ):
            kept.append(gang)
            continue
        children: list[Gang] = []
        for sub in subs:
            found = placement(sub.topology, {}, config.kai_topologies)
            key = found.key if found is not None and config.native_topology else None
            note = {**found.to_dict(), "enforced": key is not None} if found else None
            children.append(
                Gang(
                    name=dns_subdomain(f"{gang.name}-{sub.name}"),
                    group=gang.group,
                    definition=gang.definition,
                    template=dns_label(f"{gang.template}-{sub.name}"),
                    backend=NATIVE,
                    scheduler=gang.scheduler,
                    min_count=sub.min_member,
                    rule=f"subgroup {sub.name}: {sub.rule}",
                    keys=gang.keys,
                    pods=tuple(sorted(sub.pods)),
                    # one class per hierarchy: the gang's
                    priority_class=gang.priority_class,
                    topology_key=key,
                    placement=note,
                    parent=gang.name,
                )
            )
        wanted = [gang.template, *(c.template for c in children)]
        if existing is not None and not set(wanted) <= set(existing):
            out.decisions.append(
                Decision(
                    "TemplatesImmutable",
                    f"pod group {gang.name}: the existing Workload has no composite template "
                    f"{gang.template} and its templates cannot change: one PodGroup as before",
                )
            )
            kept.append(gang)
            continue
        out.composites.append(
            Composite(
                name=gang.name,
                group=gang.group,
                definition=gang.definition,
                template=gang.template,
                min_groups=len(children),
                rule=gang.rule,
                children=tuple(c.name for c in children),
                priority_class=gang.priority_class,
                topology_key=gang.topology_key,
                placement=gang.placement,
            )
        )
        kept.extend(children)
    if out.composites:
        # a Workload holds either pod-group or composite templates: other gangs go standalone
        for g in kept:
            if g.backend == NATIVE and g.parent is None:
                g.standalone = True
    out.gangs = kept


def _composite_objects(
    out: Plan, opted: str, workload_name: str, disruption: Mapping[str, Any]
) -> list[dict[str, Any]]:
    """The Workload of composite templates and one ``CompositePodGroup`` per composite."""
    ref = out.workload
    templates: list[dict[str, Any]] = []
    objects: list[dict[str, Any]] = []
    for c in out.composites:
        children = [g for g in out.gangs if g.parent == c.name]
        template: dict[str, Any] = {
            "name": c.template,
            "schedulingPolicy": {"gang": {"minGroupCount": c.min_groups}},
            "disruptionMode": dict(disruption),
            "podGroupTemplates": [
                _template(g.template, g.min_count, {g.priority_class}, disruption, {g.topology_key})
                for g in children
            ],
        }
        spec: dict[str, Any] = {
            "workloadRef": {"workloadName": workload_name, "templateName": c.template},
            "schedulingPolicy": {"gang": {"minGroupCount": c.min_groups}},
            "disruptionMode": dict(disruption),
        }
        if c.priority_class:
            template["priorityClassName"] = spec["priorityClassName"] = c.priority_class
        if c.topology_key:
            template["schedulingConstraints"] = spec["schedulingConstraints"] = constraints(
                [c.topology_key]
            )
        templates.append(template)
        decision = {
            "backend": NATIVE,
            "group": c.group,
            "definition": c.definition,
            "minGroupCount": c.min_groups,
            "children": list(c.children),
            "rule": c.rule,
            "optIn": opted,
            **({"topology": dict(c.placement)} if c.placement else {}),
        }
        objects.append(
            {
                "apiVersion": COMPOSITE_API,
                "kind": "CompositePodGroup",
                "metadata": owned_metadata(ref, c.name, decision, {}),
                "spec": spec,
            }
        )
    workload = {
        "apiVersion": NATIVE_API,
        "kind": "Workload",
        "metadata": owned_metadata(
            ref,
            workload_name,
            {
                "compositeTemplates": {c.template: c.min_groups for c in out.composites},
                "optIn": opted,
            },
            {},
        ),
        "spec": {
            "controllerRef": {"apiGroup": ref.group, "kind": ref.kind, "name": ref.name},
            "compositePodGroupTemplates": templates,
        },
    }
    return [workload, *objects]


def _covered(karta: Karta, group: PodGroup) -> set[str]:
    """The components a group's subgroups hold (each subgroup's component and those below)."""
    names: set[str] = set()
    for sub in group.sub_groups:
        names.add(sub.name)
        names.update(c.name for c in karta.iter_descendants(sub.name))
    return names
