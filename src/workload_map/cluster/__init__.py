"""Cluster access: configuration, the read-only CLI client, the shared read-write client
(:class:`Api`), definitions and owner chains.

Nothing here imports the official ``kubernetes`` package at import time; :func:`connect` does,
so offline commands never pay for it. The names below load their module on first use, so
``describe -f`` (which needs only :class:`ConnectionOptions`) skips the client and discovery.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from workload_map.cluster import errors as _errors

if TYPE_CHECKING:
    from workload_map.cluster.api import Api, Impersonation, load_configuration
    from workload_map.cluster.client import Cluster, connect
    from workload_map.cluster.definitions import AmbiguousDefinition, Definition, Definitions
    from workload_map.cluster.errors import (
        ApiError,
        ClusterError,
        Forbidden,
        NotConfigured,
        NotFound,
        Unauthorized,
        Unreachable,
    )
    from workload_map.cluster.lookup import (
        Resolution,
        resolve_definition,
        resolve_gvk,
        supports_suspend,
        workload_pods,
    )
    from workload_map.cluster.options import ConnectionOptions

__all__ = [
    "AmbiguousDefinition",
    "Api",
    "ApiError",
    "Cluster",
    "ClusterError",
    "ConnectionOptions",
    "Definition",
    "Definitions",
    "Forbidden",
    "Impersonation",
    "NotConfigured",
    "NotFound",
    "Resolution",
    "Unauthorized",
    "Unreachable",
    "connect",
    "load_configuration",
    "resolve_definition",
    "resolve_gvk",
    "supports_suspend",
    "workload_pods",
]

_HOMES = {
    "Api": "api",
    "Impersonation": "api",
    "load_configuration": "api",
    "Cluster": "client",
    "connect": "client",
    "ConnectionOptions": "options",
    "AmbiguousDefinition": "definitions",
    "Definition": "definitions",
    "Definitions": "definitions",
    "Resolution": "lookup",
    "resolve_definition": "lookup",
    "resolve_gvk": "lookup",
    "supports_suspend": "lookup",
    "workload_pods": "lookup",
    # the error classes (errors.py is small and offline commands load it anyway)
    **{name: "errors" for name in _errors.__all__ if name[0].isupper()},
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value
