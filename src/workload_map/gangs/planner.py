"""The scheduling objects a workload should have, per backend, from its Karta and its pods.

Pure: a workload object, its Karta and (optionally) its pods in; a
:class:`~workload_map.gangs.plans.Plan` out: the gangs, the desired Workload and PodGroup
objects (built by :mod:`workload_map.gangs.objects`) and every decision that shaped them. The
gangs and their minimums are the engine's (``Workload.pod_groups()``); this module only maps
them onto each scheduler's API and applies the rules those APIs impose:

- a gang of one gets no object; a gang the engine sizes 0 (zero replicas) gets none either;
  but a Volcano gang of one whose other pods are created after admission gets ``minMember: 1``
  and the whole gang's ``minResources`` (they are reserved for at admission);
- a suspended workload has none (its gangs are released), a finished one none;
- native: one ``scheduling.k8s.io/v1beta1`` Workload with one pod-group template per gang
  definition (at most 8: more, and the PodGroups are made standalone, without ``workloadRef``),
  one PodGroup per gang instance; templates of a Workload that exists already cannot change,
  so a gang whose template it lacks is made standalone too (:mod:`workload_map.gangs.layout`);
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
them (:func:`workload_map.gangs.layout.make_composites`); the Workload then holds
``compositePodGroupTemplates`` only. A workload annotated ``workload-map.run.ai/gang-min-groups:
N`` has its gangs (the instances of a definition, or several definitions) made the children of
one ``CompositePodGroup`` with ``minGroupCount: N`` (:func:`workload_map.gangs.layout.group_gangs`).

The backend of a gang is the one its pods' ``spec.schedulerName`` selects (the pods' when
known, else their templates'); a gang whose members name different schedulers gets no object.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from workload_map.engine import EngineError, PodGroup, Workload
from workload_map.engine.evaluations import Evaluations
from workload_map.engine.gangs import PodGroupResult
from workload_map.engine.references import Resolver
from workload_map.gangs.config import (
    ANNOTATION_DISRUPTION,
    ANNOTATION_QUEUE,
    ANNOTATION_TIMEOUT,
    COSCHEDULING,
    KAI,
    NATIVE,
    VOLCANO,
    VOLCANO_QUEUE_ANNOTATION,
    GangConfig,
)
from workload_map.gangs.jobs import taken_over
from workload_map.gangs.layout import group_gangs, make_composites, mark_standalone
from workload_map.gangs.naming import dns_label, dns_subdomain
from workload_map.gangs.objects import build_objects
from workload_map.gangs.plans import Decision, Gang, Plan, metadata_of, workload_ref
from workload_map.gangs.policy import left_alone, opt_in
from workload_map.gangs.tasks import BUILTIN_PRIORITIES, plan_tasks
from workload_map.gangs.topology import placement
from workload_map.model import Karta

__all__ = [
    "EVALUATIONS_CONSUMER",
    "PodFields",
    "SpecMemo",
    "SpecSide",
    "member_components",
    "plan",
    "pod_specs",
]

#: the gang planner's name among the consumers of a process's shared evaluations
EVALUATIONS_CONSUMER = "gangs"

_RELEASED = ("Suspended", "Suspending")
_EMPTY: Mapping[str, Any] = {}
_FINISHED = ("Completed", "Failed")


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
    value = (metadata_of(obj).get("annotations") or {}).get(ANNOTATION_TIMEOUT)
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
    value = (metadata_of(obj).get("annotations") or {}).get(ANNOTATION_DISRUPTION)
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
    meta = metadata_of(obj)
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


#: a known pod's (scheduler name, priority class or None), read once per plan
PodFields = tuple[str, str | None]


def _pod_fields(pods: Iterable[Mapping[str, Any]]) -> dict[str, PodFields]:
    """Per known pod (by name, the last of a name wins): the two fields a gang's backend and
    priority come from. Read here once: the scheduler and the priority questions of every
    gang ask them of the same pods."""
    out: dict[str, PodFields] = {}
    for pod in pods:
        meta = pod.get("metadata")
        name = meta.get("name") if type(meta) is dict or isinstance(meta, Mapping) else None
        spec = pod.get("spec")
        if type(spec) is not dict and not isinstance(spec, Mapping):
            spec = _EMPTY
        scheduler, pc = spec.get("schedulerName"), spec.get("priorityClassName")
        out[name if isinstance(name, str) else ""] = (
            scheduler if isinstance(scheduler, str) and scheduler else "default-scheduler",
            pc if isinstance(pc, str) and pc else None,
        )
    return out


def _schedulers(
    group: PodGroup,
    members: set[str],
    known_pods: Mapping[str, PodFields],
    specs: Sequence[tuple[str, Mapping[str, Any]]],
) -> tuple[set[str], str | None]:
    """The scheduler names of the gang's pods (known pods, else templates) and a priority class."""
    names: set[str] = set()
    priority: str | None = None
    known = [known_pods[p] for p in group.pods if p in known_pods]
    if known:
        for scheduler, pc in known:
            names.add(scheduler)
            if priority is None and pc is not None:
                priority = pc
    else:
        for component, spec in specs:
            if component not in members:
                continue
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
    known_pods: Mapping[str, PodFields],
    specs: Sequence[tuple[str, Mapping[str, Any]]],
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
        fields = known_pods.get(pod_name)
        if fields is not None and fields[1] is not None:
            counts[fields[1]] = counts.get(fields[1], 0) + 1
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


