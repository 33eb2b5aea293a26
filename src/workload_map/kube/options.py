"""What the user asked for on the command line (kubectl's global flags), as one value.

Its own module because every command builds one, offline ones too, while only a command that
talks to a cluster needs :mod:`workload_map.kube.kubeconfig` to resolve it. Every process (the
CLI's reads and writes, the operator, the exporter, the web view) resolves its connection from
one of these: :func:`workload_map.kube.flags.connection_options` reads it off parsed flags.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import msgspec

__all__ = ["SERVICE_ACCOUNT_DIR", "ConnectionOptions"]

#: where a pod's service-account token, CA and namespace are mounted
SERVICE_ACCOUNT_DIR = Path("/var/run/secrets/kubernetes.io/serviceaccount")


class ConnectionOptions(msgspec.Struct, frozen=True):
    """What the user asked for on the command line (kubectl's global flags)."""

    kubeconfig: str | None = None
    context: str | None = None
    namespace: str | None = None
    impersonate_user: str | None = None
    impersonate_groups: tuple[str, ...] = ()
    timeout: float | None = 30.0  # seconds per request (connect, read and total); None: none
    environ: Mapping[str, str] = msgspec.field(default_factory=lambda: dict(os.environ))
    service_account_dir: Path = SERVICE_ACCOUNT_DIR
    impersonate_uid: str | None = None  # --as-uid (the operator's flag)

    @property
    def explicit(self) -> bool:
        """True when the user named a kubeconfig or context (so the cluster is wanted)."""
        return self.kubeconfig is not None or self.context is not None
