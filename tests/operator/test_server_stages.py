"""The webhook server times each admission request in stages, from the first bytes read off
the connection to the last byte sent, and keeps connections alive (one handshake)."""

from __future__ import annotations

import argparse
import base64
import json
import socket
import ssl
import time
import urllib.request
from pathlib import Path
from typing import Any

from prometheus_client.parser import text_string_to_metric_families

from tests.ports import free_port
from workload_map.operator.certs import FileCertLoader, issue
from workload_map.operator.controllers import OperatorConfig, OperatorContext
from workload_map.operator.server import Servers, TlsSource

HANDLER_SECONDS = 0.02
BODY_DELAY = 0.15


def _setup(tmp_path: Path) -> tuple[Any, TlsSource, OperatorContext]:
    """A serving certificate for 127.0.0.1 (and its CA) and an empty operator context."""
    issued = issue(["127.0.0.1"], 3600)
    (tmp_path / "tls.crt").write_bytes(issued.cert)
    (tmp_path / "tls.key").write_bytes(issued.key)
    tls = TlsSource()
    assert FileCertLoader(tmp_path, tls).check() is True
    ctx = OperatorContext(
        config=OperatorConfig(argparse.Namespace(), "default", "me"),
        api=None,  # type: ignore[arg-type]
        informers=None,  # type: ignore[arg-type]
        events=None,  # type: ignore[arg-type]
    )
    return issued, tls, ctx


def _review(uid: str) -> bytes:
    return json.dumps(
        {
            "apiVersion": "admission.k8s.io/v1",
            "kind": "AdmissionReview",
            "request": {"uid": uid, "operation": "CREATE", "object": {}},
        }
    ).encode()


def _read_response(tls: ssl.SSLSocket) -> dict[str, Any]:
    data = b""
    while b"\r\n\r\n" not in data:
        data += tls.recv(65536)
    head, _, body = data.partition(b"\r\n\r\n")
    length = next(
        int(line.split(b":", 1)[1])
        for line in head.split(b"\r\n")
        if line.lower().startswith(b"content-length:")
    )
    while len(body) < length:
        body += tls.recv(65536)
    answer: dict[str, Any] = json.loads(body[:length])
    return answer


def _post(conn: ssl.SSLSocket, path: str, body: bytes) -> None:
    conn.sendall(
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n".encode()
        + body
    )


def test_queued_counts_from_the_bytes_read_not_from_the_handler(tmp_path: Path) -> None:
    """Two requests read in the same loop turn: the second one's clock runs while the first
    one's (inline) handler holds the loop."""
    issued, tls, ctx = _setup(tmp_path)

    def hold(_request: dict[str, Any]) -> dict[str, Any]:
        time.sleep(BODY_DELAY)  # on the loop: nothing else is read meanwhile
        return {"allowed": True}

    def slow(_request: dict[str, Any]) -> dict[str, Any]:
        time.sleep(HANDLER_SECONDS)
        return {"allowed": True}

    ctx.add_webhook("/hold", hold, inline=True)
    ctx.add_webhook("/hook", slow, inline=True)
    servers = Servers(ctx, health=None, metrics=None, webhook=("127.0.0.1", free_port()), tls=tls)
    servers.start()
    assert servers.webhook is not None
    client = ssl.create_default_context(cadata=issued.ca_cert.decode())
    conns = []
    try:
        for _ in range(3):
            raw = socket.create_connection(servers.webhook, timeout=10)
            conns.append(client.wrap_socket(raw, server_hostname="127.0.0.1"))
        _post(conns[0], "/hold", _review("hold"))
        time.sleep(BODY_DELAY / 3)  # the loop is in hold() now
        _post(conns[1], "/hook", _review("b"))
        _post(conns[2], "/hook", _review("c"))
        for conn in conns:
            assert _read_response(conn)["response"]["allowed"] is True
        deadline = time.monotonic() + 5
        while len(servers.stages.get(("/hook", "queued"), ())) < 2:
            assert time.monotonic() < deadline
            time.sleep(0.01)
        queued = sorted(servers.stages[("/hook", "queued")])
        # one of the two waited for the other's handler after both were read
        assert queued[1] >= HANDLER_SECONDS * 0.9
        if hasattr(socket, "TCP_INFO"):
            # both sat in the kernel's receive queue, unread, for the rest of hold() (about
            # 2/3 of BODY_DELAY; TCP_INFO counts in jiffies, up to 10 ms a step)
            in_kernel = sorted(servers.stages[("/hook", "socket")])
            assert len(in_kernel) == 2
            assert in_kernel[0] >= BODY_DELAY / 2, in_kernel
            assert in_kernel[1] <= BODY_DELAY + 0.05, in_kernel
    finally:
        for conn in conns:
            conn.close()
        servers.stop()


