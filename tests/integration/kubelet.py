"""A stand-in for the kubelet's part in pod deletion, for fake nodes.

A pod bound to a node is deleted gracefully: the API server sets ``deletionTimestamp`` and keeps
the pod until the node's kubelet has stopped its containers and deletes it with a grace period
of 0. Fake nodes run no kubelet, so a preempted or deleted pod would stay terminating forever,
holding its node's resources in the scheduler's eyes. :class:`FakeKubelet` finishes those
deletions for pods on nodes this harness made (``FAKE_NODE_LABEL``), as a kubelet does once its
containers are gone, with the pod's uid as a precondition so a recreated pod of the same name is
never touched. It polls (every ``interval`` seconds) rather than watching: a test's handful of
pods needs no watch, and a poll cannot silently miss an event.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from .nodes import FAKE_NODE_LABEL

if TYPE_CHECKING:
    from .kube import Cluster

__all__ = ["FakeKubelet"]


class FakeKubelet:
    """Completes the deletion of terminating pods bound to fake nodes, in a daemon thread."""

    def __init__(self, cluster: Cluster, *, interval: float = 0.2) -> None:
        self.cluster = cluster
        self.interval = interval
        #: (namespace, name, uid) of every pod whose deletion it completed, in order
        self.finished: list[tuple[str, str, str]] = []
        self.errors: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="fake-kubelet", daemon=True)

    def start(self) -> FakeKubelet:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=10)

    def _fake_nodes(self) -> set[str]:
        nodes = self.cluster.request(
            "GET", "/api/v1/nodes", query={"labelSelector": FAKE_NODE_LABEL}
        )
        return {str(n["metadata"]["name"]) for n in (nodes or {}).get("items") or []}

    def step(self) -> int:
        """One pass: finish every terminating pod on a fake node; returns how many."""
        nodes = self._fake_nodes()
        pods = self.cluster.request(
            "GET", "/api/v1/pods", query={"fieldSelector": "spec.nodeName!="}
        )
        done = 0
        for pod in (pods or {}).get("items") or []:
            meta: dict[str, Any] = pod["metadata"]
            if not meta.get("deletionTimestamp") or pod["spec"].get("nodeName") not in nodes:
                continue
            ns, name, uid = str(meta["namespace"]), str(meta["name"]), str(meta["uid"])
            body = {
                "apiVersion": "v1",
                "kind": "DeleteOptions",
                "gracePeriodSeconds": 0,
                "preconditions": {"uid": uid},
            }
            try:
                self.cluster.request("DELETE", f"/api/v1/namespaces/{ns}/pods/{name}", body)
            except Exception as err:  # gone already, or another uid: nothing to finish
                if getattr(err, "status", None) not in (404, 409):
                    self.errors.append(f"{ns}/{name}: {err}")
                continue
            self.finished.append((ns, name, uid))
            done += 1
        return done

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                self.step()
            except Exception as err:  # the API server restarting: try again next pass
                self.errors.append(str(err))
