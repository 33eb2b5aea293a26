"""The Node object of a fake node: capacity, ``Ready=True`` and no kubelet behind it, the way
k8s.io/kubernetes' scheduler_perf makes them. With node lifecycle off (the local plane runs no
node-lifecycle controller) nothing marks it NotReady, so a scheduler binds pods to it and they
stay bound, never started."""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any

__all__ = ["DEFAULT_NODE_CAPACITY", "FAKE_NODE_LABEL", "fake_node"]

# What a fake node offers unless told otherwise (scheduler_perf's default node, plus GPUs).
DEFAULT_NODE_CAPACITY = {"cpu": "8", "memory": "32Gi", "pods": "110", "nvidia.com/gpu": "8"}
FAKE_NODE_LABEL = "wlmap-test.example.com/fake-node"


def fake_node(
    name: str,
    capacity: Mapping[str, str] | None = None,
    *,
    allocatable: Mapping[str, str] | None = None,
    labels: Mapping[str, str] | None = None,
    taints: list[Mapping[str, Any]] | None = None,
) -> dict[str, Any]:
    """The Node to create: ``status.capacity`` (default ``DEFAULT_NODE_CAPACITY``; extended
    resources such as ``nvidia.com/gpu`` included), ``allocatable`` (defaults to the
    capacity), ``Ready=True``, phase Running, labelled ``FAKE_NODE_LABEL``."""
    cap = dict(DEFAULT_NODE_CAPACITY if capacity is None else capacity)
    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    status = {
        "capacity": cap,
        "allocatable": dict(cap if allocatable is None else allocatable),
        "phase": "Running",
        "conditions": [
            {
                "type": "Ready",
                "status": "True",
                "reason": "KubeletReady",
                "message": "fake node of the wlmap test harness (no kubelet)",
                "lastHeartbeatTime": now,
                "lastTransitionTime": now,
            }
        ],
    }
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": {
                "kubernetes.io/hostname": name,
                "kubernetes.io/os": "linux",
                "kubernetes.io/arch": "amd64",
                FAKE_NODE_LABEL: "true",
                **(labels or {}),
            },
        },
        "spec": {"taints": [dict(t) for t in taints]} if taints else {},
        "status": status,
    }
