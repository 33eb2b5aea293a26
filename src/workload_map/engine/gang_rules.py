"""The gang rules with pods: which group each pod joins, in both forms of the instructions.

The deprecated ``podGroups`` form places each pod in the first group whose member is the pod's
component or an ancestor of it (direct mentions first) and whose filters pass, keyed by the
member's ``groupByKeyPaths``. The v2 ``podGroup`` form makes one group for the whole workload
with one subgroup per listed component. Names follow KAI: ``pg-<uid>`` plus the ``-``-joined
keys (v2: the group name), and must be DNS-1123 subdomains.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, cast

from workload_map.engine.errors import ExtractionError
from workload_map.engine.gang_minimums import (
    AlphaMinimum,
    GangCounter,
    alpha_minimum,
    pinned_minimum,
)
from workload_map.engine.gang_views import (
    UNATTRIBUTED,
    GangAssignment,
    GroupKey,
    GroupTopology,
    PodGroup,
    group_name,
    is_dns1123_subdomain,
)
from workload_map.engine.pods import Placement, metadata_field, replica_field, single_result
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
        "_at",
        "_failed",
        "_fields",
        "_keys",
        "_walks",
        "assigned",
        "by_name",
        "definition",
        "fielded",
        "filter_texts",
        "filters",
        "keys",
        "level",
        "member",
        "minimum",
        "paths",
        "replica_of",
        "section",
    )

    def __init__(
        self, structure: Structure, level: str, definition: PodGroupDefinition, member: Member
    ):
        self.level, self.definition, self.member = level, definition, member
        # what depends on the member alone is built once per definition (_Reads); a workload
        # gets a candidate per group it may join
        reads = _reads(structure, member)
        self.filters, self.filter_texts, self.keys = reads.filters, reads.texts, reads.keys
        self.paths = reads.paths
        self._walks, self._fields, self.fielded = reads.walks, reads.fields, reads.fielded
        self.section = reads.section
        self.replica_of = reads.replica_of
        #: whether an entry lists its pods' names rather than their placements: the minimum
        #: of a group needs no placement when ``replica_of`` decides it (below), and the
        #: names are what the group lists (read once per pod, as the pods join)
        self.by_name = self.replica_of is not None
        #: the minimum of every group of this candidate when ``replica_of`` decides what
        #: their keys pin (found for the first group, shared by the rest)
        self.minimum: AlphaMinimum | None = None
        #: per key tuple read: the assignment the pods with these keys share, their
        #: placements (their names when ``by_name``), and the index of the first of them
        #: among the workload's pods
        self.assigned: dict[tuple[str, ...], tuple[GangAssignment, list[Any], int]] = {}
        #: the same for pods whose keys could not be read: (keys read, why not the rest)
        self._failed: dict[tuple[tuple[str, ...], str], GangAssignment] = {}
        #: key views by path and value, shared by the definition's workloads (immutable): a
        #: replica's index repeats in every workload of a fleet; and the same dictionaries
        #: in the order of the key paths (join reads them per group)
        self._keys: dict[str, dict[str, GroupKey]] = reads.views
        self._at: tuple[dict[str, GroupKey], ...] = reads.at

    def key(self, path: str, value: str) -> GroupKey:
        """One key view per (path, value): groups of one replica share them."""
        known = self._keys[path]
        found = known.get(value)
        if found is None:
            found = GroupKey(path, value)
            if len(known) < _MAX_VIEWS:
                known[value] = found
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
        if self.fielded is not None:
            read = self.fielded(pod)
            if read is not None:
                return read, None
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

    def _assignment(
        self, keys: tuple[str, ...], reason: str | None, owner_uid: str
    ) -> GangAssignment:
        return GangAssignment(
            group=group_name(owner_uid, *keys) if reason is None else None,
            definition=self.definition.name,
            member=self.member.component_name,
            effective_component=self.level,
            keys=tuple(map(self.key, self.paths, keys)),
            filters=self.filter_texts,
            reason=reason,
        )

    def join(
        self, keys: tuple[str, ...], owner_uid: str, index: int
    ) -> tuple[GangAssignment, list[Placement], int]:
        """The new entry of the pods with these (complete) keys, which have none yet (the
        callers looked them up): their shared, immutable assignment (building one per pod
        would be most of the cost of grouping), and the list their placements join;
        ``index`` is the first such pod's."""
        # _assignment and key, inlined: this runs per group (a LeaderWorkerSet's replica)
        views: list[GroupKey] = []
        # as map() pairs them; no strict= keyword: a keyword costs the zip() call a parsed
        # dictionary, about a sixteenth of a group's cost (callgrind)
        for known, path, value in zip(self._at, self.paths, keys):  # noqa: B905
            view = known.get(value)  # (by the value alone: no (path, value) tuple per key)
            if view is None:
                view = GroupKey(path, value)
                if len(known) < _MAX_VIEWS:
                    known[value] = view
            views.append(view)
        # positional (group, definition, member, effective_component, keys, filters; the
        # order test_gang_positional_builds pins): a Struct matches keywords by name
        assignment = GangAssignment(
            # group_name's own branch for complete keys, without its call (per group)
            "-".join(("pg", owner_uid, *keys)) if owner_uid else group_name("", *keys),
            self.definition.name,
            self.member.component_name,
            self.level,
            tuple(views),
            self.filter_texts,
        )
        found = self.assigned[keys] = (assignment, [], index)
        return found

    def failed(self, keys: tuple[str, ...], reason: str, owner_uid: str) -> GangAssignment:
        """The (shared) assignment of the pods whose keys could not all be read."""
        found = self._failed.get((keys, reason))
        if found is None:
            found = self._failed[(keys, reason)] = self._assignment(keys, reason, owner_uid)
        return found


