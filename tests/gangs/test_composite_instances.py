"""A workload's gangs that must start together: one ``CompositePodGroup`` over them.

The Karta schema has no workload-level minimum over gang instances, so the workload states it:
``workload-map.run.ai/gang-min-groups: N`` makes its native gangs (the instances of one
definition, or of several) the children of one composite with ``minGroupCount: N``, where the
cluster serves composites; refused with an event where that cannot hold. End to end:
``tests/integration/test_gangs_composite_instances.py``.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from tests.gangs import custom
from workload_map.gangs import plan
from workload_map.gangs.admission import pod_decisions
from workload_map.gangs.config import (
    ANNOTATION_DECISION,
    ANNOTATION_MIN_GROUPS,
    LABEL_NAMESPACE_OPT_IN,
    GangConfig,
)
from workload_map.gangs.layout import GANG_SET_TEMPLATE
from workload_map.gangs.objects import template_names
from workload_map.gangs.plans import COMPOSITE_API
from workload_map.model import load_karta

Obj = dict[str, Any]
ON = GangConfig(composite_groups=True, native_topology=True)
UID = "0a0b0c0d-0000-4000-8000-0000000001c5"


def _partset(replicas: list[int], minimum: str | None = "2", priority: str | None = None) -> Obj:
    obj = custom.partset("parts", replicas, namespace="team")
    obj["metadata"]["uid"] = UID
    obj["metadata"]["annotations"] = {LABEL_NAMESPACE_OPT_IN: "enabled"}
    if minimum is not None:
        obj["metadata"]["annotations"][ANNOTATION_MIN_GROUPS] = minimum
    if priority:
        obj["spec"]["p0"]["template"]["spec"]["priorityClassName"] = priority
    return obj


def _instances(replicas: list[int], minimum: str = "2") -> Obj:
    """A PartSet whose one component has an instance per part (``custom.karta_instances``)."""
    obj = custom.partset_instances("parts", replicas, namespace="team")
    obj["metadata"]["uid"] = UID
    obj["metadata"]["annotations"] = {
        LABEL_NAMESPACE_OPT_IN: "enabled",
        ANNOTATION_MIN_GROUPS: minimum,
    }
    return obj


def _pods(obj: Obj) -> list[Obj]:
    pods = []
    parts = obj["spec"].get("parts") or [{"name": k, **v} for k, v in obj["spec"].items()]
    for spec in parts:
        part = spec["name"]
        for i in range(spec["replicas"]):
            pods.append(
                {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "metadata": {
                        "name": f"parts-{part}-{i}",
                        "namespace": "team",
                        "labels": {"example.wlmap.io/part": part},
                        "ownerReferences": [
                            {
                                "apiVersion": obj["apiVersion"],
                                "kind": obj["kind"],
                                "name": "parts",
                                "uid": UID,
                                "controller": True,
                            }
                        ],
                    },
                    "spec": copy.deepcopy(spec["template"]["spec"]),
                    "status": {"phase": "Pending"},
                }
            )
    return pods


def _kinds(p: Any) -> dict[str, list[Obj]]:
    out: dict[str, list[Obj]] = {}
    for o in p.objects:
        out.setdefault(o["kind"], []).append(o)
    return out


def _reasons(p: Any) -> set[str]:
    return {d.reason for d in p.decisions}


def test_instances_of_one_definition_become_children_of_one_composite() -> None:
    obj = _instances([2, 3, 2], minimum="2")
    pods = _pods(obj)
    karta = load_karta(custom.karta_instances())
    out = plan(karta, obj, pods, config=ON)
    kinds = _kinds(out)
    (workload,) = kinds["Workload"]
    (composite,) = kinds["CompositePodGroup"]
    children = kinds["PodGroup"]
    # one gang per instance (part), each of its own instance's replicas
    assert sorted(c["spec"]["schedulingPolicy"]["gang"]["minCount"] for c in children) == [2, 2, 3]
    assert composite["apiVersion"] == COMPOSITE_API
    assert composite["spec"]["schedulingPolicy"] == {"gang": {"minGroupCount": 2}}
    # the instances share their definition's template: one pod-group template under the set
    assert "podGroupTemplates" not in workload["spec"]
    (template,) = workload["spec"]["compositePodGroupTemplates"]
    assert template["name"] == GANG_SET_TEMPLATE
    assert template["schedulingPolicy"] == {"gang": {"minGroupCount": 2}}
    assert [t["name"] for t in template["podGroupTemplates"]] == ["gang"]
    assert template_names(workload) == [GANG_SET_TEMPLATE, "gang"]
    assert composite["spec"]["workloadRef"] == {
        "workloadName": workload["metadata"]["name"],
        "templateName": GANG_SET_TEMPLATE,
    }
    name = composite["metadata"]["name"]
    for child in children:
        assert child["spec"]["parentCompositePodGroupName"] == name
        assert child["spec"]["workloadRef"] == {
            "workloadName": workload["metadata"]["name"],
            "templateName": "gang",
        }
    note = json.loads(composite["metadata"]["annotations"][ANNOTATION_DECISION])
    assert note["minGroupCount"] == 2
    assert sorted(note["children"]) == sorted(c["metadata"]["name"] for c in children)
    assert ANNOTATION_MIN_GROUPS in note["rule"]
    # planned from the spec alone (the webhook's first pod) the same children and parent
    alone = plan(karta, obj, config=ON)
    assert {(g.name, g.parent) for g in alone.gangs} == {(g.name, g.parent) for g in out.gangs}
    # each pod joins its own instance's child (the webhook plans one pod at a time)
    by_pod = {p: g.name for g in out.gangs for p in g.pods}
    for d in pod_decisions(karta, obj, pods, config=ON):
        assert d["schedulingGroup"]["podGroupName"] == by_pod[d["pod"]]


def test_gangs_of_several_definitions_start_together_too() -> None:
    out = plan(load_karta(custom.karta(2)), _partset([2, 3]), config=ON)
    kinds = _kinds(out)
    (composite,) = kinds["CompositePodGroup"]
    (workload,) = kinds["Workload"]
    (template,) = workload["spec"]["compositePodGroupTemplates"]
    assert {
        t["name"]: t["schedulingPolicy"]["gang"]["minCount"] for t in template["podGroupTemplates"]
    } == {
        "gang-p0": 2,
        "gang-p1": 3,
    }
    assert {c["spec"]["parentCompositePodGroupName"] for c in kinds["PodGroup"]} == {
        composite["metadata"]["name"]
    }


def test_without_the_annotation_or_composites_served_the_gangs_are_todays() -> None:
    karta = load_karta(custom.karta(2))
    plain = _kinds(plan(karta, _partset([2, 2], minimum=None), config=ON))
    assert "CompositePodGroup" not in plain
    (workload,) = plain["Workload"]
    assert len(workload["spec"]["podGroupTemplates"]) == 2
    off = plan(karta, _partset([2, 2]), config=GangConfig())
    assert "CompositePodGroup" not in _kinds(off)
    assert "CompositeNotServed" in _reasons(off)
    assert all("parentCompositePodGroupName" not in g["spec"] for g in _kinds(off)["PodGroup"])


def test_a_minimum_that_could_never_be_met_is_refused() -> None:
    karta = load_karta(custom.karta(2))
    out = plan(karta, _partset([2, 2], minimum="3"), config=ON)
    assert "CompositePodGroup" not in _kinds(out)
    assert "TooFewGangs" in _reasons(out)
    for bad in ("1", "two", "-4"):
        out = plan(karta, _partset([2, 2], minimum=bad), config=ON)
        assert "CompositePodGroup" not in _kinds(out)
        assert "BadAnnotation" in _reasons(out)


def test_one_priority_class_per_hierarchy() -> None:
    out = plan(load_karta(custom.karta(2)), _partset([2, 2], priority="train"), config=ON)
    assert "CompositePodGroup" not in _kinds(out)
    (refused,) = [d for d in out.decisions if d.reason == "CompositeRefused"]
    assert "priority classes" in refused.message
    # the gangs still get their own groups, each with its class
    assert len(_kinds(out)["PodGroup"]) == 2


def test_an_existing_workload_without_the_set_template_keeps_the_gangs_apart() -> None:
    karta = load_karta(custom.karta(2))
    obj = _partset([2, 2])
    out = plan(karta, obj, config=ON, existing_templates=["gang-p0", "gang-p1"])
    assert "CompositePodGroup" not in _kinds(out)
    assert "CompositeRefused" in _reasons(out)
    (workload,) = _kinds(plan(karta, obj, config=ON))["Workload"]
    again = plan(karta, obj, config=ON, existing_templates=template_names(workload))
    assert len(_kinds(again)["CompositePodGroup"]) == 1


def test_a_gang_of_subgroups_is_not_nested_under_a_set() -> None:
    """Depth 3 (a set of composites) is not written: the subgroup composite stays, reported."""
    obj = _partset([2, 2])
    out = plan(load_karta(custom.karta_subgroups(2)), obj, config=ON)
    (composite,) = _kinds(out)["CompositePodGroup"]
    assert composite["spec"]["schedulingPolicy"] == {"gang": {"minGroupCount": 2}}
    assert "CompositeNested" in _reasons(out)


def test_nested_subgroups_are_reported_and_stay_one_group() -> None:
    """Subgroups whose components nest would need a deeper hierarchy than the definition
    states: one PodGroup, and the event says why."""
    doc = custom.karta_subgroups(2)
    # p1 below p0: the structure nests the second part under the first
    doc["spec"]["structureDefinition"]["childComponents"][1]["ownerRef"] = "p0"
    obj = _partset([2, 2], minimum=None)
    out = plan(load_karta(doc), obj, config=ON)
    assert "CompositePodGroup" not in _kinds(out)
    assert "SubGroupsNest" in _reasons(out)
