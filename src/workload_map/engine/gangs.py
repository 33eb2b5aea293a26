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
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from workload_map.engine.errors import EngineError, ExtractionError
from workload_map.engine.extract import (
    ExtractedInstance,
    Extractor,
    Scale,
    effective_minimum,
    implied_replicas,
)
from workload_map.engine.pods import Placement, single_result
from workload_map.engine.runner import Expression, Run, located_path, plain_path
from workload_map.engine.structure import Structure, has_pod_definition
from workload_map.model import Member, PodGroupDefinition, Topology

__all__ = [
    "GangAssignment",
    "PodGroup",
    "build_pod_groups",
    "gang_minimum",
    "group_name",
    "is_dns1123_subdomain",
    "subtree_scale",
]

_DNS1123 = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


def is_dns1123_subdomain(name: str) -> bool:
    return len(name) <= 253 and bool(_DNS1123.match(name))


def group_name(owner: str, *keys: str) -> str:
    """``pg-<owner>`` plus the ``-``-joined keys, leaving out empty ones (never ``pg--x``)."""
    return "-".join(part for part in ("pg", owner, *keys) if part)


def gang_minimum(scale: Scale | None) -> int:
    """Pods one instance needs to start: minReplicas if > 0, else replicas, else 1."""
    if scale is None:
        return 1
    if scale.min_replicas is not None and scale.min_replicas > 0:
        return scale.min_replicas
    if scale.replicas is not None:
        return max(scale.replicas, 0)
    return 1


@dataclass
class PodGroup:
    """One gang: its KAI-compatible name, minimum, member pods and subgroups."""

    name: str
    min_member: int
    pods: list[str] = field(default_factory=list)
    sub_groups: list[PodGroup] = field(default_factory=list)
    definition: str = ""
    keys: tuple[str, ...] = ()
    topology: dict[str, Any] | None = None
    rule: str = ""
    error: str | None = None
    #: key paths only pods carry (no pods known): the name shows ``<label>`` in their place
    unresolved_keys: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": self.name,
            "minMember": self.min_member,
            "pods": sorted(self.pods),
            "subGroups": [g.to_dict() for g in self.sub_groups],
            "definition": self.definition,
            "keys": list(self.keys),
            "minMemberRule": self.rule,
        }
        if self.topology is not None:
            out["topology"] = self.topology
        if self.error is not None:
            out["error"] = self.error
        if self.unresolved_keys:
            out["unresolvedKeys"] = list(self.unresolved_keys)
        return out


@dataclass(slots=True)
class GangAssignment:
    """How one pod was grouped (for ``explain``)."""

    group: str | None = None
    definition: str | None = None
    member: str | None = None
    effective_component: str | None = None
    keys: list[dict[str, str]] = field(default_factory=list)
    filters: list[str] = field(default_factory=list)
    reason: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "group": self.group,
            "definition": self.definition,
            "member": self.member,
            "effectiveComponent": self.effective_component,
            "keys": list(self.keys),
            "filters": list(self.filters),
            "reason": self.reason,
        }


