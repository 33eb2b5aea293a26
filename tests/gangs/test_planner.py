"""The planner: desired scheduling objects per backend, from the catalog's fixtures."""

from __future__ import annotations

import copy
import json
import re
from typing import Any

import pytest

import workload_map as wm
from tests.catalog.operator_pods import operator_for
from tests.gangs import custom
from tests.gangs.cases import example, gang_kartas, karta_of, opted, sample_for, set_scheduler
from workload_map.engine import Workload
from workload_map.gangs import (
    COSCHEDULING_API,
    MAX_TEMPLATES,
    NATIVE_API,
    VOLCANO_API,
    GangConfig,
    plan,
)
from workload_map.gangs.config import (
    ANNOTATION_DECISION,
    ANNOTATION_GANG,
    ANNOTATION_QUEUE,
    LABEL_NAMESPACE_OPT_IN,
)

SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
VALUE = re.compile(r"^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$")

KARTAS = gang_kartas()


def check_objects(objects: list[dict[str, Any]], obj: dict[str, Any]) -> None:
    """What the API server would refuse or what the GC needs, checked on every object."""
    workloads = {o["metadata"]["name"]: o for o in objects if o["kind"] == "Workload"}
    assert len(workloads) <= 1
    for o in objects:
        meta = o["metadata"]
        assert SUBDOMAIN.match(meta["name"]) and len(meta["name"]) <= 253, meta["name"]
        assert meta["namespace"] == obj["metadata"]["namespace"]
        for value in meta["labels"].values():
            assert len(value) <= 63 and VALUE.match(value), value
        json.loads(meta["annotations"][ANNOTATION_DECISION])
        (owner,) = meta["ownerReferences"]
        assert owner["uid"] == obj["metadata"]["uid"] and owner["kind"] == obj["kind"]
        if o["kind"] == "Workload":
            templates = o["spec"]["podGroupTemplates"]
            assert 1 <= len(templates) <= MAX_TEMPLATES
            for t in templates:
                assert LABEL.match(t["name"]) and len(t["name"]) <= 63
                assert t["schedulingPolicy"]["gang"]["minCount"] >= 1
            assert o["spec"]["controllerRef"]["name"] == obj["metadata"]["name"]
        elif o["apiVersion"] == NATIVE_API:
            assert o["spec"]["schedulingPolicy"]["gang"]["minCount"] >= 2
            ref = o["spec"].get("workloadRef")
            if ref is not None:
                names = [
                    t["name"] for t in workloads[ref["workloadName"]]["spec"]["podGroupTemplates"]
                ]
                assert ref["templateName"] in names
        else:
            assert o["spec"]["minMember"] >= 2


def test_every_gang_kind_has_a_sample() -> None:
    missing = [k.name for k in KARTAS if sample_for(k) is None]
    assert missing == []
    assert len(KARTAS) >= 30


@pytest.mark.parametrize("karta", KARTAS, ids=[k.name or "?" for k in KARTAS])
def test_spec_gangs_become_objects(karta: wm.model.Karta) -> None:
    obj = sample_for(karta)
    assert obj is not None
    result = plan(karta, obj)
    if not result.handled:  # kinds whose controller makes the objects (docs/gangs.md)
        assert result.reason.startswith("left alone") and result.objects == []
        return
    check_objects(result.objects, obj)
    # every gang the engine implies from the spec with a minimum of 2 or more has its object
    expected = {
        g.name: g.min_member
        for g in Workload(karta, obj).pod_groups()
        if g.min_member >= 2 and not g.unresolved_keys and g.error is None
    }
    if any(d.reason in ("GangsReleased", "GangsRemoved") for d in result.decisions):
        expected = {}  # a suspended or finished sample
    ours = {g.group: g.min_count for g in result.gangs}
    assert ours == expected
    kinds = sorted(o["kind"] for o in result.objects)
    if any(g.backend == "native" and not g.standalone for g in result.gangs):
        assert kinds.count("Workload") == 1
    assert kinds.count("PodGroup") == len(result.gangs)


