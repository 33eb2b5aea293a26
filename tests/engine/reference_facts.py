"""The differential test's facts: the answers both engines give, keyed the same way.

:func:`reference_facts` reads one wlmap-refgo describe report; :func:`our_facts` asks our
engine's public ``Workload`` API the same questions (validity, instances, scale, extracted
parts, status, subtree scale, tree, pod attribution, replica keys, gang members and keys, pod
groups).
"""

from __future__ import annotations

import copy
import hashlib
import json
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tests.engine.reference_cases import Case

__all__ = ["Facts", "our_facts", "reference_facts"]

Facts = dict[str, Any]


def _instance_key(instance: Any) -> str:
    return "" if instance in (None, "") else str(instance)


def _spec_summary(part: Any) -> Any:
    """What an extracted pod template / pod spec says in terms both engines keep verbatim."""
    if not isinstance(part, Mapping):
        return None
    spec = part.get("spec") if "spec" in part or "metadata" in part else part
    if not isinstance(spec, Mapping):
        spec = {}
    containers = spec.get("containers") or []
    return {
        "containers": [
            [c.get("name") or None, c.get("image") or None]
            for c in containers
            if isinstance(c, Mapping)
        ],
        "schedulerName": spec.get("schedulerName") or None,
    }


def _empty(value: Any) -> bool:
    """Go's zero values: the reference's typed projection cannot tell them from absent."""
    if isinstance(value, Mapping):
        return all(_empty(v) for v in value.values())
    return value in (None, "", [], False)


def _fragment_summary(fragment: Any) -> Any:
    if not isinstance(fragment, Mapping):
        return None
    return sorted(k for k, v in fragment.items() if not _empty(v))


def _condition(c: Mapping[str, Any]) -> list[Any]:
    return [c.get("type"), c.get("status"), c.get("reason"), c.get("message") or ""]


def _has_alpha_groups(case: Case) -> bool:
    """Whether the definition uses the deprecated ``podGroups`` form (the only one the
    reference's effective-member lookup reads)."""
    spec = case.definition.karta["spec"]
    gang = (spec.get("optimizationInstructions") or {}).get("gangScheduling") or {}
    return bool(gang.get("podGroups")) and not gang.get("podGroup")


def _has_status_definition(case: Case) -> bool:
    root = case.definition.karta["spec"]["structureDefinition"]["rootComponent"]
    return bool(root.get("statusDefinition"))


def _tree_shape(nodes: Any, parts_key: str) -> list[Any]:
    """A workload tree's shape: components, their instances (key, scale, extracted parts)."""
    shape: list[Any] = []
    for node in nodes or []:
        instances = []
        for inst in node.get("instances") or []:
            scale = inst.get("scale") or {}
            parts = inst.get(parts_key) or []
            instances.append(
                [
                    _instance_key(inst.get("instanceKey")),
                    [scale.get("replicas"), scale.get("minReplicas"), scale.get("maxReplicas")],
                    sorted(parts),
                    _tree_shape(inst.get("children"), parts_key),
                ]
            )
        shape.append([node.get("name"), bool(node.get("hasPodDefinition")), instances])
    return shape


def _tree_fact(shape: list[Any]) -> str:
    """The shape as one short text: equal trees give equal texts."""
    text = json.dumps(shape, separators=(",", ":"))
    return text if len(text) <= 120 else f"tree #{hashlib.sha1(text.encode()).hexdigest()[:10]}"


