"""Credentials of a resolved configuration: what goes in each request, and its refresh.

A bearer token, a token file (re-read on refresh: a projected service-account token rotates),
basic auth, an ``exec`` plugin (``client.authentication.k8s.io`` ``ExecCredential``: run here,
its token or client certificate kept until ``expirationTimestamp``) or an ``auth-provider``.
A 401 answer makes the request path call :meth:`Credentials.refresh` once and retry: an exec
plugin runs again, an auth-provider is loaded again, a token file is read again.

The ``oidc`` auth-provider (the one kubectl still has) is run here too: its ``id-token`` is
used until the token's ``exp``, then (or after a 401) refreshed with its ``refresh-token`` at
the issuer's token endpoint (kept in memory; the kubeconfig is never written). The ``gcp`` and
``azure`` providers, removed from kubectl in 1.26 in favour of exec plugins, are refused with
the plugin to use instead.
"""

from __future__ import annotations

import _thread
import json
import os
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
        self._lock = _thread.allocate_lock()  # threading.Lock, without importing threading
        self._token: str | None = resolved.token
        self._cert: ClientCertificate | None = None
        self._expires: datetime | None = None
        self._loaded = False
        self._stale = False  # a 401 said the current token is refused, whatever its expiry
        self._oidc: dict[str, str] = {}  # an oidc provider's refreshed tokens
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
            import base64  # basic auth only: no command's import

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
            self._stale = True
            try:
                self._ensure()
            finally:
                self._stale = False
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
            self._token = self._from_provider(r.auth_provider)
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
            import base64  # a plugin asking for the cluster's data only

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

    def _from_provider(self, provider: dict[str, Any]) -> str:
        name = str(provider.get("name") or "")
        config = provider.get("config") or {}
        who = f'user "{self._resolved.user_name}": auth-provider {name!r}'
        if name != "oidc":
            plugin = {"gcp": "gke-gcloud-auth-plugin", "azure": "kubelogin"}.get(name)
            instead = f" (e.g. {plugin})" if plugin else ""
            raise NotConfigured(
                f"{who} is not supported (kubectl removed it in 1.26): use its exec "
                f"plugin{instead} in the kubeconfig"
            )
        if not isinstance(config, dict):
            raise NotConfigured(f"{who}: config must be a mapping")
        settings = {**{str(k): str(v) for k, v in config.items()}, **self._oidc}
        token = settings.get("id-token", "")
        if token and not self._stale and not _jwt_expired(token, self._now()):
            return token
        if not settings.get("refresh-token") or not settings.get("idp-issuer-url"):
            if token:
                return token  # nothing to refresh with: the server decides
            raise NotConfigured(f"{who}: no id-token, and no refresh-token to get one")
        self._oidc = _oidc_refresh(settings, who)
        return self._oidc["id-token"]


def _jwt_expired(token: str, now: datetime) -> bool:
    """Whether a JWT's ``exp`` is past (10 s early); unreadable tokens count as valid."""
    import base64  # OIDC tokens only

    try:
        payload = token.split(".")[1]
        claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
        return float(claims["exp"]) - 10 <= now.timestamp()
    except (IndexError, ValueError, KeyError, TypeError):
        return False


def _oidc_refresh(settings: dict[str, str], who: str) -> dict[str, str]:
    """New tokens from the issuer's token endpoint (OpenID discovery, then the refresh grant)."""
    import base64
    import ssl
    import urllib.parse
    import urllib.request

    context = ssl.create_default_context()
    ca_file, ca_data = (
        settings.get("idp-certificate-authority"),
        settings.get("idp-certificate-authority-data"),
    )
    try:
        if ca_data:
            context.load_verify_locations(cadata=base64.b64decode(ca_data).decode("ascii"))
        elif ca_file:
            context.load_verify_locations(cafile=ca_file)
        issuer = settings["idp-issuer-url"].rstrip("/")
        with urllib.request.urlopen(
            f"{issuer}/.well-known/openid-configuration", timeout=30, context=context
        ) as answer:
            endpoint = str(json.loads(answer.read())["token_endpoint"])
        form = {
            "grant_type": "refresh_token",
            "refresh_token": settings["refresh-token"],
            "client_id": settings.get("client-id", ""),
        }
        if settings.get("client-secret"):
            form["client_secret"] = settings["client-secret"]
        request = urllib.request.Request(
            endpoint, data=urllib.parse.urlencode(form).encode(), method="POST"
        )
        with urllib.request.urlopen(request, timeout=30, context=context) as answer:
            tokens = json.loads(answer.read())
    except (OSError, ValueError, KeyError, ssl.SSLError) as exc:
        raise ClusterError(f"{who}: refreshing the token failed: {exc}") from exc
    if not isinstance(tokens, dict) or not tokens.get("id_token"):
        raise ClusterError(f"{who}: the issuer's answer holds no id_token")
    refreshed = {"id-token": str(tokens["id_token"])}
    refreshed["refresh-token"] = str(tokens.get("refresh_token") or settings["refresh-token"])
    return refreshed


def _utc_now() -> datetime:
    from datetime import UTC, datetime

    return datetime.now(UTC)


def _timestamp(text: str) -> datetime | None:
    from datetime import datetime

    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
