"""Kubernetes Events about the objects the operator reconciles (core/v1, as kubectl shows them).

Events of cluster-scoped objects (Kartas) go to the ``default`` namespace, as client-go's
recorder does. A failed event write is logged, never fatal: events are advice.
"""

from __future__ import annotations

import datetime
import logging
from typing import Any

from workload_map.kube.api import Api
from workload_map.kube.errors import ClusterError

__all__ = ["COMPONENT", "EventRecorder"]

COMPONENT = "workload-map-operator"
log = logging.getLogger("workload_map.operator.events")


class EventRecorder:
    def __init__(self, api: Api, *, instance: str = "") -> None:
        self.api = api
        self.instance = instance
        self.sent = 0

    def warning(self, obj: dict[str, Any], reason: str, action: str, message: str) -> None:
        self._emit(obj, "Warning", reason, action, message)

    def normal(self, obj: dict[str, Any], reason: str, action: str, message: str) -> None:
        self._emit(obj, "Normal", reason, action, message)

    def _emit(self, obj: dict[str, Any], kind: str, reason: str, action: str, message: str) -> None:
        meta = obj.get("metadata") or {}
        name = str(meta.get("name") or "unknown")
        namespace = str(meta.get("namespace") or "default")
        now = datetime.datetime.now(datetime.UTC)
        stamp = now.strftime("%Y-%m-%dT%H:%M:%SZ")
        micro = now.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        involved = {
            "apiVersion": obj.get("apiVersion"),
            "kind": obj.get("kind"),
            "name": name,
            "uid": meta.get("uid"),
            "resourceVersion": meta.get("resourceVersion"),
        }
        if meta.get("namespace"):
            involved["namespace"] = meta["namespace"]
        event = {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"generateName": f"{name}.", "namespace": namespace},
            "involvedObject": involved,
            "type": kind,
            "reason": reason,
            "action": action,
            "message": message[:1024],
            "source": {"component": COMPONENT},
            "reportingComponent": COMPONENT,
            "reportingInstance": self.instance or COMPONENT,
            "firstTimestamp": stamp,
            "lastTimestamp": stamp,
            "eventTime": micro,
            "count": 1,
        }
        try:
            self.api.request("POST", f"/api/v1/namespaces/{namespace}/events", event)
            self.sent += 1
        except ClusterError as exc:
            log.warning("could not record event %s on %s: %s", reason, name, exc)
