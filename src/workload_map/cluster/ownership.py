"""Owner chains on a live cluster: a workload's pods, and whether an object is top-level.

The rule is the engine's (:func:`workload_map.engine.owners.walk_chain`, docs/engine.md *The
owner rule*): a pod belongs to a workload when its controller chain reaches the workload, or
when the chain broke at an owner that cannot be read and the operator's owner labels name it;
an object is top-level when no covered workload type is up its chain. Here the owners are read
through the :class:`Cluster`, each fetched once and cached there.
"""

from __future__ import annotations

from collections.abc import Callable, Container
from typing import Any

from workload_map.engine.owners import STOPPED, OwnerChain, OwnerRef, claims, walk_chain
from workload_map.kube.client import Cluster

__all__ = [
    "Chain",
    "PodIndex",
    "claims",
    "find_pods",
    "owner_chain",
    "owning_workload",
    "pods_by_owner",
]

#: an object's controller chain (the engine's :class:`~workload_map.engine.owners.OwnerChain`)
Chain = OwnerChain


def _uid(obj: dict[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("uid") or "")


def _namespace(obj: dict[str, Any]) -> str | None:
    ns = (obj.get("metadata") or {}).get("namespace")
    return ns if isinstance(ns, str) else None


def _fetch(cluster: Cluster, namespace: str | None) -> Callable[[OwnerRef], dict[str, Any] | None]:
    """Owners through the cluster's cache of fetched objects (each read once)."""

    def fetch(ref: OwnerRef) -> dict[str, Any] | None:
        return cluster.get_cached(ref.api_version, ref.kind, ref.name, namespace)

    return fetch


def owner_chain(
    cluster: Cluster,
    obj: dict[str, Any],
    namespace: str | None = None,
    *,
    stop: Container[str] = (),
) -> Chain:
    """``obj``'s controller chain through the cluster's cached owners, ending early at a uid in
    ``stop`` (nothing above it is read)."""
    namespace = namespace if namespace is not None else _namespace(obj)
    if not stop:
        return walk_chain(obj, _fetch(cluster, namespace))
    return walk_chain(
        obj, _fetch(cluster, namespace), until=lambda ref: ref.uid is not None and ref.uid in stop
    )


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

    ``is_covered(apiVersion, kind)`` says whether a type is a workload type. A covered owner
    counts without being read (one we may not list, or one gone whose dependents are about to
    be collected); an owner that cannot be read before any covered one keeps ``obj``
    top-level and is reported through ``on_unreadable``.
    """
    chain = walk_chain(
        obj,
        _fetch(cluster, _namespace(obj)),
        until=lambda ref: is_covered(ref.api_version, ref.kind),
    )
    if not chain.refs:
        return None
    last = chain.refs[-1]
    if chain.end == STOPPED:
        return _ref_dict(last)
    if chain.broken and on_unreadable is not None:
        on_unreadable(_ref_dict(last))
    return None


def _ref_dict(ref: OwnerRef) -> dict[str, Any]:
    """The ``ownerReferences`` entry naming ``ref`` (the chain follows controllers only)."""
    out: dict[str, Any] = {"apiVersion": ref.api_version, "kind": ref.kind, "name": ref.name}
    if ref.uid is not None:
        out["uid"] = ref.uid
    out["controller"] = True
    return out


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
