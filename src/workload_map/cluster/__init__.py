"""Cluster access for the CLI: configuration, a read-only client, definitions and owner chains.

Nothing here imports the official ``kubernetes`` package at import time; :func:`connect` does,
so offline commands never pay for it.
"""

from __future__ import annotations

from workload_map.cluster.client import Cluster, connect
from workload_map.cluster.errors import (
    ApiError,
    ClusterError,
    Forbidden,
    NotConfigured,
    NotFound,
    Unauthorized,
    Unreachable,
)
from workload_map.cluster.kubeconfig import ConnectionOptions

__all__ = [
    "ApiError",
    "Cluster",
    "ClusterError",
    "ConnectionOptions",
    "Forbidden",
    "NotConfigured",
    "NotFound",
    "Unauthorized",
    "Unreachable",
    "connect",
]
