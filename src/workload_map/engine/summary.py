"""The shared evaluation: per workload, the numbers every consumer reads, without the tree.

The exporter, the web view's list and vitals, ``describe`` and ``get -o wide`` all need the same
few facts of a workload: its phases, pod counts, what its pods request and hold, and its gangs.
Building the whole describe view (``describe.py``) for that costs a tree of typed nodes and a
formatted entry per pod; :func:`summarize` computes only the numbers, from the facts a
:class:`~workload_map.engine.describe.Described` provides (placements, extractor, status,
gangs), each pod read once. ``describe`` takes its counts from here too, so every consumer
reports the same numbers with the same words.

The vocabulary (issue 25):

* **requested**: what the pods the spec desires will ask, by the scheduler's effective-request
  rule (``desired`` pods times one pod's request, per instance);
* **pending**: pods that are active (not finished, not being deleted) and bound to no node, and
  what they request;
* **held**: pods bound to a node and not finished, and what they request. A terminating pod
  still bound is held (the scheduler still accounts for it) but is not *current*.

``current`` and ``ready`` keep kubectl's and the Job controller's meaning (active pods, and those
Ready among them). Counts and held/pending totals are ``None`` when no pods are known (a file).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from itertools import starmap
from operator import itemgetter
from typing import Any, Protocol

from workload_map.engine import resources as res
from workload_map.engine.errors import EngineError
from workload_map.engine.extract import ExtractedInstance, Extractor
from workload_map.engine.gangs import PodGroupResult
from workload_map.engine.pod_status import pod_is_ready
from workload_map.engine.pods import ACTIVE, TERMINATING, Placement
from workload_map.engine.status import UNDEFINED, Status
from workload_map.engine.structure import Structure
from workload_map.model.views import View, json_field

__all__ = [
    "STATES",
    "ComponentTally",
    "GangTally",
    "PodCounts",
    "PodFacts",
    "PodPlace",
    "Summarized",
    "Tally",
    "WorkloadSummary",
    "placed_facts",
    "pod_facts",
    "sum_tallies",
    "summarize",
    "tally_of",
]

#: the resource states, in the order every consumer shows them
STATES = ("requested", "pending", "held")

# The value types below are views (frozen msgspec Structs), not frozen dataclasses: generating a
# dataclass runs at import, and every CLI start imports this module (docs/engine.md).


class Summarized(Protocol):
    """What :func:`summarize` reads of one workload (``Workload`` provides it)."""

    @property
    def obj(self) -> Mapping[str, Any]: ...
    @property
    def structure(self) -> Structure: ...
    @property
    def extractor(self) -> Extractor: ...
    @property
    def pods(self) -> Sequence[Mapping[str, Any]] | None: ...
    @property
    def candidate_pods(self) -> Sequence[Mapping[str, Any]]: ...
    @property
    def placements(self) -> Sequence[Placement]: ...
    @property
    def gangs(self) -> PodGroupResult: ...
    def status(self) -> Status | None: ...
    def phases(self) -> list[str]: ...


class PodFacts(View):
    """One pod, read once: its state and what it asks of the scheduler."""

    active: bool  # counted as current (not finished, not terminating)
    ready: bool  # active and its Ready condition True
    bound: bool  # spec.nodeName set
    held: bool  # bound and not finished (terminating included)
    request: Mapping[str, int]

    @property
    def pending(self) -> bool:
        return self.active and not self.bound


class Tally(View):
    """Pods and resources of a workload, a component instance or a namespace.

    ``requested`` is the spec's (``desired`` pods); ``pending_requests`` and ``held_requests``
    are the pods', ``None`` when no pods are known, like the pod counts."""

    desired: int
    current: int | None
    ready: int | None
    pending: int | None
    held: int | None
    requested: Mapping[str, int]
    pending_requests: Mapping[str, int] | None
    held_requests: Mapping[str, int] | None
    #: what the current (active) pods request, bound or not: the exporter's deprecated
    #: ``source="pods"`` series (it is neither pending nor held)
    current_requests: Mapping[str, int] | None = None

    def by_state(self) -> dict[str, Mapping[str, int] | None]:
        """Resources by state (:data:`STATES`)."""
        return {
            "requested": self.requested,
            "pending": self.pending_requests,
            "held": self.held_requests,
        }


