"""Which component, instance and replica each pod belongs to.

The rules are the reference's: with exactly one pod-describing component, every pod is its
(the single-leaf rule); otherwise the first such component, in definition order, whose
``componentTypeSelector`` matches (``keyPath`` present / equal to ``value``, every
``matchLabels`` label equal; both AND-ed). The instance comes from ``componentInstanceSelector``
(compared with the component's instance ids), the replica from the nearest
``replicaSelector`` on the component or an ancestor. Every decision is recorded so ``explain``
can show which expression gave which value.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from workload_map.engine.errors import ExtractionError, InstanceNotFoundError
from workload_map.engine.extract import Extractor
from workload_map.engine.structure import Structure
from workload_map.model import ComponentTypeSelector

__all__ = [
    "Placement",
    "attribute",
    "matches_type",
    "pod_name",
    "single_value",
]


@dataclass
class Placement:
    """Where one pod sits in the workload (component None: no component claims it)."""

    pod: str
    component: str | None = None
    instance: str | None = None
    replica: str | None = None
    replica_component: str | None = None
    reason: str | None = None
    trace: list[tuple[Any, ...]] = field(default_factory=list)

    @property
    def steps(self) -> list[str]:
        """The decisions that placed the pod, as text (formatted on demand: this runs per pod)."""
        return [str(template).format(*args) for template, *args in self.trace]

    @property
    def attributed(self) -> bool:
        return self.component is not None and self.reason is None

    def to_dict(self) -> dict[str, Any]:
        return {
            "pod": self.pod,
            "component": self.component,
            "instance": self.instance,
            "replica": self.replica,
            "replicaComponent": self.replica_component,
            "unattributedReason": self.reason,
            "steps": list(self.steps),
        }


def pod_name(pod: Mapping[str, Any]) -> str:
    meta = pod.get("metadata")
    if not isinstance(meta, dict):
        return ""
    return str(meta.get("name") or meta.get("generateName") or "")


def _go_string(value: Any) -> str:
    """A value as Go's ``%v`` prints it (numbers without a trailing ``.0``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e21:
        return str(int(value))
    if isinstance(value, str):
        return value
    if isinstance(value, int):
        return str(value)
    from workload_map.jq import encoding

    return str(encoding.dumps(value, indent=None))


def single_value(structure: Structure, expr: str, pod: Any) -> str:
    """Exactly one non-empty result, stringified (group keys, instance ids, replica keys)."""
    values = structure.eval(expr, pod)
    if len(values) != 1:
        raise ExtractionError(f"expected single query result, got {len(values)}")
    value = values[0]
    if value is None or value == "":
        raise ExtractionError(f"query result is empty {'<nil>' if value is None else value}")
    return _go_string(value)


def matches_type(structure: Structure, selector: ComponentTypeSelector | None, pod: Any) -> bool:
    """The reference's ``MatchesComponentType`` (plus ``matchLabels``)."""
    if selector is None or (not selector.key_path and not selector.match_labels):
        return False
    if selector.key_path:
        values = structure.eval(selector.key_path, pod)
        if selector.value is None:
            if not any(v is not None for v in values):
                return False
        elif not any(isinstance(v, str) and v == selector.value for v in values):
            return False
    if selector.match_labels:
        meta = pod.get("metadata") if isinstance(pod, dict) else None
        labels = meta.get("labels") if isinstance(meta, dict) else None
        if not isinstance(labels, dict):
            return False
        for key, value in selector.match_labels.items():
            if labels.get(key) != value:
                return False
    return True


_DESCRIPTIONS: dict[int, tuple[ComponentTypeSelector, str]] = {}


def _describe_selector(selector: ComponentTypeSelector) -> str:
    found = _DESCRIPTIONS.get(id(selector))
    if found is not None and found[0] is selector:
        return found[1]
    text = _selector_text(selector)
    if len(_DESCRIPTIONS) > 4096:
        _DESCRIPTIONS.clear()
    _DESCRIPTIONS[id(selector)] = (selector, text)
    return text


def _selector_text(selector: ComponentTypeSelector) -> str:
    parts = []
    if selector.key_path:
        parts.append(
            f"{selector.key_path} == {selector.value!r}"
            if selector.value is not None
            else f"{selector.key_path} is present"
        )
    if selector.match_labels:
        parts.append(f"matchLabels {dict(selector.match_labels)}")
    return " and ".join(parts)


def infer_component(structure: Structure, pod: Any, placement: Placement) -> str | None:
    leaves = structure.leaves
    if not leaves:
        placement.reason = "the definition has no component that describes pods"
        return None
    if len(leaves) == 1:
        placement.trace.append(("component {}: the only component describing pods", leaves[0]))
        return leaves[0]
    unselectable = []
    for name in leaves:
        comp = structure.components[name]
        selector = comp.pod_selector.component_type_selector if comp.pod_selector else None
        if selector is None or (not selector.key_path and not selector.match_labels):
            unselectable.append(name)
            continue
        if matches_type(structure, selector, pod):
            placement.trace.append(("component {}: {}", name, _describe_selector(selector)))
            return name
    reason = "no component's componentTypeSelector matches"
    if unselectable:
        reason += (
            f"; {', '.join(unselectable)} cannot claim pods: several components describe pods "
            "and these have no componentTypeSelector"
        )
    placement.reason = reason
    return None


def attribute(structure: Structure, extractor: Extractor, pod: Mapping[str, Any]) -> Placement:
    """The placement of one pod (errors become the placement's ``reason``)."""
    placement = Placement(pod=pod_name(pod))
    try:
        component = infer_component(structure, pod, placement)
    except ExtractionError as err:
        placement.reason = f"componentTypeSelector: {err}"
        return placement
    if component is None:
        return placement
    placement.component = component
    comp = structure.components[component]
    selector = comp.pod_selector.component_instance_selector if comp.pod_selector else None
    try:
        ids = extractor.instance_ids(component)
    except ExtractionError as err:
        placement.reason = str(err)
        return placement
    if not ids:
        placement.reason = f"component {component} has no instances in the object"
        return placement
    if selector is not None and selector.id_path and ids[0] != "":
        try:
            value = single_value(structure, selector.id_path, pod)
        except ExtractionError as err:
            placement.reason = f"componentInstanceSelector {selector.id_path}: {err}"
            return placement
        if value not in ids:
            err2 = InstanceNotFoundError(
                f'could not match instance id "{value}". existing instance ids [{" ".join(ids)}]'
            )
            placement.reason = str(err2)
            return placement
        placement.instance = value
        placement.trace.append(("instance {}: {}", value, selector.id_path))
    elif ids == [""]:
        placement.instance = ""
    else:
        placement.reason = "no instance selector provided but instance ids are not empty"
        return placement
    for name in [component, *structure.ancestors(component)]:
        owner = structure.components[name]
        replica = owner.pod_selector.replica_selector if owner.pod_selector else None
        if replica is not None and replica.key_path:
            try:
                placement.replica = single_value(structure, replica.key_path, pod)
                placement.replica_component = name
                placement.trace.append(
                    ("replica {} of {}: {}", placement.replica, name, replica.key_path)
                )
            except ExtractionError as err:
                placement.trace.append(("replica of {}: {}: {}", name, replica.key_path, err))
            break
    return placement
