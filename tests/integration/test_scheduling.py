"""The harness schedules: the real kube-scheduler binds pods to fake nodes, gangs included.

These pin what gang enforcement builds on: a pod is bound by the scheduler to a node that exists
only as an API object; a Workload/PodGroup gang (scheduling.k8s.io/v1beta1) with room for one
pod fewer binds nothing, and binds completely once a node is added; the controller-manager's
PodGroup protection, garbage collector and namespace controller do their jobs.
"""

from __future__ import annotations

from typing import Any

import pytest
from kubernetes.client.exceptions import ApiException

from tests.gangs.e2e import wait

from .harness import WORKLOAD_API, FakeNodes, Kube

GPU = "nvidia.com/gpu"
GPU_NODE = {"cpu": "16", "memory": "64Gi", "pods": "110", GPU: "8"}


def pod(name: str, gpus: int = 0, group: str | None = None, cpu: str = "1") -> dict[str, Any]:
    requests = {"cpu": cpu, **({GPU: str(gpus)} if gpus else {})}
    spec: dict[str, Any] = {
        "terminationGracePeriodSeconds": 0,
        "containers": [
            {
                "name": "main",
                "image": "registry.invalid/never-pulled",
                "resources": {"requests": requests, "limits": {GPU: str(gpus)} if gpus else {}},
            }
        ],
    }
    if group:
        spec["schedulingGroup"] = {"podGroupName": group}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}


def gang(kube: Kube, namespace: str, name: str, size: int) -> None:
    """A Workload with one gang template of ``size`` and the PodGroup made from it."""
    kube.apply(
        {
            "apiVersion": WORKLOAD_API,
            "kind": "Workload",
            "metadata": {"name": name},
            "spec": {
                "podGroupTemplates": [
                    {"name": "workers", "schedulingPolicy": {"gang": {"minCount": size}}}
                ]
            },
        },
        namespace,
    )
    kube.apply(
        {
            "apiVersion": WORKLOAD_API,
            "kind": "PodGroup",
            "metadata": {"name": f"{name}-workers"},
            "spec": {
                "workloadRef": {"workloadName": name, "templateName": "workers"},
                "schedulingPolicy": {"gang": {"minCount": size}},
            },
        },
        namespace,
    )


def bound(kube: Kube, namespace: str, names: list[str]) -> dict[str, str]:
    """Pod name -> node name for the pods the scheduler has bound."""
    out = {}
    for name in names:
        node = kube.get("v1", "Pod", name, namespace)["spec"].get("nodeName")
        if node:
            out[name] = node
    return out


def test_a_pod_is_bound_to_a_fake_node_by_the_real_scheduler(
    scheduler: Kube, namespace: str, fake_nodes: FakeNodes
) -> None:
    [node] = fake_nodes.add(1, GPU_NODE)
    stored = scheduler.get("v1", "Node", node)
    assert stored["status"]["allocatable"][GPU] == "8"
    assert not stored["spec"].get("taints")  # no not-ready taint: nothing would remove it
    scheduler.apply(pod("solo", gpus=2), namespace)
    placed = wait("the pod to be bound", lambda: bound(scheduler, namespace, ["solo"]), timeout=60)
    assert placed == {"solo": node}
    read = scheduler.get("v1", "Pod", "solo", namespace)
    scheduled = {c["type"]: c["status"] for c in read["status"].get("conditions", [])}
    assert scheduled.get("PodScheduled") == "True"
    assert read["status"]["phase"] == "Pending"  # bound, but no kubelet runs it


def test_a_pod_too_big_for_every_node_stays_unbound(
    scheduler: Kube, namespace: str, fake_nodes: FakeNodes
) -> None:
    fake_nodes.add(1, GPU_NODE)
    scheduler.apply(pod("greedy", gpus=9), namespace)

    def unschedulable() -> bool:
        conditions = scheduler.get("v1", "Pod", "greedy", namespace)["status"].get("conditions")
        return any(
            c["type"] == "PodScheduled" and c.get("reason") == "Unschedulable"
            for c in conditions or []
        )

    wait("the scheduler to report the pod unschedulable", unschedulable, timeout=60)
    assert bound(scheduler, namespace, ["greedy"]) == {}


def found_unschedulable(kube: Kube, namespace: str, name: str) -> bool:
    conditions = (kube.get("v1", "Pod", name, namespace).get("status") or {}).get("conditions")
    return any(
        c["type"] == "PodScheduled"
        and c["status"] == "False"
        and c.get("reason") == "Unschedulable"
        for c in conditions or []
    )


def test_a_gang_with_room_for_one_pod_fewer_waits_then_binds_whole(
    scheduler: Kube, namespace: str, fake_nodes: FakeNodes
) -> None:
    size = 4
    fake_nodes.add(size - 1, GPU_NODE)
    gang(scheduler, namespace, "train", size)
    names = [f"train-{i}" for i in range(size)]
    for name in names:
        created = scheduler.apply(pod(name, gpus=8, group="train-workers"), namespace)
        # The API server keeps the field only with GenericWorkload on.
        assert created["spec"]["schedulingGroup"] == {"podGroupName": "train-workers"}
    # the scheduler's verdict on the whole gang, waited for (not a sleep: on a loaded machine a
    # sleep may end before the scheduler looked, and the check below would pass unexamined)
    wait(
        "the scheduler to find the gang unschedulable",
        lambda: all(found_unschedulable(scheduler, namespace, name) for name in names),
        timeout=60,
    )
    assert bound(scheduler, namespace, names) == {}  # none placed alone

    fake_nodes.add(1, GPU_NODE)
    placed = wait(
        "the whole gang to be bound",
        lambda: (lambda b: b if len(b) == size else None)(bound(scheduler, namespace, names)),
        timeout=60,
    )
    assert sorted(placed.values()) == sorted(fake_nodes.names)  # one 8-GPU pod per node


def test_podgroup_protection_finalizer_is_removed_by_the_controller(
    kube: Kube, namespace: str
) -> None:
    gang(kube, namespace, "guarded", 2)
    group = kube.get(WORKLOAD_API, "PodGroup", "guarded-workers", namespace)
    assert group["metadata"].get("finalizers"), "the PodGroupProtection admission plugin is on"
    kube.delete(WORKLOAD_API, "PodGroup", "guarded-workers", namespace)

    def gone() -> bool:
        try:
            kube.get(WORKLOAD_API, "PodGroup", "guarded-workers", namespace)
        except ApiException as err:
            return err.status == 404
        return False

    wait("podgroup-protection-controller to release the PodGroup", gone, timeout=30)


def test_garbage_collector_and_namespace_controller_run(kube: Kube) -> None:
    if kube.plane is None:
        pytest.skip("checks the local controller-manager")
    ns = kube.create_namespace()
    owner = kube.apply(
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "owner"}}, namespace=ns
    )
    ref = {"apiVersion": "v1", "kind": "ConfigMap", "name": "owner"}
    kube.apply(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {
                "name": "dependent",
                "ownerReferences": [{**ref, "uid": owner["metadata"]["uid"]}],
            },
        },
        namespace=ns,
    )
    kube.delete("v1", "ConfigMap", "owner", ns)

    def missing(path: str) -> bool:
        try:
            kube.request("GET", path)
        except ApiException as err:
            return err.status == 404
        return False

    wait(
        "the garbage collector to delete the dependent",
        lambda: missing(f"/api/v1/namespaces/{ns}/configmaps/dependent"),
        timeout=30,
    )
    kube.delete_namespace(ns)
    wait(
        "the namespace controller to finish",
        lambda: missing(f"/api/v1/namespaces/{ns}"),
        timeout=30,
    )
