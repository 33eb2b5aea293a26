"""Proxies: ``proxy-url``, else the environment (``HTTPS_PROXY``/``HTTP_PROXY`` minus
``NO_PROXY``, loopback never proxied), and a request that really goes through a CONNECT
proxy."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from workload_map.kube.kubeconfig import env_proxy, resolve
from workload_map.kube.options import ConnectionOptions
from workload_map.kube.transport import KubeTransport


@pytest.mark.parametrize(
    ("server", "environ", "expected"),
    [
        ("https://k.example:6443", {}, None),
        ("https://k.example:6443", {"HTTPS_PROXY": "p:3128"}, "http://p:3128"),
        ("https://k.example:6443", {"https_proxy": "http://p:8"}, "http://p:8"),
        ("http://k.example", {"HTTPS_PROXY": "http://p:8"}, None),  # https only
        ("http://k.example", {"HTTP_PROXY": "http://p:8"}, "http://p:8"),
        ("https://k.example", {"HTTPS_PROXY": "http://p", "NO_PROXY": "*"}, None),
        ("https://k.example", {"HTTPS_PROXY": "http://p", "NO_PROXY": "a,.example"}, None),
        ("https://k.example", {"HTTPS_PROXY": "http://p", "NO_PROXY": "example:443"}, None),
        ("https://k.example", {"HTTPS_PROXY": "http://p", "NO_PROXY": "other.example"}, "http://p"),
        ("https://10.1.2.3", {"HTTPS_PROXY": "http://p", "no_proxy": "10.0.0.0/8"}, None),
        ("https://11.1.2.3", {"HTTPS_PROXY": "http://p", "no_proxy": "10.0.0.0/8"}, "http://p"),
        ("https://127.0.0.1:6443", {"HTTPS_PROXY": "http://p"}, None),  # loopback
        ("https://[::1]:6443", {"HTTPS_PROXY": "http://p"}, None),
        ("https://localhost:6443", {"HTTPS_PROXY": "http://p"}, None),
    ],
)
def test_the_environment_names_the_proxy(
    server: str, environ: dict[str, str], expected: str | None
) -> None:
    assert env_proxy(server, environ) == expected


def _kubeconfig(path: Path, server: str, proxy: str | None = None) -> Path:
    extra = f", proxy-url: '{proxy}'" if proxy else ""
    path.write_text(
        f"clusters: [{{name: c, cluster: {{server: '{server}'{extra}}}}}]\n"
        "users: [{name: u, user: {token: t}}]\n"
        "contexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n"
    )
    return path


def test_proxy_url_wins_over_the_environment(tmp_path: Path) -> None:
    kc = _kubeconfig(tmp_path / "kc", "https://k.example", "http://mine:1")
    env = {"HTTPS_PROXY": "http://env:2", "HOME": str(tmp_path)}
    assert resolve(ConnectionOptions(kubeconfig=str(kc), environ=env)).proxy_url == "http://mine:1"
    kc = _kubeconfig(tmp_path / "kc2", "https://k.example")
    assert resolve(ConnectionOptions(kubeconfig=str(kc), environ=env)).proxy_url == "http://env:2"


@pytest.fixture
def proxied() -> Iterator[tuple[int, int, list[bytes]]]:
    """(API port, proxy port, CONNECT lines the proxy saw): a one-answer API server and a
    CONNECT proxy in front of it."""
    api = socket.create_server(("127.0.0.1", 0))
    proxy = socket.create_server(("127.0.0.1", 0))
    connects: list[bytes] = []

    def serve_api() -> None:
        conn, _ = api.accept()
        with conn:
            data = b""
            while b"\r\n\r\n" not in data:
                data += conn.recv(65536)
            conn.sendall(b'HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\n{"via": 1}\n')

    def serve_proxy() -> None:
        client, _ = proxy.accept()
        with client:
            head = b""
            while b"\r\n\r\n" not in head:
                head += client.recv(65536)
            connects.append(head.split(b"\r\n", 1)[0])
            host, port = head.split()[1].decode().rsplit(":", 1)
            upstream = socket.create_connection((host, int(port)))
            client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
            with upstream:
                request = client.recv(65536)
                upstream.sendall(request)
                answer = b""
                while not answer.endswith(b"\n"):
                    answer += upstream.recv(65536)
                client.sendall(answer)

    for target in (serve_api, serve_proxy):
        threading.Thread(target=target, daemon=True).start()
    try:
        yield api.getsockname()[1], proxy.getsockname()[1], connects
    finally:
        api.close()
        proxy.close()


def test_a_request_goes_through_the_connect_proxy(
    tmp_path: Path, proxied: tuple[int, int, list[bytes]], monkeypatch: pytest.MonkeyPatch
) -> None:
    api_port, proxy_port, connects = proxied
    # a name that is not loopback, resolved by the proxy alone (as a corporate proxy does)
    kc = _kubeconfig(tmp_path / "kc", "http://api.test:80", f"http://127.0.0.1:{proxy_port}")
    resolved = resolve(ConnectionOptions(kubeconfig=str(kc), environ={"HOME": str(tmp_path)}))
    # the proxy is asked for api.test; point that name at the fake API for the proxy only
    real = socket.create_connection

    def route(address: tuple[str, int], *args: object, **kwargs: object) -> socket.socket:
        if address[0] == "api.test":
            address = ("127.0.0.1", api_port)
        return real(address, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(socket, "create_connection", route)
    assert KubeTransport(resolved).get("/version") == {"via": 1}
    assert connects == [b"CONNECT api.test:80 HTTP/1.1"]
