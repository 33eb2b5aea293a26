"""Fake nodes for the integration tests: Node objects with capacity and a Ready condition, the
way k8s.io/kubernetes' scheduler_perf makes them; with node lifecycle off nothing marks them
NotReady, and no kubelet runs, so their pods stay Pending or merely bound."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from hack.localkube.nodes import DEFAULT_NODE_CAPACITY, FAKE_NODE_LABEL
from hack.localkube.plane import HarnessError

if TYPE_CHECKING:
    from .kube import Cluster

__all__ = ["DEFAULT_NODE_CAPACITY", "FAKE_NODE_LABEL", "FakeNodes", "random_suffix"]


class FakeNodes:
    """Fake nodes a test adds and removes; ``remove_all()`` (the fixture's teardown) deletes
    every node this object made. Names are ``<prefix><n>``, unique per instance."""

    def __init__(self, cluster: Cluster, prefix: str | None = None) -> None:
        self.cluster = cluster
        self.prefix = prefix or f"wlmap-node-{random_suffix()}-"
        self.names: list[str] = []
        self._counter = 0

    def add(
        self,
        count: int = 1,
        capacity: Mapping[str, str] | None = None,
        *,
        allocatable: Mapping[str, str] | None = None,
        labels: Mapping[str, str] | None = None,
        taints: list[Mapping[str, Any]] | None = None,
    ) -> list[str]:
        """Create ``count`` Ready nodes with ``capacity`` (default DEFAULT_NODE_CAPACITY)."""
        if count < 1:
            raise HarnessError(f"FakeNodes.add: count must be >= 1, got {count}")
        made = []
        for _ in range(count):
            name = f"{self.prefix}{self._counter}"
            self._counter += 1
            self.cluster.create_node(
                name, capacity, allocatable=allocatable, labels=labels, taints=taints
            )
            self.names.append(name)
            made.append(name)
        return made

    def remove(self, *names: str) -> None:
        for name in names:
            self.cluster.delete_node(name)
            if name in self.names:
                self.names.remove(name)

    def remove_all(self) -> None:
        self.remove(*list(self.names))


def random_suffix() -> str:
    return uuid.uuid4().hex[:8]