def _gangs(wl: Workload) -> PodGroupResult:
    """The engine's gangs of ``wl`` as far as :func:`plan` reads them (groups and notes).

    A v2 group without subgroups comes from the object alone where no decision reads its
    members (:func:`_needs_members`): a plain Job's group of one costs no placement of its
    pods. Otherwise the engine's gangs, which reuse that group (``Workload.spec_group``), as
    does a later consumer's (the exporter's, after the gang resync); what another consumer
    of a shared evaluation derived already is read as it is.
    """
    derived = wl.derived_gangs()
    if derived is not None:
        return derived
    group = wl.spec_group
    if group is None or _needs_members(group):
        return wl.gangs
    alone = wl.spec_gangs()
    assert alone is not None  # (a spec group)
    return alone


def _needs_members(group: PodGroup) -> bool:
    """Whether :func:`plan` reads the group's pods: not for an error it reports, nor for a
    group of one that reserves for no later pods (both decided by the group alone)."""
    if group.error is not None and not _bad_name_only(group):
        return False
    return group.min_member >= 2 or (group.min_member == 1 and group.created_later > 0)


def _bad_name_only(group: PodGroup) -> bool:
    """Whether the engine's only complaint is the name, which the object's name fixes."""
    return bool(group.error) and str(group.error).startswith(f"pod group name {group.name!r}")


class SpecSide:
    """What :func:`plan` reads of one version of a workload object before its gangs: the pod
    specs of its templates, whether its own controller makes its scheduling objects, and
    (asked only of a handled workload) its phases. None of it depends on the pods."""

    __slots__ = ("_phases", "alone", "config", "karta", "specs")

    def __init__(self, wl: Workload, config: GangConfig) -> None:
        self.karta = wl.karta
        self.config = config
        self.specs: tuple[tuple[str, dict[str, Any]], ...] = tuple(pod_specs(wl))
        #: :func:`left_alone`'s answer (it depends on ``config.workload_with_job``)
        self.alone = left_alone(wl.obj, [s for _, s in self.specs], config)
        self._phases: tuple[str, ...] | None = None

    def phases(self, wl: Workload) -> tuple[str, ...]:
        """The object's phases (its status rules), evaluated on the first ask only."""
        if self._phases is None:
            self._phases = tuple(wl.phases())
        return self._phases


