"""Credentials of a resolved configuration: what goes in each request, and its refresh.

A bearer token, a token file (re-read on refresh: a projected service-account token rotates),
basic auth, an ``exec`` plugin (``client.authentication.k8s.io`` ``ExecCredential``: run here,
its token or client certificate kept until ``expirationTimestamp``) or an ``auth-provider``.
A 401 answer makes the request path call :meth:`Credentials.refresh` once and retry: an exec
plugin runs again, an auth-provider is loaded again, a token file is read again.

Auth-providers (``oidc``, ``gcp``, ``azure``: deprecated in kubectl since 1.22) are run by the
official ``kubernetes`` package's loader, the only part of it used for them: it yields a token,
and every request still goes through :mod:`workload_map.kube.transport`. Users without one never
import it.
"""

from __future__ import annotations

import base64
import json
import os
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from workload_map.kube.errors import ClusterError, NotConfigured
from workload_map.kube.kubeconfig import ResolvedConfig

if TYPE_CHECKING:
    from datetime import datetime

__all__ = ["ClientCertificate", "Credentials", "ExecRunner"]

#: runs an exec plugin: (argv, environment) -> its standard output
ExecRunner = Callable[[list[str], dict[str, str]], str]

_EXEC_TIMEOUT = 60.0  # seconds a plugin may take (a browser login is interactive)


class ClientCertificate:
    """PEM data of a client certificate and key an exec plugin returned."""

    __slots__ = ("cert", "key")

    def __init__(self, cert: bytes, key: bytes) -> None:
        self.cert = cert
        self.key = key

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ClientCertificate) and (self.cert, self.key) == (
            other.cert,
            other.key,
        )

    def __hash__(self) -> int:
        return hash((self.cert, self.key))


def _run(argv: list[str], env: dict[str, str]) -> str:
    import subprocess  # only users with an exec plugin pay for it

    try:
        done = subprocess.run(
            argv,
            env=env,
            capture_output=True,
            text=True,
            timeout=_EXEC_TIMEOUT,
            check=False,
        )
    except FileNotFoundError as exc:
        raise NotConfigured(f"exec plugin {argv[0]!r}: not found") from exc
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ClusterError(f"exec plugin {argv[0]!r}: {exc}") from exc
    if done.returncode != 0:
        err = done.stderr.strip().splitlines()
        why = f": {err[-1]}" if err else ""
        raise ClusterError(f"exec plugin {argv[0]!r} failed (exit {done.returncode}){why}")
    return done.stdout