#: key views a definition keeps per key path (a fleet's group indexes; workload names beyond
#: it are made per workload, as before)
_MAX_VIEWS = 4096


class _Reads:
    """How a member's pods are filtered and keyed: its expressions looked up once per
    definition."""

    __slots__ = (
        "at",
        "fielded",
        "fields",
        "filters",
        "keys",
        "paths",
        "replica_of",
        "section",
        "texts",
        "views",
        "walks",
    )

    def __init__(self, structure: Structure, member: Member):
        self.filters = [(f, structure.expressions.get(f)) for f in member.filters]
        self.texts = tuple(member.filters)
        self.keys = [(k, structure.expressions.get(k)) for k in member.group_by_key_paths]
        self.paths = tuple(member.group_by_key_paths)
        #: the candidates' key views (:meth:`_Candidate.key`), immutable: shared; by path,
        #: then value, and the same dictionaries in the order of the paths
        self.views: dict[str, dict[str, GroupKey]] = {path: {} for path in self.paths}
        self.at = tuple(self.views[path] for path in self.paths)
        #: the direct walks of the keys when every key is a constant path (the common case,
        #: labels): read without the memo, as any ``run`` reads them (runner.py)
        self.walks = (
            tuple(e.evaluate for _, e in self.keys) if all(e.direct for _, e in self.keys) else None
        )
        #: the keys as ``(section, key)`` when every one is ``.metadata.<section>["key"]`` (the
        #: catalog's label keys): two dictionary reads per key, as ``place_all`` reads its
        #: selectors (pods.py); anything but a non-empty string read is left to the walks
        fields = [metadata_field(e) for _, e in self.keys]
        self.fields: tuple[tuple[str, str], ...] | None = (
            tuple(f for f in fields if f is not None)
            if fields and all(f is not None for f in fields)
            else None
        )
        #: the keys read as fields, None where one is not a non-empty string (the walks and
        #: the expressions decide then); the loop of alpha_groups calls it per pod
        self.fielded = _field_reader(self.fields) if self.fields is not None else None
        #: (section, first key, second key or None) when the keys are one or two fields of
        #: one section (an operator's labels): alpha_groups looks a pod's keys up as they are
        self.section: tuple[str, str, str | None] | None = None
        fields_ = self.fields or ()
        if len(fields_) in (1, 2) and len({name for name, _ in fields_}) == 1:
            second = fields_[1][1] if len(fields_) == 2 else None
            self.section = (fields_[0][0], fields_[0][1], second)
        #: the replica component every group of the member pins, when that is decided by the
        #: definition (:func:`_replica_dimension`); None: dimensions() decides per group
        self.replica_of = _replica_dimension(structure, member, self.fields)


