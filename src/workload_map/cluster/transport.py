"""The one place HTTP happens: ``request(path, query) -> JSON`` over the official client.

Everything above (discovery, paging, owner chains, definitions) is written against the
:class:`Transport` protocol, so unit tests drive it with an in-memory API and the integration
tests with a real kube-apiserver. Transport failures become :mod:`workload_map.cluster.errors`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Protocol

from workload_map.cluster.errors import ClusterError, Unreachable, api_error
from workload_map.cluster.kubeconfig import ConnectionOptions, ResolvedConfig

__all__ = ["KubeTransport", "Transport"]


class Transport(Protocol):
    """A read-only Kubernetes API: GET ``path`` with ``query``; returns the decoded JSON."""

    namespace: str
    context: str | None
    server: str

    def get(
        self, path: str, query: Sequence[tuple[str, str]] = (), *, accept: str | None = None
    ) -> Any: ...


class KubeTransport:
    """:class:`Transport` over ``kubernetes.client.ApiClient.call_api`` (raw JSON, no models)."""

    def __init__(self, resolved: ResolvedConfig, options: ConnectionOptions) -> None:
        from kubernetes import client  # type: ignore[import-untyped]

        self._api = client.ApiClient(resolved.configuration)
        self._timeout = options.timeout
        self._headers: dict[str, str] = {}
        if options.impersonate_user:
            self._headers["Impersonate-User"] = options.impersonate_user
        self.namespace = resolved.namespace
        self.context = resolved.context
        self.server = resolved.server

    def get(
        self, path: str, query: Sequence[tuple[str, str]] = (), *, accept: str | None = None
    ) -> Any:
        from kubernetes.client.exceptions import ApiException  # type: ignore[import-untyped]
        from urllib3.exceptions import HTTPError

        headers = dict(self._headers)
        headers["Accept"] = accept or "application/json"
        try:
            response = self._api.call_api(
                path,
                "GET",
                query_params=list(query),
                header_params=headers,
                auth_settings=["BearerToken"],
                _preload_content=False,
                _return_http_data_only=True,
                _request_timeout=self._timeout,
            )
        except ApiException as exc:
            raise api_error(int(exc.status or 0), exc.body, path) from exc
        except HTTPError as exc:
            raise Unreachable(
                f"cannot reach the cluster at {self.server}: {_root_cause(exc)}"
            ) from exc
        except OSError as exc:
            raise Unreachable(f"cannot reach the cluster at {self.server}: {exc}") from exc
        data = response.data
        try:
            return json.loads(data)
        except ValueError as exc:
            raise ClusterError(f"the API server sent non-JSON for {path}: {exc}") from exc


def _root_cause(exc: BaseException) -> str:
    reason = getattr(exc, "reason", None)
    if isinstance(reason, BaseException):
        return _root_cause(reason)
    return str(exc) or type(exc).__name__