class ComponentTally(View):
    """One pod-bearing component instance (``instance`` ``""`` for a single instance)."""

    component: str
    instance: str
    tally: Tally


class GangTally(View):
    """One top-level pod group: its minimum, its members, the active ones and the bound ones."""

    name: str
    min_member: int
    members: tuple[str, ...]
    current: int
    scheduled: int


class PodPlace(View):
    """Where one known pod sits (empty strings where nothing placed it)."""

    name: str
    uid: str
    component: str
    instance: str
    replica: str
    pod_group: str


class WorkloadSummary(View):
    """The shared evaluation of one workload (see the module doc)."""

    phases: tuple[str, ...]
    #: the first evaluation error of a component (its counts would mislead), else None
    error: str | None
    totals: Tally
    components: tuple[ComponentTally, ...]
    gangs: tuple[GangTally, ...]
    #: every known pod of the workload, by name
    pods: tuple[PodPlace, ...]
    #: False when made for a reader of the numbers only (``summarize(detail=False)``):
    #: ``gangs`` and ``pods`` are then left empty, not computed
    detailed: bool = True


# the pod counts of describe and of a get row (here, not in engine.describe: a get loads
# none of describe's views)
class PodCounts(View):
    """The workload's pods: desired by the spec, current (active) and ready; pending (active,
    bound to no node) and held (bound to a node, not finished); null without pods."""

    desired: int = json_field("desired")
    current: int | None = json_field("current")
    ready: int | None = json_field("ready")
    pending: int | None = json_field(
        "pending", default=None, description="active pods bound to no node"
    )
    held: int | None = json_field(
        "held",
        default=None,
        description="pods bound to a node and not finished (a terminating pod still bound "
        "is held but not current)",
    )


def _request(pod: Mapping[str, Any]) -> Mapping[str, int]:
    try:
        return res.pod_request(pod.get("spec"))
    except EngineError:
        return {}  # a pod with an unreadable quantity requests nothing we can count


def _bound(spec: object) -> bool:
    """``spec.nodeName`` set, in a spec that is any mapping (as its request is read)."""
    return isinstance(spec, Mapping) and bool(spec.get("nodeName"))


def pod_facts(pod: Mapping[str, Any], state: str) -> PodFacts:
    """The facts of one pod whose :func:`~workload_map.engine.pods.pod_state` is ``state``."""
    spec = pod.get("spec")
    bound = _bound(spec)
    active = state == ACTIVE
    return PodFacts(
        active=active,
        ready=active and pod_is_ready(pod),
        bound=bound,
        held=bound and state in (ACTIVE, TERMINATING),
        request=_request(pod),
    )


def placed_facts(
    pods: Sequence[Mapping[str, Any]], placements: Sequence[Placement], *, shared: bool = False
) -> list[PodFacts | None]:
    """The facts of each pod (one per placement; None for a pod no component holds), read once
    for every consumer of one evaluation (``summarize``, ``describe``'s nodes and entries).
    ``shared``: the pods are a watch cache's (never changed in place), so the facts of a spec,
    status and state are looked up in a process-wide table (:data:`_PLACED`) before they are
    read: a fleet's workloads of one template share theirs."""
    out: list[PodFacts | None] = []
    # the request of each pod spec once: the watch caches keep equal specs as one object
    # (kube/trim.py), so the pods of one template on one node share theirs (by identity: the
    # pods, and so their specs, outlive this call)
    requests: dict[int, Mapping[str, int]] = {}
    known: dict[tuple[int, str, bool, bool], PodFacts] = {}
    # readiness by the pod's status object: equal statuses are one object too (by identity)
    readiness: dict[int, bool] = {}
    # a pod's facts are those of its spec, its status and its state: pods sharing all three
    # (the watch caches keep equal specs and statuses as one object) are one lookup
    by_objects: dict[tuple[int, int, str], PodFacts] = {}
    for pod, p in zip(pods, placements, strict=True):
        if p.component is None or p.reason is not None:  # not p.attributed (inlined)
            out.append(None)
            continue
        spec = pod.get("spec")
        state = p.state
        seen = (id(spec), id(pod.get("status")), state)
        facts = by_objects.get(seen)
        if facts is not None:
            out.append(facts)
            continue
        if shared:
            found_facts = _PLACED.get(seen)
            if found_facts is not None:
                facts = by_objects[seen] = found_facts[2]
                out.append(facts)
                continue
        # pod_facts, inlined (it runs per pod of a fleet): the request looked up by the spec's
        # identity, and equal facts one object (tally_of then counts pods per distinct facts)
        key = id(spec)
        request = requests.get(key)
        if request is None:
            # kept once by content: equal requests of every workload are one object, and so
            # are equal facts (_facts), so that equal tallies are made once (tally_of)
            request = requests[key] = _one(_request(pod))
        # dict first: the ABC check costs on every pod of a fleet (a trimmed pod's spec is a dict)
        bound = (type(spec) is dict or isinstance(spec, Mapping)) and bool(spec.get("nodeName"))
        ready = False
        if state == ACTIVE:
            status = id(pod.get("status"))
            found = readiness.get(status)
            if found is None:
                found = readiness[status] = pod_is_ready(pod)
            ready = found
        facts = known.get((key, state, ready, bound))
        if facts is None:
            facts = known[(key, state, ready, bound)] = _facts(request, state, ready, bound)
        by_objects[seen] = facts
        if shared:
            if len(_PLACED) >= _PLACED_KEPT:
                _PLACED.clear()
            # the spec and status held with the facts: their ids stay theirs while kept
            _PLACED[seen] = (spec, pod.get("status"), facts)
        out.append(facts)
    return out


