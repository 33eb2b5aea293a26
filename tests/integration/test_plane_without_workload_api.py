"""The same v1.37.2 binaries with ``GenericWorkload`` off: a cluster without the feature.

The scheduling.k8s.io/v1beta1 API is not served, the API server drops ``spec.schedulingGroup``,
and the pods of a would-be gang are scheduled one by one.
"""

from __future__ import annotations

import pytest
from kubernetes.client.exceptions import ApiException

from tests.gangs.e2e import wait

from .harness import WORKLOAD_API, FakeNodes, Kube
from .test_scheduling import GPU_NODE, bound, found_unschedulable, pod


def test_workload_api_is_not_served(kube_without_generic_workload: Kube) -> None:
    kube = kube_without_generic_workload
    assert kube.local_plane().feature_gates == "GenericWorkload=false"
    with pytest.raises(ApiException) as err:
        kube.request("GET", f"/apis/{WORKLOAD_API}")
    assert err.value.status == 404
    groups = kube.request("GET", "/apis")["groups"]
    versions = {v["groupVersion"] for g in groups for v in g["versions"]}
    assert WORKLOAD_API not in versions and "scheduling.k8s.io/v1" in versions


def test_pods_of_a_would_be_gang_bind_one_by_one(
    kube_without_generic_workload: Kube, namespace: str, fake_nodes: FakeNodes
) -> None:
    kube = kube_without_generic_workload
    fake_nodes.add(3, GPU_NODE)
    names = [f"train-{i}" for i in range(4)]
    for name in names:
        created = kube.apply(pod(name, gpus=8, group="train-workers"), namespace)
        assert "schedulingGroup" not in created["spec"]  # dropped: the gate is off
    placed = wait(
        "three of the four pods to be bound",
        lambda: (lambda b: b if len(b) == 3 else None)(bound(kube, namespace, names)),
        timeout=60,
    )
    # the fourth is found unschedulable (waited for, not slept on: the scheduler looked) and
    # the three stay where they were placed one by one
    [left] = set(names) - set(placed)
    wait(
        "the fourth pod to be unschedulable",
        lambda: found_unschedulable(kube, namespace, left),
        timeout=60,
    )
    assert len(bound(kube, namespace, names)) == 3 == len(set(placed.values()))
