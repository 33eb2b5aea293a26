# mypy: disable-error-code="no-untyped-call"
"""The shared read-write connection: one ``kubernetes`` ApiClient, raw JSON calls.

The one client of every long-running process and every write: the operator and the
controllers plugged into it (gangs, exporter), the web view's cluster source, and the CLI's
``definitions install``/``uninstall`` and CRD commands. It lives here, below those rooms, so
none of them reaches into another's internals for it. (Read-only CLI commands use
:mod:`workload_map.kube.transport`, which starts faster; see its docstring.)

Reads and writes go through ``ApiClient.call_api`` on REST paths, so every kind (Kartas, CRDs,
Leases, Secrets, webhook configurations) is a plain dict and no generated model is involved.
Errors become :mod:`workload_map.kube.errors` types carrying the HTTP status. ``kubernetes``
is imported inside the functions only, so importing this module stays cheap.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from workload_map.kube.errors import ApiError, NotConfigured, Unreachable, api_error

__all__ = ["Api", "Impersonation", "load_configuration"]

MERGE_PATCH = "application/merge-patch+json"
APPLY_PATCH = "application/apply-patch+yaml"


@dataclass(frozen=True)
class Impersonation:
    """Who the requests act as (kubectl's ``--as``/``--as-group``/``--as-uid``, or the
    kubeconfig user's ``as``/``as-groups``/``as-uid``/``as-user-extra``)."""

    user: str | None = None
    groups: tuple[str, ...] = ()
    uid: str | None = None
    extra: tuple[tuple[str, str], ...] = ()

    def __bool__(self) -> bool:
        return bool(self.user or self.groups or self.uid or self.extra)

    def headers(self) -> list[tuple[str, str]]:
        """The ``Impersonate-*`` header lines; a group or an extra value is one line each (the
        API server reads every line as one value, a comma is part of the value)."""
        from urllib.parse import quote

        out: list[tuple[str, str]] = []
        if self.user:
            out.append(("Impersonate-User", self.user))
        if self.uid:
            out.append(("Impersonate-Uid", self.uid))
        out.extend(("Impersonate-Group", g) for g in self.groups)
        out.extend((f"Impersonate-Extra-{quote(k, safe='')}", v) for k, v in self.extra)
        return out


def _kubeconfig_impersonation(path: str, context: str | None) -> Impersonation:
    """The ``as*`` fields of the context's user, which the ``kubernetes`` loader ignores."""
    from kubernetes.config.kube_config import KubeConfigMerger

    def plain(node: Any) -> Any:
        return getattr(node, "value", node)

    merged = plain(KubeConfigMerger(path).config) or {}
    name = context or merged.get("current-context")
    ctx = next((plain(c) for c in merged.get("contexts") or [] if plain(c)["name"] == name), None)
    if ctx is None:
        return Impersonation()
    user_name = (ctx.get("context") or {}).get("user")
    user = next(
        (plain(u) for u in merged.get("users") or [] if plain(u)["name"] == user_name), None
    )
    fields = (user or {}).get("user") or {}
    groups = fields.get("as-groups") or []
    extra = fields.get("as-user-extra") or {}
    if not isinstance(groups, list) or not all(isinstance(g, str) for g in groups):
        raise NotConfigured(f"kubeconfig {path}: users[{user_name}].as-groups must be strings")
    if not isinstance(extra, dict):
        raise NotConfigured(f"kubeconfig {path}: users[{user_name}].as-user-extra must be a map")
    return Impersonation(
        user=fields.get("as") or None,
        groups=tuple(groups),
        uid=fields.get("as-uid") or None,
        extra=tuple((str(k), str(v)) for k, vs in extra.items() for v in (vs or [])),
    )


def load_configuration(
    kubeconfig: str | None = None,
    context: str | None = None,
    *,
    impersonate: Impersonation | None = None,
) -> Any:
    """A ``kubernetes.client.Configuration``: the kubeconfig when given (or $KUBECONFIG /
    ~/.kube/config exists), else the in-cluster service account. Impersonation (``impersonate``,
    else the kubeconfig user's ``as`` fields) rides along as ``cfg.impersonation``; :class:`Api`
    sends it on every request."""
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
        from_file = _kubeconfig_impersonation(path or default, context)
    else:
        try:
            config.load_incluster_config(client_configuration=cfg)
        except ConfigException as exc:
            raise Unreachable(f"no kubeconfig and not running in a cluster: {exc}") from exc
        from_file = Impersonation()
    # as kubectl: the flags replace the kubeconfig's fields, they do not merge with them
    cfg.impersonation = impersonate if impersonate else from_file
    return cfg


class _ImpersonatingPool:
    """The ``kubernetes`` client's urllib3 pool with the ``Impersonate-*`` lines added to every
    request. The client has no impersonation support and folds its headers into one dict per
    request, which cannot carry the repeated ``Impersonate-Group`` lines, so they are added
    here, below it, as a urllib3 ``HTTPHeaderDict``."""

    def __init__(self, inner: Any, lines: list[tuple[str, str]]) -> None:
        self._inner = inner
        self._lines = lines

    def request(self, method: str, url: str, *args: Any, **kwargs: Any) -> Any:
        from urllib3 import HTTPHeaderDict

        headers = HTTPHeaderDict(kwargs.pop("headers", None) or {})
        for key, value in self._lines:
            headers.add(key, value)
        return self._inner.request(method, url, *args, headers=headers, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class Api:
    """Raw REST calls on one ``ApiClient`` (thread-safe: urllib3's pool is)."""

    def __init__(self, configuration: Any, *, timeout: float = 30.0) -> None:
        from kubernetes import client

        self.configuration = configuration
        self.client = client.ApiClient(configuration)
        self.impersonation: Impersonation = (
            getattr(configuration, "impersonation", None) or Impersonation()
        )
        if self.impersonation:
            rest: Any = self.client.rest_client
            rest.pool_manager = _ImpersonatingPool(rest.pool_manager, self.impersonation.headers())
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

        from workload_map.kube.cache import call

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
    """Adapter: :class:`Api` as a ``workload_map.kube.transport.Transport``."""

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
