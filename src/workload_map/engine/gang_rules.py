"""The gang rules with pods: which group each pod joins, in both forms of the instructions.

The deprecated ``podGroups`` form places each pod in the first group whose member is the pod's
component or an ancestor of it (direct mentions first) and whose filters pass, keyed by the
member's ``groupByKeyPaths``. The v2 ``podGroup`` form makes one group for the whole workload
with one subgroup per listed component. Names follow KAI: ``pg-<uid>`` plus the ``-``-joined
keys (v2: the group name), and must be DNS-1123 subdomains.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

from workload_map.engine.errors import ExtractionError
from workload_map.engine.gang_minimums import GangCounter, alpha_minimum
from workload_map.engine.gang_views import (
    UNATTRIBUTED,
    GangAssignment,
    GroupKey,
    GroupTopology,
    PodGroup,
    group_name,
)
from workload_map.engine.pods import Placement, metadata_field, single_result
from workload_map.engine.runner import Run
from workload_map.engine.structure import Structure
from workload_map.model import Member, PodGroupDefinition, Topology

__all__ = ["alpha_groups", "candidates_of", "v2_groups"]


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
        "_failed",
        "_fields",
        "_keys",
        "_walks",
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
        #: the direct walks of the keys when every key is a constant path (the common case,
        #: labels): read without the memo, as any ``run`` reads them (runner.py)
        self._walks = (
            tuple(e.evaluate for _, e in self.keys) if all(e.direct for _, e in self.keys) else None
        )
        #: the keys as ``(section, key)`` when every one is ``.metadata.<section>["key"]`` (the
        #: catalog's label keys): two dictionary reads per key, as ``place_all`` reads its
        #: selectors (pods.py); anything but a non-empty string read is left to the walks
        fields = [metadata_field(e) for _, e in self.keys]
        self._fields: tuple[tuple[str, str], ...] | None = (
            tuple(f for f in fields if f is not None)
            if fields and all(f is not None for f in fields)
            else None
        )
        #: the assignment of each key tuple seen, shared by the pods that have them
        self.assigned: dict[tuple[str, ...], GangAssignment] = {}
        #: the same for pods whose keys could not be read: (keys read, why not the rest)
        self._failed: dict[tuple[tuple[str, ...], str], GangAssignment] = {}
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

    def read_keys(self, pod: Any, run: Run) -> tuple[tuple[str, ...], str | None]:
        """The pod's keys, and why the rest could not be read (None: all were)."""
        fields = self._fields
        if fields is not None and type(pod) is dict:
            meta = pod.get("metadata")
            if type(meta) is dict:
                read: list[str] = []
                for section, key in fields:
                    held = meta.get(section)
                    value = held.get(key) if type(held) is dict else None
                    # a non-empty string is jq's one result as it is; anything else (null,
                    # another type, a section that is no object) the walks decide below
                    if type(value) is not str or not value:
                        break
                    read.append(value)
                else:
                    return tuple(read), None
        walks = self._walks
        if walks is not None:
            found = []
            try:
                for walk in walks:
                    values = walk(pod)
                    # one non-empty string: a label, what single_result would return as it is
                    if len(values) != 1 or type(values[0]) is not str or not values[0]:
                        break
                    found.append(values[0])
                else:
                    return tuple(found), None
            except ExtractionError:
                pass  # a pod jq cannot index: the expressions below say why, as the reason
        keys: list[str] = []
        for path, expression in self.keys:
            try:
                keys.append(single_result(expression, pod, run))
            except ExtractionError as err:
                return tuple(keys), f'failed to extract group key from path "{path}": {err}'
        return tuple(keys), None

    def assignment(
        self, keys: tuple[str, ...], reason: str | None, owner_uid: str
    ) -> GangAssignment:
        """The (shared, immutable) assignment of the pods with these keys: building one per
        pod would be most of the cost of grouping."""
        memo: dict[Any, GangAssignment] = self.assigned if reason is None else self._failed
        memo_key: Any = keys if reason is None else (keys, reason)
        found = memo.get(memo_key)
        if found is None:
            found = memo[memo_key] = GangAssignment(
                group=group_name(owner_uid, *keys) if reason is None else None,
                definition=self.definition.name,
                member=self.member.component_name,
                effective_component=self.level,
                keys=tuple(
                    [
                        self.key(path, value)
                        for (path, _), value in zip(self.keys, keys, strict=False)
                    ]
                ),
                filters=self.filter_texts,
                reason=reason,
            )
        return found