#: facts by (spec, status, state) of watch-cache pods (placed_facts(shared=True)), specs and
#: statuses by identity, held in the entry
_PLACED: dict[tuple[int, int, str], tuple[object, object, PodFacts]] = {}
_PLACED_KEPT = 4096


#: facts by (request, state, ready, bound), the request by identity (it is one of _TOTALS's,
#: held by the facts): a fleet's pods have a few distinct facts
_FACTS: dict[tuple[int, str, bool, bool], PodFacts] = {}
_FACTS_KEPT = 4096


def _facts(request: Mapping[str, int], state: str, ready: bool, bound: bool) -> PodFacts:
    key = (id(request), state, ready, bound)
    found = _FACTS.get(key)
    if found is None:
        if len(_FACTS) >= _FACTS_KEPT:
            _FACTS.clear()
        found = _FACTS[key] = PodFacts(
            active=state == ACTIVE,
            ready=ready,
            bound=bound,
            held=bound and state in (ACTIVE, TERMINATING),
            request=request,
        )
    return found


def tally_of(desired: int, requested: Mapping[str, int], facts: Iterable[PodFacts] | None) -> Tally:
    """The tally of pods with these facts (None: no pods known), under a spec asking
    ``requested`` of ``desired`` pods."""
    if facts is None:
        return Tally(desired, None, None, None, None, _one(requested), None, None)
    # summarize gives the pods of one template one facts object, and one request object:
    # count the pods per distinct facts, then per request, and multiply, instead of adding
    # every resource of every pod. Distinct facts and requests are taken in the order their
    # first pod comes, so the totals' keys keep the order of a pod-by-pod sum (describe
    # prints them in that order).
    facts = facts if type(facts) is list else list(facts)
    ids = list(map(id, facts))
    # pods per distinct facts, in the order of their first pods (a count per distinct facts,
    # in C: a workload has one or two)
    if ids and ids.count(ids[0]) == len(ids):
        counts = {ids[0]: len(ids)}  # one facts object for every pod (most tallies)
    elif len(ids) < 64:
        counts = {at: ids.count(at) for at in dict.fromkeys(ids)}
    else:
        counts = _counted(ids)
    # equal facts are one object across workloads (_facts): a fleet's equal tallies are one
    key = (desired, tuple(requested.items()), tuple(counts.items()))
    found = _TALLIES.get(key)
    if found is not None:
        return found[1]
    distinct = dict(zip(ids, facts, strict=True))
    current = ready = pending = held = 0
    by_current: dict[int, list[Any]] = {}
    by_pending: dict[int, list[Any]] = {}
    by_held: dict[int, list[Any]] = {}
    for at, pods in counts.items():
        f = distinct[at]
        if f.active:
            current += pods
            _count(by_current, f.request, pods)
            if f.ready:
                ready += pods
            if not f.bound:
                pending += pods
                _count(by_pending, f.request, pods)
        if f.held:
            held += pods
            _count(by_held, f.request, pods)
    tally = Tally(
        desired,
        current,
        ready,
        pending,
        held,
        _one(requested),
        _one(_sum_counted(by_pending)),
        _one(_sum_counted(by_held)),
        _one(_sum_counted(by_current)),
    )
    if len(_TALLIES) >= _TALLIES_KEPT:
        _TALLIES.clear()
    _TALLIES[key] = (tuple(distinct.values()), tally)  # the facts held: their ids stay theirs
    return tally


