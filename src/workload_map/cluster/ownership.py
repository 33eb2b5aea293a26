"""Owner chains on a live cluster: a workload's pods, and whether an object is top-level.

Kubernetes records who controls what in ``metadata.ownerReferences`` (``controller: true``).
A pod belongs to a workload when walking that chain upward reaches the workload's uid; an object
is top-level when its chain never reaches another covered workload type. Intermediate objects
(Jobs, ReplicaSets, StatefulSets) are fetched once and cached on the :class:`Cluster`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from workload_map.cluster.client import Cluster

__all__ = ["MAX_DEPTH", "controller_ref", "find_pods", "owning_workload"]

MAX_DEPTH = 6


def controller_ref(obj: dict[str, Any]) -> dict[str, Any] | None:
    """The ``controller: true`` owner reference (or the only one when none is flagged)."""
    refs = [
        r for r in (obj.get("metadata") or {}).get("ownerReferences") or [] if isinstance(r, dict)
    ]
    for ref in refs:
        if ref.get("controller"):
            return ref
    return refs[0] if len(refs) == 1 else None


def _uid(obj: dict[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("uid") or "")


def _reaches(
    cluster: Cluster, obj: dict[str, Any], root_uid: str, namespace: str | None
) -> bool | None:
    """True when the chain reaches ``root_uid``, False when it ends elsewhere, None when it
    breaks at an owner that is gone (a Job already garbage-collected)."""
    current = obj
    for _ in range(MAX_DEPTH):
        ref = controller_ref(current)
        if ref is None:
            return False
        if ref.get("uid") == root_uid:
            return True
        parent = cluster.get_cached(
            str(ref.get("apiVersion")), str(ref.get("kind")), str(ref.get("name")), namespace
        )
        if parent is None:
            return None
        current = parent
    return False


def find_pods(cluster: Cluster, workload: dict[str, Any]) -> list[dict[str, Any]]:
    """The pods whose controller chain reaches ``workload`` (a bare Pod is its own pod), and
    those whose chain breaks at a deleted owner while their operator's owner labels name
    ``workload``."""
    if workload.get("apiVersion") == "v1" and workload.get("kind") == "Pod":
        return [workload]
    root_uid = _uid(workload)
    namespace = (workload.get("metadata") or {}).get("namespace")
    pods_res = cluster.resource_for("v1", "Pod")
    if pods_res is None or not root_uid:
        return []
    from workload_map.engine.owners import label_verdict

    out = []
    for pod in cluster.iter_list(pods_res, namespace, resource_version="0"):
        reached = _reaches(cluster, pod, root_uid, namespace)
        # a broken chain: the operator's owner labels are the evidence (never against them)
        if reached or (reached is None and label_verdict(pod, workload) is True):
            out.append(pod)
    return out


def owning_workload(
    cluster: Cluster,
    obj: dict[str, Any],
    is_covered: Callable[[str, str], bool],
    on_unreadable: Callable[[dict[str, Any]], None] | None = None,
) -> dict[str, Any] | None:
    """The reference to the nearest covered owner up the controller chain; None if top-level.

    ``is_covered(apiVersion, kind)`` says whether a type is a workload type; an owner that cannot
    be read keeps ``obj`` top-level and is reported through ``on_unreadable``.
    """
    namespace = (obj.get("metadata") or {}).get("namespace")
    current = obj
    for _ in range(MAX_DEPTH):
        ref = controller_ref(current)
        if ref is None:
            return None
        api_version, kind = str(ref.get("apiVersion")), str(ref.get("kind"))
        if is_covered(api_version, kind):
            return dict(ref)
        parent = cluster.get_cached(api_version, kind, str(ref.get("name")), namespace)
        if parent is None:
            if on_unreadable is not None:
                on_unreadable(ref)
            return None
        current = parent
    return None


def pods_by_owner(
    cluster: Cluster, namespace: str | None, *, chunk_size: int = 500
) -> dict[str, list[dict[str, Any]]]:
    """Every pod of ``namespace`` (None: all) indexed under its own uid and each uid of its
    controller chain, so many workloads share one pod list (``result.get(workload_uid, [])``)."""
    pods_res = cluster.resource_for("v1", "Pod")
    if pods_res is None:
        return {}
    index: dict[str, list[dict[str, Any]]] = {}
    for pod in cluster.iter_list(pods_res, namespace, chunk_size=chunk_size):
        pod_ns = (pod.get("metadata") or {}).get("namespace")
        own = _uid(pod)
        if own:  # a bare Pod listed as a workload is its own (only) pod
            index.setdefault(own, []).append(pod)
        current = pod
        for _ in range(MAX_DEPTH):
            ref = controller_ref(current)
            if ref is None:
                break
            uid = str(ref.get("uid") or "")
            if uid:
                index.setdefault(uid, []).append(pod)
            parent = cluster.get_cached(
                str(ref.get("apiVersion")), str(ref.get("kind")), str(ref.get("name")), pod_ns
            )
            if parent is None:
                break
            current = parent
    return index
