"""A definition's references read from a live cluster: one read per reference, cached.

The engine asks for each reference of each workload (:class:`ReferenceRequest`); this resolver
answers through the cluster client of the run (discovery for the kind's resource and scope, a
GET by name, or a LIST by label selector) and remembers every answer, misses and refusals too,
so a command reading many workloads of one runtime reads the runtime once.
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Any

from workload_map.engine.references import ReferenceRequest, ReferenceUnavailable, Resolver
from workload_map.kube.client import Cluster
from workload_map.kube.discovery import APIResource
from workload_map.kube.errors import ApiError, Forbidden, NotFound
from workload_map.model.references import MAX_LIST_ITEMS

if TYPE_CHECKING:
    from weakref import WeakKeyDictionary

__all__ = ["cluster_resolver", "run_resolver"]


def _resource(cluster: Cluster, request: ReferenceRequest) -> APIResource:
    kind = request.kind
    res = cluster.resource_for(kind.api_version, kind.kind)
    if res is None:
        # another served version of the kind still answers (the objects say which version)
        served = cluster.served_versions(kind.group, kind.kind)
        if not served:
            raise ReferenceUnavailable(
                "unserved", f"the cluster serves no {kind.kind} ({kind.api_version})"
            )
        res = served[0]
    return res


def cluster_resolver(cluster: Cluster) -> Resolver:
    """A resolver reading through ``cluster`` (answers cached for the resolver's life)."""
    answers: dict[Any, tuple[Any, ReferenceUnavailable | None]] = {}

    def read(request: ReferenceRequest) -> Any:
        res = _resource(cluster, request)
        namespace = (request.namespace or cluster.namespace) if res.namespaced else None
        try:
            if request.object_name is not None:
                try:
                    return cluster.get(res, request.object_name, namespace)
                except NotFound:
                    return None
            selector = ",".join(f"{k}={v}" for k, v in sorted((request.match_labels or {}).items()))
            listed = cluster.iter_list(res, namespace, label_selector=selector)
            return list(itertools.islice(listed, MAX_LIST_ITEMS + 1))
        except Forbidden as exc:
            raise ReferenceUnavailable("forbidden", str(exc)) from exc
        except ApiError as exc:
            raise ReferenceUnavailable("error", str(exc)) from exc

    def resolve(request: ReferenceRequest) -> Any:
        key = (
            request.kind,
            request.namespace,
            request.object_name,
            tuple(sorted((request.match_labels or {}).items())),
        )
        found = answers.get(key)
        if found is None:
            try:
                found = (read(request), None)
            except ReferenceUnavailable as exc:
                found = (None, exc)
            answers[key] = found
        if found[1] is not None:
            raise found[1]
        return found[0]

    return resolve


#: one resolver per cluster client: a command's client lives for its run, so its reads are
#: cached for the run (weak keys, though the resolver holds its client: an entry lasts as
#: long as the process); made on the first call, so that a command that never asks
#: (describe) does not import ``weakref`` (~1.6M instructions of a live describe, callgrind)
_BY_CLUSTER: list[WeakKeyDictionary[Cluster, Resolver]] = []


def run_resolver(cluster: Cluster) -> Resolver:
    """The resolver of ``cluster``'s run: the same one (and its cached answers) on every call,
    so a command reading many workloads of one runtime reads that runtime once."""
    if not _BY_CLUSTER:
        import weakref

        _BY_CLUSTER.append(weakref.WeakKeyDictionary())
    by_cluster = _BY_CLUSTER[0]
    found = by_cluster.get(cluster)
    if found is None:
        found = by_cluster[cluster] = cluster_resolver(cluster)
    return found