def _counted(ids: list[int]) -> dict[int, int]:
    counts: dict[int, int] = {}
    for at in ids:
        counts[at] = counts.get(at, 0) + 1
    return counts


#: tallies by (desired, requested, the facts and how many pods have each, facts by identity)
_TALLIES: dict[tuple[Any, ...], tuple[tuple[PodFacts, ...], Tally]] = {}
_TALLIES_KEPT = 4096


_NAME = itemgetter(0)

#: resource totals kept once by content (read only: a tally's are ``Mapping``s). A fleet's
#: 10k workloads hold four per tally, a few tallies each, mostly the same few totals
_TOTALS: dict[tuple[tuple[str, int], ...], Mapping[str, int]] = {}
_TOTALS_KEPT = 4096


def _one(totals: Mapping[str, int]) -> Mapping[str, int]:
    """The kept copy of these totals (a bounded table, emptied when full: totals already
    shared stay correct)."""
    key = tuple(totals.items())
    found = _TOTALS.get(key)
    if found is None:
        if len(_TOTALS) >= _TOTALS_KEPT:
            _TOTALS.clear()
        found = _TOTALS[key] = totals
    return found


def _count(counts: dict[int, list[Any]], value: object, pods: int = 1) -> None:
    # by identity: the values are alive as long as the facts that hold them
    found = counts.get(id(value))
    if found is None:
        counts[id(value)] = [value, pods]
    else:
        found[1] += pods


def _sum_counted(counts: dict[int, list[Any]]) -> dict[str, int]:
    out: dict[str, int] = {}
    for request, pods in counts.values():
        for name, value in request.items():
            out[name] = out.get(name, 0) + value * pods
    return out


def sum_tallies(tallies: Iterable[Tally]) -> Tally:
    """The sum of many (a namespace's workloads); pod counts stay None only if all are."""
    desired = 0
    counts: list[int | None] = [None, None, None, None]
    requested: Mapping[str, int] = {}
    pending: dict[str, int] | None = None
    held: dict[str, int] | None = None
    active: dict[str, int] | None = None
    for t in tallies:
        desired += t.desired
        for i, value in enumerate((t.current, t.ready, t.pending, t.held)):
            if value is not None:
                counts[i] = (counts[i] or 0) + value
        requested = res.add(requested, t.requested)
        if t.pending_requests is not None:
            pending = res.add(pending or {}, t.pending_requests)
        if t.held_requests is not None:
            held = res.add(held or {}, t.held_requests)
        if t.current_requests is not None:
            active = res.add(active or {}, t.current_requests)
    current, ready, pending_pods, held_pods = counts
    return Tally(desired, current, ready, pending_pods, held_pods, requested, pending, held, active)


#: what one instance's ``desired`` pods ask (:func:`_asked`), by the reader, the part of the
#: object its request is read from (by identity, held in the entry) and the count
_ASKED: dict[tuple[object, int, int], tuple[object, Mapping[str, int]]] = {}
_ASKED_KEPT = 4096


def _asked(inst: ExtractedInstance, count: int) -> Mapping[str, int]:
    """``res.scaled(res.instance_request(inst), count)`` (kept once by content: read only) for
    an instance of a watch cache's object: a fleet's workloads of one template share the
    template's subtree (kube/trim.py), so its request is read once, not once per workload.
    Keyed by what ``instance_request`` reads (``res.request_source``)."""
    source = res.request_source(inst)
    if source is None:
        return _one({})
    reader, part = source
    key = (reader, id(part), count)
    found = _ASKED.get(key)
    if found is not None:
        return found[1]
    asked = _one(res.scaled(reader(part), count))
    if len(_ASKED) >= _ASKED_KEPT:
        _ASKED.clear()
    _ASKED[key] = (part, asked)  # the part held: its id stays its own while kept
    return asked