# -- the reference's subtree-scale rule -------------------------------------------------------
def subtree_scale(
    structure: Structure, extractor: Extractor, component: str, instance_id: str | None = None
) -> int:
    """The reference's ``CalculateSubtreeScale`` (KAI's minAvailable), exactly."""
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
            return effective_minimum(scales[inst])
        return sum(effective_minimum(s) for s in scales.values()) if scales else 0

    def below(name: str, seen: tuple[str, ...]) -> list[str]:
        # a component owned through a cycle (only without validation) is not counted again
        return [c for c in structure.children[name] if c not in seen]

    def by_scale(name: str, inst: str | None, seen: tuple[str, ...]) -> int:
        value = own(name, inst)
        if structure.is_leaf(name):
            return value
        seen = (*seen, name)
        children = sum(by_scale(child, None, seen) for child in below(name, seen))
        if children == 0:
            return value
        if value == 0:
            return children
        return value * children

    def by_leaves(name: str, inst: str | None, seen: tuple[str, ...]) -> int:
        if structure.is_leaf(name):
            # the reference's leaves are pod-bearing components: a childless one without a pod
            # definition (a grouping or status-only component) counts no pods
            if not has_pod_definition(structure.components[name]):
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
class _Counter:
    """Pods the definition implies for parts of the tree, by the gang-minimum rule."""

    def __init__(self, structure: Structure, extractor: Extractor, placements: Sequence[Placement]):
        self.structure = structure
        self.extractor = extractor
        self.placements = placements
        self._observed_replicas: dict[str, int] | None = None

    def instance_minimums(self, name: str) -> dict[str, int]:
        """Per instance the pods it needs; 0 for an instance the object leaves out."""
        if not has_pod_definition(self.structure.components[name]):
            return {}
        return {
            i: gang_minimum(inst.scale) if inst.describes_pods else 0
            for i, inst in self.extractor.instances(name).items()
        }

    def described(self, name: str) -> bool:
        """Whether the object describes the pods of some instance under ``name``."""
        return any(
            inst.describes_pods
            for comp in self.structure.subtree(name)
            if has_pod_definition(self.structure.components[comp])
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
        if scales and not has_pod_definition(comp) and self.structure.children.get(component):
            first = next(iter(scales.values()))
            value = gang_minimum(first)
            return value, f"one replica of {component}: its own scale ({value} pods)"
        total = self.subtree(component, only)
        count = self.replica_count(component)
        return -(-total // count), (
            f"one replica of {component}: {total} pods over {count} observed replicas"
        )


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


def _member_minimum(
    counter: _Counter,
    members: Sequence[Member],
    keys_by_pod: Sequence[tuple[Placement, tuple[str, ...]]],
) -> tuple[int, str]:
    pins, replica_of = _dimensions(keys_by_pod)
    names = [m.component_name for m in members if m.component_name in counter.structure.components]
    if replica_of is not None:
        share, why = counter.replica_share(replica_of, pins)
        return share, why
    total = sum(counter.subtree(n, pins) for n in names)
    parts = ", ".join(names)
    if pins:
        scope = ", ".join(f"{c} instance {i}" for c, i in pins.items())
        return total, f"pods implied for {parts}, keys pin {scope}"
    return total, f"pods implied for {parts}"


def _topology(topology: Topology | None) -> tuple[dict[str, Any] | None, str | None]:
    if topology is None:
        return None, None
    out = {
        "topologyName": topology.topology_name,
        "preferredTopologyLevel": topology.preferred_topology_level,
        "requiredTopologyLevel": topology.required_topology_level,
    }
    if not topology.topology_name:
        return out, "topology: topologyName is required"
    if not (topology.preferred_topology_level or topology.required_topology_level):
        return out, "topology: at least one of preferredTopologyLevel/requiredTopologyLevel"
    return out, None


class _Candidate:
    """One group a pod of some component may join, its expressions looked up once."""

    __slots__ = ("definition", "filter_texts", "filters", "keys", "level", "member")

    def __init__(
        self, structure: Structure, level: str, definition: PodGroupDefinition, member: Member
    ):
        self.level, self.definition, self.member = level, definition, member
        self.filters = [(f, structure.expressions.get(f)) for f in member.filters]
        self.filter_texts = list(member.filters)
        self.keys = [(k, structure.expressions.get(k)) for k in member.group_by_key_paths]

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
    structure: Structure,
    extractor: Extractor,
    pods: Sequence[Mapping[str, Any]],
    placements: Sequence[Placement],
    owner_uid: str,
    *,
    pods_known: bool = True,
) -> tuple[list[PodGroup], list[GangAssignment], list[str]]:
    """The pod groups, per pod how it was grouped, and notes on gangs not listed.

    Without pods (``pods_known`` false) the groups are those the spec implies: the v2 group,
    and alpha groups whose keys the spec gives (see :func:`_expected_alpha_groups`). A gang
    that needs no pods (``minMember`` 0, e.g. a RayJob running on an existing cluster) is
    not listed, as a scheduler would not create it; the notes say why.
    """
    gang = structure.karta.gang_scheduling
    assignments = [GangAssignment() for _ in pods]
    if gang is None or (gang.pod_group is None and not gang.pod_groups):
        for a in assignments:
            a.reason = "the definition has no gang-scheduling instructions"
        return [], assignments, []
    counter = _Counter(structure, extractor, placements)
    notes: list[str] = []
    if gang.pod_group is not None:
        groups, assignments = _v2_groups(structure, counter, placements, assignments, owner_uid)
    elif pods_known:
        groups, assignments = _alpha_groups(
            structure, counter, pods, placements, assignments, owner_uid
        )
    else:
        groups, notes = _expected_alpha_groups(structure, counter, owner_uid)
    kept: list[PodGroup] = []
    for group in groups:
        if group.min_member == 0 and group.error is None:
            notes.append(f"pod group {group.name}: {NO_PODS_IMPLIED} ({group.rule})")
            for a in assignments:
                if a.group == group.name:
                    a.group, a.reason = None, NO_PODS_IMPLIED
            continue
        kept.append(group)
    return kept, assignments, notes


