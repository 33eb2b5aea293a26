"""The ``describe`` view: the workload's components with desired and observed pods and requests.

This is the JSON ``wlmap describe -o json`` prints (``schemas/describe.schema.json``). Placement follows the
reference CLI: a pod-bearing root is itself a component node, otherwise the root's children are
the top nodes; a component with several instances is one node per instance; a component with a
``replicaSelector`` is split per observed replica key (``name[key]``) when pods are known;
grouping components that end up with nothing under them are dropped, and so are instances the
object leaves out (template or pod spec null, no fragment set) unless pods of theirs are known.
Numbers: a pod-bearing instance the object describes implies ``replicas``, else
``minReplicas``, else 1 pods (one it leaves out: none), each requesting the scheduler's
effective request of its spec.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from workload_map.engine import resources as res
from workload_map.engine.errors import EngineError
from workload_map.engine.events import EventsView
from workload_map.engine.extract import NO_SCALE, ExtractedInstance, implied_replicas
from workload_map.engine.gangs import GangAssignment, PodGroup, PodGroupResult, with_minimums
from workload_map.engine.pod_status import pod_is_ready, read_pod
from workload_map.engine.pods import Placement
from workload_map.engine.references import ReferenceView
from workload_map.engine.resource_view import Observed
from workload_map.engine.resources import ResourceSummary, instance_request
from workload_map.engine.status import UNDEFINED, Condition, Status
from workload_map.engine.summary import (
    PodCounts,
    PodFacts,
    Tally,
    placed_facts,
    sum_tallies,
    tally_of,
)
from workload_map.model import GVK
from workload_map.model.views import View, json_field

__all__ = [
    "ComponentView",
    "DefinitionRef",
    "DescribeView",
    "Described",
    "Explanation",
    "GangNote",
    "PodCounts",
    "PodEntry",
    "ReplicaCounts",
    "StatusView",
    "describe",
    "explanations",
]


class Described(Observed, Protocol):
    """What the views below read of one workload: its object, prepared definition, extractor,
    candidate pods with their placements, status, gangs and the pods left out.

    The views are functions of these facts, not of the engine's facade: :class:`Workload`
    provides them (each evaluated once, lazily, in the order the views ask), and so can any
    record of precomputed values.
    """

    @property
    def obj(self) -> Mapping[str, Any]: ...
    @property
    def excluded(self) -> Sequence[tuple[str, str]]: ...  # (pod, reason): of other owners
    @property
    def gangs(self) -> PodGroupResult: ...
    @property
    def definition_name(self) -> str | None: ...
    @property
    def origin(self) -> str: ...
    @property
    def file_mode(self) -> bool: ...
    def status(self) -> Status | None: ...
    def phases(self) -> list[str]: ...
    def unattributed(self) -> list[tuple[str, str]]: ...


def _text(value: Any) -> str | None:
    """A non-empty string field, else None (objects from anywhere may hold anything)."""
    return value if isinstance(value, str) and value else None


class ReplicaCounts(View):
    """A component node's pods: desired by the spec, current and ready (null without pods);
    pending (active, on no node) and held (on a node, not finished)."""

    desired: int = json_field("desired")
    current: int | None = json_field("current")
    ready: int | None = json_field("ready")
    min: int | None = json_field("min")
    max: int | None = json_field("max")
    pending: int | None = json_field(
        "pending", default=None, description="active pods bound to no node (null without pods)"
    )
    held: int | None = json_field(
        "held",
        default=None,
        description="pods bound to a node and not finished, terminating ones included "
        "(null without pods)",
    )


class PodEntry(View):
    """One pod of a component node."""

    name: str = json_field("name")
    phase: str | None = json_field("phase")
    ready: bool = json_field("ready")
    node: str | None = json_field("node")
    gpus: int = json_field("gpus")
    reason: str | None = json_field("reason", omit="falsy", default=None)
    #: Terminating, Succeeded or Failed: listed, not counted (absent for an active pod)
    state: str | None = json_field("state", omit="none", default=None)
    instance: str | None = json_field("instance", omit="falsy", default=None)
    replica: str | None = json_field("replica", omit="none", default=None)
    message: str | None = json_field(
        "message",
        omit="none",
        default=None,
        description="the scheduler's message while the pod cannot be scheduled "
        "(its PodScheduled condition is False)",
    )


def _not_split(node: Any, _value: Any) -> bool:
    return not node.split


class ComponentView(View):
    """One component node (per instance, per replica key when split) and what hangs under it."""

    name: str = json_field("name")
    component: str = json_field("component")
    instance: str | None = json_field("instance")
    kind: GVK | None = json_field("kind")
    replicas: ReplicaCounts = json_field("replicas")
    resources: ResourceSummary = json_field("resources")
    pods: tuple[PodEntry, ...] = json_field("pods")
    children: tuple[ComponentView, ...] = json_field("children")
    error: str | None = json_field("error", omit="none", default=None)
    pending_resources: ResourceSummary | None = json_field(
        "pendingResources",
        omit="none",
        default=None,
        description="what the node's pending pods request (absent without pods)",
    )
    held_resources: ResourceSummary | None = json_field(
        "heldResources",
        omit="none",
        default=None,
        description="what the node's held pods request (absent without pods)",
    )
    #: the replica key of a node split per replica (null: pods whose key could not be read)
    replica: str | None = json_field("replica", omit=_not_split, default=None)
    split: bool = dataclasses.field(default=False, repr=False)
    #: every resource the node's desired pods request (the summary keeps the named ones)
    totals: Mapping[str, int] = dataclasses.field(default_factory=dict, repr=False)
    #: the node's pods in the shared vocabulary (None without pods), summed up the tree
    tally: Tally | None = dataclasses.field(default=None, repr=False)


class DefinitionRef(View):
    """Which definition described the workload, and where it came from."""

    name: str | None = json_field("name")
    origin: str = json_field("origin")


class StatusView(View):
    """The phase and conditions the root's status definition reads."""

    phase: str | None = json_field("phase")
    conditions: tuple[Condition, ...] = json_field("conditions")