class SpecMemo:
    """What the engine derives from a workload object alone, per version of it; bounded LRU.

    Keyed by (uid, resourceVersion, definition, the bound references' versions) and held with
    the Karta it came from (a replaced definition never hits). The webhook plans a workload
    once per new pod and the controller once per pod change, while what its spec implies stays
    the same for one version of the object: the groups without pods (:meth:`implied`, alpha
    gangs) and the :class:`SpecSide` (:meth:`side`, every plan). Objects without a uid or
    resourceVersion (files) are not kept. A dict in insertion order is the LRU: no library is
    needed for it.
    """

    def __init__(self, capacity: int = 20_000) -> None:
        self.capacity = capacity
        self.hits = 0
        self.misses = 0
        #: :meth:`side`'s own counts (``hits``/``misses`` are :meth:`implied`'s)
        self.side_hits = 0
        self.side_misses = 0
        self._lock = threading.Lock()
        self._items: dict[tuple[Any, ...], tuple[Karta, list[PodGroup], list[str]]] = {}
        self._sides: dict[tuple[Any, ...], SpecSide] = {}
        #: (uid, definition) -> the key of its newest side: an older version's side goes when a
        #: newer one is kept (it holds the old object's templates, which nothing else does)
        self._newest: dict[tuple[Any, ...], tuple[Any, ...]] = {}

    def __len__(self) -> int:
        return len(self._items)

    @property
    def sides(self) -> int:
        """How many workload versions' sides are kept."""
        return len(self._sides)

    def _key(self, wl: Workload) -> tuple[Any, ...] | None:
        meta = metadata_of(wl.obj)
        uid, rv = meta.get("uid"), meta.get("resourceVersion")
        if not (uid and rv and self.capacity):
            return None
        # the referenced objects' versions too: a runtime edited changes its TrainJobs' gangs
        return (str(uid), str(rv), str(wl.definition_name), _bound_versions(wl.resolution.bindings))

    def side(self, wl: Workload, config: GangConfig) -> SpecSide:
        """The :class:`SpecSide` of ``wl``'s object under ``config``, made once per version."""
        key = self._key(wl)
        if key is not None:
            with self._lock:
                found = self._sides.pop(key, None)
                if found is not None and found.karta is wl.karta:
                    self._sides[key] = found  # the most recently used goes last
                    if found.config is config or found.config == config:
                        self.side_hits += 1
                        return found
        made = SpecSide(wl, config)
        if key is not None:
            workload = (key[0], key[2])
            with self._lock:
                self.side_misses += 1
                older = self._newest.get(workload)
                if older is not None and older != key:
                    self._sides.pop(older, None)
                self._newest[workload] = key
                self._sides[key] = made
                while len(self._sides) > self.capacity:
                    gone = next(iter(self._sides))
                    del self._sides[gone]
                    if self._newest.get((gone[0], gone[2])) == gone:
                        del self._newest[(gone[0], gone[2])]
        return made

    def implied(self, wl: Workload) -> tuple[list[PodGroup], list[str]]:
        """The gangs the object implies without pods, and the engine's notes on them."""
        key = self._key(wl)
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
            str(metadata_of(o).get("resourceVersion") or metadata_of(o).get("name") or "")
            for o in items
            if isinstance(o, Mapping)
        )
        out.append((name, versions))
    return tuple(out)