def _v2_groups(
    structure: Structure,
    counter: _Counter,
    placements: Sequence[Placement],
    assignments: list[GangAssignment],
    owner_uid: str,
) -> tuple[list[PodGroup], list[GangAssignment]]:
    mapping = structure.karta.gang_scheduling.pod_group  # type: ignore[union-attr]
    assert mapping is not None
    name = group_name(owner_uid, mapping.name)
    topology, error = _topology(mapping.topology)
    group = PodGroup(name=name, min_member=0, definition=mapping.name, keys=(mapping.name,))
    group.topology, group.error = topology, error
    for placement, assignment in zip(placements, assignments, strict=True):
        if not placement.attributed:
            assignment.reason = "not attributed to a component"
            continue
        group.pods.append(placement.pod)
        assignment.group = name
        assignment.definition = mapping.name
        assignment.keys = [{"path": "podGroup.name", "value": mapping.name}]
    for sub in mapping.sub_groups:
        sub_topology, sub_error = _topology(sub.topology)
        if sub.component_name not in structure.components:
            sub_group = PodGroup(
                name=sub.component_name,
                min_member=0,
                definition=mapping.name,
                error=f"subgroup component '{sub.component_name}' is not defined",
            )
            group.sub_groups.append(sub_group)
            continue
        members = set(structure.subtree(sub.component_name))
        rule = f"pods implied for {sub.component_name} and its descendants"
        try:
            minimum = counter.subtree(sub.component_name)
            if minimum == 0 and not counter.described(sub.component_name):
                rule = f"the object does not describe {sub.component_name}: no pods"
            elif minimum == 0:
                sub_error = sub_error or f"component {sub.component_name} implies no pods"
        except ExtractionError as err:
            minimum, sub_error = 0, sub_error or str(err)
        sub_group = PodGroup(
            name=sub.component_name,
            min_member=minimum,
            definition=mapping.name,
            topology=sub_topology,
            rule=rule,
            error=sub_error,
        )
        for placement, assignment in zip(placements, assignments, strict=True):
            if placement.attributed and placement.component in members:
                sub_group.pods.append(placement.pod)
                assignment.member = sub.component_name
                assignment.effective_component = sub.component_name
        group.sub_groups.append(sub_group)
    explicit = getattr(mapping, "min_member", None)
    if isinstance(explicit, int):
        group.min_member, group.rule = explicit, "set by the definition"
    elif group.sub_groups:
        group.min_member = sum(g.min_member for g in group.sub_groups)
        group.rule = "sum of the subgroups"
    else:
        try:
            group.min_member = counter.subtree(structure.root.name)
            group.rule = "pods implied for the whole workload"
        except ExtractionError as err:
            group.error = group.error or str(err)
    if not is_dns1123_subdomain(name):
        group.error = group.error or f"pod group name {name!r} is not a DNS-1123 subdomain"
    return [group], assignments


