"""What the watch caches keep of each object: the fields some controller reads, nothing else.

One pod informer is shared by every controller (``InformerSet``: the first caller's transform
wins), so the pod trim here is the union of what they read: the engine (phase, readiness,
resource requests, node), the gang controller and its webhook (scheduler name, scheduling
group, owners, labels) and the exporter (the same plus the scheduler's Unschedulable
condition). Dropping ``managedFields``, environment variables, volumes, probes, images and the
rest cuts a pod to a few hundred bytes, which is what makes 100k cached pods fit in memory.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["trim_intermediate", "trim_pod", "trim_workload"]

_LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
_META = (
    "name",
    "generateName",
    "namespace",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "labels",
    "ownerReferences",
)
_POD_SPEC = (
    "nodeName",
    "schedulerName",
    "schedulingGroup",
    "priorityClassName",
    "overhead",
    "resources",
)
_CONTAINER = ("name", "resources", "restartPolicy")
_POD_STATUS = ("phase", "reason", "message", "conditions", "startTime", "nominatedNodeName")
_CONTAINER_STATUS = ("name", "ready", "started", "restartCount", "state", "lastState")


def _metadata(obj: Mapping[str, Any], *, annotations: bool) -> dict[str, Any]:
    meta = obj.get("metadata")
    if not isinstance(meta, Mapping):
        return {}
    out = {k: meta[k] for k in _META if k in meta}
    notes = meta.get("annotations")
    if annotations and isinstance(notes, Mapping):
        kept = {k: v for k, v in notes.items() if k != _LAST_APPLIED}
        if kept:
            out["annotations"] = kept
    return out


def _containers(items: Any) -> list[Any]:
    if not isinstance(items, list):
        return []
    return [{k: c[k] for k in _CONTAINER if k in c} if isinstance(c, Mapping) else c for c in items]


def _statuses(items: Any) -> list[Any]:
    if not isinstance(items, list):
        return []
    return [
        {k: s[k] for k in _CONTAINER_STATUS if k in s} if isinstance(s, Mapping) else s
        for s in items
    ]


def trim_pod(obj: Mapping[str, Any]) -> dict[str, Any]:
    """A pod with identity, labels, annotations, owners, scheduling fields, requests, status."""
    spec = obj.get("spec")
    status = obj.get("status")
    out: dict[str, Any] = {
        "apiVersion": obj.get("apiVersion") or "v1",
        "kind": obj.get("kind") or "Pod",
        "metadata": _metadata(obj, annotations=True),
    }
    if isinstance(spec, Mapping):
        kept = {k: spec[k] for k in _POD_SPEC if k in spec}
        for key in ("containers", "initContainers"):
            if key in spec:
                kept[key] = _containers(spec[key])
        out["spec"] = kept
    if isinstance(status, Mapping):
        kept = {k: status[k] for k in _POD_STATUS if k in status}
        for key in ("containerStatuses", "initContainerStatuses"):
            if key in status:
                kept[key] = _statuses(status[key])
        out["status"] = kept
    return out


def trim_intermediate(obj: Mapping[str, Any]) -> dict[str, Any]:
    """A link of an owner chain (ReplicaSet, Job, StatefulSet…): identity, labels, owners."""
    return {
        "apiVersion": obj.get("apiVersion"),
        "kind": obj.get("kind"),
        "metadata": _metadata(obj, annotations=False),
    }


def trim_workload(obj: Mapping[str, Any]) -> dict[str, Any]:
    """A workload: everything the engine may read (spec, status), minus server bookkeeping."""
    out = dict(obj)
    meta = obj.get("metadata")
    if isinstance(meta, Mapping):
        kept = {k: v for k, v in meta.items() if k != "managedFields"}
        notes = kept.get("annotations")
        if isinstance(notes, Mapping) and _LAST_APPLIED in notes:
            kept["annotations"] = {k: v for k, v in notes.items() if k != _LAST_APPLIED}
        out["metadata"] = kept
    return out
