"""Composite groups: a gang whose subgroups make up its minimum becomes a ``CompositePodGroup``
(v1alpha3) with one child PodGroup per subgroup, where the cluster serves them.

v1.37.2 facts (k8s.io/api scheduling/v1beta1 and v1alpha3): a Workload sets exactly one of
``podGroupTemplates`` and ``compositePodGroupTemplates``; children set
``parentCompositePodGroupName`` and ``workloadRef``; at most 8 templates a level, depth 4; one
``priorityClassName`` per hierarchy. End to end: ``tests/integration/test_gangs_topology_composite.py``.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from tests.gangs import custom
from workload_map.gangs import plan
from workload_map.gangs.admission import pod_decisions
from workload_map.gangs.config import ANNOTATION_DECISION, LABEL_NAMESPACE_OPT_IN, GangConfig
from workload_map.gangs.objects import template_names
from workload_map.gangs.plans import COMPOSITE_API, NATIVE_API
from workload_map.gangs.probe import probe_composite
from workload_map.gangs.reconcile import object_path, reconcile
from workload_map.gangs.runtime import SCHEDULING_KINDS, GangRuntime
from workload_map.kube.errors import ApiError, NotFound
from workload_map.model import load_karta

Obj = dict[str, Any]
ON = GangConfig(composite_groups=True, native_topology=True)
UID = "0a0b0c0d-0000-4000-8000-00000000c0de"
RACK = "example.com/rack"


def _partset(replicas: list[int], *, priority: str | None = None) -> Obj:
    obj = custom.partset("parts", replicas, namespace="team")
    obj["metadata"]["uid"] = UID
    obj["metadata"]["annotations"] = {LABEL_NAMESPACE_OPT_IN: "enabled"}
    if priority:
        for i in range(len(replicas)):
            obj["spec"][f"p{i}"]["template"]["spec"]["priorityClassName"] = priority
    return obj


def _karta(parts: int = 2, topology: Obj | None = None) -> Any:
    doc = custom.karta_subgroups(parts)
    if topology is not None:
        for sub in doc["spec"]["optimizationInstructions"]["gangScheduling"]["podGroup"][
            "subGroups"
        ]:
            sub["topology"] = topology
    return load_karta(doc)


def _pods(obj: Obj) -> list[Obj]:
    pods = []
    for part, spec in sorted(obj["spec"].items()):
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


def test_a_gang_of_subgroups_becomes_a_composite_with_a_child_per_subgroup() -> None:
    obj = _partset([2, 3], priority="train")
    out = plan(_karta(), obj, config=GangConfig(composite_groups=True))
    kinds = _kinds(out)
    (workload,) = kinds["Workload"]
    (composite,) = kinds["CompositePodGroup"]
    children = kinds["PodGroup"]
    # a Workload sets exactly one of the two template lists
    assert "podGroupTemplates" not in workload["spec"]
    (template,) = workload["spec"]["compositePodGroupTemplates"]
    assert template["schedulingPolicy"] == {"gang": {"minGroupCount": 2}}
    assert sorted(
        t["schedulingPolicy"]["gang"]["minCount"] for t in template["podGroupTemplates"]
    ) == [2, 3]
    assert template_names(workload) == [
        template["name"],
        *(t["name"] for t in template["podGroupTemplates"]),
    ]
    assert composite["apiVersion"] == COMPOSITE_API
    assert composite["spec"]["schedulingPolicy"] == {"gang": {"minGroupCount": 2}}
    assert composite["spec"]["workloadRef"] == {
        "workloadName": workload["metadata"]["name"],
        "templateName": template["name"],
    }
    assert object_path(composite).endswith(
        f"/namespaces/team/compositepodgroups/{composite['metadata']['name']}"
    )
    name = composite["metadata"]["name"]
    assert {c["apiVersion"] for c in children} == {NATIVE_API}
    assert sorted(c["spec"]["schedulingPolicy"]["gang"]["minCount"] for c in children) == [2, 3]
    for child in children:
        assert child["spec"]["parentCompositePodGroupName"] == name
        assert child["spec"]["workloadRef"]["workloadName"] == workload["metadata"]["name"]
        # one priority class per hierarchy, disruption as a whole
        assert child["spec"]["priorityClassName"] == "train"
        assert child["spec"]["disruptionMode"] == {"all": {}}
    assert composite["spec"]["priorityClassName"] == "train"
    note = json.loads(composite["metadata"]["annotations"][ANNOTATION_DECISION])
    assert note["minGroupCount"] == 2 and len(note["children"]) == 2


def test_each_pod_joins_its_subgroups_child() -> None:
    obj = _partset([2, 2])
    pods = _pods(obj)
    out = plan(_karta(), obj, pods, config=ON)
    children = {c["metadata"]["name"]: c for c in _kinds(out)["PodGroup"]}
    by_pod = {g.name: set(g.pods) for g in out.gangs}
    assert set(by_pod) == set(children)
    joined = {d["pod"]: d["schedulingGroup"] for d in pod_decisions(_karta(), obj, pods, config=ON)}
    for pod in pods:
        group = joined[pod["metadata"]["name"]]["podGroupName"]
        assert group in children and pod["metadata"]["name"] in by_pod[group]
        pod["spec"]["schedulingGroup"] = joined[pod["metadata"]["name"]]
    actions = reconcile(out, pods, [])
    assert "MissedWebhook" not in {d.reason for d in actions.decisions}


def test_subgroup_topology_goes_to_the_children() -> None:
    obj = _partset([2, 2])
    out = plan(
        _karta(topology={"topologyName": "t", "requiredTopologyLevel": RACK}), obj, config=ON
    )
    for child in _kinds(out)["PodGroup"]:
        assert child["spec"]["schedulingConstraints"] == {"topology": [{"key": RACK}]}
    assert "SubGroupTopologyIgnored" not in {d.reason for d in out.decisions}
    # without composites served: one group, and the subgroups' placement is reported
    out = plan(
        _karta(topology={"topologyName": "t", "requiredTopologyLevel": RACK}),
        obj,
        config=GangConfig(native_topology=True),
    )
    assert "SubGroupTopologyIgnored" in {d.reason for d in out.decisions}


def test_without_composites_served_the_objects_are_todays() -> None:
    obj = _partset([2, 3])
    out = plan(_karta(), obj, config=GangConfig())
    kinds = _kinds(out)
    assert "CompositePodGroup" not in kinds
    (group,) = kinds["PodGroup"]
    assert group["spec"]["schedulingPolicy"] == {"gang": {"minCount": 5}}
    (workload,) = kinds["Workload"]
    assert "compositePodGroupTemplates" not in workload["spec"]


def test_a_stated_minimum_or_a_single_subgroup_stays_one_group() -> None:
    out = plan(_karta(1), _partset([3]), config=ON)
    assert "CompositePodGroup" not in _kinds(out)
    obj = _partset([2, 3])
    obj["metadata"]["annotations"]["kai.scheduler/batch-min-member"] = "4"
    out = plan(_karta(), obj, config=ON)
    if out.gangs and out.gangs[0].min_count == 4:  # the Karta honours a stated minimum
        assert "CompositePodGroup" not in _kinds(out)


def test_an_existing_workload_without_the_templates_keeps_one_group() -> None:
    obj = _partset([2, 2])
    out = plan(_karta(), obj, config=ON, existing_templates=["parts"])
    assert "CompositePodGroup" not in _kinds(out)
    assert "TemplatesImmutable" in {d.reason for d in out.decisions}
    full = plan(_karta(), obj, config=ON)
    (workload,) = _kinds(full)["Workload"]
    again = plan(_karta(), obj, config=ON, existing_templates=template_names(workload))
    assert len(_kinds(again)["CompositePodGroup"]) == 1


def test_a_composite_is_never_patched_and_goes_with_the_workload() -> None:
    obj = _partset([2, 2])
    out = plan(_karta(), obj, config=ON)
    (composite,) = _kinds(out)["CompositePodGroup"]
    held = copy.deepcopy(composite)
    held["spec"]["schedulingPolicy"] = {"gang": {"minGroupCount": 1}}
    actions = reconcile(out, [], [held])
    assert all(t["kind"] != "CompositePodGroup" or "spec" not in p for t, p in actions.patch)
    gone = plan(_karta(), {**obj, "spec": {**obj["spec"], "suspend": True}}, config=ON)
    assert [o["kind"] for o in reconcile(gone, [], [held]).delete] == ["CompositePodGroup"]


class _Api:
    def __init__(self, answer: Obj | Exception, resources: list[str] | None = None) -> None:
        self.answer = answer
        self.resources = resources

    def get(self, path: str) -> Obj:
        if self.resources is None:
            raise NotFound(404, path)
        return {"resources": [{"name": r} for r in self.resources]}

    def request(self, method: str, path: str, body: Obj, query: Any = None) -> Obj:
        assert query == [("dryRun", "All")] and path.endswith("/workloads")
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer


def test_the_composite_probe() -> None:
    served = ["compositepodgroups"]
    kept = {"spec": {"compositePodGroupTemplates": [{"name": "probe"}]}}
    assert probe_composite(_Api(kept, served), "ops")[0] == "works"
    assert probe_composite(_Api(kept, None), "ops")[0] == "absent"
    assert probe_composite(_Api(kept, ["workloads"]), "ops")[0] == "absent"
    assert probe_composite(_Api(ApiError(422, "refused"), served), "ops")[0] == "dropped"
    assert probe_composite(_Api(ApiError(500, "boom"), served), "ops")[0] == "error"
    assert (COMPOSITE_API, "CompositePodGroup") in SCHEDULING_KINDS
    runtime = GangRuntime(GangConfig(), miss_wait=0.0)
    runtime.set_composite("works", "kept")
    assert runtime.config.composite_groups and runtime.admitter.config.composite_groups


def test_a_component_outside_every_subgroup_keeps_one_group_for_every_pod() -> None:
    """Decided from the spec: the webhook (one pod) and the controller (all) agree."""
    doc = custom.karta_subgroups(3)
    group = doc["spec"]["optimizationInstructions"]["gangScheduling"]["podGroup"]
    group["subGroups"] = group["subGroups"][:2]  # p2 in no subgroup
    karta = load_karta(doc)
    obj = _partset([2, 2, 1])
    pods = _pods(obj)
    assert "CompositePodGroup" not in _kinds(plan(karta, obj, pods, config=ON))
    for pod in pods:
        assert "CompositePodGroup" not in _kinds(plan(karta, obj, [pod], config=ON))
