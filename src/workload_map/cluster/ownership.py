"""Owner chains on a live cluster: a workload's pods, and whether an object is top-level.

Kubernetes records who controls what in ``metadata.ownerReferences`` (``controller: true``).
A pod belongs to a workload when walking that chain upward reaches the workload's uid; an object
is top-level when its chain never reaches another covered workload type. Intermediate objects
(Jobs, ReplicaSets, StatefulSets) are fetched once and cached on the :class:`Cluster`.
"""

from __future__ import annotations

from collections.abc import Callable, Container
from typing import Any

import msgspec

from workload_map.kube.client import Cluster

__all__ = [
    "MAX_DEPTH",
    "Chain",
    "PodIndex",
    "claims",
    "controller_ref",
    "find_pods",
    "owner_chain",
    "owning_workload",
    "pods_by_owner",
]

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


def _namespace(obj: dict[str, Any]) -> str | None:
    ns = (obj.get("metadata") or {}).get("namespace")
    return ns if isinstance(ns, str) else None


class Chain(msgspec.Struct, frozen=True):
    """The uids up an object's controller chain (nearest first), and whether the walk broke at
    an owner that is gone (a Job already garbage-collected) rather than at a top-level owner."""

    uids: tuple[str, ...]
    broken: bool


def owner_chain(
    cluster: Cluster,
    obj: dict[str, Any],
    namespace: str | None = None,
    *,
    stop: Container[str] = (),
) -> Chain:
    """Walk ``obj``'s controller chain through the cluster's cached owners, up to
    :data:`MAX_DEPTH` links, ending early at a uid in ``stop`` (nothing above it is read)."""
    namespace = namespace if namespace is not None else _namespace(obj)
    uids: list[str] = []
    current = obj
    for _ in range(MAX_DEPTH):
        ref = controller_ref(current)
        if ref is None:
            return Chain(tuple(uids), broken=False)
        uid = str(ref.get("uid") or "")
        if uid:
            uids.append(uid)
            if uid in stop:
                return Chain(tuple(uids), broken=False)
        parent = cluster.get_cached(
            str(ref.get("apiVersion")), str(ref.get("kind")), str(ref.get("name")), namespace
        )
        if parent is None:
            return Chain(tuple(uids), broken=True)
        current = parent
    return Chain(tuple(uids), broken=False)


def claims(workload: dict[str, Any], pod: dict[str, Any], chain: Chain) -> bool:
    """Whether ``pod``, whose controller chain is ``chain``, belongs to ``workload``: the chain
    reaches it, or the chain broke at a deleted owner and the operator's owner labels name it
    (the labels are the only evidence left, and never count against the chain)."""
    uid = _uid(workload)
    if uid and (uid == _uid(pod) or uid in chain.uids):
        return True
    if not chain.broken:
        return False
    from workload_map.engine.owners import label_verdict

    return label_verdict(pod, workload) is True


def find_pods(cluster: Cluster, workload: dict[str, Any]) -> list[dict[str, Any]]:
    """The pods whose controller chain reaches ``workload`` (a bare Pod is its own pod), and
    those whose chain breaks at a deleted owner while their operator's owner labels name
    ``workload`` (:func:`claims`)."""
    if workload.get("apiVersion") == "v1" and workload.get("kind") == "Pod":
        return [workload]
    root_uid = _uid(workload)
    namespace = _namespace(workload)
    pods_res = cluster.resource_for("v1", "Pod")
    if pods_res is None or not root_uid:
        return []
    return [
        pod
        for pod in cluster.iter_list(pods_res, namespace, resource_version="0")
        if claims(workload, pod, owner_chain(cluster, pod, namespace, stop=(root_uid,)))
    ]


class PodIndex:
    """One pod list shared by many workloads: each pod under its own uid and every uid of its
    controller chain, plus the pods whose chain broke, which :meth:`pods_of` gives to the
    workload their owner labels name (as :func:`find_pods` does for one workload)."""

    def __init__(self) -> None:
        self._pods: list[dict[str, Any]] = []
        self._chains: list[Chain] = []
        self._by_uid: dict[str, list[int]] = {}
        self._broken: dict[str | None, list[int]] = {}

    def add(self, pod: dict[str, Any], chain: Chain) -> None:
        at = len(self._pods)
        self._pods.append(pod)
        self._chains.append(chain)
        own = _uid(pod)
        # a bare Pod listed as a workload is its own (only) pod
        for uid in dict.fromkeys((own, *chain.uids) if own else chain.uids):
            self._by_uid.setdefault(uid, []).append(at)
        if chain.broken:
            self._broken.setdefault(_namespace(pod), []).append(at)

    def pods_of(self, workload: dict[str, Any]) -> list[dict[str, Any]]:
        """The pods that belong to ``workload``, in list order."""
        found = set(self._by_uid.get(_uid(workload), ()) if _uid(workload) else ())
        for at in self._broken.get(_namespace(workload), ()):
            if at not in found and claims(workload, self._pods[at], self._chains[at]):
                found.add(at)
        return [self._pods[at] for at in sorted(found)]

    def __len__(self) -> int:
        return len(self._pods)


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


def pods_by_owner(cluster: Cluster, namespace: str | None, *, chunk_size: int = 500) -> PodIndex:
    """Every pod of ``namespace`` (None: all) indexed by its controller chain, so many
    workloads share one pod list (``index.pods_of(workload)``)."""
    index = PodIndex()
    pods_res = cluster.resource_for("v1", "Pod")
    if pods_res is None:
        return index
    for pod in cluster.iter_list(pods_res, namespace, chunk_size=chunk_size):
        index.add(pod, owner_chain(cluster, pod))
    return index
