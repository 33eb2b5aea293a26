"""Where a gang must be placed: a definition's topology and KAI's placement annotations, as the
native ``schedulingConstraints.topology`` key (docs/gangs.md, "Topology").

Pure. v1.37.2's field holds one node-label key meaning "every member in one domain of this
key"; it has no preferred placement, and a node without the label never hosts a constrained
gang. So only a **required** level becomes a constraint, and only once it is a node-label key
for certain: a level of the named KAI ``Topology`` (its ``nodeLabel``, or the ``alias`` of one),
or, when that Topology is not known, a prefixed label key (``example.com/rack``: KAI's aliases
are plain names). A level that resolves to nothing writes no constraint (a gang constrained to
a label no node carries would never start); a preferred level is kept for the decision only.

Sources, the first that states a level wins: the workload's own annotations
``kai.scheduler/topology``, ``…/topology-required-placement`` and
``…/topology-preferred-placement`` (KAI's podgrouper reads them from the top owner, over the
definition's defaults), then the definition's ``podGroup.topology`` (the engine's
``PodGroup.topology``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from workload_map.engine.gangs import GroupTopology

__all__ = [
    "ANNOTATION_KAI_PREFERRED",
    "ANNOTATION_KAI_REQUIRED",
    "ANNOTATION_KAI_TOPOLOGY",
    "KAI_TOPOLOGY_API",
    "Placement",
    "TopologyLevels",
    "constraints",
    "kai_levels",
    "placement",
    "resolve",
]

#: KAI's ``Topology`` (cluster-scoped): the levels and aliases a placement level names
KAI_TOPOLOGY_API = "kai.scheduler/v1alpha1"
ANNOTATION_KAI_TOPOLOGY = "kai.scheduler/topology"
ANNOTATION_KAI_REQUIRED = "kai.scheduler/topology-required-placement"
ANNOTATION_KAI_PREFERRED = "kai.scheduler/topology-preferred-placement"

#: KAI ``Topology`` objects by name: their levels as (nodeLabel, alias or "") pairs
TopologyLevels = tuple[tuple[str, tuple[tuple[str, str], ...]], ...]


@dataclass(frozen=True)
class Placement:
    """A gang's placement as stated, and the node-label key its required level resolves to."""

    source: str  # "workload annotations" or "definition"
    topology: str | None
    required: str | None
    preferred: str | None
    #: the node-label key of ``required`` (None: no required level, or it did not resolve)
    key: str | None
    #: why a required level wrote no key
    problem: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"source": self.source}
        for name, value in (
            ("topology", self.topology),
            ("requiredLevel", self.required),
            ("preferredLevel", self.preferred),
            ("key", self.key),
            ("problem", self.problem),
        ):
            if value is not None:
                out[name] = value
        return out


def kai_levels(objects: Sequence[Mapping[str, Any]]) -> TopologyLevels:
    """The levels of KAI ``Topology`` objects (``kai.scheduler/v1alpha1``), for
    ``GangConfig.kai_topologies``: ``spec.levels[].{nodeLabel, alias}`` by the object's name."""
    out: list[tuple[str, tuple[tuple[str, str], ...]]] = []
    for obj in objects:
        name = (obj.get("metadata") or {}).get("name")
        levels = (obj.get("spec") or {}).get("levels")
        if not isinstance(name, str) or not isinstance(levels, list):
            continue
        pairs = tuple(
            (str(level["nodeLabel"]), str(level.get("alias") or ""))
            for level in levels
            if isinstance(level, Mapping) and isinstance(level.get("nodeLabel"), str)
        )
        out.append((name, pairs))
    return tuple(sorted(out))


def _text(value: object) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None


def resolve(level: str, topology: str | None, known: TopologyLevels) -> tuple[str | None, str]:
    """(node-label key, how) for a level of ``topology``; key None when it cannot be told."""
    levels = dict(known).get(topology or "")
    if levels is not None:
        for label, alias in levels:
            if level == label:
                return label, f"a level of Topology {topology}"
            if alias and level == alias:
                return label, f"alias {alias} of Topology {topology}"
        return None, f"{level!r} is neither a level nor an alias of Topology {topology}"
    if "/" in level:
        return level, "a node-label key"
    named = f"Topology {topology} is not known" if topology else "no Topology is named"
    return None, f"{level!r} may be an alias and {named}: no node-label key to constrain by"


def placement(
    group: GroupTopology | None, annotations: Mapping[str, Any], known: TopologyLevels
) -> Placement | None:
    """The gang's placement, or None when neither the workload nor its definition states one."""
    required = _text(annotations.get(ANNOTATION_KAI_REQUIRED))
    preferred = _text(annotations.get(ANNOTATION_KAI_PREFERRED))
    if required or preferred:
        source, name = "workload annotations", _text(annotations.get(ANNOTATION_KAI_TOPOLOGY))
    elif group is not None and (group.required_topology_level or group.preferred_topology_level):
        source, name = "definition", group.topology_name
        required, preferred = group.required_topology_level, group.preferred_topology_level
    else:
        return None
    key, problem = None, None
    if required:
        key, how = resolve(required, name, known)
        problem = None if key is not None else how
    return Placement(source, name, required, preferred, key, problem)


def constraints(keys: Sequence[str]) -> dict[str, Any]:
    """The native ``schedulingConstraints`` of one key (the field takes a list; one key)."""
    return {"topology": [{"key": k} for k in keys]}
