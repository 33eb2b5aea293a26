"""Credentials without the ``kubernetes`` package: the oidc auth-provider (a valid id-token
used as is, an expired one refreshed at the issuer's token endpoint, a 401 forcing a refresh)
and the providers kubectl removed, refused with the plugin to use."""

from __future__ import annotations

import base64
import http.server
import json
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any
from urllib.parse import parse_qsl

import pytest

from workload_map.kube.auth import Credentials
from workload_map.kube.errors import NotConfigured
from workload_map.kube.kubeconfig import ResolvedConfig

NOW = datetime(2026, 12, 1, tzinfo=UTC)


def _jwt(exp: datetime, tag: str) -> str:
    def part(doc: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(doc).encode()).decode().rstrip("=")

    return f"{part({'alg': 'none'})}.{part({'exp': int(exp.timestamp()), 'tag': tag})}.sig"


@pytest.fixture
def issuer() -> Iterator[tuple[str, list[dict[str, str]]]]:
    grants: list[dict[str, str]] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def _send(self, doc: dict[str, Any]) -> None:
            body = json.dumps(doc).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            host = f"http://127.0.0.1:{self.server.server_address[1]}"
            self._send({"token_endpoint": f"{host}/token"})

        def do_POST(self) -> None:
            form = dict(parse_qsl(self.rfile.read(int(self.headers["Content-Length"])).decode()))
            grants.append(form)
            fresh = _jwt(datetime(2027, 1, 1, tzinfo=UTC), f"fresh{len(grants)}")
            self._send({"id_token": fresh, "refresh_token": f"r{len(grants)}"})

        def log_message(self, *_args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", grants
    finally:
        server.shutdown()
        server.server_close()


def _resolved(provider: dict[str, Any]) -> ResolvedConfig:
    return ResolvedConfig(
        server="https://k:6443",
        namespace="default",
        context="c",
        source="test",
        auth_provider=provider,
        user_name="me",
    )


def _claims(auth: str | None) -> dict[str, Any]:
    assert auth is not None and auth.startswith("Bearer ")
    payload = auth.removeprefix("Bearer ").split(".")[1]
    return dict(json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4))))


def test_a_valid_id_token_is_used_and_a_401_refreshes_it(issuer: Any) -> None:
    url, grants = issuer
    config = {
        "id-token": _jwt(datetime(2026, 12, 2, tzinfo=UTC), "kept"),
        "refresh-token": "r0",
        "idp-issuer-url": url,
        "client-id": "cli",
    }
    credentials = Credentials(_resolved({"name": "oidc", "config": config}), now=lambda: NOW)
    assert _claims(credentials.authorization())["tag"] == "kept" and grants == []
    assert credentials.refresh()
    assert _claims(credentials.authorization())["tag"] == "fresh1"
    assert grants == [{"grant_type": "refresh_token", "refresh_token": "r0", "client_id": "cli"}]


def test_an_expired_id_token_is_refreshed_before_use(issuer: Any) -> None:
    url, grants = issuer
    config = {
        "id-token": _jwt(datetime(2026, 11, 1, tzinfo=UTC), "old"),
        "refresh-token": "r0",
        "idp-issuer-url": url,
        "client-id": "cli",
        "client-secret": "s",
    }
    credentials = Credentials(_resolved({"name": "oidc", "config": config}), now=lambda: NOW)
    assert _claims(credentials.authorization())["tag"] == "fresh1"
    assert grants[0]["client_secret"] == "s"
    credentials.refresh()  # the next refresh uses the refresh token the issuer handed out
    assert grants[1]["refresh_token"] == "r1"


@pytest.mark.parametrize(
    ("name", "plugin"), [("gcp", "gke-gcloud-auth-plugin"), ("azure", "kubelogin")]
)
def test_providers_kubectl_removed_name_their_plugin(name: str, plugin: str) -> None:
    credentials = Credentials(_resolved({"name": name, "config": {}}))
    with pytest.raises(NotConfigured, match=plugin):
        credentials.authorization()
