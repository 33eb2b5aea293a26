"""The read-write API of long-running processes and of the command line's writes.

:class:`Api` is :class:`~workload_map.kube.transport.KubeTransport` (the one request path)
with the write helpers every caller needs (merge patch, server-side apply) and the pooled
sender: the operator and the controllers plugged into it (gangs, exporter), the web view's
cluster source, and the CLI's ``definitions install``/``uninstall`` and CRD commands. Every
object is a plain dict on a REST path; no generated model is involved.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from workload_map.kube.kubeconfig import Impersonation, resolve
from workload_map.kube.options import ConnectionOptions
from workload_map.kube.transport import KubeTransport

__all__ = ["APPLY_PATCH", "MERGE_PATCH", "Api", "Impersonation"]

MERGE_PATCH = "application/merge-patch+json"
APPLY_PATCH = "application/apply-patch+yaml"


class Api:
    """Raw REST calls through one :class:`KubeTransport` (thread-safe)."""

    def __init__(self, transport: KubeTransport) -> None:
        self._transport = transport
        self.server = transport.server
        self.namespace = transport.namespace
        self.impersonation: Impersonation = transport.impersonation
        self.timeout = transport.timeout

    @classmethod
    def connect(cls, options: ConnectionOptions, *, pooled: bool = True, pool_size: int = 8) -> Api:
        """The API the options select (kubeconfig, context, impersonation, timeout), on the
        pooled sender keeping up to ``pool_size`` idle connections (``pooled=False``: one
        connection per thread, for a command)."""
        return cls(KubeTransport(resolve(options), pooled=pooled, pool_size=pool_size))

    @property
    def calls(self) -> int:
        """Requests sent (for tests and the status-write accounting in benchmarks)."""
        return self._transport.calls

    @property
    def writes(self) -> int:
        return self._transport.writes

    def close(self) -> None:
        self._transport.close()

    def transport(self) -> KubeTransport:
        """The request path itself (discovery, paging and watches read through it)."""
        return self._transport

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        query: Sequence[tuple[str, str]] | None = None,
        content_type: str = "application/json",
        timeout: float | None = None,
        accept: str = "application/json",
    ) -> Any:
        """One call; the decoded JSON answer (``{}`` when empty)."""
        return self._transport.request(
            method,
            path,
            body,
            query=query or (),
            content_type=content_type,
            accept=accept,
            timeout=timeout,
        )

    def get(self, path: str, query: Sequence[tuple[str, str]] | None = None) -> Any:
        return self.request("GET", path, query=query)

    def merge_patch(
        self, path: str, patch: dict[str, Any], manager: str = "workload-map-operator"
    ) -> Any:
        return self.request(
            "PATCH", path, patch, query=[("fieldManager", manager)], content_type=MERGE_PATCH
        )

    def apply(
        self,
        path: str,
        obj: dict[str, Any],
        manager: str,
        *,
        force: bool = False,
        dry_run: bool = False,
    ) -> Any:
        """Server-side apply ``obj`` at ``path`` as field manager ``manager``."""
        query = [("fieldManager", manager)]
        if force:
            query.append(("force", "true"))
        if dry_run:
            query.append(("dryRun", "All"))
        return self.request("PATCH", path, obj, query=query, content_type=APPLY_PATCH)