def reference_facts(report: Mapping[str, Any], case: Case) -> Facts:
    """The reference's answers, from one wlmap-refgo describe report."""
    if "error" in report:
        return {"harness": "error"}
    facts: Facts = {"valid": report["validation"]["valid"]}
    components = report["components"]
    root = components[0]
    if _has_status_definition(case):
        if root["statusError"]:
            facts["phases"] = "error"
        else:
            status = root["status"]
            facts["phases"] = list(status["matchedStatuses"])
            facts["phase"] = status.get("phase")
            facts["conditions"] = [_condition(c) for c in status.get("conditions") or []]
    for component in components:
        name = component["name"]
        facts[f"subtreeScale[{name}]"] = (
            "error" if component["subtreeScaleError"] else component["subtreeScale"]
        )
        if component["instanceIdsError"]:
            facts[f"instances[{name}]"] = "error"
            continue
        facts[f"instances[{name}]"] = [_instance_key(i) for i in component["instanceIds"] or []]
        errors = component["extractionErrors"]
        for part in ("podTemplateSpec", "podSpec", "metadata", "fragmentedPodSpec", "scale"):
            if part in errors:
                facts[f"{part}[{name}]"] = "error"
        for instance in component["instances"]:
            key = f"{name}/{_instance_key(instance['id'])}"
            if instance["id"]:
                facts[f"subtreeScale[{key}]"] = (
                    "error" if instance["subtreeScaleError"] else instance["subtreeScale"]
                )
            if "scale" not in errors:
                scale = instance["scale"]
                facts[f"scale[{key}]"] = (
                    None
                    if scale is None
                    else [scale.get("replicas"), scale.get("minReplicas"), scale.get("maxReplicas")]
                )
            if "extractedInstances" not in errors:
                facts[f"parts[{key}]"] = sorted(instance["extractedInstanceParts"])
            if instance["podTemplateSpec"] is not None:
                facts[f"podTemplateSpec[{key}]"] = _spec_summary(instance["podTemplateSpec"])
            if instance["podSpec"] is not None:
                facts[f"podSpec[{key}]"] = _spec_summary(instance["podSpec"])
            if instance["fragmentedPodSpec"] is not None:
                facts[f"fragmentedPodSpec[{key}]"] = _fragment_summary(
                    instance["fragmentedPodSpec"]
                )
    tree = report.get("tree")
    facts["tree"] = (
        "error" if tree is None else _tree_fact(_tree_shape(tree["children"], "extractedParts"))
    )
    for pod in report["pods"]:
        keys = pod.get("replicaKeys") or {}
        facts[f"replica[{pod['name']}]"] = sorted([c, k] for c, k in keys.items()) if keys else None
        if _has_alpha_groups(case) and pod["component"] is not None:
            effective = pod["effective"]
            facts[f"member[{pod['name']}]"] = (
                "error"
                if pod["effectiveError"]
                else None
                if effective is None
                else [effective["component"], effective["podGroupName"]]
            )
            if effective is not None and not pod["effectiveError"]:
                facts[f"keys[{pod['name']}]"] = (
                    "error" if pod["groupKeysError"] else list(pod["groupKeys"] or [])
                )
        pod_key = f"pod[{pod['name']}]"
        if pod["component"] is None:
            facts[pod_key] = "unattributed"
        elif pod["instanceError"]:
            facts[pod_key] = [pod["component"], "error"]
        else:
            facts[pod_key] = [pod["component"], _instance_key(pod["instance"])]
        facts[f"group[{pod['name']}]"] = pod["podGroup"]
    for group in report["podGroups"]:
        if not group["pods"]:
            continue
        facts[f"podGroup[{group['name']}].minMember"] = group["minMember"]
        facts[f"podGroup[{group['name']}].pods"] = sorted(group["pods"])
        for sub in group["subGroups"]:
            sub_key = f"podGroup[{group['name']}]/{sub['name']}"
            facts[f"{sub_key}.minMember"] = "error" if sub["minMemberError"] else sub["minMember"]
            facts[f"{sub_key}.pods"] = sorted(sub["pods"])
    return facts


def _answer(fn: Any, *args: Any) -> Any:
    """A method's answer, or "error" when it raises (an answer to compare, not a test crash)."""
    from workload_map.errors import WlmapError
    from workload_map.jq.errors import JqError

    try:
        return fn(*args)
    except (WlmapError, JqError) as err:
        return _Failed(err)


@dataclass(frozen=True)
class _Failed:
    error: Exception


_DEFINITIONS: dict[str, tuple[Any, bool]] = {}


def _our_definition(definition_id: str, karta: Mapping[str, Any]) -> tuple[Any, bool]:
    """Our model of a definition and whether we find it valid, once per definition."""
    if definition_id not in _DEFINITIONS:
        import workload_map as wm

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            model = wm.load_karta(copy.deepcopy(dict(karta)))
            findings = wm.validate(model)
        _DEFINITIONS[definition_id] = (model, not [f for f in findings if f.severity == "error"])
    return _DEFINITIONS[definition_id]