def _alpha_groups(
    structure: Structure,
    counter: _Counter,
    pods: Sequence[Mapping[str, Any]],
    placements: Sequence[Placement],
    assignments: list[GangAssignment],
    owner_uid: str,
) -> tuple[list[PodGroup], list[GangAssignment]]:
    candidates_cache: dict[str, list[_Candidate]] = {}
    grouped: dict[str, tuple[PodGroupDefinition, list[tuple[Placement, tuple[str, ...]]]]] = {}
    for pod, placement, assignment in zip(pods, placements, assignments, strict=True):
        component = placement.component
        if component is None or placement.reason is not None:
            assignment.reason = "not attributed to a component"
            continue
        candidates = candidates_cache.get(component)
        if candidates is None:
            candidates = candidates_cache[component] = [
                _Candidate(structure, level, definition, member)
                for level, definition, member in _candidates(structure, component)
            ]
        if not candidates:
            assignment.reason = f"no pod group names {component} or an ancestor"
            continue
        chosen = None
        try:
            for candidate in candidates:
                if not candidate.filters or candidate.passes(pod, counter.extractor.run):
                    chosen = candidate
                    break
        except ExtractionError as err:
            assignment.reason = str(err)
            continue
        if chosen is None:
            assignment.reason = "the filters of every candidate pod group failed"
            continue
        definition = chosen.definition
        assignment.definition = definition.name
        assignment.member = chosen.member.component_name
        assignment.effective_component = chosen.level
        assignment.filters = chosen.filter_texts  # shared, read-only (to_dict copies)
        keys: list[str] = []
        key_entries = assignment.keys
        try:
            for path, expression in chosen.keys:
                value = single_result(expression, pod, counter.extractor.run)
                keys.append(value)
                key_entries.append({"path": path, "value": value})
        except ExtractionError as err:
            assignment.reason = f'failed to extract group key from path "{path}": {err}'
            continue
        name = group_name(owner_uid, *keys)
        assignment.group = name
        entry = grouped.get(name)
        if entry is None:
            entry = grouped[name] = (definition, [])
        entry[1].append((placement, tuple(keys)))
    groups: list[PodGroup] = []
    for name, (definition, members) in sorted(grouped.items()):
        try:
            minimum, rule, error = *_member_minimum(counter, definition.members, members), None
        except ExtractionError as err:
            minimum, rule, error = 0, "", str(err)
        group = PodGroup(
            name=name,
            min_member=minimum,
            pods=[p.pod for p, _ in members],
            definition=definition.name,
            keys=members[0][1],
            rule=rule,
            error=error,
        )
        if not is_dns1123_subdomain(name):
            group.error = group.error or f"pod group name {name!r} is not a DNS-1123 subdomain"
        groups.append(group)
    return groups, assignments


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


def _set_plain(model: dict[str, Any], path: str, value: str) -> None:
    """Set a plain field path (``.metadata.labels["x"]``) in the model pod, when it is one."""
    steps = plain_path(path)
    if not steps or not all(isinstance(step, str) for step in steps):
        return
    target: Any = model
    for step in steps[:-1]:
        nxt = target.get(step) if isinstance(target, dict) else None
        if not isinstance(nxt, dict):
            nxt = {}
            target[step] = nxt
        target = nxt
    target[steps[-1]] = value


def _model_key(
    model: dict[str, Any], path: str, expression: Expression, extractor: Extractor
) -> str | None:
    """A group key read from the model pod, only where the model holds it.

    Only a plain field path (optionally ``// literal``) that finds a value counts: anything
    else may depend on what the controller adds to real pods (``.labels.x + "-all"`` on a
    model without ``x`` is not the key pods will have).
    """
    steps = located_path(path)
    if steps is None:
        return None
    value: Any = model
    for step in steps:
        if isinstance(step, str) and isinstance(value, dict):
            value = value.get(step)
        elif isinstance(step, int) and isinstance(value, list) and 0 <= step < len(value):
            value = value[step]
        else:
            return None
    if value is None or value is False or value == "":
        return None
    try:
        return single_result(expression, model, extractor.run)
    except ExtractionError:
        return None