#: no memory: every plan derives the implied groups again
_NO_MEMO = SpecMemo(capacity=0)


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
    objects: bool = True,
    evaluations: Evaluations | None = None,
) -> Plan:
    """The scheduling objects ``obj`` should have (see the module docstring for the rules).

    ``existing_templates``: the template names of the native Workload already in the cluster
    (they cannot change). ``force`` skips the opt-in check (``describe`` shows what would be
    done). ``memo`` keeps what depends on the object only, per version of it (the webhook
    and the controller plan one workload many times). ``references`` reads the objects the
    definition references (a TrainJob's runtime: the watch cache's resolver in the cluster).
    ``objects=False`` plans the gangs and decisions only, without writing the objects (the
    webhook asks which gang a pod joins, never what the objects hold). ``evaluations``: the
    process's shared evaluations (:mod:`workload_map.engine.evaluations`; the operator's
    inventory summarises the same objects): the engine's view of ``obj`` with ``pods`` is
    taken from there when another consumer made it from the same objects, and left there for
    it otherwise (a definition with references is not shared).
    """
    config = config or GangConfig()
    given: list[Any] | None = list(pods) if pods is not None else None
    pod_list: list[dict[str, Any]] | None
    if (
        evaluations is not None
        and given is not None
        and list(map(type, given)).count(dict) == len(given)  # (C-level: no step per pod)
        and isinstance(karta, Karta)
        and not karta.spec.structure_definition.references
        and type(obj) is dict
    ):
        # the watch caches' own objects (the engine never mutates them): the evaluation of
        # these very objects that the process's other consumer made (the exporter's), if any
        pod_list = given
        wl_spec = evaluations.workload(EVALUATIONS_CONSUMER, karta, obj, pod_list, owned=False)
    else:
        pod_list = [dict(p) for p in given] if given is not None else None
        # one engine view serves the spec-side questions too (they do not depend on the pods)
        wl_spec = Workload(karta, dict(obj), pods=pod_list, references=references)
    ref = workload_ref(wl_spec.obj)
    out = Plan(workload=ref, handled=False, reason="", view=wl_spec)
    gang = wl_spec.karta.gang_scheduling
    if gang is None or (gang.pod_group is None and not gang.pod_groups):
        out.reason = f"definition {wl_spec.definition_name} has no gang-scheduling instructions"
        return out
    side = memo.side(wl_spec, config) if memo is not None else SpecSide(wl_spec, config)
    specs, alone = side.specs, side.alone
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
    phases = side.phases(wl_spec)
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
    waiting = False  # a gang whose keys only pods carry: more gangs may come with pods
    if pod_list is not None and gang.pod_group is None:
        # the alpha form: groups the spec implies that have no pods yet come from a view
        # without pods (the v2 group is the same with or without them)
        implied_groups, implied_notes = (memo if memo is not None else _NO_MEMO).implied(wl_spec)
        for group in implied_groups:
            implied_count[group.definition] = implied_count.get(group.definition, 0) + 1
            if not group.unresolved_keys:
                groups[group.name] = group
            else:
                waiting = True
        notes.extend(implied_notes)
    found = _gangs(wl_spec)
    for group in found.groups:
        if pod_list is None:
            implied_count[group.definition] = implied_count.get(group.definition, 0) + 1
        if group.unresolved_keys:
            waiting = True
            continue  # keys only pods carry: the gang appears with its first pod
        groups[group.name] = group
    notes.extend(n for n in (*found.notes, *found.ungrouped) if n not in notes)
    for note in notes:
        out.decisions.append(Decision("NoGang", note))
    known_pods: dict[str, PodFields] | None = None  # read at the first gang that needs it
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
        if known_pods is None:
            known_pods = _pod_fields(pod_list or ())
        schedulers, priority = _schedulers(group, members, known_pods, specs)
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
            member_priority = _member_priority(group, members, known_pods, specs, config)
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
    make_composites(out, groups, config, existing_templates, wl_spec.karta, {c for c, _ in specs})
    group_gangs(
        out,
        metadata_of(wl_spec.obj).get("annotations") or {},
        config,
        existing_templates,
        complete=not waiting,
    )
    mark_standalone(out, existing_templates)
    disruption = (
        _disruption(wl_spec.obj, out) if any(g.backend == NATIVE for g in out.gangs) else {}
    )
    if objects and (out.gangs or out.composites):  # (no gang, no object: most Jobs)
        queue, timeout = _queue(wl_spec.obj, config), _timeout(wl_spec.obj, config)
        out.objects = build_objects(
            out, choice.reason, queue, timeout, _volcano_annotations(wl_spec.obj), disruption
        )
    return out


def _volcano_annotations(obj: Mapping[str, Any]) -> dict[str, str]:
    """The workload's ``volcano.sh/*`` annotations, which Volcano's scheduler reads on a
    PodGroup (preemptable, revocable zone, disruption budgets...); LWS's Volcano provider
    copies the same set."""
    annotations = metadata_of(obj).get("annotations") or {}
    return {
        k: v
        for k, v in annotations.items()
        if isinstance(k, str) and k.startswith("volcano.sh/") and isinstance(v, str)
    }


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
    found = placement(
        group.topology, metadata_of(obj).get("annotations") or {}, config.kai_topologies
    )
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