def our_facts(case: Case) -> Facts:
    """Our engine's answers to the same questions, from the public ``Workload`` API."""
    import workload_map as wm

    model, valid = _our_definition(case.definition.id, case.definition.karta)
    facts: Facts = {"valid": valid}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        # validate=False: extraction is compared even where the two validators disagree.
        workload = _answer(lambda: wm.Workload(model, case.obj, pods=case.pods, validate=False))
    if isinstance(workload, _Failed):
        facts["workload"] = "error"
        return facts

    if _has_status_definition(case):
        status = _answer(workload.status)
        if isinstance(status, _Failed) or status is None:
            facts["phases"] = "error"
        else:
            facts["phases"] = list(status.matched)
            facts["phase"] = status.phase
            facts["conditions"] = [_condition(c.to_dict()) for c in status.conditions]

    for component in model.components():
        name = component.name
        scale = _answer(workload.subtree_scale, name)
        facts[f"subtreeScale[{name}]"] = "error" if isinstance(scale, _Failed) else scale
        ids = _answer(workload.instance_ids, name)
        if isinstance(ids, _Failed):
            facts[f"instances[{name}]"] = "error"
            continue
        facts[f"instances[{name}]"] = [_instance_key(i) for i in ids]
        parts: dict[str, Any] = {}
        for part, getter in (
            ("podTemplateSpec", workload.pod_template_specs),
            ("podSpec", workload.pod_specs),
            ("metadata", workload.pod_metadata),
            ("fragmentedPodSpec", workload.fragmented_pod_specs),
            ("scale", workload.scales),
        ):
            parts[part] = _answer(getter, name)
            if isinstance(parts[part], _Failed):
                facts[f"{part}[{name}]"] = "error"
        extracted = _answer(workload.instances, name)
        for instance_id in ids:
            key = f"{name}/{_instance_key(instance_id)}"
            if instance_id:
                sub = _answer(workload.subtree_scale, name, instance_id)
                facts[f"subtreeScale[{key}]"] = "error" if isinstance(sub, _Failed) else sub
            scales = parts["scale"]
            if not isinstance(scales, _Failed):
                one = (scales or {}).get(instance_id)
                facts[f"scale[{key}]"] = (
                    None if one is None else [one.replicas, one.min_replicas, one.max_replicas]
                )
            if not isinstance(extracted, _Failed) and instance_id in extracted:
                facts[f"parts[{key}]"] = sorted(extracted[instance_id].to_dict())
            for part in ("podTemplateSpec", "podSpec"):
                values = parts[part]
                if not isinstance(values, _Failed) and values and instance_id in values:
                    facts[f"{part}[{key}]"] = _spec_summary(values[instance_id])
            fragments = parts["fragmentedPodSpec"]
            if not isinstance(fragments, _Failed) and fragments and instance_id in fragments:
                facts[f"fragmentedPodSpec[{key}]"] = _fragment_summary(fragments[instance_id])

    tree = _answer(workload.tree) if valid else None
    if tree is None or isinstance(tree, _Failed):
        facts["tree"] = "error"
    else:
        facts["tree"] = _tree_fact(_tree_shape(tree.to_dict()["children"], "extracted"))

    placements = _answer(lambda: list(workload.placements))
    if isinstance(placements, _Failed):
        facts["placements"] = "error"
        return facts
    for placement in placements:
        facts[f"replica[{placement.pod}]"] = (
            [[placement.replica_component, placement.replica]]
            if placement.replica is not None
            else None
        )
        pod_key = f"pod[{placement.pod}]"
        if not placement.attributed:
            facts[pod_key] = "unattributed"
        else:
            facts[pod_key] = [placement.component, _instance_key(placement.instance)]
    if _has_alpha_groups(case):
        explained = _answer(workload.explain)
        for entry in [] if isinstance(explained, _Failed) else explained:
            gang = entry.get("gang")
            if entry.get("component") is None or gang is None:
                continue
            pod_name = entry["pod"]
            if gang.get("effectiveComponent") is None:
                facts[f"member[{pod_name}]"] = None
                continue
            facts[f"member[{pod_name}]"] = [gang["effectiveComponent"], gang["definition"]]
            facts[f"keys[{pod_name}]"] = [k["value"] for k in gang.get("keys") or []]
    for pod in case.pods:  # pods left out by the owner check are unattributed too
        facts.setdefault(f"pod[{pod['metadata']['name']}]", "unattributed")
    groups = _answer(workload.pod_groups)
    if isinstance(groups, _Failed):
        facts["podGroups"] = "error"
        return facts
    grouped: dict[str, str] = {}
    for group in groups:
        if not group.pods:
            continue
        facts[f"podGroup[{group.name}].minMember"] = group.min_member
        facts[f"podGroup[{group.name}].pods"] = sorted(group.pods)
        for pod in group.pods:
            grouped[pod] = group.name
        for sub in group.sub_groups:
            sub_key = f"podGroup[{group.name}]/{sub.name}"
            facts[f"{sub_key}.minMember"] = "error" if sub.error else sub.min_member
            facts[f"{sub_key}.pods"] = sorted(sub.pods)
    for pod in case.pods:
        pod_name = pod["metadata"]["name"]
        facts[f"group[{pod_name}]"] = grouped.get(pod_name)
    return facts
