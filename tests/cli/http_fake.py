"""The in-memory API of ``fake_cluster`` served over real HTTP on 127.0.0.1, so the transport
(kubeconfig, headers, timeouts, errors) is tested end to end without the kube-apiserver harness."""

from __future__ import annotations

import json
import socket
import ssl
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from tests.cli.fake_cluster import FakeAPI
from workload_map.kube.errors import ApiError


@contextmanager
def serve(
    api: FakeAPI, tls: ssl.SSLContext | None = None
) -> Iterator[tuple[str, list[dict[str, str]]]]:
    """``(server URL, headers of every request)`` while the fake API answers over HTTP (HTTPS
    with the server context ``tls``)."""
    seen: list[dict[str, str]] = []

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def setup(self) -> None:
            super().setup()
            # as Go's net/http does: no Nagle delay between the header and body writes
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

        def do_GET(self) -> None:
            url = urlsplit(self.path)
            headers: dict[str, str] = {}
            for key, value in self.headers.items():
                headers[key] = f"{headers[key]},{value}" if key in headers else value
            seen.append(headers)
            try:
                status, body = 200, api.get(url.path, parse_qsl(url.query))
            except ApiError as exc:
                status = exc.status
                body = {
                    "kind": "Status",
                    "status": "Failure",
                    "message": exc.detail,
                    "code": status,
                }
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    if tls is not None:
        # the handshake runs in the handler's thread (its first read), not in accept()
        server.socket = tls.wrap_socket(
            server.socket, server_side=True, do_handshake_on_connect=False
        )
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        scheme = "https" if tls is not None else "http"
        yield f"{scheme}://127.0.0.1:{server.server_address[1]}", seen
    finally:
        server.shutdown()
        server.server_close()


@contextmanager
def silent_server(accepted: list[socket.socket] | None = None) -> Iterator[str]:
    """A TCP server on 127.0.0.1 that accepts connections and never answers (a hung server).

    ``accepted`` (when given) holds every connection made to it, complete once the block exits:
    tests count requests instead of timing them."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    accepted = [] if accepted is None else accepted
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.1)
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                continue
            accepted.append(conn)

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield f"127.0.0.1:{listener.getsockname()[1]}"
    finally:
        stop.set()
        thread.join(2)
        listener.setblocking(False)  # the ones still queued, which the thread had no turn for
        while True:
            try:
                accepted.append(listener.accept()[0])
            except OSError:
                break
        for conn in accepted:
            conn.close()
        listener.close()


def write_kubeconfig(
    path: Path, server: str, *, namespace: str = "default", ca_file: Path | None = None
) -> Path:
    """A kubeconfig for ``server``: its TLS certificate verified against ``ca_file`` when
    given, else not verified."""
    trust = f"certificate-authority: {ca_file}" if ca_file else "insecure-skip-tls-verify: true"
    path.write_text(
        "apiVersion: v1\nkind: Config\n"
        f'clusters: [{{name: c, cluster: {{server: "{server}", {trust}}}}}]\n'
        "users: [{name: u, user: {token: secret-token}}]\n"
        f"contexts: [{{name: ctx, context: {{cluster: c, user: u, namespace: {namespace}}}}}]\n"
        "current-context: ctx\n"
    )
    return path