@pytest.mark.parametrize("karta", KARTAS, ids=[k.name or "?" for k in KARTAS])
def test_gangs_with_operator_pods_follow_describe(karta: wm.model.Karta) -> None:
    obj = sample_for(karta)
    assert obj is not None
    maker = operator_for(obj)
    if maker is None:
        pytest.skip(f"no operator pod model for {obj['kind']} (tests/catalog/operator_pods.py)")
    pods = maker[0](obj)
    result = plan(karta, obj, pods)
    check_objects(result.objects, obj)
    if not result.handled or any(
        d.reason in ("GangsReleased", "GangsRemoved") for d in result.decisions
    ):
        assert result.objects == []
        return
    view = Workload(karta, obj, pods=pods).describe()
    expected = {g["name"]: g["minMember"] for g in view["podGroups"] if g["minMember"] >= 2}
    assert {g.group: g.min_count for g in result.gangs if g.pods} == expected
    for gang in result.gangs:
        if gang.pods:
            described = next(g for g in view["podGroups"] if g["name"] == gang.group)
            assert list(gang.pods) == sorted(described["pods"])


def _by_kind(result: Any) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for o in result.objects:
        out.setdefault(f"{o['apiVersion']}/{o['kind']}", []).append(o)
    return out


def test_native_jobset_objects() -> None:
    obj, pods = example("jobset")
    obj = opted(obj)
    result = plan(karta_of(obj), obj, pods)
    objects = _by_kind(result)
    (workload,) = objects[f"{NATIVE_API}/Workload"]
    (group,) = objects[f"{NATIVE_API}/PodGroup"]
    assert workload["metadata"]["name"] == "jobset-llm-pretrain"
    assert workload["spec"]["controllerRef"] == {
        "apiGroup": "jobset.x-k8s.io",
        "kind": "JobSet",
        "name": "llm-pretrain",
    }
    assert workload["spec"]["podGroupTemplates"] == [
        {
            "name": "jobset",
            "schedulingPolicy": {"gang": {"minCount": 5}},
            "disruptionMode": {"all": {}},
        }
    ]
    uid = obj["metadata"]["uid"]
    assert group["metadata"]["name"] == f"pg-{uid}-jobset"
    assert group["spec"] == {
        "workloadRef": {"workloadName": "jobset-llm-pretrain", "templateName": "jobset"},
        "schedulingPolicy": {"gang": {"minCount": 5}},
        "disruptionMode": {"all": {}},
    }
    decision = json.loads(group["metadata"]["annotations"][ANNOTATION_DECISION])
    assert decision["backend"] == "native" and decision["minCount"] == 5
    assert decision["rule"]


def test_lws_one_podgroup_per_group_with_pods() -> None:
    obj, pods = example("leaderworkerset")
    obj = opted(obj)
    result = plan(karta_of(obj), obj, pods)
    groups = [o for o in result.objects if o["kind"] == "PodGroup"]
    uid = obj["metadata"]["uid"]
    assert sorted(g["metadata"]["name"] for g in groups) == [
        f"pg-{uid}-vllm-70b-0",
        f"pg-{uid}-vllm-70b-1",
    ]
    assert {g["spec"]["schedulingPolicy"]["gang"]["minCount"] for g in groups} == {2}
    # without pods the LWS name label is only known from pods: no objects yet
    assert plan(karta_of(obj), obj).gangs == []


