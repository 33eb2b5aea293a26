"""Task minimums (Volcano minTaskMember) and the requests of a gang's minimum (gangs/tasks.py)."""

from __future__ import annotations

import copy
from typing import Any

import workload_map as wm
from tests.gangs.cases import example, karta_of, opted, set_scheduler
from workload_map.engine import Workload
from workload_map.gangs import VOLCANO_API, plan
from workload_map.gangs.admission import pod_decisions
from workload_map.gangs.config import VOLCANO_TASK_ANNOTATION
from workload_map.gangs.tasks import plan_tasks, quantities

GROUP = "tasks.wlmap.io"


def karta(*, stated: bool = False) -> dict[str, Any]:
    """One gang over the whole workload: a plain component ``p0`` and ``multi``, whose
    instances the object names (``.spec.multi`` keys), one of them also called ``p0``."""
    annotations = {"workload-map.run.ai/gang-min-member": ".spec.min"} if stated else {}
    return {
        "apiVersion": "run.ai/v1alpha1",
        "kind": "Karta",
        "metadata": {"name": "tasksets-tasks-wlmap-io", "annotations": annotations},
        "spec": {
            "structureDefinition": {
                "rootComponent": {
                    "name": "root",
                    "kind": {"group": GROUP, "version": "v1", "kind": "TaskSet"},
                    "statusDefinition": {
                        "statusMappings": {
                            "running": [
                                {"byExpression": {"expression": "true", "expectedResult": "true"}}
                            ]
                        }
                    },
                },
                "childComponents": [
                    {
                        "name": "p0",
                        "ownerRef": "root",
                        "specDefinition": {"podTemplateSpecPath": ".spec.p0.template"},
                        "scaleDefinition": {"replicasPath": ".spec.p0.replicas"},
                        "podSelector": {
                            "componentTypeSelector": {
                                "keyPath": '.metadata.labels["tasks.wlmap.io/role"]',
                                "value": "p0",
                            }
                        },
                    },
                    {
                        "name": "multi",
                        "ownerRef": "root",
                        "instanceIdPath": ".spec.multi | keys[]",
                        "specDefinition": {"podTemplateSpecPath": ".spec.multi[].template"},
                        "scaleDefinition": {"replicasPath": ".spec.multi[].replicas"},
                        "podSelector": {
                            "componentTypeSelector": {
                                "keyPath": '.metadata.labels["tasks.wlmap.io/role"]',
                                "value": "multi",
                            },
                            "componentInstanceSelector": {
                                "idPath": '.metadata.labels["tasks.wlmap.io/instance"]'
                            },
                        },
                    },
                ],
            },
            "optimizationInstructions": {"gangScheduling": {"podGroup": {"name": "all"}}},
        },
    }


def template(role: str, requests: dict[str, str], instance: str | None = None) -> dict[str, Any]:
    labels = {
        "tasks.wlmap.io/role": role,
        **({"tasks.wlmap.io/instance": instance} if instance else {}),
    }
    return {
        "metadata": {"labels": labels},
        "spec": {
            "schedulerName": "volcano",
            "containers": [{"name": "c", "image": "x", "resources": {"requests": requests}}],
        },
    }


def taskset(minimum: int | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "p0": {"replicas": 1, "template": template("p0", {"cpu": "2", "memory": "1Gi"})},
        "multi": {
            "p0": {"replicas": 2, "template": template("multi", {"cpu": "4"}, "p0")},
            "gpu": {
                "replicas": 3,
                "template": template("multi", {"cpu": "1", "nvidia.com/gpu": "2"}, "gpu"),
            },
        },
    }
    if minimum is not None:
        spec["min"] = minimum
    return opted(
        {"apiVersion": f"{GROUP}/v1", "kind": "TaskSet", "metadata": {"name": "t"}, "spec": spec}
    )


