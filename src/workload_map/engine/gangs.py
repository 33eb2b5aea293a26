"""Pod groups (gangs) from a definition's gang-scheduling instructions.

The entry point, :func:`build_pod_groups`, picks the form: the v2 ``podGroup`` and the alpha
``podGroups`` with pods (:mod:`workload_map.engine.gang_rules`), or the alpha groups the spec
implies without pods (:mod:`workload_map.engine.gang_model`); it then drops gangs that need no
pods and notes the pods that join none. Minimums follow the project's contract
(:mod:`workload_map.engine.gang_minimums`); the views are in
:mod:`workload_map.engine.gang_views`, re-exported here.
"""

from __future__ import annotations

import dataclasses
import operator
from collections.abc import Mapping, Sequence
from typing import Any, cast

import msgspec

from workload_map.engine.extract import Extractor
from workload_map.engine.gang_minimums import GangCounter, subtree_scale
from workload_map.engine.gang_model import expected_alpha_groups
from workload_map.engine.gang_rules import alpha_groups, v2_groups
from workload_map.engine.gang_views import (
    UNATTRIBUTED,
    GangAssignment,
    GroupKey,
    GroupTopology,
    PodGroup,
    PodGroupResult,
    SubGroupRef,
    group_name,
    is_dns1123_subdomain,
)
from workload_map.engine.pods import Placement

__all__ = [
    "NO_PODS_IMPLIED",
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
    "v2_members",
    "v2_spec_group",
    "v2_spec_result",
    "with_minimums",
]


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
    and alpha groups whose keys the spec gives (see :func:`expected_alpha_groups`). A gang
    that needs no pods (``minMember`` 0, e.g. a RayJob running on an existing cluster) is
    not listed, as a scheduler would not create it; the notes say why.
    """
    gang = extractor.structure.karta.gang_scheduling
    if gang is None or (gang.pod_group is None and not gang.pod_groups):
        reason = "the definition has no gang-scheduling instructions"
        return PodGroupResult(assignments=tuple(GangAssignment(reason=reason) for _ in pods))
    counter = GangCounter(extractor, placements)
    notes: list[str] = []
    assignments: list[GangAssignment]
    if gang.pod_group is not None:
        groups, assignments = v2_groups(counter, placements, owner_uid)
    elif pods_known:
        groups, assignments = alpha_groups(counter, pods, placements, owner_uid)
    else:
        groups, notes = expected_alpha_groups(counter, owner_uid)
        assignments = [GangAssignment() for _ in pods]
    sub_grouped = gang.pod_group is not None and bool(gang.pod_group.sub_groups)
    # the v2 group without subgroups holds every attributed pod: no pod can be left out
    v2_whole = gang.pod_group is not None and not sub_grouped
    ungrouped = [] if v2_whole else _ungrouped_notes(placements, assignments, sub_grouped)
    kept, assignments = _listed(groups, assignments, notes)
    return PodGroupResult(tuple(kept), tuple(assignments), tuple(notes), tuple(ungrouped))


def _listed(
    groups: Sequence[PodGroup], assignments: list[GangAssignment], notes: list[str]
) -> tuple[list[PodGroup], list[GangAssignment]]:
    """The groups listed and the assignments: a gang that needs no pods is not listed (its
    pods join none), a note in ``notes`` says why."""
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
    return kept, assignments


def v2_spec_group(extractor: Extractor, owner_uid: str) -> PodGroup | None:
    """The v2 group of a definition without subgroups as the object alone gives it (no
    members), None for any other form.

    Such a group holds every attributed pod, and its name, minimum, topology and error come
    from the object alone: only its member list needs the pods. A caller that reads no
    members (a group of one gets no scheduling object) is spared attributing every pod, and
    one that does reads them alone (:func:`v2_members`). Subgroups and alpha groups split
    the pods by what each one carries.
    """
    gang = extractor.structure.karta.gang_scheduling
    if gang is None or gang.pod_group is None or gang.pod_group.sub_groups:
        return None
    (group,), _ = v2_groups(GangCounter(extractor, ()), (), owner_uid)
    return group


def v2_spec_result(group: PodGroup) -> PodGroupResult:
    """:func:`build_pod_groups` without pods, from :func:`v2_spec_group`'s ``group`` alone
    (the group listed, or the note on it)."""
    notes: list[str] = []
    kept, _ = _listed([group], [], notes)
    return PodGroupResult(tuple(kept), (), tuple(notes), ())


def v2_members(group: PodGroup, placements: Sequence[Placement]) -> PodGroupResult:
    """:func:`build_pod_groups` of the workload :func:`v2_spec_group` made ``group`` for:
    every attributed pod joins it (as ``gang_rules.v2_groups`` assigns them), all else is
    the group's already."""
    whole = GangAssignment(
        group=group.name,
        definition=group.definition,
        keys=(GroupKey("podGroup.name", group.definition),),
    )
    members: list[str] = []
    assignments: list[GangAssignment] = []
    join, assign = members.append, assignments.append
    for p in placements:  # one step per pod (``Placement.attributed`` inlined)
        if p.component is not None and p.reason is None:
            join(p.pod)
            assign(whole)
        else:
            assign(UNATTRIBUTED)
    names = tuple(members)
    if names != group.pods:
        # in C (views are msgspec Structs, whose replace runs ``__post_init__``, which orders
        # the pods as ``dataclasses.replace`` would)
        group = msgspec.structs.replace(cast(Any, group), pods=names)
    notes: list[str] = []
    kept, assignments = _listed([group], assignments, notes)
    return PodGroupResult(tuple(kept), tuple(assignments), tuple(notes), ())


#: pod names shown per note on pods that join no group
_NOTE_NAMES = 5
#: an assignment's group (a C-level read over every pod's assignment)
_GROUP = operator.attrgetter("group")


def _ungrouped_notes(
    placements: Sequence[Placement], assignments: Sequence[GangAssignment], sub_grouped: bool
) -> list[str]:
    """Attributed pods that join no group (or, in the v2 form with subgroups, no subgroup),
    by component and reason: reported, never silently dropped."""
    if (
        not sub_grouped
        and len(placements) == len(assignments)
        and None not in map(_GROUP, assignments)
    ):
        return []  # every pod joined a group: found without a Python step per pod
    by_cause: dict[tuple[str, str], list[str]] = {}
    for placement, assignment in zip(placements, assignments, strict=True):
        if assignment.group is not None and (not sub_grouped or assignment.member is not None):
            continue  # grouped: most pods, so decided first, without the placement
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