class GangNote(View):
    """Why a gang the definition names is not listed."""

    reason: str = json_field("reason")


def _not_placed(entry: Any, _value: Any) -> bool:
    return not entry.placed


class Explanation(View):
    """How one pod was placed and grouped; or a pod left out; or a note on a gang not listed."""

    pod: str | None = json_field("pod")
    component: str | None = json_field("component")
    instance: str | None = json_field("instance", omit=_not_placed, default=None)
    replica: str | None = json_field("replica", omit=_not_placed, default=None)
    replica_component: str | None = json_field("replicaComponent", omit=_not_placed, default=None)
    unattributed_reason: str | None = json_field(
        "unattributedReason", omit=lambda e, _v: e.note, default=None
    )
    state: str | None = json_field("state", omit=_not_placed, default=None)
    steps: tuple[str, ...] = json_field("steps", default=())
    gang: GangAssignment | GangNote | None = json_field("gang", omit="none", default=None)
    placed: bool = dataclasses.field(default=False, repr=False)
    note: bool = dataclasses.field(default=False, repr=False)

    @classmethod
    def of(cls, placement: Placement, gang: GangAssignment) -> Explanation:
        return cls(
            pod=placement.pod,
            component=placement.component,
            instance=placement.instance,
            replica=placement.replica,
            replica_component=placement.replica_component,
            unattributed_reason=placement.reason,
            state=placement.state,
            steps=tuple(placement.steps),
            gang=gang,
            placed=True,
        )


