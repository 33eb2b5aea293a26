"""Services over the cluster: definitions from its Kartas, owner chains, the inventory and
its feed, the catalog's installation; and the library's entry points for them.

Built on :mod:`workload_map.kube` (all requests) and the core. Resolving a definition offline
is the core's (:mod:`workload_map.catalog.resolution`); the names below that live there or in
the I/O layer are re-exported for library users. Each loads its module on first use.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from workload_map.kube import errors as _errors

if TYPE_CHECKING:
    from workload_map.catalog.definitions import AmbiguousDefinition, Definition, Definitions
    from workload_map.catalog.resolution import Resolution, resolve_gvk, supports_suspend
    from workload_map.cluster.connection import connect
    from workload_map.cluster.lookup import resolve_definition, workload_pods
    from workload_map.kube.client import Cluster
    from workload_map.kube.errors import (
        ApiError,
        ClusterError,
        Forbidden,
        NotConfigured,
        NotFound,
        Unauthorized,
        Unreachable,
    )
    from workload_map.kube.options import ConnectionOptions

__all__ = [
    "AmbiguousDefinition",
    "ApiError",
    "Cluster",
    "ClusterError",
    "ConnectionOptions",
    "Definition",
    "Definitions",
    "Forbidden",
    "NotConfigured",
    "NotFound",
    "Resolution",
    "Unauthorized",
    "Unreachable",
    "connect",
    "resolve_definition",
    "resolve_gvk",
    "supports_suspend",
    "workload_pods",
]

_HOMES = {
    "connect": "workload_map.cluster.connection",
    "resolve_definition": "workload_map.cluster.lookup",
    "workload_pods": "workload_map.cluster.lookup",
    "AmbiguousDefinition": "workload_map.catalog.definitions",
    "Definition": "workload_map.catalog.definitions",
    "Definitions": "workload_map.catalog.definitions",
    "Resolution": "workload_map.catalog.resolution",
    "resolve_gvk": "workload_map.catalog.resolution",
    "supports_suspend": "workload_map.catalog.resolution",
    "Cluster": "workload_map.kube.client",
    "ConnectionOptions": "workload_map.kube.options",
    **{name: "workload_map.kube.errors" for name in _errors.__all__ if name[0].isupper()},
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(home), name)
    globals()[name] = value
    return value
