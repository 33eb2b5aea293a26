"""The workload tree: root, components, instances (and, when pods are known, their pods).

Mirrors the reference's ``tree.Build``: every component node has at least one instance; the
single unnamed instance has no key; instance keys are sorted; children are extracted from the
whole object and repeated under every instance of their parent; the root node exposes only the
children of its first instance. Pods, when given, hang under their instance.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

import msgspec

from workload_map.engine.extract import ExtractedInstance, Extractor
from workload_map.engine.pods import Placement
from workload_map.engine.structure import Structure

__all__ = ["ComponentNode", "InstanceNode", "WorkloadTree", "build_tree"]

# msgspec Structs, not dataclasses (the same fields, order, equality and mutability):
# ``@dataclass`` generates and compiles each class's methods when the module is imported, about
# 2M instructions a class (callgrind), paid by every command that loads the engine although
# only ``Workload.tree`` builds these; a Struct class is made in C.


class InstanceNode(msgspec.Struct):
    instance_key: str | None
    extracted: ExtractedInstance
    pods: list[str] = msgspec.field(default_factory=list)
    children: list[ComponentNode] = msgspec.field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "instanceKey": self.instance_key,
            "scale": self.extracted.scale.to_dict() if self.extracted.scale else None,
            "extracted": self.extracted.to_dict(),
            "pods": sorted(self.pods),
            "children": [c.to_dict() for c in self.children],
        }


class ComponentNode(msgspec.Struct):
    name: str
    kind: dict[str, str] | None
    has_pod_definition: bool
    instances: list[InstanceNode] = msgspec.field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": self.kind,
            "hasPodDefinition": self.has_pod_definition,
            "instances": [i.to_dict() for i in self.instances],
        }


class WorkloadTree(msgspec.Struct):
    phases: list[str] | None
    root: ComponentNode
    children: list[ComponentNode]

    def to_dict(self) -> dict[str, Any]:
        return {
            "phases": self.phases,
            "root": self.root.to_dict(),
            "children": [c.to_dict() for c in self.children],
        }


def build_tree(
    structure: Structure,
    extractor: Extractor,
    phases: list[str] | None,
    placements: Sequence[Placement] | None = None,
) -> WorkloadTree:
    by_instance: dict[tuple[str, str], list[str]] = {}
    for p in placements or ():
        if p.attributed and p.component is not None:
            by_instance.setdefault((p.component, p.instance or ""), []).append(p.pod)

    def node(name: str, seen: tuple[str, ...]) -> ComponentNode:
        comp = structure.components[name]
        kind = (
            {"group": comp.kind.group, "version": comp.kind.version, "kind": comp.kind.kind}
            if comp.kind
            else None
        )
        out = ComponentNode(name, kind, comp.has_pod_definition)
        instances = extractor.instances(name)
        children = [
            node(child, (*seen, name)) for child in structure.children[name] if child not in seen
        ]
        for index, key in enumerate(sorted(instances)):
            inst = InstanceNode(key or None, instances[key], by_instance.get((name, key), []))
            inst.children = children if index == 0 else copy.deepcopy(children)
            out.instances.append(inst)
        return out

    root = node(structure.root.name, ())
    first = root.instances[0].children if root.instances else []
    return WorkloadTree(phases, root, first)