class DescribeView(View):
    """The ``wlmap describe -o json`` view of one workload."""

    api_version: str | None = json_field("apiVersion")
    kind: str | None = json_field("kind")
    name: str | None = json_field("name")
    namespace: str | None = json_field("namespace")
    uid: str | None = json_field("uid")
    definition: DefinitionRef = json_field("definition")
    file_mode: bool = json_field("fileMode", description="the object was read from a file")
    phases: tuple[str, ...] = json_field("phases")
    pods: PodCounts = json_field("pods")
    resources: ResourceSummary = json_field(
        "resources", description="requested: what the pods the spec desires will ask"
    )
    components: tuple[ComponentView, ...] = json_field("components")
    pod_groups: tuple[PodGroup, ...] = json_field("podGroups")
    unattributed_pods: tuple[str, ...] = json_field("unattributedPods")
    unattributed_reasons: Mapping[str, str] = json_field("unattributedReasons")
    errors: tuple[str, ...] = json_field("errors")
    pod_group_notes: tuple[str, ...] = json_field("podGroupNotes", omit="falsy", default=())
    observed_resources: ResourceSummary | None = json_field(
        "observedResources",
        omit="none",
        default=None,
        description="what the current (active) pods request, bound or not",
    )
    pending_resources: ResourceSummary | None = json_field(
        "pendingResources",
        omit="none",
        default=None,
        description="what the pending pods (active, bound to no node) request",
    )
    held_resources: ResourceSummary | None = json_field(
        "heldResources",
        omit="none",
        default=None,
        description="what the held pods (bound to a node, not finished) request",
    )
    status: StatusView | None = json_field("status", omit="none", default=None)
    #: per pod how it was placed and grouped (``describe --explain``)
    explain: tuple[Explanation, ...] | None = json_field("explain", omit="none", default=None)
    #: what each of the definition's references resolved to (none: the key is left out)
    references: tuple[ReferenceView, ...] = json_field("references", omit="falsy", default=())
    #: the workload's events and its objects' warnings (live ``wlmap describe`` only; the CLI
    #: adds them: the engine reads no cluster)
    events: EventsView | None = json_field("events", omit="none", default=None)


def _summary_of(totals: Mapping[str, int] | None) -> ResourceSummary | None:
    return None if totals is None else ResourceSummary.of(totals)


def _pod_entry(pod: Mapping[str, Any], placement: Placement, facts: PodFacts) -> PodEntry:
    # the request is the one the tallies count (facts read once per pod, engine/summary.py);
    # ready, reason and message from one pass over the conditions
    reading = read_pod(pod)
    status = pod.get("status")
    if type(status) is not dict and not isinstance(status, Mapping):
        status = {}
    spec = pod.get("spec")
    if type(spec) is not dict and not isinstance(spec, Mapping):
        spec = {}
    return PodEntry(
        name=placement.pod,
        phase=_text(status.get("phase")),
        ready=reading.ready,
        node=_text(spec.get("nodeName")),
        gpus=facts.request.get(res.GPU, 0),
        reason=reading.reason,
        state=None if placement.active else placement.state,
        instance=placement.instance,
        replica=placement.replica,
        message=reading.message,
    )


#: replica indexes without pods are listed (``group[3]`` of a missing LWS group) up to this many
MAX_LISTED_REPLICAS = 1000


def _replica_sort_key(key: str) -> tuple[int, int | str]:
    return (0, int(key)) if key.isdigit() else (1, key)


#: one pod of a component instance: how it was placed, the pod, its facts
_Entry = tuple[Placement, Mapping[str, Any], PodFacts]