def test_backend_follows_the_scheduler_name() -> None:
    obj, _ = example("pytorchjob")
    karta = karta_of(obj)
    seen = {}
    for scheduler in (
        "default-scheduler",
        "scheduler-plugins-scheduler",
        "volcano",
        "kai-scheduler",
    ):
        result = plan(karta, opted(set_scheduler(obj, scheduler)))
        seen[scheduler] = sorted({o["apiVersion"] for o in result.objects})
    assert seen == {
        "default-scheduler": [NATIVE_API],
        "scheduler-plugins-scheduler": [COSCHEDULING_API],
        "volcano": [VOLCANO_API],
        "kai-scheduler": [],
    }
    # configured names
    config = GangConfig(volcano_schedulers=frozenset({"my-volcano"}))
    result = plan(karta, opted(set_scheduler(obj, "my-volcano")), config=config)
    assert [o["apiVersion"] for o in result.objects] == [VOLCANO_API]
    unknown = plan(karta, opted(set_scheduler(obj, "someone-else")))
    assert unknown.objects == [] and [d.reason for d in unknown.decisions] == ["UnknownScheduler"]


def test_mixed_schedulers_in_one_gang_get_nothing() -> None:
    obj, _ = example("pytorchjob")
    obj = opted(obj)
    specs = obj["spec"]["pytorchReplicaSpecs"]
    specs["Master"]["template"]["spec"]["schedulerName"] = "volcano"
    result = plan(karta_of(obj), obj)
    assert result.objects == []
    (decision,) = result.decisions
    assert decision.reason == "MixedSchedulers" and decision.warning


