"""Pod groups (gangs) from a definition's gang-scheduling instructions.

Both forms are read. The deprecated ``podGroups`` form places each pod in the first group whose
member is the pod's component or an ancestor of it (direct mentions first) and whose filters
pass, keyed by the member's ``groupByKeyPaths``. The v2 ``podGroup`` form makes one group for the
whole workload with one subgroup per listed component. Names follow KAI: ``pg-<uid>`` plus the
``-``-joined keys (v2: the group name), and must be DNS-1123 subdomains.

Minimum members follow the project's contract, not the reference's (which takes whichever
member pod it sees first, and multiplies a LeaderWorkerSet group by its own size): a group needs
the pods the definition implies for all of its member components, and when its keys split the
members by instance or by replica, only that instance's or replica's share. The reference's own
rule, ``CalculateSubtreeScale``, is kept as :func:`subtree_scale` for KAI compatibility.
"""

from __future__ import annotations

import copy
import dataclasses
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from workload_map import jq
from workload_map.engine import resources as res
from workload_map.engine.errors import EngineError, ExtractionError
from workload_map.engine.extract import NO_SCALE, ExtractedInstance, Extractor, implied_replicas
from workload_map.engine.pods import Placement, single_result
from workload_map.engine.runner import Expression, Run, lookup
from workload_map.engine.structure import Structure
from workload_map.model import Member, PodGroupDefinition, Topology
from workload_map.model.extensions import CREATED_LATER, GANG_MIN_MEMBER, gang_extensions
from workload_map.model.views import json_field, set_field, view

__all__ = [
    "GangAssignment",
    "GroupKey",
    "GroupTopology",
    "PodGroup",
    "PodGroupResult",
    "SubGroupRef",
    "build_pod_groups",
    "group_name",
    "is_dns1123_subdomain",
    "subtree_scale",
    "with_minimums",
]

_DNS1123 = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


def is_dns1123_subdomain(name: str) -> bool:
    return len(name) <= 253 and bool(_DNS1123.match(name))


def group_name(owner: str, *keys: str) -> str:
    """``pg-<owner>`` plus the ``-``-joined keys, leaving out empty ones (never ``pg--x``)."""
    return "-".join(part for part in ("pg", owner, *keys) if part)


@view
class GroupTopology:
    """Where the scheduler should place the gang (the definition's topology, as given)."""

    topology_name: str | None = json_field("topologyName")
    preferred_topology_level: str | None = json_field("preferredTopologyLevel")
    required_topology_level: str | None = json_field("requiredTopologyLevel")


@view
class PodGroup:
    """One gang: its KAI-compatible name, minimum, member pods and subgroups."""

    name: str = json_field("name")
    min_member: int = json_field("minMember")
    pods: tuple[str, ...] = json_field("pods", default=())
    sub_groups: tuple[PodGroup, ...] = json_field("subGroups", default=())
    definition: str = json_field("definition", default="")
    keys: tuple[str, ...] = json_field("keys", default=())
    rule: str = json_field("minMemberRule", default="")
    topology: GroupTopology | None = json_field("topology", omit="none", default=None)
    error: str | None = json_field("error", omit="none", default=None)
    #: key paths only pods carry (no pods known): the name shows ``<label>`` in their place
    unresolved_keys: tuple[str, ...] = json_field("unresolvedKeys", omit="falsy", default=())
    #: pods of the group the operator creates only after admission (not in ``min_member``)
    created_later: int = json_field("createdLater", omit="falsy", default=0)
    #: requests of every pod the group will hold, the later ones included (set with them)
    min_resources: dict[str, Any] | None = json_field("minResources", omit="none", default=None)

    def __post_init__(self) -> None:
        # the JSON lists member pods by name; keep one order everywhere
        set_field(self, "pods", tuple(sorted(self.pods)))

    def flagged(self) -> PodGroup:
        """The group with a naming error when its name is not a DNS-1123 subdomain."""
        if self.error is not None or self.unresolved_keys or is_dns1123_subdomain(self.name):
            return self
        error = f"pod group name {self.name!r} is not a DNS-1123 subdomain"
        return dataclasses.replace(self, error=error)


@view
class GroupKey:
    """One key of a pod's group: the path read and the value it gave."""

    path: str = json_field("path")
    value: str = json_field("value")


@view
class SubGroupRef:
    """The v2 subgroup a pod joined, with its minimum (for ``explain``)."""

    name: str = json_field("name")
    min_member: int = json_field("minMember")
    rule: str = json_field("minMemberRule")


@view
class GangAssignment:
    """How one pod was grouped (for ``explain``); the minimum is its group's."""

    group: str | None = json_field("group", default=None)
    definition: str | None = json_field("definition", default=None)
    member: str | None = json_field("member", default=None)
    effective_component: str | None = json_field("effectiveComponent", default=None)
    keys: tuple[GroupKey, ...] = json_field("keys", default=())
    filters: tuple[str, ...] = json_field("filters", default=())
    reason: str | None = json_field("reason", default=None)
    min_member: int | None = json_field("minMember", omit="none", default=None)
    rule: str | None = json_field("minMemberRule", omit="none", default=None)
    sub_group: SubGroupRef | None = json_field("subGroup", omit="none", default=None)


#: the assignment of every pod no component claims (shared: views are immutable)
_UNATTRIBUTED = GangAssignment(reason="not attributed to a component")