def _replica_dimension(
    structure: Structure, member: Member, fields: tuple[tuple[str, str], ...] | None
) -> str | None:
    """The replica component :func:`dimensions` finds for every group of ``member`` (and no
    instance pins), when the definition decides it: every pod-describing component whose
    pods may join the member (the member's component or a descendant) is placed without an
    instance selector and by the replica selector of one owner reading one metadata field,
    and the member's keys are fields and include that one. A grouped pod then has the
    instance ``""`` (it pins no instance) and the key read from that field as its replica
    (the same expression's one string: pods.replica_field), so that key pins the owner's
    replica in every group, and any other key can pin only the same. A LeaderWorkerSet's
    group-index key is its replica selector: no group's pods need be checked. None when any
    of this does not hold."""
    if fields is None:
        return None
    level = member.component_name
    shared: tuple[str, tuple[str, str]] | None = None
    for component in structure.pod_bearing:
        if component != level and level not in structure.ancestors(component):
            continue
        found = replica_field(structure, component)
        if found is None or found[1] not in fields or (shared is not None and found != shared):
            return None
        shared = found
    return shared[0] if shared is not None else None


def _reads(structure: Structure, member: Member) -> _Reads:
    key = ("gang member reads", id(member))
    found = structure.memo.get(key)
    if not isinstance(found, _Reads):
        found = structure.memo[key] = _Reads(structure, member)
    return found


#: reads a pod's keys as fields (:attr:`_Candidate.fielded`)
_Reader = Callable[[Any], tuple[str, ...] | None]


