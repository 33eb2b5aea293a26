"""The pod model of gangs: the alpha groups a spec implies before any pod exists.

Without pods, each pod-bearing instance the object describes stands for its pods: a model pod
built from the pod template's metadata plus the instance id and replica key where the
selectors read them. A key only real pods carry (a label the controller sets) is shown as
``<label>``. No library models pods from a spec this way: it follows the Karta's selectors.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

from workload_map import jq
from workload_map.engine.errors import EngineError, ExtractionError
from workload_map.engine.extract import ExtractedInstance, Extractor, implied_replicas
from workload_map.engine.gang_minimums import GangCounter, alpha_minimum
from workload_map.engine.gang_rules import candidates_of
from workload_map.engine.gang_views import PodGroup, group_name
from workload_map.engine.pods import Placement, single_result
from workload_map.engine.runner import Expression, lookup
from workload_map.engine.structure import Structure
from workload_map.model import PodGroupDefinition
from workload_map.model.views import View

__all__ = ["MAX_EXPECTED_REPLICAS", "expected_alpha_groups"]


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


class _ModelPod(View):
    """A pod the spec implies, standing in for real ones: where it sits and its keys."""

    definition: PodGroupDefinition
    placement: Placement
    keys: tuple[str, ...]
    missing: tuple[str, ...]
    filtered: bool


def _zero_scale(counter: GangCounter, name: str) -> bool:
    """Whether grouping component ``name`` states a scale of 0 pods per replica."""
    comp = counter.structure.components[name]
    if comp.scale_definition is None or counter.structure.has_pod_definition(name):
        return False
    try:
        scales = counter.extractor.scales(name)
    except EngineError:
        return False
    return bool(scales) and all(s.replicas == 0 for s in (scales or {}).values())


def _model_pods(counter: GangCounter, component: str, notes: list[str]) -> Iterator[_ModelPod]:
    """The model pods of one component's first candidate group (none when it has none).

    A key that is the ``replicaSelector`` path takes every replica index the spec implies,
    the ``componentInstanceSelector`` path the instance id, any other the pod template's
    value; a key only pods carry is ``<label>``. A replica key whose count the spec does not
    give yields nothing, with a note.
    """
    structure, extractor = counter.structure, counter.extractor
    candidates = candidates_of(structure, component)
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


def expected_alpha_groups(counter: GangCounter, owner_uid: str) -> tuple[list[PodGroup], list[str]]:
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
        found = alpha_minimum(counter, definition, [(keys, (p,)) for p, keys in members])
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
