# mypy: disable-error-code="no-untyped-call"
"""The operator's connection to its API server: one ``kubernetes`` ApiClient, raw JSON calls.

Reads and writes go through ``ApiClient.call_api`` on REST paths, so every kind (Kartas, CRDs,
Leases, Secrets, webhook configurations) is a plain dict and no generated model is involved.
Errors become :mod:`workload_map.cluster.errors` types carrying the HTTP status.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from workload_map.cluster.errors import ApiError, Unreachable, api_error

__all__ = ["Api", "load_configuration"]

MERGE_PATCH = "application/merge-patch+json"
APPLY_PATCH = "application/apply-patch+yaml"


def load_configuration(kubeconfig: str | None = None, context: str | None = None) -> Any:
    """A ``kubernetes.client.Configuration``: the kubeconfig when given (or $KUBECONFIG /
    ~/.kube/config exists), else the in-cluster service account."""
    import os

    from kubernetes import client, config
    from kubernetes.config.config_exception import ConfigException

    cfg = client.Configuration()
    path = kubeconfig or os.environ.get("KUBECONFIG")
    default = os.path.expanduser("~/.kube/config")
    if path or (context is not None) or os.path.exists(default):
        config.load_kube_config(
            config_file=path or default,
            context=context,
            client_configuration=cfg,
            persist_config=False,
        )
        return cfg
    try:
        config.load_incluster_config(client_configuration=cfg)
    except ConfigException as exc:
        raise Unreachable(f"no kubeconfig and not running in a cluster: {exc}") from exc
    return cfg


class Api:
    """Raw REST calls on one ``ApiClient`` (thread-safe: urllib3's pool is)."""

    def __init__(self, configuration: Any, *, timeout: float = 30.0) -> None:
        from kubernetes import client

        self.configuration = configuration
        self.client = client.ApiClient(configuration)
        self.timeout = timeout
        self.calls = 0  # for tests and the status-write accounting in benchmarks
        self.writes = 0

    def close(self) -> None:
        self.client.close()

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        query: list[tuple[str, str]] | None = None,
        content_type: str = "application/json",
        timeout: float | None = None,
        accept: str = "application/json",
    ) -> Any:
        """One call; the decoded JSON answer (``{}`` when empty)."""
        from kubernetes.client.exceptions import ApiException
        from urllib3.exceptions import HTTPError

        from workload_map.cluster.cache import call

        self.calls += 1
        if method != "GET":
            self.writes += 1
        try:
            raw = call(
                self.client,
                method,
                path,
                query=query,
                body=body,
                content_type=content_type,
                accept=accept,
                timeout=timeout or self.timeout,
            )
            try:
                data = raw.data
            finally:
                raw.release_conn()
        except ApiException as exc:
            raise api_error(int(exc.status or 0), exc.body, f"{method} {path}") from exc
        except (HTTPError, OSError) as exc:
            raise Unreachable(f"cannot reach the API server for {method} {path}: {exc}") from exc
        if not data:
            return {}
        try:
            return json.loads(data)
        except ValueError as exc:
            raise ApiError(0, f"the API server sent non-JSON for {method} {path}") from exc

    def get(self, path: str, query: list[tuple[str, str]] | None = None) -> Any:
        return self.request("GET", path, query=query)

    def transport(self) -> ApiTransport:
        """This API as the read-only ``Transport`` that ``cluster.discovery`` walks."""
        return ApiTransport(self)

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


class ApiTransport:
    """Adapter: :class:`Api` as a ``workload_map.cluster.transport.Transport``."""

    namespace = "default"
    context: str | None = None

    def __init__(self, api: Api) -> None:
        self._api = api
        self.server = str(api.configuration.host)

    def get(
        self, path: str, query: Sequence[tuple[str, str]] = (), *, accept: str | None = None
    ) -> Any:
        return self._api.request(
            "GET", path, query=list(query), accept=accept or "application/json"
        )