def summarize(wl: Summarized, *, detail: bool = True) -> WorkloadSummary:
    """The shared evaluation of ``wl`` (see the module doc).

    Without ``detail``, the phases, error, totals and components only: no gangs (the pod
    groups are not built) and no pod places, as a reader of the numbers needs them (the web
    list, ``wlmap serve``); the summary says so (``detailed``)."""
    pods_known = wl.pods is not None
    errors: list[str] = []
    try:
        status = wl.status()
        phases = tuple(wl.phases()) if status is not None else (UNDEFINED,)
    except EngineError:
        phases = (UNDEFINED,)
    # every attributed pod once: its facts, under its component instance
    facts_of: dict[tuple[str, str], list[PodFacts]] = {}
    every: list[PodFacts] = []
    #: pod name -> (component, instance, replica, facts)
    placed: dict[str, tuple[str, str, str, PodFacts]] = {}
    placements = wl.placements
    # a watch cache's objects (engine/equal_inputs.py): what depends on their subtrees alone is
    # looked up by those subtrees across the fleet
    shared: bool = getattr(wl.extractor.run, "shared", False)
    for facts, p in zip(
        placed_facts(wl.candidate_pods, placements, shared=shared), placements, strict=True
    ):
        component = p.component
        if facts is None or component is None:
            continue
        every.append(facts)
        instance = p.instance or ""
        found = facts_of.get((component, instance))
        if found is None:
            facts_of[(component, instance)] = [facts]
        else:
            found.append(facts)
        if detail:
            replica = p.replica
            placed[p.pod] = (component, instance, "" if replica is None else replica, facts)
    components: list[ComponentTally] = []
    desired = 0
    requested: Mapping[str, int] = {}
    for name in wl.structure.pod_bearing:
        try:
            instances = wl.extractor.instances(name)
        except EngineError as err:
            errors.append(str(err))
            continue
        for instance_id, inst in sorted(instances.items()):
            count = inst.desired_pods()
            try:
                asked = (
                    _asked(inst, count) if shared else res.scaled(res.instance_request(inst), count)
                )
            except EngineError as err:
                errors.append(f"component '{name}': {err}")
                asked = {}
            mine = facts_of.get((name, instance_id))
            if not inst.describes_pods and not mine:
                continue  # an instance the object leaves out, and no pods of it
            desired += count
            # (one instance: its request is the sum, in the same order)
            requested = res.add(requested, asked) if requested else asked
            components.append(
                ComponentTally(
                    name, instance_id, tally_of(count, asked, (mine or []) if pods_known else None)
                )
            )
    totals = tally_of(desired, requested, every if pods_known else None)
    if not detail:
        return WorkloadSummary(
            phases=phases,
            error=errors[0] if errors else None,
            totals=totals,
            components=tuple(components),
            gangs=(),
            pods=(),
            detailed=False,
        )
    groups: dict[str, str] = {}
    gangs: list[GangTally] = []
    for group in wl.gangs.groups:
        for m in group.pods:
            groups.setdefault(m, group.name)
        members = [placed[m][3] for m in group.pods if m in placed]
        active = [f for f in members if f.active]
        gangs.append(
            GangTally(
                group.name,
                group.min_member,
                tuple(group.pods),
                len(active),
                sum(1 for f in active if f.bound),
            )
        )
    rows: list[tuple[str, str, str, str, str, str]] = []
    unplaced = ("", "", "", None)
    for pod in wl.pods or ():
        # dict first: the ABC check costs on every pod of a fleet
        if (type(pod) is not dict and not isinstance(pod, Mapping)) or pod.get(
            "kind", "Pod"
        ) != "Pod":
            continue
        meta = pod.get("metadata")  # the name and uid read inline: this runs per pod of a fleet
        if type(meta) is not dict:
            continue
        pod_name = meta.get("name")
        if type(pod_name) is not str:
            pod_name = str(pod_name or "")
        if not pod_name:
            continue
        pod_uid = meta.get("uid")
        if type(pod_uid) is not str:
            pod_uid = str(pod_uid or "")
        component, instance, replica, _ = placed.get(pod_name, unplaced)
        rows.append((pod_name, pod_uid, component, instance, replica, groups.get(pod_name, "")))
    rows.sort(key=_NAME)  # by name, stable (as PodPlace by name)
    places = list(starmap(PodPlace, rows))  # (in C: one per pod of a fleet)
    return WorkloadSummary(
        phases=phases,
        error=errors[0] if errors else None,
        totals=totals,
        components=tuple(components),
        gangs=tuple(gangs),
        pods=tuple(places),
    )
