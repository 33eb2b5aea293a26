"""Members that missed the webhook take their requests out of the gang's ``minResources``.

A PodGroup that still demands a missed pod's requests can never be satisfied by the members
that can join, so reconcile lowers ``minResources`` with ``minMember``: by each missed pod's
request as the planner counted it (its template's), never below zero, a resource left at zero
removed (as the planner writes none for an absent one).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable, Mapping
from typing import Any

import workload_map as wm
from tests.gangs import custom
from tests.gangs.cases import karta_of, opted
from tests.gangs.owners import new_pod
from tests.gangs.test_tasks import karta as task_karta
from tests.gangs.test_tasks import pods_of as task_pods
from tests.gangs.test_tasks import taskset
from workload_map.gangs import COSCHEDULING_API, NATIVE_API, VOLCANO_API, plan
from workload_map.gangs.admission import pod_decisions
from workload_map.gangs.config import ANNOTATION_DECISION
from workload_map.gangs.plans import Plan
from workload_map.gangs.reconcile import Actions, reconcile
from workload_map.gangs.tasks import totals_of

GiB = 2**30
SCHEDULERS = {
    NATIVE_API: "default-scheduler",
    COSCHEDULING_API: "scheduler-plugins-scheduler",
    VOLCANO_API: "volcano",
}
REQUESTS = {"cpu": "1500m", "memory": "3Gi", "nvidia.com/gpu": "2"}


def parts(backend: str, replicas: int, requests: dict[str, str]) -> dict[str, Any]:
    """A one-part PartSet whose pods name ``backend``'s scheduler and request ``requests``."""
    obj = opted(custom.partset("r", [replicas]))
    spec = obj["spec"]["p0"]["template"]["spec"]
    spec["schedulerName"] = SCHEDULERS[backend]
    spec["containers"][0]["resources"] = {"requests": dict(requests)}
    return obj


def part_pods(obj: dict[str, Any], count: int) -> list[dict[str, Any]]:
    template = obj["spec"]["p0"]["template"]
    out = []
    for i in range(count):
        pod = new_pod(obj, name=f"r-p0-{i}", labels={"example.wlmap.io/part": "p0"})
        pod["spec"] = copy.deepcopy(template["spec"])
        pod["metadata"]["uid"] = pod["metadata"]["name"]
        pod["status"] = {"phase": "Pending"}
        out.append(pod)
    return out


def join(karta: wm.model.Karta, obj: dict[str, Any], pods: Iterable[dict[str, Any]]) -> None:
    """Give ``pods`` what the webhook sets at creation (reference, labels, annotations)."""
    pods = list(pods)
    shown: list[Mapping[str, Any]] = list(pods)
    for pod, decision in zip(pods, pod_decisions(karta, obj, shown), strict=True):
        assert decision["pod"] == pod["metadata"]["name"] and decision["podGroup"], decision
        pod["metadata"].setdefault("labels", {}).update(decision["labels"])
        pod["metadata"].setdefault("annotations", {}).update(decision["annotations"])
        if decision["schedulingGroup"]:
            pod["spec"]["schedulingGroup"] = decision["schedulingGroup"]


def the_group(actions: Actions, api: str) -> dict[str, Any]:
    (group,) = [o for o in actions.create if o["apiVersion"] == api and o["kind"] == "PodGroup"]
    return group


def note(obj: dict[str, Any]) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(obj["metadata"]["annotations"][ANNOTATION_DECISION])
    return loaded


def warning(actions: Actions) -> str:
    (found,) = [d for d in actions.decisions if d.reason == "MissedWebhook"]
    assert found.warning
    return found.message