def test_coscheduling_min_resources_are_the_engine_totals() -> None:
    obj, _ = example("pytorchjob")
    obj = opted(set_scheduler(obj, "scheduler-plugins-scheduler"))
    karta = karta_of(obj)
    (group,) = plan(karta, obj).objects
    totals = Workload(karta, obj).describe()["resources"]
    assert group["spec"]["minMember"] == 4
    assert group["spec"]["scheduleTimeoutSeconds"] == 60
    resources = group["spec"]["minResources"]
    assert resources["nvidia.com/gpu"] == str(totals["gpus"])
    millis = totals["cpuMillis"]
    assert resources["cpu"] == (str(millis // 1000) if millis % 1000 == 0 else f"{millis}m")
    assert resources["memory"] == str(totals["memoryBytes"])


def test_elastic_minimum_scales_min_resources() -> None:
    obj = custom.partset("elastic", [4])
    karta = wm.load_karta(custom.karta(1))
    obj["spec"]["p0"]["template"]["spec"]["schedulerName"] = "scheduler-plugins-scheduler"
    obj["spec"]["p0"]["template"]["spec"]["containers"][0]["resources"] = {
        "requests": {"cpu": "500m", "nvidia.com/gpu": "2"}
    }
    (group,) = plan(karta, opted(obj)).objects
    assert group["spec"]["minResources"] == {"cpu": "2", "nvidia.com/gpu": "8"}


def test_volcano_podgroup_with_tasks_queue_and_priority() -> None:
    obj, _ = example("raycluster")
    obj = opted(set_scheduler(obj, "volcano"))
    obj["metadata"]["annotations"][ANNOTATION_QUEUE] = "research"
    obj["spec"]["headGroupSpec"]["template"]["spec"]["priorityClassName"] = "high"
    (group,) = plan(karta_of(obj), obj).objects
    spec = group["spec"]
    assert group["apiVersion"] == VOLCANO_API
    assert spec["queue"] == "research" and spec["priorityClassName"] == "high"
    # one task per Ray worker group (KubeRay's volcano.sh/task-spec), minReplicas else replicas
    assert spec["minTaskMember"] == {"head": 1, "gpu-workers": 2, "cpu-workers": 2}
    assert sum(spec["minTaskMember"].values()) == spec["minMember"]


def test_suspend_releases_and_resume_restores() -> None:
    obj, _ = example("jobset")
    obj = opted(obj)
    karta = karta_of(obj)
    suspended = Workload(karta, obj).suspend()
    suspended.pop("status", None)
    result = plan(karta, suspended)
    assert result.objects == [] and [d.reason for d in result.decisions] == ["GangsReleased"]
    resumed = Workload(karta, suspended).resume()
    assert len(plan(karta, resumed).objects) == 2


def test_completion_and_zero_replicas_remove_objects() -> None:
    karta = wm.load_karta(custom.karta(1))
    done = opted(custom.partset("done", [3]))
    done["status"] = {"phase": "Done"}
    result = plan(karta, done)
    assert result.objects == [] and result.decisions[0].reason == "GangsRemoved"
    zero = plan(karta, opted(custom.partset("zero", [0])))
    assert zero.objects == [] and zero.gangs == []
    assert all(o["spec"].get("minMember", 1) for o in zero.objects)


def test_a_group_of_one_gets_no_object() -> None:
    karta = wm.load_karta(custom.karta(2))
    result = plan(karta, opted(custom.partset("one", [1, 3])))
    assert [g.min_count for g in result.gangs] == [3]
    assert [d.reason for d in result.decisions] == ["GroupOfOne"]


def test_more_than_eight_templates_fall_back_to_standalone_podgroups() -> None:
    karta = wm.load_karta(custom.karta(MAX_TEMPLATES + 1))
    result = plan(karta, opted(custom.partset("many", [2] * (MAX_TEMPLATES + 1))))
    assert [o["kind"] for o in result.objects] == ["PodGroup"] * (MAX_TEMPLATES + 1)
    assert all("workloadRef" not in o["spec"] for o in result.objects)
    (decision,) = result.decisions
    assert decision.reason == "TooManyPodGroupTemplates" and decision.warning
    at_limit = plan(
        wm.load_karta(custom.karta(MAX_TEMPLATES)),
        opted(custom.partset("eight", [2] * MAX_TEMPLATES)),
    )
    assert [o["kind"] for o in at_limit.objects].count("Workload") == 1


def test_templates_of_an_existing_workload_cannot_grow() -> None:
    karta = wm.load_karta(custom.karta(2))
    result = plan(karta, opted(custom.partset("grown", [2, 2])), existing_templates=["gang-p0"])
    by_template = {
        o["metadata"]["name"].rsplit("-", 1)[1]: o["spec"].get("workloadRef")
        for o in result.objects
        if o["kind"] == "PodGroup"
    }
    assert by_template["p0"] == {"workloadName": "partset-grown", "templateName": "gang-p0"}
    assert by_template["p1"] is None
    assert [d.reason for d in result.decisions] == ["TemplatesImmutable"]


def test_opt_in_and_opt_out() -> None:
    obj, _ = example("jobset")
    karta = karta_of(obj)
    plain = copy.deepcopy(obj)
    assert not plan(karta, plain).handled
    assert plan(karta, plain).objects == []
    assert plan(karta, plain, namespace_labels={LABEL_NAMESPACE_OPT_IN: "enabled"}).objects
    assert plan(karta, plain, config=GangConfig(default_enabled=True)).objects
    out = copy.deepcopy(obj)
    out["metadata"].setdefault("annotations", {})[ANNOTATION_GANG] = "disabled"
    result = plan(karta, out, namespace_labels={LABEL_NAMESPACE_OPT_IN: "enabled"})
    assert not result.handled and "disabled" in result.reason
    assert plan(karta, out, config=GangConfig(default_enabled=True)).objects == []
    system = opted(obj)
    system["metadata"]["namespace"] = "kube-system"
    assert plan(karta, system).objects == []


def test_names_are_lower_cased_and_hashed_when_too_long() -> None:
    karta = wm.load_karta(custom.karta(1))
    obj = opted(custom.partset("n" * 250, [2]))
    obj["metadata"]["uid"] = "UID-With-Capitals"
    result = plan(karta, obj)
    for o in result.objects:
        name = o["metadata"]["name"]
        assert len(name) <= 253 and SUBDOMAIN.match(name)
        assert len(o["metadata"]["labels"]["workload-map.run.ai/workload"]) <= 63
    (gang,) = result.gangs
    assert gang.name != gang.group and gang.name.startswith("pg-uid-with-capitals-")