class _Builder:
    """Builds the component nodes of one workload (pods grouped by component and instance)."""

    def __init__(self, wl: Described):
        self.wl = wl
        self.structure = wl.structure
        self.extractor = wl.extractor
        self.pods_known = wl.pods is not None
        self.errors: list[str] = []
        self.entries: dict[tuple[str, str], list[_Entry]] = {}
        # each pod's facts once, for its entry, its node's tally and the workload's counts
        self.facts: list[PodFacts] = []
        for pod, placement, facts in zip(
            wl.candidate_pods,
            wl.placements,
            placed_facts(wl.candidate_pods, wl.placements),
            strict=True,
        ):
            if facts is not None and placement.component is not None:
                key = (placement.component, placement.instance or "")
                self.entries.setdefault(key, []).append((placement, pod, facts))
                self.facts.append(facts)

    def kind(self, name: str) -> GVK | None:
        return self.structure.components[name].kind

    def nodes(
        self, name: str, replica: tuple[str, str | None] | None, divisor: int
    ) -> list[ComponentView]:
        comp = self.structure.components[name]
        selector = comp.pod_selector.replica_selector if comp.pod_selector else None
        split = selector is not None and replica is None
        try:
            instances = self.extractor.instances(name)
        except EngineError as err:
            self.error(str(err))
            return [self._error_node(name, str(err))]
        out = []
        for _, inst in sorted(instances.items()):
            nodes = self._replica_split(name, inst) if split else None
            if nodes is None:
                node = self.node(name, inst, replica, divisor)
                nodes = [node] if node is not None else []
            out.extend(nodes)
        return out

    def error(self, message: str) -> None:
        if message not in self.errors:
            self.errors.append(message)

    def _error_node(self, name: str, message: str) -> ComponentView:
        current = ready = None
        if self.pods_known:
            mine = [
                pod
                for (comp, _), entries in self.entries.items()
                if comp == name
                for p, pod, _ in entries
                if p.active
            ]
            current, ready = len(mine), sum(1 for pod in mine if pod_is_ready(pod))
        return ComponentView(
            name=name,
            component=name,
            instance=None,
            kind=self.kind(name),
            replicas=ReplicaCounts(0, current, ready, None, None),
            resources=ResourceSummary.of({}),
            pods=(),
            children=(),
            error=message,
        )

    def _replica_split(self, name: str, inst: ExtractedInstance) -> list[ComponentView] | None:
        """One node per replica key (``name[key]``): those seen on pods and those the spec implies.

        A grouping component whose scale is one replica's pods (an LWS ``group``) lists every
        index from 0 to the replicas its pods imply — with or without pods, so a file shows
        ``group[0]``, ``group[1]`` as a live workload does, and a missing group shows as empty.
        """
        pod_bearing = self.structure.has_pod_definition(name)
        members = {name} if pod_bearing else set(self.structure.subtree(name))
        mine = [
            p
            for p in self.wl.placements
            if p.attributed
            and p.component in members
            and (not pod_bearing or (p.instance or "") == inst.instance_id)
        ]
        keys = {p.replica for p in mine if p.replica_component == name and p.replica is not None}
        unkeyed = any(p.replica is None for p in mine)
        count = len(keys)
        implied = implied_replicas(self.extractor, name)
        if implied is not None and all(k.isdigit() for k in keys):
            count = implied
            if count <= MAX_LISTED_REPLICAS:
                keys |= {str(i) for i in range(count)}
        if not keys:
            return None
        out = []
        shown: list[str | None] = [*sorted(keys, key=_replica_sort_key)]
        if unkeyed:  # pods whose replica key could not be read stay visible
            shown.append(None)
        for key in shown:
            node = self.node(name, inst, (name, key), count)
            if node is not None:
                label = "?" if key is None else key
                out.append(
                    dataclasses.replace(node, name=f"{node.name}[{label}]", replica=key, split=True)
                )
        return out

    def node(
        self,
        name: str,
        inst: ExtractedInstance,
        replica: tuple[str, str | None] | None,
        divisor: int,
    ) -> ComponentView | None:
        comp = self.structure.components[name]
        pod_bearing = comp.has_pod_definition
        children: list[ComponentView] = []
        for child in self.structure.children[name]:
            children.extend(self.nodes(child, replica, divisor))
        pods: list[_Entry] = []
        if pod_bearing:
            pods = [
                entry
                for entry in self.entries.get((name, inst.instance_id), [])
                if replica is None or entry[0].replica == replica[1]
            ]
        scale = inst.scale
        desired = 0
        totals: res.Totals = {}
        if pod_bearing and inst.describes_pods:
            desired = (scale or NO_SCALE).desired_pods()
            if divisor > 1:
                desired = -(-desired // divisor)  # ceil, exact for any size
            try:
                totals = res.scaled(instance_request(inst), desired)
            except EngineError as err:
                self.error(f"component '{name}': {err}")
        if not children and not pods:
            if not pod_bearing and scale is None:
                return None  # a grouping component with nothing under it
            if pod_bearing and not inst.describes_pods:
                return None  # an instance the object leaves out, and no pods of it
        current: int | None = None
        ready: int | None = None
        mine: Tally | None = None
        if self.pods_known:
            # the shared evaluation's rule (engine/summary.py): current/ready count active pods
            # only, as kubectl and the Job controller do; pending and held as it defines them
            mine = sum_tallies(
                [
                    tally_of(0, {}, [facts for _, _, facts in pods]),
                    *(c.tally for c in children if c.tally is not None),
                ]
            )
            current, ready = mine.current, mine.ready
        desired += sum(c.replicas.desired for c in children)
        totals = res.add(totals, *(c.totals for c in children))
        return ComponentView(
            name=inst.instance_id or name,
            component=name,
            instance=inst.instance_id or None,
            kind=self.kind(name),
            replicas=ReplicaCounts(
                desired,
                current,
                ready,
                scale.min_replicas if scale else None,
                scale.max_replicas if scale else None,
                mine.pending if mine is not None else None,
                mine.held if mine is not None else None,
            ),
            resources=ResourceSummary.of(totals),
            pods=tuple(
                _pod_entry(pod, p, facts) for p, pod, facts in sorted(pods, key=lambda e: e[0].pod)
            ),
            children=tuple(children),
            totals=totals,
            pending_resources=_summary_of(mine.pending_requests if mine else None),
            held_resources=_summary_of(mine.held_requests if mine else None),
            tally=mine,
        )


def describe(wl: Described, *, explain: bool = False) -> DescribeView:
    """The describe view of a workload (see the module doc and the schema in schemas/)."""
    structure = wl.structure
    obj = wl.obj if isinstance(wl.obj, Mapping) else {}
    meta = obj.get("metadata") if isinstance(obj.get("metadata"), Mapping) else {}
    builder = _Builder(wl)
    root = structure.root
    if root.has_pod_definition:
        nodes = builder.nodes(root.name, None, 1)
    else:
        nodes = []
        for child in structure.children[root.name]:
            nodes.extend(builder.nodes(child, None, 1))
    desired = 0
    totals: res.Totals = {}
    for name in structure.order:
        if not structure.has_pod_definition(name):
            continue
        try:
            instances = wl.extractor.instances(name)
        except EngineError:
            continue  # reported by the component's node
        for inst in instances.values():
            count = inst.desired_pods()
            desired += count
            try:
                totals = res.add(totals, res.scaled(instance_request(inst), count))
            except EngineError as err:
                builder.error(f"component '{name}': {err}")
    status: Status | None
    try:
        status = wl.status()
        phases = wl.phases()
    except EngineError as err:
        builder.error(f"status: {err}")
        status, phases = None, [UNDEFINED]
    unattributed = wl.unattributed()
    groups = wl.gangs.groups
    for problem in wl.extractor.problems:
        builder.error(problem)
    # a record of precomputed values may carry no references (getattr: the protocol's optional)
    resolution = getattr(wl, "resolution", None)
    reference_views = resolution.views if resolution is not None else ()
    for problem in resolution.problems if resolution is not None else ():
        builder.error(problem)
    # the workload's numbers by the shared evaluation's rule (summarize's totals: every placed
    # pod's facts), as the exporter's and the web view's are, from the facts read once above
    shared = tally_of(0, {}, builder.facts if builder.pods_known else None)
    return DescribeView(
        api_version=_text(obj.get("apiVersion")),
        kind=_text(obj.get("kind")),
        name=_text(meta.get("name")) if isinstance(meta, Mapping) else None,
        namespace=_text(meta.get("namespace")) if isinstance(meta, Mapping) else None,
        uid=_text(meta.get("uid")) if isinstance(meta, Mapping) else None,
        definition=DefinitionRef(wl.definition_name, wl.origin),
        file_mode=wl.file_mode,
        phases=tuple(phases),
        pods=PodCounts(desired, shared.current, shared.ready, shared.pending, shared.held),
        resources=ResourceSummary.of(totals),
        components=tuple(nodes),
        pod_groups=groups,
        unattributed_pods=tuple(name for name, _ in unattributed),
        unattributed_reasons=dict(unattributed),
        errors=tuple(builder.errors),
        pod_group_notes=(*wl.gangs.notes, *wl.gangs.ungrouped),
        observed_resources=_summary_of(shared.current_requests),
        pending_resources=_summary_of(shared.pending_requests),
        held_resources=_summary_of(shared.held_requests),
        status=StatusView(status.phase, status.conditions) if status is not None else None,
        explain=explanations(wl) if explain else None,
        references=tuple(reference_views),
    )


def explanations(wl: Described) -> tuple[Explanation, ...]:
    """Per pod how it was placed and grouped, then pods of other owners, then gang notes."""
    gangs = with_minimums(wl.gangs.groups, wl.gangs.assignments, wl.placements)
    out = [
        Explanation.of(placement, gang)
        for placement, gang in zip(wl.placements, gangs, strict=True)
    ]
    out.extend(
        Explanation(pod=name, component=None, unattributed_reason=reason)
        for name, reason in wl.excluded
    )
    out.extend(
        Explanation(pod=None, component=None, gang=GangNote(note), note=True)
        for note in wl.gangs.notes
    )
    return tuple(out)