def _field_reader(fields: tuple[tuple[str, str], ...]) -> _Reader:
    """The keys ``fields`` name, read off a plain pod: a tuple when each is a non-empty string
    (jq's one result as it is), else None. One or two keys of one section (the catalog's: an
    operator's labels) are read with the section looked up once, unrolled: per pod."""
    section = fields[0][0]
    if len(fields) == 1:
        key = fields[0][1]

        def read1(pod: Any) -> tuple[str, ...] | None:
            meta = pod.get("metadata") if type(pod) is dict else None
            held = meta.get(section) if type(meta) is dict else None
            value = held.get(key) if type(held) is dict else None
            return (value,) if type(value) is str and value else None

        return read1
    if len(fields) == 2 and fields[1][0] == section:
        first, second = fields[0][1], fields[1][1]

        def read2(pod: Any) -> tuple[str, ...] | None:
            meta = pod.get("metadata") if type(pod) is dict else None
            held = meta.get(section) if type(meta) is dict else None
            if type(held) is not dict:
                return None
            one, two = held.get(first), held.get(second)
            if type(one) is str and one and type(two) is str and two:
                return one, two
            return None

        return read2

    def read(pod: Any) -> tuple[str, ...] | None:
        meta = pod.get("metadata") if type(pod) is dict else None
        if type(meta) is not dict:
            return None
        found: list[str] = []
        for name, key in fields:
            held = meta.get(name)
            value = held.get(key) if type(held) is dict else None
            if type(value) is not str or not value:
                return None
            found.append(value)
        return tuple(found)

    return read


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
            memo_key = ("gang candidates", component)
            listed = self.structure.memo.get(memo_key)
            if listed is None:  # the same for every workload of the definition
                listed = self.structure.memo[memo_key] = candidates_of(self.structure, component)
            found = self._of[component] = [
                self._candidate(level, definition, member) for level, definition, member in listed
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

    def made(self) -> list[_Candidate]:
        """Every candidate looked up so far (those the pods could join)."""
        return list(self._shared.values())

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
    # per component: the subgroups whose subtree holds it, in order (the last one listing it
    # is its pods' subgroup); components of no subgroup map to none
    subs = mapping.sub_groups
    holders: dict[str, list[int]] = {}
    for index, sub in enumerate(subs):
        if sub.component_name in structure.components:
            for member in structure.subtree(sub.component_name):
                holders.setdefault(member, []).append(index)
    # one shared (immutable) assignment per subgroup, not one per pod
    by_member = {
        member: GangAssignment(
            group=name,
            definition=mapping.name,
            member=member,
            effective_component=member,
            keys=key,
        )
        for member in {None, *(subs[held[-1]].component_name for held in holders.values())}
    }
    whole = by_member[None]
    of_component = {c: by_member[subs[held[-1]].component_name] for c, held in holders.items()}
    sub_pods: list[list[str]] = [[] for _ in subs]
    # one pass over the placements: the attributed pods (``Placement.attributed``, inlined: it
    # runs per pod) join the group, and the subgroups that hold their component (the second
    # loop when no subgroup holds a component: no lookup per pod)
    assignments: list[GangAssignment] = []
    append = assignments.append
    names: list[str] = []
    for placement in placements if holders else ():
        component = placement.component
        if component is None or placement.reason is not None:
            append(UNATTRIBUTED)
            continue
        names.append(placement.pod)
        held = holders.get(component)
        if held is None:
            append(whole)
            continue
        append(of_component[component])
        for index in held:
            sub_pods[index].append(placement.pod)
    for placement in () if holders else placements:
        if placement.component is None or placement.reason is not None:
            append(UNATTRIBUTED)
        else:
            names.append(placement.pod)
            append(whole)
    sub_groups = [
        _v2_sub_group(counter, mapping.name, sub.component_name, sub.topology, sub_pods[index])
        for index, sub in enumerate(subs)
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
        pods=tuple(names),
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
    assignments: list[GangAssignment] = []
    append = assignments.append
    # the pods of one component mostly come together: its candidate is looked up on a change
    last: str | None = None
    chosen: _Candidate | GangAssignment | None = None
    # the candidate whose section read is hoisted below (candidates change rarely): the
    # section and keys its keys are (s_name None: not one section's fields), and its entries
    hoisted: Any = None
    fast: _Candidate | None = None
    s_name: str | None = None
    s_first, s_second = "", None
    assigned: dict[tuple[str, ...], tuple[GangAssignment, list[Any], int]] = {}
    by_name = False
    read: Any
    entry: Any
    # the last entry found there and its keys (the pods of one group mostly come together):
    # a pod whose values equal them joins it without a tuple, its hash and a lookup
    one: Any
    two: Any
    last_one: Any = _NEVER
    last_two: Any = None
    # that entry's assignment and its placements' append (read once per entry, not per pod)
    last_assignment: Any = None
    add: Any = None
    current: _Candidate | GangAssignment | None = None
    for pod, placement in zip(pods, placements, strict=True):
        component = placement.component
        if component is None or placement.reason is not None:
            append(UNATTRIBUTED)
            continue
        if component is not last or chosen is None:
            # (a component's fixed candidate holds until the component changes; without
            # one, the pod's own filters choose, per pod)
            chosen = fixed.get(component)
            last = component
            current = chosen or candidates.choose(component, pod, run)
            if current is not hoisted:
                hoisted, fast, s_name = current, None, None
                if type(current) is _Candidate and current.section is not None:
                    fast = current
                    s_name, s_first, s_second = current.section
                    assigned = current.assigned
                    by_name = current.by_name
                    last_one = _NEVER
        if fast is not None and type(pod) is dict:
            # the keys as the pod has them, looked up among the entries: an entry is made only
            # for keys read as non-empty strings (here, by the reader or the expressions below)
            # and only a str equals a str, so a hit is the entry those reads would find; keys
            # that are not all non-empty strings are read below
            # (by subscript, cheaper than .get: a pod of the candidate nearly always has its
            # section and keys; a missing one reads as .get's None)
            try:
                meta = pod["metadata"]
                held: Any = meta[s_name] if type(meta) is dict else None
            except KeyError:
                held = None
            if type(held) is dict:
                try:
                    one = held[s_first]
                except KeyError:
                    one = None
                if s_second is None:
                    two = None
                else:
                    try:
                        two = held[s_second]
                    except KeyError:
                        two = None
                # the last keys are an entry's strings: a value equal to them is what the
                # lookup would match (JSON values: only a string equals a string)
                if one == last_one and two == last_two:
                    append(last_assignment)
                    add(placement.pod if by_name else placement)
                    continue
                read = (one,) if s_second is None else (one, two)
                try:
                    entry = assigned.get(read)
                except TypeError:  # an unhashable value (a list, an object): read below
                    entry = None
                else:
                    # the reader's rule: each a non-empty string
                    if entry is None and (
                        type(one) is str
                        and one
                        and (s_second is None or (type(two) is str and two))
                    ):
                        entry = fast.join(read, owner_uid, len(assignments))
                if entry is not None:
                    last_one, last_two = one, two
                    last_assignment, add = entry[0], entry[1].append
                    append(last_assignment)
                    add(placement.pod if by_name else placement)
                    continue
        if type(current) is not _Candidate:  # not isinstance: a view's class check is slow
            append(cast(GangAssignment, current))  # why the pod joins no group
            continue
        reader = current.fielded
        keys = reader(pod) if reader is not None else None
        if keys is None:  # not all fields: the walks and the expressions read them
            keys, reason = current.read_keys(pod, run)
            if reason is not None:
                append(current.failed(keys, reason, owner_uid))
                continue
        # the pods with these keys share an entry: the memo's hit, inlined (it runs per pod)
        entry = current.assigned.get(keys)
        if entry is None:
            entry = current.join(keys, owner_uid, len(assignments))
        append(entry[0])
        entry[1].append(placement.pod if current.by_name else placement)
    # the groups by name: the entries of every candidate whose keys name it, the first pod's
    # first (its definition and keys are the group's); nearly every name has one entry, kept
    # as it is (no list made and appended to per group), a list only for a name that several
    # key tuples make
    grouped: dict[str, Any] = {}
    for candidate in candidates.made():
        for keys, (assignment, placed, first) in candidate.assigned.items():
            name = assignment.group
            assert name is not None  # complete keys always name a group
            if name in grouped:
                held = grouped[name]
                if type(held) is list:
                    held.append((first, candidate, keys, placed, assignment))
                else:
                    grouped[name] = [held, (first, candidate, keys, placed, assignment)]
            else:
                grouped[name] = (first, candidate, keys, placed, assignment)
    groups: list[PodGroup] = []
    #: the placements of each entry's pods by its assignment (an entry listing names: only
    #: when several key tuples name one group)
    placed_of: dict[int, list[Placement]] | None = None
    #: whether the name made of the keys but the last is a DNS-1123 subdomain
    heads: dict[str | tuple[str, ...], bool] = {}
    for name in sorted(grouped):  # (the names alone: a str sort, not a tuple sort)
        entries = grouped[name]
        if type(entries) is list:
            entries.sort(key=_first)
            if placed_of is None:
                placed_of = _placed_of(placements, assignments)
            chunks = [
                (keys, placed_of[id(assignment)] if candidate.by_name else placed)
                for _, candidate, keys, placed, assignment in entries
            ]
            names = tuple(p.pod for _, placed in chunks for p in placed)
            leading, several = entries[0], True
        elif entries[1].by_name:  # nearly always: one key tuple names the group
            leading, several, chunks = entries, False, None
            names = tuple(entries[3])
        else:
            leading, several = entries, False
            chunks = None  # (made below only when dimensions() needs them)
            listed = []  # a loop, not a comprehension (a call): this runs per group
            for placement in leading[3]:
                listed.append(placement.pod)
            names = tuple(listed)
        candidate = leading[1]
        definition = candidate.definition
        if not several and candidate.replica_of is not None:
            # what the keys pin is the definition's (_replica_dimension): one minimum for
            # every group of the candidate, without a look at each group's pods
            found = candidate.minimum
            if found is None:
                found = candidate.minimum = pinned_minimum(
                    counter, definition, {}, candidate.replica_of
                )
        else:
            if chunks is None:
                chunks = [(leading[2], leading[3])]
            found = alpha_minimum(counter, definition, chunks)
        # positional (name, min_member, pods, sub_groups, definition, keys, rule, topology,
        # error, unresolved_keys, created_later, min_resources): keywords cost more, per group
        group = PodGroup(
            name,
            found.minimum,
            names,
            (),
            definition.name,
            leading[2],
            found.rule,
            None,
            found.error,
            (),
            found.later,
            found.reserved,
        )
        # PodGroup.flagged's test, without its call when the name is valid (per group)
        if found.error is not None:
            valid = True
        else:
            keys = leading[2]
            last = keys[-1] if keys and owner_uid else ""
            if last.isascii() and last.isdigit():
                # pg-<uid>-<keys>-<digits> (a replica's index): a valid name before the last
                # key stays valid with "-<digits>" added, up to the length bound; the head is
                # checked once per workload, not per group
                # (of two keys, the head is the first: no slice and tuple hash per group)
                head = keys[0] if len(keys) == 2 else keys[:-1]
                fine = heads.get(head)
                if fine is None:
                    fine = heads[head] = is_dns1123_subdomain(
                        "-".join(("pg", owner_uid, *keys[:-1]))
                    )
                valid = len(name) <= 253 if fine else is_dns1123_subdomain(name)
            else:
                valid = is_dns1123_subdomain(name)
        groups.append(group if valid else group.flagged())
    return groups, assignments


def _placed_of(
    placements: Sequence[Placement], assignments: Sequence[GangAssignment]
) -> dict[int, list[Placement]]:
    """The placements by their assignment's identity (an entry's own: join makes one per
    entry), in pod order."""
    out: dict[int, list[Placement]] = {}
    for placement, assignment in zip(placements, assignments, strict=True):
        out.setdefault(id(assignment), []).append(placement)
    return out


#: equal to nothing but itself: no last keys yet
_NEVER = object()


def _first(entry: tuple[int, Any, Any, Any, Any]) -> int:
    return entry[0]