def created(obj: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(obj)
    out["metadata"]["resourceVersion"] = "1"
    return out


def test_planner_counts_each_pod_with_its_template_request() -> None:
    """The amount a missed pod takes out is the one the planner summed: the gang keeps each
    (component, instance)'s per-pod request, the source of minResources."""
    karta = wm.load_karta(custom.karta(1))
    obj = parts(COSCHEDULING_API, 3, REQUESTS)
    (gang,) = plan(karta, obj, part_pods(obj, 3)).gangs
    per_pod = {"cpu": 1500, "memory": 3 * GiB, "nvidia.com/gpu": 2}
    assert gang.pod_requests == {("p0", ""): per_pod}
    assert totals_of(gang.min_resources) == {k: 3 * v for k, v in per_pod.items()}


def test_coscheduling_minresources_lose_the_missed_pods_requests() -> None:
    karta = wm.load_karta(custom.karta(1))
    obj = parts(COSCHEDULING_API, 4, REQUESTS)
    pods = part_pods(obj, 4)
    join(karta, obj, pods[:3])
    planned = plan(karta, obj, pods)
    assert planned.objects[0]["spec"]["minResources"] == {
        "cpu": "6",
        "memory": str(12 * GiB),
        "nvidia.com/gpu": "8",
    }
    actions = reconcile(planned, pods, [])
    group = the_group(actions, COSCHEDULING_API)
    assert group["spec"]["minMember"] == 3
    # three pods' worth: 3 x 1500m, 3 x 3Gi, 3 x 2 GPUs
    left = {"cpu": "4500m", "memory": str(9 * GiB), "nvidia.com/gpu": "6"}
    assert group["spec"]["minResources"] == left
    taken = {"cpu": "1500m", "memory": str(3 * GiB), "nvidia.com/gpu": "2"}
    recorded = note(group)
    assert recorded["minResources"] == left and recorded["minResourcesLoweredBy"] == taken
    assert recorded["plannedMinResources"] == planned.objects[0]["spec"]["minResources"]
    message = warning(actions)
    assert "minimum lowered from 4 to 3" in message
    assert f"minResources lowered by {json.dumps(taken, sort_keys=True)}" in message
    # the object in the cluster now says so: the next resync writes nothing
    again = reconcile(plan(karta, obj, pods), pods, [created(group)])
    assert again.writes == 0


def test_volcano_minresources_follow_a_patch_and_drop_a_resource_at_zero() -> None:
    """An existing Volcano PodGroup is patched; a resource only the missed pods requested
    leaves minResources (no ``"0"`` entry), and with nothing left minResources goes."""
    karta = wm.load_karta(custom.karta(1))
    obj = parts(VOLCANO_API, 3, REQUESTS)
    pods = part_pods(obj, 3)
    join(karta, obj, pods)
    existing = [created(the_group(reconcile(plan(karta, obj, pods), pods, []), VOLCANO_API))]
    assert existing[0]["spec"]["minResources"]["nvidia.com/gpu"] == "6"
    # the third pod missed the webhook: recreated without its annotation
    pods[2]["metadata"]["annotations"] = {}
    actions = reconcile(plan(karta, obj, pods), pods, existing)
    ((_, patch),) = actions.patch
    assert patch["spec"]["minMember"] == 2
    assert patch["spec"]["minResources"] == {
        "cpu": "3",
        "memory": str(6 * GiB),
        "nvidia.com/gpu": "4",
    }
    # every member missed: minMember stays 1, and minResources has nothing left to demand
    for pod in pods:
        pod["metadata"]["annotations"] = {}
    actions = reconcile(plan(karta, obj, pods), pods, existing)
    ((_, patch),) = actions.patch
    assert patch["spec"]["minMember"] == 1
    assert patch["spec"]["minResources"] is None  # the merge patch removes the field
    assert note({"metadata": patch["metadata"]})["minResources"] == {}


def test_a_multi_task_gang_loses_the_requests_of_both_tasks_missed_pods() -> None:
    """Pods of two tasks missed: each takes its own template's request (a gpu pod 1 CPU and 2
    GPUs, a multi-p0 pod 4 CPU), beside its own task's minimum."""
    karta = wm.load_karta(task_karta())
    obj = taskset()
    pods = task_pods(obj)
    missed = {"t-multi-gpu-2", "t-multi-p0-1"}
    join(karta, obj, [p for p in pods if p["metadata"]["name"] not in missed])
    planned = plan(karta, obj, pods)
    assert planned.objects[0]["spec"]["minResources"] == {
        "cpu": "13",
        "memory": str(GiB),
        "nvidia.com/gpu": "6",
    }
    actions = reconcile(planned, pods, [])
    group = the_group(actions, VOLCANO_API)
    assert group["spec"]["minMember"] == 4
    assert group["spec"]["minTaskMember"] == {"p0": 1, "multi-p0": 1, "gpu": 2}
    assert group["spec"]["minResources"] == {"cpu": "8", "memory": str(GiB), "nvidia.com/gpu": "4"}
    assert note(group)["minResourcesLoweredBy"] == {"cpu": "5", "nvidia.com/gpu": "2"}
    message = warning(actions)
    assert 'task minimums {"gpu": 2, "multi-p0": 1, "p0": 1}' in message
    assert 'minResources lowered by {"cpu": "5", "nvidia.com/gpu": "2"}' in message


def test_gpus_and_cpu_memory_each_drop_out_at_zero() -> None:
    """All three GPU pods and the only memory-requesting pod missed: GPUs and memory leave
    minResources; the CPU of the two multi-p0 pods stays."""
    karta = wm.load_karta(task_karta())
    obj = taskset()
    pods = task_pods(obj)
    join(karta, obj, [p for p in pods if p["metadata"]["name"].startswith("t-multi-p0-")])
    actions = reconcile(plan(karta, obj, pods), pods, [])
    group = the_group(actions, VOLCANO_API)
    assert group["spec"]["minMember"] == 2
    assert group["spec"]["minTaskMember"] == {"multi-p0": 2}
    assert group["spec"]["minResources"] == {"cpu": "8"}
    assert note(group)["minResourcesLoweredBy"] == {
        "cpu": "5",
        "memory": str(GiB),
        "nvidia.com/gpu": "6",
    }


def test_missed_pods_outside_the_task_map_still_take_their_requests() -> None:
    """A missed pod without a task (minTaskMember dropped) is still counted by its template;
    one whose template the planner never read by the engine's request of its own spec."""
    karta = wm.load_karta(task_karta())
    obj = taskset()
    pods = task_pods(obj)
    join(karta, obj, pods[2:])
    result: Plan = plan(karta, obj, pods)
    (gang,) = result.gangs
    # t-p0-x-0 (2 CPU, 1Gi) has no task; t-multi-p0-0 (4 CPU) has no known template, and its
    # own spec asks for 3 CPU and one GPU
    gang.task_of_pod.pop("t-p0-x-0")
    gang.pod_requests.pop(("multi", "p0"))
    pods[1]["spec"]["containers"][0]["resources"] = {
        "requests": {"cpu": "3", "nvidia.com/gpu": "1"}
    }
    actions = reconcile(result, pods, [])
    group = the_group(actions, VOLCANO_API)
    assert group["spec"]["minMember"] == 4
    assert "minTaskMember" not in group["spec"]
    assert group["spec"]["minResources"] == {"cpu": "8", "nvidia.com/gpu": "5"}
    assert note(group)["minResourcesLoweredBy"] == {
        "cpu": "5",
        "memory": str(GiB),
        "nvidia.com/gpu": "1",
    }


def test_never_below_zero_under_a_stated_minimum() -> None:
    """A stated minimum of 3 fills minResources with the first pods in task order (p0's and
    two gpu pods: 4 CPU); two multi-p0 pods (8 CPU) missing take CPU to zero, not below."""
    karta = wm.load_karta(task_karta(stated=True))
    obj = taskset(minimum=3)
    pods = task_pods(obj)
    join(karta, obj, [p for p in pods if not p["metadata"]["name"].startswith("t-multi-p0-")])
    actions = reconcile(plan(karta, obj, pods), pods, [])
    group = the_group(actions, VOLCANO_API)
    assert group["spec"]["minMember"] == 1
    assert group["spec"]["minResources"] == {"memory": str(GiB), "nvidia.com/gpu": "4"}
    assert note(group)["minResourcesLoweredBy"] == {"cpu": "4"}
    assert all(v > 0 for v in totals_of(group["spec"]["minResources"]).values())


def test_native_podgroups_carry_no_resource_minimum() -> None:
    """The v1.37 PodGroup has no resource minimum (only DRA resourceClaims): the minimum is
    lowered, no resource field appears, and the event says nothing of resources."""
    karta = wm.load_karta(custom.karta(1))
    obj = parts(NATIVE_API, 3, REQUESTS)
    pods = part_pods(obj, 3)
    join(karta, obj, pods[:2])
    actions = reconcile(plan(karta, obj, pods), pods, [])
    group = the_group(actions, NATIVE_API)
    assert group["spec"] == {
        "schedulingPolicy": {"gang": {"minCount": 2}},
        "workloadRef": group["spec"]["workloadRef"],
        "disruptionMode": {"all": {}},
    }
    assert "minResources" not in note(group)
    assert "minResources" not in warning(actions)


def test_a_missed_pod_requesting_none_of_the_resources_leaves_them_and_says_so() -> None:
    karta = wm.load_karta(task_karta())
    obj = taskset()
    pods = task_pods(obj)
    join(karta, obj, pods[1:])
    result = plan(karta, obj, pods)
    (gang,) = result.gangs
    gang.pod_requests[("p0", "")] = {}  # as for a template that requests nothing
    actions = reconcile(result, pods, [])
    group = the_group(actions, VOLCANO_API)
    assert group["spec"]["minMember"] == 5
    assert group["spec"]["minResources"] == result.objects[0]["spec"]["minResources"]
    assert "minResources unchanged" in warning(actions)


def test_a_group_of_one_reserving_for_later_pods_drops_a_missed_workers_requests() -> None:
    """A LeaderWorkerSet under LeaderReady on Volcano: each group is minMember 1 with the
    whole group's minResources (leader 2 CPU, two workers 8 CPU and 1Gi each). A worker that
    missed the webhook will never be in the group: its request leaves the reservation while
    the minimum stays 1; the other group is untouched."""
    from tests.gangs.test_late_members import VOLCANO, _all_pods, _lws

    obj = _lws("LeaderReady", VOLCANO)
    karta = karta_of(obj)
    pods = _all_pods(obj)
    missed = next(p for p in pods if p["metadata"]["name"].startswith("serve-0-"))
    join(karta, obj, [p for p in pods if p is not missed])
    planned = plan(karta, obj, pods)
    full = {"cpu": "18", "memory": str(2 * GiB)}
    assert {o["metadata"]["name"]: o["spec"]["minResources"] for o in planned.objects} == {
        g.name: full for g in planned.gangs
    }
    actions = reconcile(planned, pods, [])
    by_name = {o["metadata"]["name"]: o for o in actions.create}
    ((gang, names),) = actions.missed.items()
    assert names == [missed["metadata"]["name"]]
    assert by_name[gang]["spec"]["minMember"] == 1
    assert by_name[gang]["spec"]["minResources"] == {"cpu": "10", "memory": str(GiB)}
    (other,) = [o for name, o in by_name.items() if name != gang]
    assert other["spec"]["minResources"] == full
    message = warning(actions)
    assert "minimum stays 1" in message
    assert f'minResources lowered by {{"cpu": "8", "memory": "{GiB}"}}' in message