class Credentials:
    """The ``Authorization`` value (and client certificate) of one resolved configuration.

    Thread-safe; ``run_exec`` and ``now`` are injected by tests (a plugin's output, a clock).
    """

    def __init__(
        self,
        resolved: ResolvedConfig,
        *,
        run_exec: ExecRunner = _run,
        now: Callable[[], datetime] | None = None,
    ) -> None:
        self._resolved = resolved
        self._run_exec = run_exec
        self._now = now or _utc_now
        self._lock = threading.Lock()
        self._token: str | None = resolved.token
        self._cert: ClientCertificate | None = None
        self._expires: datetime | None = None
        self._loaded = False
        self.refreshes = 0  # how many times a 401 made us fetch new credentials

    @property
    def refreshable(self) -> bool:
        """Whether :meth:`refresh` can fetch anything new (a 401 is then worth one retry)."""
        r = self._resolved
        return bool(r.exec_plugin or r.auth_provider or (r.token_file and not r.token))

    def authorization(self) -> str | None:
        """The ``Authorization`` header value, fetching credentials on first use."""
        with self._lock:
            self._ensure()
            if self._token:
                return f"Bearer {self._token}"
        r = self._resolved
        if r.username and r.password:
            basic = base64.b64encode(f"{r.username}:{r.password}".encode()).decode()
            return f"Basic {basic}"
        return None

    def client_certificate(self) -> ClientCertificate | None:
        """The client certificate an exec plugin gave (the kubeconfig's own is TLS material)."""
        with self._lock:
            self._ensure()
            return self._cert

    def refresh(self) -> bool:
        """Fetch new credentials (after a 401); False when there is nothing to refresh."""
        if not self.refreshable:
            return False
        with self._lock:
            self._loaded = False
            self._ensure()
            self.refreshes += 1
        return True

    # -- internals (the lock is held) ------------------------------------------------------
    def _ensure(self) -> None:
        expired = self._expires is not None and self._now() >= self._expires
        if self._loaded and not expired:
            return
        r = self._resolved
        if r.exec_plugin:
            self._from_exec(r.exec_plugin)
        elif r.auth_provider:
            self._token = _auth_provider_token(r)
        elif r.token_file and not r.token:
            try:
                with open(r.token_file, encoding="utf-8") as handle:
                    self._token = handle.read().strip()
            except OSError as exc:
                raise ClusterError(f"token file {r.token_file}: {exc.strerror}") from exc
        self._loaded = True

    def _from_exec(self, plugin: dict[str, Any]) -> None:
        command = str(plugin.get("command") or "")
        if not command:
            raise NotConfigured(f'user "{self._resolved.user_name}": exec plugin has no command')
        api_version = str(plugin.get("apiVersion") or "client.authentication.k8s.io/v1")
        env = dict(os.environ)
        for entry in plugin.get("env") or []:
            if isinstance(entry, dict) and entry.get("name"):
                env[str(entry["name"])] = str(entry.get("value") or "")
        spec: dict[str, Any] = {"interactive": False}
        if plugin.get("provideClusterInfo"):
            spec["cluster"] = {
                "server": self._resolved.server,
                "tls-server-name": self._resolved.tls_server_name,
                "insecure-skip-tls-verify": self._resolved.insecure,
                "certificate-authority-data": base64.b64encode(
                    self._resolved.ca_data or b""
                ).decode()
                or None,
            }
        env["KUBERNETES_EXEC_INFO"] = json.dumps(
            {"apiVersion": api_version, "kind": "ExecCredential", "spec": spec}
        )
        argv = [command, *[str(a) for a in plugin.get("args") or []]]
        out = self._run_exec(argv, env)
        try:
            doc = json.loads(out)
        except ValueError as exc:
            raise ClusterError(f"exec plugin {command!r} printed no ExecCredential JSON") from exc
        status = doc.get("status") if isinstance(doc, dict) else None
        if not isinstance(status, dict):
            raise ClusterError(f"exec plugin {command!r}: the ExecCredential has no status")
        self._token = str(status.get("token") or "") or None
        cert, key = status.get("clientCertificateData"), status.get("clientKeyData")
        self._cert = (
            ClientCertificate(str(cert).encode(), str(key).encode()) if cert and key else None
        )
        if self._token is None and self._cert is None:
            raise ClusterError(
                f"exec plugin {command!r}: the ExecCredential holds neither a token nor a "
                "client certificate"
            )
        expires = status.get("expirationTimestamp")
        self._expires = _timestamp(str(expires)) if expires else None


def _utc_now() -> datetime:
    from datetime import UTC, datetime

    return datetime.now(UTC)


def _timestamp(text: str) -> datetime | None:
    from datetime import datetime

    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None


def _auth_provider_token(resolved: ResolvedConfig) -> str | None:
    """The token of an ``auth-provider`` user, from the official client's kubeconfig loader
    (it refreshes oidc and gcp tokens as kubectl did); requests stay ours."""
    from kubernetes import client, config
    from kubernetes.config.config_exception import ConfigException

    configuration = client.Configuration()
    try:
        config.load_kube_config(  # type: ignore[no-untyped-call]
            config_file=resolved.source,
            context=resolved.context,
            client_configuration=configuration,
            persist_config=False,
        )
    except (ConfigException, OSError, ValueError, TypeError) as exc:
        raise ClusterError(f"kubeconfig {resolved.source}: {exc}") from exc
    keys = getattr(configuration, "api_key", None) or {}
    # v37 stores the bearer token under "BearerToken" (older releases: "authorization")
    auth = str(keys.get("BearerToken") or keys.get("authorization") or "")
    return auth.removeprefix("Bearer ").strip() or None