def test_stages_are_timed_from_first_bytes_to_last_byte(tmp_path: Path) -> None:
    issued, tls, ctx = _setup(tmp_path)

    def slow(request: dict[str, Any]) -> dict[str, Any]:
        time.sleep(HANDLER_SECONDS)
        return {"allowed": request["uid"] != "deny"}

    ctx.add_webhook("/hook", slow)
    mport, wport = free_port(), free_port()
    servers = Servers(
        ctx, health=None, metrics=("127.0.0.1", mport), webhook=("127.0.0.1", wport), tls=tls
    )
    servers.start()
    try:
        client = ssl.create_default_context(cadata=issued.ca_cert.decode())
        with socket.create_connection(("127.0.0.1", wport), timeout=10) as raw:
            # accepted now, the ClientHello later: the handshake is timed from the accept
            time.sleep(BODY_DELAY)
            with client.wrap_socket(raw, server_hostname="127.0.0.1") as conn:
                for uid in ("a", "nowhere", "deny", "c"):
                    body = _review(uid)
                    if uid == "nowhere":
                        # a request no handler takes (404) must not leave its arrival stamp
                        # to the next request on the connection
                        conn.sendall(
                            f"POST /nope HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                            f"Content-Length: {len(body)}\r\n\r\n".encode()
                            + body
                        )
                        data = b""
                        while b"\r\n\r\n" not in data:
                            data += conn.recv(65536)
                        assert data.startswith(b"HTTP/1.1 404")
                        length = int(data.lower().split(b"content-length:")[1].split(b"\r\n")[0])
                        while len(data.partition(b"\r\n\r\n")[2]) < length:
                            data += conn.recv(65536)
                        time.sleep(BODY_DELAY)
                        continue
                    head = (
                        f"POST /hook HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
                    ).encode()
                    if uid == "c":
                        # the headers first, the body later: the wait counts as queued
                        conn.sendall(head)
                        time.sleep(BODY_DELAY)
                        conn.sendall(body)
                    else:
                        conn.sendall(head + body)
                    answer = _read_response(conn)
                    assert answer["response"]["uid"] == uid
                    assert answer["response"]["allowed"] is (uid != "deny")
                session = conn.session
                ticket_seen = session is not None and session.has_ticket
        # the last answer is recorded just after its bytes left: the client can be faster
        deadline = time.monotonic() + 5
        while servers.stage_totals.get(("/hook", "total"), [0, 0])[1] < 3:
            assert time.monotonic() < deadline
            time.sleep(0.01)
        stages = {step: list(servers.stages[("/hook", step)]) for step in ("queued", "handler")}
        total = list(servers.stages[("/hook", "total")])
        assert len(total) == 3 and all(len(v) == 3 for v in stages.values())
        assert all(h >= HANDLER_SECONDS for h in stages["handler"])
        for q, h, t in zip(stages["queued"], stages["handler"], total, strict=True):
            assert t >= q + h
        # the last request's wait for its body counts as queued, and as body
        assert stages["queued"][2] >= BODY_DELAY * 0.9
        body = list(servers.stages[("/hook", "body")])
        assert body[2] >= BODY_DELAY * 0.9 and body[0] < BODY_DELAY and body[1] < BODY_DELAY
        if hasattr(socket, "TCP_INFO"):
            # an idle loop reads each request as it arrives: well under the body delay
            assert all(v < BODY_DELAY / 2 for v in servers.stages[("/hook", "socket")])
        # the second one came BODY_DELAY after a 404 on the same connection
        assert stages["queued"][0] < BODY_DELAY and stages["queued"][1] < BODY_DELAY
        # three requests on one kept-alive connection: one handshake
        assert tls.handshakes == 1
        assert len(servers.handshake_times) == 1
        assert BODY_DELAY * 0.9 <= servers.handshake_times[0] < BODY_DELAY + 2
        # and no session ticket: the API server never resumes, so none is issued
        assert ticket_seen is False
        assert servers.stage_totals[("/hook", "total")][1] == 3

        with urllib.request.urlopen(f"http://127.0.0.1:{mport}/metrics", timeout=5) as r:
            text = r.read().decode()
        samples = {
            (s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(text)
            for s in family.samples
        }
        name = "workloadmap_operator_webhook_request_seconds"
        for stage in ("total", "write"):
            assert samples[(f"{name}_count", (("path", "/hook"), ("stage", stage)))] == 3
        assert ((name, (("path", "/hook"), ("quantile", "0.5"), ("stage", "handler")))) in samples
        assert samples[("workloadmap_operator_webhook_tls_handshakes_total", ())] == 1
        assert samples[("workloadmap_operator_webhook_tls_handshake_seconds_count", ())] == 1
        assert samples[("workloadmap_operator_admission_requests_total", ())] == 3
        if Path("/proc/self/schedstat").exists():  # Linux: the loop thread's own CPU time
            thread = "workloadmap_operator_webhook_loop_thread_seconds_total"
            assert samples[(thread, (("state", "running"),))] > 0
    finally:
        servers.stop()


def test_reviews_are_decoded_exactly_and_garbage_is_refused(tmp_path: Path) -> None:
    issued, tls, ctx = _setup(tmp_path)
    seen: list[dict[str, Any]] = []

    def keep(request: dict[str, Any]) -> dict[str, Any]:
        seen.append(request)
        return {"allowed": True, "patch": [{"op": "add", "path": "/n", "value": "ü"}]}

    ctx.add_webhook("/keep", keep, inline=True)
    servers = Servers(ctx, health=None, metrics=None, webhook=("127.0.0.1", free_port()), tls=tls)
    servers.start()
    assert servers.webhook is not None
    client = ssl.create_default_context(cadata=issued.ca_cert.decode())
    big = 123456789012345678901234567890
    try:
        with socket.create_connection(servers.webhook, timeout=10) as raw:
            with client.wrap_socket(raw, server_hostname="127.0.0.1") as conn:
                # an integer beyond 64 bits stays exact; a float beyond double range is inf,
                # as the json module reads it
                body = (
                    b'{"request": {"uid": "u", "object": {"big": '
                    + str(big).encode()
                    + b', "huge": 1e400, "name": "\\u00fc"}}}'
                )
                _post(conn, "/keep", body)
                answer = _read_response(conn)
                assert answer["response"]["uid"] == "u"
                patch = json.loads(base64.b64decode(answer["response"]["patch"]))
                assert patch == [{"op": "add", "path": "/n", "value": "ü"}]
                _post(conn, "/keep", b"{not json")
                data = b""
                while b"\r\n\r\n" not in data:
                    data += conn.recv(65536)
                assert data.startswith(b"HTTP/1.1 400")
        obj = seen[0]["object"]
        assert obj["big"] == big and isinstance(obj["big"], int)
        assert obj["huge"] == float("inf") and obj["name"] == "ü"
        assert len(seen) == 1
    finally:
        servers.stop()