@view
class PodGroupResult:
    """The pod groups, per candidate pod how it was grouped (its group's minimum is added by
    :func:`with_minimums`, for ``explain``), and notes on gangs not listed."""

    groups: tuple[PodGroup, ...] = ()
    assignments: tuple[GangAssignment, ...] = ()
    notes: tuple[str, ...] = ()
    #: attributed pods that join no group (or no subgroup), by component and reason; each pod's
    #: own assignment already says why, so ``explain`` does not repeat these
    ungrouped: tuple[str, ...] = ()


# -- the reference's subtree-scale rule -------------------------------------------------------
def subtree_scale(extractor: Extractor, component: str, instance_id: str | None = None) -> int:
    """The reference's ``CalculateSubtreeScale`` (KAI's minAvailable), exactly."""
    structure = extractor.structure
    if instance_id == "":
        raise ExtractionError("instance id is empty")
    if component not in structure.components:
        raise ExtractionError(f"component {component} not found")
    by_definition = any(c.scale_definition is not None for c in structure.components.values())

    def own(name: str, inst: str | None) -> int:
        scales = extractor.scales(name)
        if inst is not None:
            if scales is None or inst not in scales:
                raise ExtractionError(f"instance id {inst} not found")
            return scales[inst].reference_minimum()
        return sum(s.reference_minimum() for s in scales.values()) if scales else 0

    def below(name: str, seen: tuple[str, ...]) -> list[str]:
        # a component owned through a cycle (only without validation) is not counted again
        return [c for c in structure.children[name] if c not in seen]

    def by_scale(name: str, inst: str | None, seen: tuple[str, ...]) -> int:
        value = own(name, inst)
        if structure.is_childless(name):
            return value
        seen = (*seen, name)
        children = sum(by_scale(child, None, seen) for child in below(name, seen))
        if children == 0:
            return value
        if value == 0:
            return children
        return value * children

    def by_leaves(name: str, inst: str | None, seen: tuple[str, ...]) -> int:
        if structure.is_childless(name):
            # the reference's leaves are pod-bearing components: a childless one without a pod
            # definition (a grouping or status-only component) counts no pods
            if not structure.has_pod_definition(name):
                return 0
            ids = extractor.instance_ids(name)
            if inst is not None:
                if inst not in ids:
                    raise ExtractionError(f"instance id {inst} not found")
                return 1
            return len(ids) if ids and ids != [""] else 1
        seen = (*seen, name)
        return sum(by_leaves(child, None, seen) for child in below(name, seen))

    if by_definition:
        return by_scale(component, instance_id, ())
    return by_leaves(component, instance_id, ())


# -- our minimum rule --------------------------------------------------------------------------
#: the stated minimum not read yet (None is a read that found none)
_UNREAD = object()


