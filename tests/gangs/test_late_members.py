"""Gangs whose other pods are created after admission: a LeaderWorkerSet under
``startupPolicy: LeaderReady`` creates its workers once the leader is Ready, so each group can
only wait for its leader. Natively and with coscheduling that is a group of one (no object: the
leader must schedule alone); with Volcano the group gets ``minMember: 1`` and the whole group's
``minResources``, as LWS's own Volcano provider writes it, so the leader is admitted only when
its workers will fit. ``LeaderCreated`` (the default) keeps one gang of ``size`` per group.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from tests.catalog.operator_pods import early_pods, operator_for
from tests.gangs.cases import karta_of, opted, set_scheduler
from workload_map.gangs import NATIVE_API, VOLCANO_API, plan
from workload_map.gangs.admission import pod_decisions
from workload_map.gangs.config import VOLCANO_GROUP_ANNOTATION, VOLCANO_TASK_ANNOTATION

NATIVE, COSCHEDULING, VOLCANO = "default-scheduler", "scheduler-plugins-scheduler", "volcano"


def _lws(policy: str | None, scheduler: str, size: int = 3) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "replicas": 2,
        "leaderWorkerTemplate": {
            "size": size,
            "leaderTemplate": {
                "spec": {"containers": [{"name": "l", "resources": {"requests": {"cpu": "2"}}}]}
            },
            "workerTemplate": {
                "spec": {
                    "containers": [
                        {"name": "w", "resources": {"requests": {"cpu": "8", "memory": "1Gi"}}}
                    ]
                }
            },
        },
    }
    if policy is not None:
        spec["startupPolicy"] = policy
    obj = {
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "metadata": {"name": "serve", "namespace": "ml"},
        "spec": spec,
    }
    return set_scheduler(opted(obj), scheduler)


def _all_pods(obj: dict[str, Any]) -> list[dict[str, Any]]:
    maker = operator_for(obj)
    assert maker is not None
    return [set_scheduler(p, obj_scheduler(obj)) for p in maker[0](obj)]


def obj_scheduler(obj: dict[str, Any]) -> str:
    name: str = obj["spec"]["leaderWorkerTemplate"]["workerTemplate"]["spec"]["schedulerName"]
    return name


def _early(obj: dict[str, Any]) -> list[dict[str, Any]]:
    return [set_scheduler(p, obj_scheduler(obj)) for p in early_pods(obj)]


@pytest.mark.parametrize("scheduler", [NATIVE, COSCHEDULING])
@pytest.mark.parametrize("pods", ["none", "leaders", "all"])
def test_leader_ready_groups_get_no_object_natively_or_with_coscheduling(
    scheduler: str, pods: str
) -> None:
    obj = _lws("LeaderReady", scheduler)
    known = {"none": None, "leaders": _early(obj), "all": _all_pods(obj)}[pods]
    result = plan(karta_of(obj), obj, known)
    assert result.handled
    assert result.objects == [] and result.gangs == []
    if known is not None:  # the groups are named once pods carry the LWS name label
        reasons = [d for d in result.decisions if d.reason == "GroupOfOne"]
        assert len(reasons) == 2, result.decisions
        assert all("minimum 1" in d.message for d in reasons)


@pytest.mark.parametrize("scheduler", [NATIVE, COSCHEDULING, VOLCANO])
def test_leader_created_groups_are_unchanged(scheduler: str) -> None:
    for policy in ("LeaderCreated", None):
        obj = _lws(policy, scheduler)
        result = plan(karta_of(obj), obj, _early(obj))
        assert [g.min_count for g in result.gangs] == [3, 3]
        groups = [o for o in result.objects if o["kind"] == "PodGroup"]
        assert len(groups) == 2
        if scheduler == NATIVE:
            (workload,) = [o for o in result.objects if o["kind"] == "Workload"]
            assert workload["apiVersion"] == NATIVE_API
            assert {g["spec"]["schedulingPolicy"]["gang"]["minCount"] for g in groups} == {3}
        else:
            assert {g["spec"]["minMember"] for g in groups} == {3}
        if scheduler == VOLCANO:
            assert {tuple(sorted(g["spec"]["minTaskMember"].items())) for g in groups} == {
                (("leader", 1), ("worker", 2))
            }


@pytest.mark.parametrize("pods", ["leaders", "all"])
def test_leader_ready_volcano_groups_reserve_the_workers(pods: str) -> None:
    obj = _lws("LeaderReady", VOLCANO)
    known = _early(obj) if pods == "leaders" else _all_pods(obj)
    result = plan(karta_of(obj), obj, known)
    groups = sorted(
        (o for o in result.objects if o["apiVersion"] == VOLCANO_API),
        key=lambda o: str(o["metadata"]["name"]),
    )
    assert [g["metadata"]["name"].rsplit("-", 1)[1] for g in groups] == ["0", "1"]
    for group in groups:
        spec = group["spec"]
        assert spec["minMember"] == 1
        # the leader (2 CPU) and its 2 workers (8 CPU, 1Gi each): what LWS's provider reserves
        assert spec["minResources"] == {"cpu": "18", "memory": str(2 * 2**30)}
        assert "minTaskMember" not in spec  # a split of a minimum of 1 over 2 tasks is unknown
    # the webhook joins the leader now and the workers when they come to the same group
    decisions = pod_decisions(karta_of(obj), obj, _all_pods(obj))
    for d in decisions:
        group_index = d["pod"].split("-")[1]
        assert d["podGroup"] == groups[int(group_index)]["metadata"]["name"], d
        assert d["annotations"][VOLCANO_GROUP_ANNOTATION] == d["podGroup"]
        assert VOLCANO_TASK_ANNOTATION not in d["annotations"]


def test_a_leader_ready_group_of_size_one_stays_a_group_of_one_with_volcano() -> None:
    obj = _lws("LeaderReady", VOLCANO, size=1)
    result = plan(karta_of(obj), obj, _early(obj))
    assert result.objects == []
    assert [d.reason for d in result.decisions].count("GroupOfOne") == 2


def test_leader_ready_early_pods_are_the_leaders() -> None:
    obj = _lws("LeaderReady", NATIVE)
    names = sorted(p["metadata"]["name"] for p in _early(obj))
    assert names == ["serve-0", "serve-1"]
    created = copy.deepcopy(obj)
    created["spec"]["startupPolicy"] = "LeaderCreated"
    assert len(_early(created)) == 6
