"""The backends' objects for a plan: native v1.37 Workload, PodGroup and CompositePodGroup,
coscheduling's PodGroup, Volcano's PodGroup.

Pure: the gangs :func:`workload_map.gangs.planner.plan` decided in, the objects out. Every
object carries our labels, the decision that shaped it (an annotation) and, where the workload
has a uid, an owner reference to it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from workload_map.gangs.config import (
    ANNOTATION_DECISION,
    COSCHEDULING,
    LABEL_MANAGED_BY,
    LABEL_WORKLOAD,
    LABEL_WORKLOAD_KIND,
    LABEL_WORKLOAD_UID,
    MANAGED_BY,
    NATIVE,
    VOLCANO,
)
from workload_map.gangs.naming import label_value
from workload_map.gangs.plans import (
    COMPOSITE_API,
    COSCHEDULING_API,
    NATIVE_API,
    VOLCANO_API,
    Gang,
    Plan,
    WorkloadRef,
    workload_object_name,
)
from workload_map.gangs.topology import constraints

__all__ = ["build_objects", "decision_text", "owned_metadata", "template_names"]


def _sorted_json() -> Callable[[Any], str]:
    """``json.dumps(value, sort_keys=True)``, its encoder made once: ``dumps`` makes a
    ``JSONEncoder`` and a C encoder per call, about half of the cost of a decision's few keys,
    and a cold resync writes one or two decisions per gang workload."""
    encoder = json.JSONEncoder(sort_keys=True)
    try:
        from _json import make_encoder
    except ImportError:  # an interpreter without the C accelerator: the same text, slower
        return encoder.encode
    # dumps' own settings (ensure_ascii, ", " and ": ", sort_keys, NaN allowed); without
    # markers: our decisions are trees built here, never cyclic (a cycle would recurse)
    fast = make_encoder(
        None,
        encoder.default,
        json.encoder.encode_basestring_ascii,
        None,
        ": ",
        ", ",
        True,
        False,
        True,
    )

    def text(value: Any) -> str:
        if type(value) is not dict:  # a top-level string or number: dumps' own path
            return encoder.encode(value)
        return "".join(fast(value, 0))

    return text


#: a decision annotation's text: exactly ``json.dumps(decision, sort_keys=True)``
decision_text = _sorted_json()


#: our labels of a workload's objects and their owner reference (:func:`_owned`)
_Owned = tuple[dict[str, str], dict[str, Any] | None]


def owned_metadata(
    ref: WorkloadRef,
    name: str,
    decision: Mapping[str, Any],
    extra_labels: Mapping[str, str],
    *,
    owned: _Owned | None = None,
) -> dict[str, Any]:
    """The metadata of one of our objects: our labels, the decision, owned by the workload.
    ``owned``: :func:`_owned` of ``ref``, when the caller writes several objects of it."""
    labels, owner = owned if owned is not None else _owned(ref)
    if extra_labels:
        # the uid label last, over the extra ones, as it has always been written
        labels = {k: v for k, v in labels.items() if k != LABEL_WORKLOAD_UID}
        labels.update(extra_labels)
        if ref.uid:
            labels[LABEL_WORKLOAD_UID] = label_value(ref.uid)
    meta: dict[str, Any] = {
        "name": name,
        "namespace": ref.namespace,
        "labels": dict(labels),
        "annotations": {ANNOTATION_DECISION: decision_text(dict(decision))},
    }
    if owner is not None:
        meta["ownerReferences"] = [dict(owner)]
    return meta


def _owned(ref: WorkloadRef) -> _Owned:
    """Our labels and the owner reference of every object of the workload ``ref``: the same
    for each of its objects, so a plan makes them once (each object gets its own copies)."""
    labels = {
        LABEL_MANAGED_BY: MANAGED_BY,
        LABEL_WORKLOAD: label_value(ref.name),
        LABEL_WORKLOAD_KIND: label_value(ref.kind),
    }
    if not ref.uid:
        return labels, None
    labels[LABEL_WORKLOAD_UID] = label_value(ref.uid)
    # the garbage collector removes our objects with the workload; not blockOwnerDeletion,
    # which would need permission to update the workload's finalizers
    owner = {
        "apiVersion": ref.api_version,
        "kind": ref.kind,
        "name": ref.name,
        "uid": ref.uid,
        "controller": True,
    }
    return labels, owner


def _decision(g: Gang, opted: str) -> dict[str, Any]:
    return {
        "backend": g.backend,
        "scheduler": g.scheduler,
        "group": g.group,
        "definition": g.definition,
        "minCount": g.min_count,
        "rule": g.rule,
        "keys": list(g.keys),
        "optIn": opted,
        **({"minTaskMember": dict(g.tasks)} if g.tasks else {}),
        **({"topology": dict(g.placement)} if g.placement else {}),
    }


def _template(
    name: str,
    count: int,
    classes: set[str | None],
    disruption: Mapping[str, Any],
    keys: set[str | None] | None = None,
) -> dict[str, Any]:
    """A native pod-group template; it names a class (and a topology key) only where all its
    gangs share one (PodGroups made from it are ours and name their own: the template is what
    other readers, KAI among them, see)."""
    template: dict[str, Any] = {
        "name": name,
        "schedulingPolicy": {"gang": {"minCount": count}},
        "disruptionMode": dict(disruption),
    }
    (only,) = classes if len(classes) == 1 else (None,)
    if only:
        template["priorityClassName"] = only
    (key,) = keys if keys is not None and len(keys) == 1 else (None,)
    if key:
        template["schedulingConstraints"] = constraints([key])
    return template


def build_objects(
    out: Plan,
    opted: str,
    queue: str,
    timeout: int,
    inherited: Mapping[str, str],
    disruption: Mapping[str, Any],
) -> list[dict[str, Any]]:
    """Every object of ``out``: the native Workload (or its composite form), then one group
    per gang. ``opted`` is why the workload is handled; ``inherited`` the workload's Volcano
    annotations a Volcano PodGroup carries too."""
    ref = out.workload
    owned = _owned(ref)
    objects: list[dict[str, Any]] = []
    native = [g for g in out.gangs if g.backend == NATIVE]
    workload_name = workload_object_name(ref)
    in_templates = [g for g in native if not g.standalone]
    if out.composites:
        objects.extend(_composite_objects(out, opted, workload_name, disruption))
    elif in_templates:
        minimums: dict[str, int] = {}
        classes: dict[str, set[str | None]] = {}
        keys: dict[str, set[str | None]] = {}
        for g in in_templates:
            minimums[g.template] = max(minimums.get(g.template, 0), g.min_count)
            classes.setdefault(g.template, set()).add(g.priority_class)
            keys.setdefault(g.template, set()).add(g.topology_key)
        objects.append(
            {
                "apiVersion": NATIVE_API,
                "kind": "Workload",
                "metadata": owned_metadata(
                    ref, workload_name, {"templates": minimums, "optIn": opted}, {}, owned=owned
                ),
                "spec": {
                    "controllerRef": {"apiGroup": ref.group, "kind": ref.kind, "name": ref.name},
                    "podGroupTemplates": [
                        _template(name, count, classes[name], disruption, keys[name])
                        for name, count in sorted(minimums.items())
                    ],
                },
            }
        )
    for g in out.gangs:
        meta = owned_metadata(ref, g.name, _decision(g, opted), {}, owned=owned)
        if g.backend == NATIVE:
            spec: dict[str, Any] = {"schedulingPolicy": {"gang": {"minCount": g.min_count}}}
            if g.parent is not None:
                spec["parentCompositePodGroupName"] = g.parent
            if not g.standalone:
                spec["workloadRef"] = {"workloadName": workload_name, "templateName": g.template}
            if g.priority_class:
                # the scheduler ranks and admits members by the group's priority (module doc)
                spec["priorityClassName"] = g.priority_class
            spec["disruptionMode"] = dict(disruption)
            if g.topology_key:
                # immutable: a changed key recreates a group no pod joined (reconcile.py)
                spec["schedulingConstraints"] = constraints([g.topology_key])
            objects.append(
                {"apiVersion": NATIVE_API, "kind": "PodGroup", "metadata": meta, "spec": spec}
            )
        elif g.backend == COSCHEDULING:
            spec = {"minMember": g.min_count, "scheduleTimeoutSeconds": timeout}
            if g.min_resources:
                spec["minResources"] = dict(g.min_resources)
            objects.append(
                {"apiVersion": COSCHEDULING_API, "kind": "PodGroup", "metadata": meta, "spec": spec}
            )
        elif g.backend == VOLCANO:
            meta["annotations"] = {**inherited, **meta["annotations"]}
            spec = {"minMember": g.min_count, "queue": queue}
            if g.tasks:
                spec["minTaskMember"] = dict(g.tasks)
            if g.min_resources:
                spec["minResources"] = dict(g.min_resources)
            if g.priority_class:
                spec["priorityClassName"] = g.priority_class
            objects.append(
                {"apiVersion": VOLCANO_API, "kind": "PodGroup", "metadata": meta, "spec": spec}
            )
    return objects


def template_names(workload: Mapping[str, Any]) -> list[str]:
    """Every template name of a native Workload: its pod-group templates, its composite
    templates and the pod-group templates nested in them (all immutable)."""
    spec = workload.get("spec") or {}
    names = [str(t.get("name")) for t in spec.get("podGroupTemplates") or []]
    for composite in spec.get("compositePodGroupTemplates") or []:
        names.append(str(composite.get("name")))
        names.extend(str(t.get("name")) for t in composite.get("podGroupTemplates") or [])
    return names


def _composite_objects(
    out: Plan, opted: str, workload_name: str, disruption: Mapping[str, Any]
) -> list[dict[str, Any]]:
    """The Workload of composite templates and one ``CompositePodGroup`` per composite."""
    ref = out.workload
    templates: list[dict[str, Any]] = []
    objects: list[dict[str, Any]] = []
    for c in out.composites:
        # one pod-group template per child template: a subgroup's each, or one shared by the
        # instances of a gang definition (a workload's gangs that start together)
        minimums: dict[str, int] = {}
        classes: dict[str, set[str | None]] = {}
        keys: dict[str, set[str | None]] = {}
        for g in out.gangs:
            if g.parent == c.name:
                minimums[g.template] = max(minimums.get(g.template, 0), g.min_count)
                classes.setdefault(g.template, set()).add(g.priority_class)
                keys.setdefault(g.template, set()).add(g.topology_key)
        template: dict[str, Any] = {
            "name": c.template,
            "schedulingPolicy": {"gang": {"minGroupCount": c.min_groups}},
            "disruptionMode": dict(disruption),
            "podGroupTemplates": [
                _template(name, count, classes[name], disruption, keys[name])
                for name, count in minimums.items()
            ],
        }
        spec: dict[str, Any] = {
            "workloadRef": {"workloadName": workload_name, "templateName": c.template},
            "schedulingPolicy": {"gang": {"minGroupCount": c.min_groups}},
            "disruptionMode": dict(disruption),
        }
        if c.priority_class:
            template["priorityClassName"] = spec["priorityClassName"] = c.priority_class
        if c.topology_key:
            template["schedulingConstraints"] = spec["schedulingConstraints"] = constraints(
                [c.topology_key]
            )
        templates.append(template)
        decision = {
            "backend": NATIVE,
            "group": c.group,
            "definition": c.definition,
            "minGroupCount": c.min_groups,
            "children": list(c.children),
            "rule": c.rule,
            "optIn": opted,
            **({"topology": dict(c.placement)} if c.placement else {}),
        }
        objects.append(
            {
                "apiVersion": COMPOSITE_API,
                "kind": "CompositePodGroup",
                "metadata": owned_metadata(ref, c.name, decision, {}),
                "spec": spec,
            }
        )
    workload = {
        "apiVersion": NATIVE_API,
        "kind": "Workload",
        "metadata": owned_metadata(
            ref,
            workload_name,
            {
                "compositeTemplates": {c.template: c.min_groups for c in out.composites},
                "optIn": opted,
            },
            {},
        ),
        "spec": {
            "controllerRef": {"apiGroup": ref.group, "kind": ref.kind, "name": ref.name},
            "compositePodGroupTemplates": templates,
        },
    }
    return [workload, *objects]
