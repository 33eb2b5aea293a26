"""Which pods a workload gets from the inventory as its owners come, go and change role."""

from __future__ import annotations

from typing import Any

from workload_map.cluster.inventory import Inventory


def _job() -> dict[str, Any]:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "train", "namespace": "ml", "uid": "job-1"},
        "spec": {"parallelism": 2, "template": {"spec": {"containers": [{"name": "c"}]}}},
    }


def _pod(name: str) -> dict[str, Any]:
    owner = {"apiVersion": "batch/v1", "kind": "Job", "name": "train", "uid": "job-1"}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": "ml",
            "uid": f"pod-{name}",
            "ownerReferences": [{**owner, "controller": True}],
        },
        "spec": {"nodeName": "n1", "containers": [{"name": "c"}]},
        "status": {"phase": "Running"},
    }


def _pods_of(inventory: Inventory) -> list[str]:
    (entry,) = inventory.entries()
    return sorted(p["metadata"]["name"] for p in entry.pods)


def test_pods_linked_through_an_object_get_it_as_their_workload_when_it_becomes_one() -> None:
    inventory = Inventory()
    inventory.apply_intermediate("ADDED", _job())  # first seen as a link of a chain
    for name in ("a", "b"):
        inventory.apply_pod("ADDED", _pod(name))
    assert inventory.entries() == []
    inventory.apply_workload("ADDED", _job())
    assert _pods_of(inventory) == ["a", "b"]
    assert inventory.pod_workload("pod-a") == "job-1"


def test_pods_come_and_go_with_their_workload() -> None:
    inventory = Inventory()
    inventory.apply_pod("ADDED", _pod("a"))  # before its owner: waits for it
    inventory.apply_workload("ADDED", _job())
    inventory.apply_pod("ADDED", _pod("b"))
    assert _pods_of(inventory) == ["a", "b"]
    inventory.apply_pod("DELETED", _pod("a"))
    assert _pods_of(inventory) == ["b"]
    inventory.apply_workload("DELETED", _job())
    assert inventory.entries() == [] and inventory.pod_workload("pod-b") is None
    inventory.apply_workload("ADDED", _job())
    assert _pods_of(inventory) == ["b"]
