"""The views of gangs: pod groups, their keys and topology, and how each pod was grouped.

Immutable, typed and serialised at the edge (``to_json``); the rules that fill them are in
:mod:`workload_map.engine.gang_rules` and :mod:`workload_map.engine.gang_model`, the minimums
in :mod:`workload_map.engine.gang_minimums`.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from workload_map.model.views import View, json_field, set_field

__all__ = [
    "UNATTRIBUTED",
    "GangAssignment",
    "GroupKey",
    "GroupTopology",
    "PodGroup",
    "PodGroupResult",
    "SubGroupRef",
    "group_name",
    "is_dns1123_subdomain",
]


#: what a label of a DNS-1123 subdomain is made of
_LABEL_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-")


def is_dns1123_subdomain(name: str) -> bool:
    """A DNS-1123 subdomain: at most 253 characters, ``.``-separated labels of lowercase
    letters, digits and ``-``, each starting and ending with a letter or digit.

    Read with string methods, not a regular expression: compiling one (~1.2M instructions)
    cost a live ``get`` more than all its rows' gang names checked."""
    if not name or len(name) > 253:
        return False
    for label in name.split("."):
        if not label or label[0] == "-" or label[-1] == "-":
            return False
        if not _LABEL_CHARS.issuperset(label):
            return False
    return True


def group_name(owner: str, *keys: str) -> str:
    """``pg-<owner>`` plus the ``-``-joined keys, leaving out empty ones (never ``pg--x``)."""
    if owner and all(keys):  # nearly always: no part to leave out (it runs per group)
        return "-".join(("pg", owner, *keys))
    return "-".join([part for part in ("pg", owner, *keys) if part])


class GroupTopology(View):
    """Where the scheduler should place the gang (the definition's topology, as given)."""

    topology_name: str | None = json_field("topologyName")
    preferred_topology_level: str | None = json_field("preferredTopologyLevel")
    required_topology_level: str | None = json_field("requiredTopologyLevel")


class PodGroup(View):
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
        # the JSON lists member pods by name; keep one order everywhere (most come in order)
        pods = self.pods
        if len(pods) > 1:  # a gang of one pod (or none) is in order: no copy to make
            # checked in one pass before anything is sorted (most come in order: a sorted
            # copy and its comparison cost about half as much again, callgrind)
            previous = pods[0]
            for name in pods:
                if name < previous:
                    set_field(self, "pods", tuple(sorted(pods)))
                    break
                previous = name

    def flagged(self) -> PodGroup:
        """The group with a naming error when its name is not a DNS-1123 subdomain."""
        if self.error is not None or self.unresolved_keys or is_dns1123_subdomain(self.name):
            return self
        error = f"pod group name {self.name!r} is not a DNS-1123 subdomain"
        return dataclasses.replace(self, error=error)


class GroupKey(View):
    """One key of a pod's group: the path read and the value it gave."""

    path: str = json_field("path")
    value: str = json_field("value")


class SubGroupRef(View):
    """The v2 subgroup a pod joined, with its minimum (for ``explain``)."""

    name: str = json_field("name")
    min_member: int = json_field("minMember")
    rule: str = json_field("minMemberRule")


class GangAssignment(View):
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
UNATTRIBUTED = GangAssignment(reason="not attributed to a component")


class PodGroupResult(View):
    """The pod groups, per candidate pod how it was grouped (its group's minimum is added by
    :func:`with_minimums`, for ``explain``), and notes on gangs not listed."""

    groups: tuple[PodGroup, ...] = ()
    assignments: tuple[GangAssignment, ...] = ()
    notes: tuple[str, ...] = ()
    #: attributed pods that join no group (or no subgroup), by component and reason; each pod's
    #: own assignment already says why, so ``explain`` does not repeat these
    ungrouped: tuple[str, ...] = ()