def _unresolved(path: str) -> str:
    """The stand-in for a key only pods carry: ``<label-name>`` (not a valid name, on purpose)."""
    steps = plain_path(path)
    last = steps[-1] if steps else path
    return f"<{last}>"


def _expected_alpha_groups(
    structure: Structure, counter: _Counter, owner_uid: str
) -> tuple[list[PodGroup], list[str]]:
    """The alpha ``podGroups`` the spec implies when no pods are known.

    Each pod-bearing instance the object describes stands for its pods: it joins the first
    candidate group of its component (filters cannot be checked without pods and are taken
    as passing). Its keys come from what the spec says the pods will carry: a key that is
    the ``replicaSelector`` path takes every replica index the spec implies (an LWS ``group``
    of ``size`` pods: 0..replicas-1), the ``componentInstanceSelector`` path the instance id,
    any other the pod template's value. A key only the pods carry (a label the controller
    sets) is shown as ``<label>`` and listed in ``unresolvedKeys``; a replica key whose count
    the spec does not give leaves the group out, with a note.
    """
    extractor = counter.extractor
    notes: list[str] = []
    # by (definition, name): two definitions whose unresolved keys look alike stay apart
    grouped: dict[
        tuple[str, str], tuple[PodGroupDefinition, list[tuple[Placement, tuple[str, ...]]]]
    ] = {}
    unresolved: dict[tuple[str, str], list[str]] = {}
    filtered: set[tuple[str, str]] = set()
    for component in structure.order:
        if not has_pod_definition(structure.components[component]):
            continue
        candidates = _candidates(structure, component)
        if not candidates:
            continue
        _, definition, member = candidates[0]
        try:
            instances = extractor.instances(component)
        except EngineError as err:
            notes.append(f"pod group {definition.name}: {component}: {err}")
            continue
        if not any(inst.describes_pods for inst in instances.values()):
            continue  # the object leaves the component out: it has no pods to group
        owner = _replica_owner(structure, component)
        key_paths = list(member.group_by_key_paths)
        replica_keys: list[str | None] = [None]
        if owner is not None and any(owner[1] in path for path in key_paths):
            count = implied_replicas(structure, extractor, owner[0])
            if count is None:
                note = (
                    f"pod group {definition.name}: the spec does not say how many replicas of "
                    f"{owner[0]} there are (key {owner[1]}); the groups show once pods are known"
                )
                if note not in notes:
                    notes.append(note)
                continue
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
                    _set_plain(model, id_path, instance_id)
                if owner is not None and replica is not None:
                    _set_plain(model, owner[1], replica)
                keys: list[str] = []
                missing: list[str] = []
                for path, expression in expressions:
                    value = _model_key(model, path, expression, extractor)
                    if value is None:
                        keys.append(_unresolved(path))
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
                key = (definition.name, group_name(owner_uid, *keys))
                entry = grouped.setdefault(key, (definition, []))
                entry[1].append((placement, tuple(keys)))
                if missing:
                    unresolved[key] = missing
                if member.filters:
                    filtered.add(key)
    # <label> stands for a different value in each definition: say whose when several have one
    qualify = len({d for d, _ in unresolved}) > 1
    groups: list[PodGroup] = []
    for key, (definition, members) in sorted(grouped.items(), key=lambda e: e[0][1]):
        try:
            minimum, rule, error = *_member_minimum(counter, definition.members, members), None
        except ExtractionError as err:
            minimum, rule, error = 0, "", str(err)
        rule = f"expected from the spec (no pods known): {rule}" if rule else rule
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
            min_member=minimum,
            definition=definition.name,
            keys=shown_keys,
            rule=rule,
            error=error,
            unresolved_keys=tuple(unresolved.get(key, ())),
        )
        if not group.unresolved_keys and not is_dns1123_subdomain(name):
            group.error = group.error or f"pod group name {name!r} is not a DNS-1123 subdomain"
        groups.append(group)
    return groups, notes