class _Counter:
    """Pods the definition implies for parts of the tree, by the gang-minimum rule."""

    def __init__(self, extractor: Extractor, placements: Sequence[Placement]):
        self.structure = extractor.structure
        self.extractor = extractor
        self.placements = placements
        self._observed_replicas: dict[str, int] | None = None
        self.extensions = gang_extensions(self.structure.karta)
        self._late: dict[str, frozenset[str]] = {}
        self._stated: object = _UNREAD
        #: per grouping component: its replicas' later pods and reservation (every group of
        #: one definition asks the same)
        self._replica_later: dict[str, int] = {}
        self._replica_reserved: dict[str, dict[str, Any] | None] = {}
        #: each (level, group definition, member) once, whichever component reaches it: pods
        #: of sibling components (a leader and its workers) then share their assignments
        self.candidates: dict[tuple[str, int, int], _Candidate] = {}

    def candidate(self, level: str, definition: PodGroupDefinition, member: Member) -> _Candidate:
        key = (level, id(definition), id(member))
        found = self.candidates.get(key)
        if found is None:
            found = self.candidates[key] = _Candidate(self.structure, level, definition, member)
        return found

    def _evaluate(self, key: str, expr: str) -> list[Any]:
        try:
            return list(
                self.extractor.run(self.structure.expressions.get(expr), self.extractor.obj)
            )
        except EngineError as err:
            raise ExtractionError(f"annotation {key}: {err}") from err

    def late(self, name: str) -> frozenset[str]:
        """The instances of ``name`` created only after admission (``created-after-admission``)."""
        found = self._late.get(name)
        if found is None:
            expr = self.extensions.created_later.get(name)
            found = frozenset()
            if expr is not None and self.structure.has_pod_definition(name):
                values = self._evaluate(CREATED_LATER + name, expr)
                ids = self.extractor.instance_ids(name)
                if any(v is True for v in values):
                    found = frozenset(ids)
                else:
                    found = frozenset(v for v in values if isinstance(v, str) and v in ids)
            self._late[name] = found
        return found

    def stated_minimum(self) -> int | None:
        """The workload's own minimum (``gang-min-member``), None when it states none; read
        once (every alpha group of the workload applies it)."""
        if self._stated is _UNREAD:
            self._stated = self._read_stated()
        return self._stated if isinstance(self._stated, int) else None

    def _read_stated(self) -> int | None:
        expr = self.extensions.min_member
        if expr is None:
            return None
        values = [v for v in self._evaluate(GANG_MIN_MEMBER, expr) if v is not None]
        if not values:
            return None
        value = values[0]
        if isinstance(value, str) and value.strip().isdigit():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int | float) or value != int(value):
            raise ExtractionError(f"annotation {GANG_MIN_MEMBER}: {value!r} is not a whole number")
        return max(int(value), 0)

    def instance_minimums(self, name: str) -> dict[str, int]:
        """Per instance the pods it needs; 0 for an instance the object leaves out, and for
        one whose pods are created after admission."""
        if not self.structure.has_pod_definition(name):
            return {}
        late = self.late(name)
        return {
            i: (inst.scale or NO_SCALE).gang_minimum()
            if inst.describes_pods and i not in late
            else 0
            for i, inst in self.extractor.instances(name).items()
        }

    def _instances(self, names: Sequence[str]) -> Iterator[tuple[str, str, ExtractedInstance]]:
        for name in dict.fromkeys(c for n in names for c in self.structure.subtree(n)):
            if self.structure.has_pod_definition(name):
                for i, inst in self.extractor.instances(name).items():
                    if inst.describes_pods:
                        yield name, i, inst

    def capacity(self, names: Sequence[str]) -> int:
        """Pods under ``names`` that can exist before admission (the spec's count, not the
        minimum): no minimum may exceed it."""
        return sum(
            inst.desired_pods() for c, i, inst in self._instances(names) if i not in self.late(c)
        )

    def created_later(self, names: Sequence[str]) -> int:
        """Pods under ``names`` the operator creates only after admission."""
        return sum(
            inst.desired_pods() for c, i, inst in self._instances(names) if i in self.late(c)
        )

    def reserved(self, names: Sequence[str]) -> dict[str, Any] | None:
        """The requests of every pod under ``names``, the later ones included (minResources)."""
        from workload_map.engine.describe import instance_request

        try:
            totals = res.add(
                *(
                    res.scaled(instance_request(inst), inst.desired_pods())
                    for _, _, inst in self._instances(names)
                )
            )
        except EngineError:
            return None
        return res.summarize(totals)

    def bounded(self, names: Sequence[str], minimum: int, rule: str) -> tuple[int, str]:
        """``minimum`` capped at the pods that can exist before admission."""
        cap = self.capacity(names)
        if minimum > cap:
            return cap, f"{rule}; capped at the {cap} pods that can exist before admission"
        return minimum, rule

    def described(self, name: str) -> bool:
        """Whether the object describes the pods of some instance under ``name``."""
        return any(
            inst.describes_pods
            for comp in self.structure.subtree(name)
            if self.structure.has_pod_definition(comp)
            for inst in self.extractor.instances(comp).values()
        )

    def subtree(self, name: str, only: Mapping[str, str] | None = None) -> int:
        """Σ over pod-bearing components under ``name``; ``only`` pins some to one instance."""
        total = 0
        for comp in self.structure.subtree(name):
            for inst, count in self.instance_minimums(comp).items():
                if only and comp in only and only[comp] != inst:
                    continue
                total += count
        return total

    def replica_count(self, component: str) -> int:
        if self._observed_replicas is None:
            seen: dict[str, set[str]] = {}
            for p in self.placements:
                if p.replica_component and p.replica is not None:
                    seen.setdefault(p.replica_component, set()).add(p.replica)
            self._observed_replicas = {k: len(v) for k, v in seen.items()}
        return max(self._observed_replicas.get(component, 0), 1)

    def replica_share(self, component: str, only: Mapping[str, str] | None) -> tuple[int, str]:
        """Pods one replica of ``component`` implies."""
        comp = self.structure.components[component]
        scales = self.extractor.scales(component) if comp.scale_definition else None
        if (
            scales
            and not self.structure.has_pod_definition(component)
            and self.structure.children.get(component)
        ):
            value = next(iter(scales.values())).gang_minimum()
            rule = f"one replica of {component}: its own scale ({value} pods)"
            later = self.replica_later(component)
            if later:
                # the scale counts every pod of the replica, those created later too
                lowered = max(value - later, 0)
                return lowered, f"{rule}, less {later} created after admission"
            return value, rule
        total = self.subtree(component, only)
        count = self.replica_count(component)
        return -(-total // count), (
            f"one replica of {component}: {total} pods over {count} observed replicas"
        )

    def replicas_of(self, component: str) -> int:
        """How many replicas of grouping ``component`` there are: the spec's, else observed."""
        implied = implied_replicas(self.extractor, component)
        return implied if implied else self.replica_count(component)

    def replica_later(self, component: str) -> int:
        """Pods of one replica of ``component`` created after admission: the later pods under
        it spread over its replicas, rounded up (no replica's minimum may count one)."""
        found = self._replica_later.get(component)
        if found is None:
            later = self.created_later([component])
            found = -(-later // self.replicas_of(component)) if later else 0
            self._replica_later[component] = found
        return found

    def replica_reserved(self, component: str) -> dict[str, Any] | None:
        """The requests of every pod of one replica of ``component``, the later ones included;
        None when an instance's pods do not divide evenly over the replicas."""
        if component not in self._replica_reserved:
            self._replica_reserved[component] = self._reserve_replica(component)
        return self._replica_reserved[component]

    def _reserve_replica(self, component: str) -> dict[str, Any] | None:
        from workload_map.engine.describe import instance_request

        count = self.replicas_of(component)
        parts = []
        for _, _, inst in self._instances([component]):
            pods = inst.desired_pods()
            if pods % count:
                return None
            try:
                parts.append(res.scaled(instance_request(inst), pods // count))
            except EngineError:
                return None
        return res.summarize(res.add(*parts))

    def members_capacity(
        self, members: Sequence[Member], keys_by_pod: Sequence[tuple[Placement, tuple[str, ...]]]
    ) -> int:
        """Pods of one alpha group that can exist before admission (a stated minimum's cap):
        one replica's share where the keys split by replica, the pinned instances' pods where
        they pin instances, else every such pod of the members."""
        pins, replica_of = _dimensions(keys_by_pod)
        if replica_of is not None:
            comp = self.structure.components[replica_of]
            scales = self.extractor.scales(replica_of) if comp.scale_definition else None
            if (
                scales
                and not self.structure.has_pod_definition(replica_of)
                and self.structure.children.get(replica_of)
            ):
                own = next(iter(scales.values())).desired_pods()
                return max(own - self.replica_later(replica_of), 0)
            return -(-self.capacity([replica_of]) // self.replicas_of(replica_of))
        names = [m.component_name for m in members if m.component_name in self.structure.components]
        return sum(
            inst.desired_pods()
            for c, i, inst in self._instances(names)
            if i not in self.late(c) and (c not in pins or pins[c] == i)
        )

    def members_later(
        self, members: Sequence[Member], keys_by_pod: Sequence[tuple[Placement, tuple[str, ...]]]
    ) -> tuple[int, dict[str, Any] | None]:
        """Pods of one alpha group created after admission, and then the requests of all its
        pods (its ``minResources``); (0, None) when it has none."""
        pins, replica_of = _dimensions(keys_by_pod)
        if replica_of is not None:
            later = self.replica_later(replica_of)
            return (later, self.replica_reserved(replica_of)) if later else (0, None)
        if pins:
            return 0, None  # an instance-pinned group: its instance is created or not as a whole
        names = [m.component_name for m in members if m.component_name in self.structure.components]
        later = self.created_later(names)
        return (later, self.reserved(names)) if later else (0, None)

    def members_minimum(
        self, members: Sequence[Member], keys_by_pod: Sequence[tuple[Placement, tuple[str, ...]]]
    ) -> tuple[int, str]:
        """The minimum of a group of ``members`` whose pods have these keys, and the rule."""
        pins, replica_of = _dimensions(keys_by_pod)
        if replica_of is not None:
            return self.replica_share(replica_of, pins)
        names = [m.component_name for m in members if m.component_name in self.structure.components]
        total = sum(self.subtree(n, pins) for n in names)
        parts = ", ".join(names)
        if pins:
            scope = ", ".join(f"{c} instance {i}" for c, i in pins.items())
            return total, f"pods implied for {parts}, keys pin {scope}"
        return total, f"pods implied for {parts}"


def _dimensions(
    keys_by_pod: Sequence[tuple[Placement, tuple[str, ...]]],
) -> tuple[dict[str, str], str | None]:
    """Which instance / replica the group's keys pin (checked on every pod of the group)."""
    if not keys_by_pod:
        return {}, None
    width = len(keys_by_pod[0][1])
    instance_pins: dict[str, str] = {}
    replica_of: str | None = None
    for index in range(width):
        first, keys = keys_by_pod[0]
        value = keys[index]
        if first.instance and all(
            p.instance == k[index] and p.component == first.component for p, k in keys_by_pod
        ):
            if first.component is not None:
                instance_pins[first.component] = value
            continue
        if first.replica is not None and all(
            p.replica == k[index] and p.replica_component == first.replica_component
            for p, k in keys_by_pod
        ):
            replica_of = first.replica_component
    return instance_pins, replica_of


def _topology(topology: Topology | None) -> tuple[GroupTopology | None, str | None]:
    if topology is None:
        return None, None
    out = GroupTopology(
        topology.topology_name,
        topology.preferred_topology_level,
        topology.required_topology_level,
    )
    if not topology.topology_name:
        return out, "topology: topologyName is required"
    if not (topology.preferred_topology_level or topology.required_topology_level):
        return out, "topology: at least one of preferredTopologyLevel/requiredTopologyLevel"
    return out, None


class _Candidate:
    """One group a pod of some component may join, its expressions looked up once."""

    __slots__ = (
        "_keys",
        "assigned",
        "definition",
        "filter_texts",
        "filters",
        "keys",
        "level",
        "member",
    )

    def __init__(
        self, structure: Structure, level: str, definition: PodGroupDefinition, member: Member
    ):
        self.level, self.definition, self.member = level, definition, member
        self.filters = [(f, structure.expressions.get(f)) for f in member.filters]
        self.filter_texts = tuple(member.filters)
        self.keys = [(k, structure.expressions.get(k)) for k in member.group_by_key_paths]
        #: the assignment of each (keys, failure) seen, shared by the pods that have them
        self.assigned: dict[tuple[Any, ...], GangAssignment] = {}
        self._keys: dict[tuple[str, str], GroupKey] = {}

    def key(self, path: str, value: str) -> GroupKey:
        """One key view per (path, value): groups of one replica share them."""
        found = self._keys.get((path, value))
        if found is None:
            found = self._keys[(path, value)] = GroupKey(path, value)
        return found

    def passes(self, pod: Any, run: Run) -> bool:
        """Every filter gives exactly ``true`` (several results are an error)."""
        for text, expression in self.filters:
            values = run(expression, pod)
            if len(values) > 1:
                raise ExtractionError(
                    f"filter '{text}': expected single query result, got {len(values)}"
                )
            if not values or values[0] is not True:
                return False
        return True


def _candidates(
    structure: Structure, component: str
) -> list[tuple[str, PodGroupDefinition, Member]]:
    gang = structure.karta.gang_scheduling
    if gang is None:
        return []
    levels = [component, *structure.ancestors(component)]
    out: list[tuple[str, PodGroupDefinition, Member]] = []
    for level in levels:
        for definition in gang.pod_groups:
            for member in definition.members:
                if member.component_name == level:
                    out.append((level, definition, member))
    return out


#: why a gang that would need no pods is not listed (its pods, if any, join no gang)
NO_PODS_IMPLIED = "the gang would need no pods (minMember 0): no gang"


def build_pod_groups(
    extractor: Extractor,
    pods: Sequence[Mapping[str, Any]],
    placements: Sequence[Placement],
    owner_uid: str,
    *,
    pods_known: bool = True,
) -> PodGroupResult:
    """The pod groups, per pod how it was grouped, and notes on gangs not listed.

    Without pods (``pods_known`` false) the groups are those the spec implies: the v2 group,
    and alpha groups whose keys the spec gives (see :func:`_expected_alpha_groups`). A gang
    that needs no pods (``minMember`` 0, e.g. a RayJob running on an existing cluster) is
    not listed, as a scheduler would not create it; the notes say why.
    """
    gang = extractor.structure.karta.gang_scheduling
    if gang is None or (gang.pod_group is None and not gang.pod_groups):
        reason = "the definition has no gang-scheduling instructions"
        return PodGroupResult(assignments=tuple(GangAssignment(reason=reason) for _ in pods))
    counter = _Counter(extractor, placements)
    notes: list[str] = []
    assignments: list[GangAssignment]
    if gang.pod_group is not None:
        groups, assignments = _v2_groups(counter, placements, owner_uid)
    elif pods_known:
        groups, assignments = _alpha_groups(counter, pods, placements, owner_uid)
    else:
        groups, notes = _expected_alpha_groups(counter, owner_uid)
        assignments = [GangAssignment() for _ in pods]
    sub_grouped = gang.pod_group is not None and bool(gang.pod_group.sub_groups)
    ungrouped = _ungrouped_notes(placements, assignments, sub_grouped)
    kept: list[PodGroup] = []
    for group in groups:
        if group.min_member == 0 and group.error is None:
            notes.append(f"pod group {group.name}: {NO_PODS_IMPLIED} ({group.rule})")
            assignments = [
                dataclasses.replace(a, group=None, reason=NO_PODS_IMPLIED)
                if a.group == group.name
                else a
                for a in assignments
            ]
            continue
        kept.append(group)
    return PodGroupResult(tuple(kept), tuple(assignments), tuple(notes), tuple(ungrouped))


#: pod names shown per note on pods that join no group
_NOTE_NAMES = 5


def _ungrouped_notes(
    placements: Sequence[Placement], assignments: Sequence[GangAssignment], sub_grouped: bool
) -> list[str]:
    """Attributed pods that join no group (or, in the v2 form with subgroups, no subgroup),
    by component and reason: reported, never silently dropped."""
    by_cause: dict[tuple[str, str], list[str]] = {}
    for placement, assignment in zip(placements, assignments, strict=True):
        if not placement.attributed or placement.component is None:
            continue
        if assignment.group is None:
            what = f"join no pod group ({assignment.reason or 'no group matches'})"
        elif sub_grouped and assignment.member is None:
            what = f"are in pod group {assignment.group} but in none of its subgroups"
        else:
            continue
        by_cause.setdefault((placement.component, what), []).append(placement.pod)
    out = []
    for (component, what), names in sorted(by_cause.items()):
        shown = ", ".join(sorted(names)[:_NOTE_NAMES])
        more = f" and {len(names) - _NOTE_NAMES} more" if len(names) > _NOTE_NAMES else ""
        count = "1 pod" if len(names) == 1 else f"{len(names)} pods"
        out.append(f"{count} of {component} {what}: {shown}{more}")
    return out


def with_minimums(
    groups: Sequence[PodGroup],
    assignments: Sequence[GangAssignment],
    placements: Sequence[Placement],
) -> tuple[GangAssignment, ...]:
    """Each assignment with its group's minimum (and its v2 subgroup's), as ``explain`` shows."""
    by_name = {g.name: g for g in groups}
    members = {g.name: [(sub, frozenset(sub.pods)) for sub in g.sub_groups] for g in groups}
    memo: dict[tuple[int, str | None], GangAssignment] = {}
    out: list[GangAssignment] = []
    for assignment, placement in zip(assignments, placements, strict=True):
        group = by_name.get(assignment.group) if assignment.group else None
        if group is None:
            out.append(assignment)
            continue
        sub = None
        for candidate, pods in members[group.name]:
            if placement.pod in pods:
                sub = candidate
        key = (id(assignment), sub.name if sub is not None else None)
        found = memo.get(key)
        if found is None:
            found = memo[key] = dataclasses.replace(
                assignment,
                min_member=group.min_member,
                rule=group.rule,
                sub_group=SubGroupRef(sub.name, sub.min_member, sub.rule) if sub else None,
            )
        out.append(found)
    return tuple(out)


@view
class _AlphaMinimum:
    """One alpha group's minimum, its rule, an extraction failure, and its later pods."""

    minimum: int
    rule: str
    error: str | None = None
    later: int = 0
    reserved: dict[str, Any] | None = None


def _minimum(
    counter: _Counter,
    definition: PodGroupDefinition,
    members: Sequence[tuple[Placement, tuple[str, ...]]],
) -> _AlphaMinimum:
    """The minimum of one alpha group; an extraction failure is the group's error."""
    try:
        minimum, rule = counter.members_minimum(definition.members, members)
        stated = counter.stated_minimum()
        if stated is not None:
            # the workload's own minimum, per group, never above what the group can hold
            cap = counter.members_capacity(definition.members, members)
            minimum = min(stated, cap)
            rule = f"stated by the workload ({counter.extensions.min_member} = {stated})"
            if stated > cap:
                rule += f"; capped at the {cap} pods of the group that can exist before admission"
        later, reserved = counter.members_later(definition.members, members)
    except ExtractionError as err:
        return _AlphaMinimum(0, "", str(err))
    return _AlphaMinimum(minimum, rule, None, later, reserved)


# -- the v2 form -------------------------------------------------------------------------------
def _v2_groups(
    counter: _Counter, placements: Sequence[Placement], owner_uid: str
) -> tuple[list[PodGroup], list[GangAssignment]]:
    structure = counter.structure
    gang = structure.karta.gang_scheduling
    mapping = gang.pod_group if gang is not None else None
    assert mapping is not None  # the caller checked
    name = group_name(owner_uid, mapping.name)
    topology, error = _topology(mapping.topology)
    key = (GroupKey("podGroup.name", mapping.name),)
    sub_groups: list[PodGroup] = []
    member_of: dict[int, str] = {}  # placement index -> its subgroup (the last that lists it)
    for sub in mapping.sub_groups:
        component = sub.component_name
        members = set(structure.subtree(component)) if component in structure.components else ()
        mine = [i for i, p in enumerate(placements) if p.attributed and p.component in members]
        sub_groups.append(
            _v2_sub_group(
                counter, mapping.name, component, sub.topology, [placements[i].pod for i in mine]
            )
        )
        member_of.update(dict.fromkeys(mine, component))
    # one shared (immutable) assignment per subgroup, not one per pod
    by_member = {
        member: GangAssignment(
            group=name,
            definition=mapping.name,
            member=member,
            effective_component=member,
            keys=key,
        )
        for member in {*member_of.values(), None}
    }
    assignments = [
        by_member[member_of.get(i)] if p.attributed else _UNATTRIBUTED
        for i, p in enumerate(placements)
    ]
    minimum, rule = 0, ""
    root = [structure.root.name]
    later: int = 0
    reserved: dict[str, Any] | None = None
    try:
        if sub_groups:
            minimum, rule = sum(g.min_member for g in sub_groups), "sum of the subgroups"
        else:
            minimum, rule = counter.subtree(root[0]), "pods implied for the whole workload"
        stated = counter.stated_minimum()
        if stated is not None:
            minimum = stated
            rule = f"stated by the workload ({counter.extensions.min_member} = {stated})"
        minimum, rule = counter.bounded(root, minimum, rule)
        later = counter.created_later(root)
        if later:
            rule += f"; {later} pods created after admission are not counted"
            reserved = counter.reserved(root)
    except ExtractionError as err:
        error = error or str(err)
    group = PodGroup(
        name=name,
        min_member=minimum,
        pods=tuple(p.pod for p in placements if p.attributed),
        sub_groups=tuple(sub_groups),
        definition=mapping.name,
        keys=(mapping.name,),
        rule=rule,
        topology=topology,
        error=error,
        created_later=later,
        min_resources=reserved,
    )
    return [group.flagged()], assignments


def _v2_sub_group(
    counter: _Counter,
    definition: str,
    component: str,
    topology: Topology | None,
    pods: Sequence[str],
) -> PodGroup:
    """One v2 subgroup: the pods implied for ``component`` and its descendants."""
    if component not in counter.structure.components:
        missing = f"subgroup component '{component}' is not defined"
        return PodGroup(name=component, min_member=0, definition=definition, error=missing)
    shown, error = _topology(topology)
    rule = f"pods implied for {component} and its descendants"
    later = 0
    try:
        minimum, rule = counter.bounded([component], counter.subtree(component), rule)
        later = counter.created_later([component])
        if minimum == 0 and not counter.described(component):
            rule = f"the object does not describe {component}: no pods"
        elif minimum == 0 and later:
            rule = f"{component}: its pods are created after admission (not counted)"
        elif minimum == 0:
            error = error or f"component {component} implies no pods"
    except ExtractionError as err:
        minimum, error = 0, error or str(err)
    return PodGroup(
        name=component,
        min_member=minimum,
        pods=tuple(pods),
        definition=definition,
        rule=rule,
        topology=shown,
        error=error,
        created_later=later,
    )


# -- the alpha form, with pods -----------------------------------------------------------------
def _alpha_groups(
    counter: _Counter,
    pods: Sequence[Mapping[str, Any]],
    placements: Sequence[Placement],
    owner_uid: str,
) -> tuple[list[PodGroup], list[GangAssignment]]:
    candidates: dict[str, list[_Candidate]] = {}
    grouped: dict[str, tuple[PodGroupDefinition, list[tuple[Placement, tuple[str, ...]]]]] = {}
    assignments: list[GangAssignment] = []
    append = assignments.append
    for pod, placement in zip(pods, placements, strict=True):
        assignment, definition, keys = _assign(counter, candidates, pod, placement, owner_uid)
        append(assignment)
        if assignment.group is not None and definition is not None:
            entry = grouped.get(assignment.group)
            if entry is None:
                entry = grouped[assignment.group] = (definition, [])
            entry[1].append((placement, keys))
    groups: list[PodGroup] = []
    for name, (definition, members) in sorted(grouped.items()):
        found = _minimum(counter, definition, members)
        group = PodGroup(
            name=name,
            min_member=found.minimum,
            pods=tuple(p.pod for p, _ in members),
            definition=definition.name,
            keys=members[0][1],
            rule=found.rule,
            error=found.error,
            created_later=found.later,
            min_resources=found.reserved,
        )
        groups.append(group.flagged())
    return groups, assignments


def _assign(
    counter: _Counter,
    cache: dict[str, list[_Candidate]],
    pod: Mapping[str, Any],
    placement: Placement,
    owner_uid: str,
) -> tuple[GangAssignment, PodGroupDefinition | None, tuple[str, ...]]:
    """One pod's group by the alpha rules: its first candidate whose filters pass, its keys."""
    component = placement.component
    if component is None or placement.reason is not None:
        return _UNATTRIBUTED, None, ()
    candidates = cache.get(component)
    if candidates is None:
        candidates = cache[component] = [
            counter.candidate(level, definition, member)
            for level, definition, member in _candidates(counter.structure, component)
        ]
    if not candidates:
        return GangAssignment(reason=f"no pod group names {component} or an ancestor"), None, ()
    run = counter.extractor.run
    chosen: _Candidate | None = candidates[0]
    if candidates[0].filters or len(candidates) > 1:
        try:
            chosen = next((c for c in candidates if not c.filters or c.passes(pod, run)), None)
        except ExtractionError as err:
            return GangAssignment(reason=str(err)), None, ()
    if chosen is None:
        failed = "the filters of every candidate pod group failed"
        return GangAssignment(reason=failed), None, ()
    definition = chosen.definition
    keys: list[str] = []
    reason: str | None = None
    for path, expression in chosen.keys:
        if expression.direct:  # the common case, a label: one non-empty string
            values = expression.evaluate(pod)
            if len(values) == 1 and type(values[0]) is str and values[0]:
                keys.append(values[0])
                continue
        try:
            keys.append(single_result(expression, pod, run))
        except ExtractionError as err:
            reason = f'failed to extract group key from path "{path}": {err}'
            break
    # pods of one group share one (immutable) assignment: building it per pod is most of the cost
    memo_key = (*keys, reason)
    assignment = chosen.assigned.get(memo_key)
    if assignment is None:
        assignment = chosen.assigned[memo_key] = GangAssignment(
            group=group_name(owner_uid, *keys) if reason is None else None,
            definition=definition.name,
            member=chosen.member.component_name,
            effective_component=chosen.level,
            keys=tuple(
                chosen.key(path, value) for (path, _), value in zip(chosen.keys, keys, strict=False)
            ),
            filters=chosen.filter_texts,
            reason=reason,
        )
    return assignment, definition, tuple(keys)


# -- the alpha form, without pods --------------------------------------------------------------
def _replica_owner(structure: Structure, component: str) -> tuple[str, str] | None:
    """(component, keyPath) of the nearest ``replicaSelector`` on ``component`` or an ancestor."""
    for name in [component, *structure.ancestors(component)]:
        selector = structure.components[name].pod_selector
        replica = selector.replica_selector if selector else None
        if replica is not None and replica.key_path:
            return name, replica.key_path
    return None


def _template_metadata(inst: ExtractedInstance) -> dict[str, Any]:
    """The metadata the instance's pods start from (template, pod metadata or fragment labels)."""
    template = inst.pod_template_spec
    meta = template.get("metadata") if isinstance(template, dict) else None
    if isinstance(meta, dict):
        return meta
    if isinstance(inst.metadata, dict):
        return inst.metadata
    frag = inst.fragmented_pod_spec or {}
    labels, annotations = frag.get("labels"), frag.get("annotations")
    return {
        "labels": labels if isinstance(labels, dict) else {},
        "annotations": annotations if isinstance(annotations, dict) else {},
    }


#: replica indexes a spec may imply that are listed as expected gangs
MAX_EXPECTED_REPLICAS = 1000


def _set_plain(model: dict[str, Any], path: Expression, value: str) -> None:
    """Set a constant field path (``.metadata.labels["x"]``) in the model pod, when it is one."""
    steps = path.path
    if steps and all(isinstance(step, str) for step in steps):
        try:
            model.update(jq.setpath(model, steps, value))
        except jq.JqError:
            pass  # the template holds something else there: the key stays unresolved


def _model_key(model: dict[str, Any], expression: Expression, extractor: Extractor) -> str | None:
    """A group key read from the model pod, only where the model holds it.

    Only a constant field path (optionally ``// literal``) that finds a value counts: anything
    else may depend on what the controller adds to real pods (``.labels.x + "-all"`` on a
    model without ``x`` is not the key pods will have).
    """
    if expression.located is None:
        return None
    value = lookup(model, expression.located)
    if value is None or value is False or value == "":
        return None
    try:
        return single_result(expression, model, extractor.run)
    except ExtractionError:
        return None


def _unresolved(expression: Expression) -> str:
    """The stand-in for a key only pods carry: ``<label-name>`` (not a valid name, on purpose)."""
    steps = expression.path
    last = steps[-1] if steps else expression.text
    return f"<{last}>"


@view
class _ModelPod:
    """A pod the spec implies, standing in for real ones: where it sits and its keys."""

    definition: PodGroupDefinition
    placement: Placement
    keys: tuple[str, ...]
    missing: tuple[str, ...]
    filtered: bool


def _zero_scale(counter: _Counter, name: str) -> bool:
    """Whether grouping component ``name`` states a scale of 0 pods per replica."""
    comp = counter.structure.components[name]
    if comp.scale_definition is None or counter.structure.has_pod_definition(name):
        return False
    try:
        scales = counter.extractor.scales(name)
    except EngineError:
        return False
    return bool(scales) and all(s.replicas == 0 for s in (scales or {}).values())


def _model_pods(counter: _Counter, component: str, notes: list[str]) -> Iterator[_ModelPod]:
    """The model pods of one component's first candidate group (none when it has none).

    A key that is the ``replicaSelector`` path takes every replica index the spec implies,
    the ``componentInstanceSelector`` path the instance id, any other the pod template's
    value; a key only pods carry is ``<label>``. A replica key whose count the spec does not
    give yields nothing, with a note.
    """
    structure, extractor = counter.structure, counter.extractor
    candidates = _candidates(structure, component)
    if not candidates:
        return
    _, definition, member = candidates[0]
    try:
        instances = extractor.instances(component)
    except EngineError as err:
        notes.append(f"pod group {definition.name}: {component}: {err}")
        return
    if not any(inst.describes_pods for inst in instances.values()):
        return  # the object leaves the component out: it has no pods to group
    owner = _replica_owner(structure, component)
    key_paths = list(member.group_by_key_paths)
    replica_keys: list[str | None] = [None]
    if owner is not None and any(owner[1] in path for path in key_paths):
        count = implied_replicas(extractor, owner[0])
        if count is None and _zero_scale(counter, owner[0]):
            # the spec says there are no such replicas (a Deployment-mode NIMService's
            # multi-node group): no groups, as with its real pods, which carry no replica key
            note = (
                f"pod group {definition.name}: the spec implies no replicas of {owner[0]} "
                "(its scale is 0): no gang"
            )
            if note not in notes:
                notes.append(note)
            return
        if count is None:
            note = (
                f"pod group {definition.name}: the spec does not say how many replicas of "
                f"{owner[0]} there are (key {owner[1]}); the groups show once pods are known"
            )
            if note not in notes:
                notes.append(note)
            return
        replica_keys = [str(i) for i in range(min(count, MAX_EXPECTED_REPLICAS))]
    selector = structure.components[component].pod_selector
    id_selector = selector.component_instance_selector if selector else None
    id_path = id_selector.id_path if id_selector else None
    expressions = [(path, structure.expressions.get(path)) for path in key_paths]
    for instance_id, inst in instances.items():
        if not inst.describes_pods:
            continue
        for replica in replica_keys:
            # the pod as the spec says it will be: the template's metadata, plus the
            # instance id and replica key where the selectors read them
            model = {"metadata": copy.deepcopy(_template_metadata(inst))}
            if id_path and instance_id:
                _set_plain(model, structure.expressions.get(id_path), instance_id)
            if owner is not None and replica is not None:
                _set_plain(model, structure.expressions.get(owner[1]), replica)
            keys: list[str] = []
            missing: list[str] = []
            for path, expression in expressions:
                value = _model_key(model, expression, extractor)
                if value is None:
                    keys.append(_unresolved(expression))
                    missing.append(path)
                else:
                    keys.append(value)
            placement = Placement(
                "",
                component=component,
                instance=instance_id,
                replica=replica,
                replica_component=owner[0] if owner is not None and replica else None,
            )
            yield _ModelPod(
                definition, placement, tuple(keys), tuple(missing), bool(member.filters)
            )


def _expected_alpha_groups(counter: _Counter, owner_uid: str) -> tuple[list[PodGroup], list[str]]:
    """The alpha ``podGroups`` the spec implies when no pods are known.

    Each pod-bearing instance the object describes stands for its pods (see
    :func:`_model_pods`): it joins the first candidate group of its component (filters cannot
    be checked without pods and are taken as passing). A key only the pods carry (a label the
    controller sets) is shown as ``<label>`` and listed in ``unresolvedKeys``.
    """
    structure = counter.structure
    notes: list[str] = []
    # by (definition, name): two definitions whose unresolved keys look alike stay apart
    grouped: dict[
        tuple[str, str], tuple[PodGroupDefinition, list[tuple[Placement, tuple[str, ...]]]]
    ] = {}
    unresolved: dict[tuple[str, str], tuple[str, ...]] = {}
    filtered: set[tuple[str, str]] = set()
    for component in structure.order:
        if not structure.has_pod_definition(component):
            continue
        for pod in _model_pods(counter, component, notes):
            key = (pod.definition.name, group_name(owner_uid, *pod.keys))
            grouped.setdefault(key, (pod.definition, []))[1].append((pod.placement, pod.keys))
            if pod.missing:
                unresolved[key] = pod.missing
            if pod.filtered:
                filtered.add(key)
    # <label> stands for a different value in each definition: say whose when several have one
    qualify = len({d for d, _ in unresolved}) > 1
    groups: list[PodGroup] = []
    for key, (definition, members) in sorted(grouped.items(), key=lambda e: e[0][1]):
        found = _minimum(counter, definition, members)
        rule = f"expected from the spec (no pods known): {found.rule}" if found.rule else ""
        if key in filtered:
            rule += "; filters are not checked without pods"
        name, shown_keys = key[1], members[0][1]
        if qualify and key in unresolved:
            shown_keys = tuple(
                f"<{definition.name}:{k[1:]}" if k.startswith("<") else k for k in shown_keys
            )
            name = group_name(owner_uid, *shown_keys)
        group = PodGroup(
            name=name,
            min_member=found.minimum,
            definition=definition.name,
            keys=shown_keys,
            rule=rule,
            error=found.error,
            unresolved_keys=unresolved.get(key, ()),
            created_later=found.later,
            min_resources=found.reserved,
        )
        groups.append(group.flagged())
    return groups, notes