class _Candidates:
    """The candidate groups of each component of one workload, looked up once.

    Each (level, group definition, member) is one candidate whichever component reaches it:
    pods of sibling components (a leader and its workers) then share their assignments.
    """

    def __init__(self, structure: Structure):
        self.structure = structure
        self._of: dict[str, list[_Candidate]] = {}
        self._shared: dict[tuple[str, int, int], _Candidate] = {}
        #: per component, its one candidate when it has one without filters (no choice to make)
        self.fixed: dict[str, _Candidate | None] = {}

    def of(self, component: str) -> list[_Candidate]:
        found = self._of.get(component)
        if found is None:
            found = self._of[component] = [
                self._candidate(level, definition, member)
                for level, definition, member in candidates_of(self.structure, component)
            ]
            only = found[0] if len(found) == 1 and not found[0].filters else None
            self.fixed[component] = only
        return found

    def _candidate(self, level: str, definition: PodGroupDefinition, member: Member) -> _Candidate:
        key = (level, id(definition), id(member))
        found = self._shared.get(key)
        if found is None:
            found = self._shared[key] = _Candidate(self.structure, level, definition, member)
        return found

    def choose(self, component: str, pod: Any, run: Run) -> _Candidate | GangAssignment:
        """The pod's first candidate whose filters pass, else why it joins none."""
        candidates = self.of(component)
        if not candidates:
            return GangAssignment(reason=f"no pod group names {component} or an ancestor")
        try:
            chosen = next((c for c in candidates if not c.filters or c.passes(pod, run)), None)
        except ExtractionError as err:
            return GangAssignment(reason=str(err))
        if chosen is None:
            return GangAssignment(reason="the filters of every candidate pod group failed")
        return chosen


def candidates_of(
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


# -- the v2 form -------------------------------------------------------------------------------
def v2_groups(
    counter: GangCounter, placements: Sequence[Placement], owner_uid: str
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
    # (index, component) of the attributed pods, looked at once per subgroup
    # (``Placement.attributed``, inlined: it runs per pod)
    attributed = [
        (i, p.component)
        for i, p in enumerate(placements)
        if p.component is not None and p.reason is None
    ]
    for sub in mapping.sub_groups:
        component = sub.component_name
        members = set(structure.subtree(component)) if component in structure.components else ()
        mine = [i for i, c in attributed if c in members]
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
    assignments = [UNATTRIBUTED] * len(placements)
    for i, _ in attributed:
        assignments[i] = by_member[member_of.get(i)]
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
        pods=tuple([placements[i].pod for i, _ in attributed]),
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
    counter: GangCounter,
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
def alpha_groups(
    counter: GangCounter,
    pods: Sequence[Mapping[str, Any]],
    placements: Sequence[Placement],
    owner_uid: str,
) -> tuple[list[PodGroup], list[GangAssignment]]:
    """The groups of the pods by the alpha rules, and per pod how it was grouped: each pod
    joins its component's first candidate group whose filters pass, keyed by its keys."""
    candidates = _Candidates(counter.structure)
    fixed = candidates.fixed
    run = counter.extractor.run
    grouped: dict[str, tuple[PodGroupDefinition, list[tuple[Placement, tuple[str, ...]]]]] = {}
    assignments: list[GangAssignment] = []
    append = assignments.append
    for pod, placement in zip(pods, placements, strict=True):
        component = placement.component
        if component is None or placement.reason is not None:
            append(UNATTRIBUTED)
            continue
        chosen = fixed.get(component) or candidates.choose(component, pod, run)
        if type(chosen) is not _Candidate:  # not isinstance: a view's class check is slow
            append(cast(GangAssignment, chosen))  # why the pod joins no group
            continue
        keys, reason = chosen.read_keys(pod, run)
        # the pods of one group share its assignment: the memo's hit, inlined (it runs per pod)
        assignment = chosen.assigned.get(keys) if reason is None else None
        if assignment is None:
            assignment = chosen.assignment(keys, reason, owner_uid)
        append(assignment)
        joined = assignment.group
        if joined is not None:
            entry = grouped.get(joined)
            if entry is None:
                entry = grouped[joined] = (chosen.definition, [])
            entry[1].append((placement, keys))
    groups: list[PodGroup] = []
    for name, (definition, members) in sorted(grouped.items()):
        found = alpha_minimum(counter, definition, members)
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
