"""Kubernetes I/O: configuration, requests, paging, watches and watch caches.

The one way the project reaches a Kubernetes API server. It imports nothing of the project but
the error root (:mod:`workload_map.errors`) and :mod:`workload_map.yaml_import` (both leaves): services over it (definitions, ownership,
inventory) live in :mod:`workload_map.cluster`. Nothing here imports a Kubernetes client
package at import time; the names below load their module on first use, so a command that
needs only :class:`ConnectionOptions` skips the rest.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from workload_map.kube.api import Api
    from workload_map.kube.cache_dir import cache_folder, cache_root
    from workload_map.kube.client import Cluster, connect
    from workload_map.kube.errors import (
        ApiError,
        ClusterError,
        Forbidden,
        NotConfigured,
        NotFound,
        Unauthorized,
        Unreachable,
    )
    from workload_map.kube.kubeconfig import Impersonation, ResolvedConfig, resolve
    from workload_map.kube.options import ConnectionOptions
    from workload_map.kube.transport import KubeTransport

__all__ = [
    "Api",
    "ApiError",
    "Cluster",
    "ClusterError",
    "ConnectionOptions",
    "Forbidden",
    "Impersonation",
    "KubeTransport",
    "NotConfigured",
    "NotFound",
    "ResolvedConfig",
    "Unauthorized",
    "Unreachable",
    "cache_folder",
    "cache_root",
    "connect",
    "resolve",
]

_HOMES = {
    "Api": "api",
    "cache_folder": "cache_dir",
    "cache_root": "cache_dir",
    "Impersonation": "kubeconfig",
    "ResolvedConfig": "kubeconfig",
    "resolve": "kubeconfig",
    "KubeTransport": "transport",
    "Cluster": "client",
    "connect": "client",
    "ConnectionOptions": "options",
    # the error classes (the others: workload_map.kube.errors), named here so that importing
    # the package (kube.flags for --help) loads no module of it
    "ApiError": "errors",
    "ClusterError": "errors",
    "Forbidden": "errors",
    "NotConfigured": "errors",
    "NotFound": "errors",
    "Unauthorized": "errors",
    "Unreachable": "errors",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    # __import__, not importlib.import_module: importing importlib is ~2M instructions of
    # every command's start-up (kube.flags imports this package for `wlmap --help`)
    value = getattr(__import__(f"{__name__}.{home}", fromlist=["__name__"]), name)
    globals()[name] = value
    return value