def pods_of(obj: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for role, instance, count in (("p0", None, 1), ("multi", "p0", 2), ("multi", "gpu", 3)):
        for i in range(count):
            labels = {"tasks.wlmap.io/role": role}
            if instance:
                labels["tasks.wlmap.io/instance"] = instance
            out.append(
                {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "metadata": {
                        "name": f"t-{role}-{instance or 'x'}-{i}",
                        "namespace": "default",
                        "labels": labels,
                    },
                    "spec": {
                        "schedulerName": "volcano",
                        "containers": [{"name": "c", "image": "x"}],
                    },
                }
            )
    return out


def test_tasks_are_instances_where_the_object_names_them_and_a_taken_name_is_qualified() -> None:
    k = wm.load_karta(karta())
    obj = taskset()
    (group,) = plan(k, obj).objects
    # p0 the component and multi's instance p0 would share a name: the instance is qualified
    assert group["spec"]["minTaskMember"] == {"p0": 1, "multi-p0": 2, "gpu": 3}
    assert group["spec"]["minMember"] == 6
    # each task's minimum times its own pods' requests: 2 + 2x4 + 3x1 CPU, 3x2 GPUs, 1Gi
    assert group["spec"]["minResources"] == {
        "cpu": "13",
        "memory": str(2**30),
        "nvidia.com/gpu": "6",
    }
    tasks = {
        d["pod"]: d["annotations"].get(VOLCANO_TASK_ANNOTATION)
        for d in pod_decisions(k, obj, pods_of(obj))
    }
    assert tasks == {
        "t-p0-x-0": "p0",
        "t-multi-p0-0": "multi-p0",
        "t-multi-p0-1": "multi-p0",
        "t-multi-gpu-0": "gpu",
        "t-multi-gpu-1": "gpu",
        "t-multi-gpu-2": "gpu",
    }


def test_a_stated_minimum_drops_task_minimums_and_fills_the_first_pods() -> None:
    k = wm.load_karta(karta(stated=True))
    obj = taskset(minimum=3)
    (group,) = plan(k, obj).objects
    assert group["spec"]["minMember"] == 3
    assert "minTaskMember" not in group["spec"]
    # the first three pods in task order (the Karta's: p0, then multi's instances as
    # `keys[]` lists them, gpu before p0): p0's pod and two gpu pods
    assert group["spec"]["minResources"] == {
        "cpu": "4",
        "memory": str(2**30),
        "nvidia.com/gpu": "4",
    }
    decisions = pod_decisions(k, obj, pods_of(obj))
    assert all(VOLCANO_TASK_ANNOTATION not in d["annotations"] for d in decisions)
    assert {d["podGroup"] for d in decisions} == {group["metadata"]["name"]}


def test_lws_groups_split_their_pods_and_an_uneven_split_gives_no_tasks() -> None:
    obj, _ = example("leaderworkerset")
    obj = opted(set_scheduler(obj, "volcano"))
    k = karta_of(obj)
    wl = Workload(k, obj)
    group = wl.pod_groups()[0]
    members = {"group", "leader", "worker"}
    even = plan_tasks(wl, k, group, members, peers=2)
    assert even.tasks == {"leader": 1, "worker": 1}
    assert even.task_of == {("leader", ""): "leader", ("worker", ""): "worker"}
    uneven = plan_tasks(wl, k, group, members, peers=3)
    assert uneven.tasks == {} and "do not divide evenly" in uneven.rule
    # the members' desired requests scaled to the minimum: 2 of 4 pods of 16 CPU and 8 GPUs
    assert uneven.min_resources["cpu"] == "32" and uneven.min_resources["nvidia.com/gpu"] == "16"


def test_a_minimum_lowered_for_missed_members_lowers_their_own_tasks() -> None:
    """The controller lowers minMember for members that missed the webhook, and each missed
    pod's own task minimum with it (reconcile): never left to block the gang."""
    from workload_map.gangs.reconcile import reconcile

    obj, pods = example("pytorchjob")
    obj = opted(set_scheduler(obj, "volcano"))
    assert pods is not None
    pods = [set_scheduler(p, "volcano") if p["kind"] == "Pod" else p for p in pods]
    result = plan(karta_of(obj), obj, pods)
    (group,) = result.objects
    assert group["spec"]["minTaskMember"] == {"master": 1, "worker": 3}
    actions = reconcile(result, copy.deepcopy(pods), [])
    (created,) = [o for o in actions.create if o["apiVersion"] == VOLCANO_API]
    missed = actions.missed[group["metadata"]["name"]]
    assert created["spec"]["minMember"] == max(1, 4 - len(missed))
    (gang,) = result.gangs
    expected = dict(gang.tasks)
    for pod in missed:
        expected[gang.task_of_pod[pod]] -= 1
    expected = {task: n for task, n in expected.items() if n > 0}
    assert expected and created["spec"]["minTaskMember"] == expected
    assert sum(expected.values()) <= created["spec"]["minMember"]


def test_quantities_are_kubernetes_quantities() -> None:
    assert quantities({"cpu": 1500, "memory": 2**30, "nvidia.com/gpu": 0, "resourceClaims": 2}) == {
        "cpu": "1500m",
        "memory": str(2**30),
    }
    assert quantities({"cpu": 2000}) == {"cpu": "2"}
