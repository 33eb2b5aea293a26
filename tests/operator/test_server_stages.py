"""The webhook server times each admission request in stages, from the first bytes read off
the connection to the last byte sent, and keeps connections alive (one handshake)."""

from __future__ import annotations

import argparse
import base64
import fcntl
import json
import socket
import ssl
import struct
import sys
import termios
import threading
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.ports import free_port
from workload_map.operator.certs import FileCertLoader, issue
from workload_map.operator.controllers import OperatorConfig, OperatorContext
from workload_map.operator.server import Servers, TlsSource, _Stamped

# times the test's clock moves by: each stage comes out exactly, on any machine (issue 26)
HANDLER_SECONDS = 0.02
BODY_DELAY = 0.15
# a bound for waits on the server's thread, never reached unless something hangs
WAIT = 60.0


class StageClock:
    """The servers' clock as the test moves it: ``now`` changes only by :meth:`advance`, and
    ``looks`` counts the reads, so the test can wait for the server to have taken a stamp
    before it lets time pass."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.looks = 0
        self._changed = threading.Condition()

    def __call__(self) -> float:
        with self._changed:
            self.looks += 1
            self._changed.notify_all()
            return self.now

    def advance(self, seconds: float) -> None:
        with self._changed:
            self.now += seconds

    def wait_for_looks(self, count: int) -> None:
        with self._changed:
            assert self._changed.wait_for(lambda: self.looks >= count, WAIT), self.looks


def _eventually(check: Callable[[], bool], what: str) -> None:
    """Wait for a record the server makes just after its answer left (the client can be
    faster); the bound only ends a hang."""
    deadline = time.monotonic() + WAIT
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {WAIT} s waiting for {what}")
        time.sleep(0.01)


def _delivered(conn: socket.socket) -> None:
    """Wait until the peer's kernel has acknowledged everything sent on ``conn`` (Linux: its
    send queue is empty), so the bytes sit in the server's receive queue."""
    if not sys.platform.startswith("linux"):
        return
    _eventually(
        lambda: struct.unpack("i", fcntl.ioctl(conn.fileno(), termios.TIOCOUTQ, b"\0" * 4))[0] == 0,
        "the server's kernel to receive the request",
    )


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
    clock = StageClock()
    holding, posted = threading.Event(), threading.Event()

    def hold(_request: dict[str, Any]) -> dict[str, Any]:
        # on the loop: nothing else is read until both other requests are in the kernel
        holding.set()
        assert posted.wait(WAIT)
        return {"allowed": True}

    def slow(_request: dict[str, Any]) -> dict[str, Any]:
        clock.advance(HANDLER_SECONDS)
        return {"allowed": True}

    ctx.add_webhook("/hold", hold, inline=True)
    ctx.add_webhook("/hook", slow, inline=True)
    servers = Servers(
        ctx, health=None, metrics=None, webhook=("127.0.0.1", free_port()), tls=tls, clock=clock
    )
    servers.start()
    assert servers.webhook is not None
    client = ssl.create_default_context(cadata=issued.ca_cert.decode())
    conns = []
    try:
        for _ in range(3):
            raw = socket.create_connection(servers.webhook, timeout=WAIT)
            conns.append(client.wrap_socket(raw, server_hostname="127.0.0.1"))
        _post(conns[0], "/hold", _review("hold"))
        assert holding.wait(WAIT)  # the loop is in hold() now
        _post(conns[1], "/hook", _review("b"))
        _post(conns[2], "/hook", _review("c"))
        for conn in conns[1:]:
            _delivered(conn)  # both readable at the loop's next look
        posted.set()
        for conn in conns:
            assert _read_response(conn)["response"]["allowed"] is True
        _eventually(
            lambda: len(servers.stages.get(("/hook", "queued"), ())) == 2, "two queued stages"
        )
        # one of the two waited for the other's handler after both were read: exactly the
        # time the test's clock moved in that handler
        queued = sorted(servers.stages[("/hook", "queued")])
        assert queued == pytest.approx([0.0, HANDLER_SECONDS])
        assert sorted(servers.stages[("/hook", "handler")]) == pytest.approx([HANDLER_SECONDS] * 2)
        if hasattr(socket, "TCP_INFO"):
            # the kernel's own figure (not the test's clock) is recorded for both; its value
            # is the kernel's, checked by its parsing below, not by this machine's speed
            in_kernel = list(servers.stages[("/hook", "socket")])
            assert len(in_kernel) == 2 and all(v >= 0 for v in in_kernel), in_kernel
    finally:
        posted.set()
        for conn in conns:
            conn.close()
        servers.stop()


class _TcpInfoSocket:
    """A socket whose ``TCP_INFO`` says its newest segment arrived ``ms`` milliseconds ago."""

    def __init__(self, ms: int | None) -> None:
        self.ms = ms

    def getsockopt(self, level: int, option: int, size: int) -> bytes:
        assert (level, option, size) == (socket.IPPROTO_TCP, getattr(socket, "TCP_INFO", 11), 104)
        if self.ms is None:
            raise OSError("not a TCP socket")
        info = bytearray(size)
        struct.pack_into("I", info, 52, self.ms)  # tcpi_last_data_recv
        return bytes(info)


def test_the_socket_stage_is_the_kernels_last_data_received() -> None:
    stamped = _Stamped(None, {}, clock=StageClock())  # type: ignore[arg-type]
    assert stamped._in_kernel() == -1.0  # no socket: unknown
    stamped.sock = _TcpInfoSocket(1234)
    assert stamped._in_kernel() == pytest.approx(1.234)
    stamped.sock = _TcpInfoSocket(None)
    assert stamped._in_kernel() == -1.0


def test_stages_are_timed_from_first_bytes_to_last_byte(tmp_path: Path) -> None:
    issued, tls, ctx = _setup(tmp_path)
    clock = StageClock()

    def slow(request: dict[str, Any]) -> dict[str, Any]:
        clock.advance(HANDLER_SECONDS)
        return {"allowed": request["uid"] != "deny"}

    ctx.add_webhook("/hook", slow)
    mport, wport = free_port(), free_port()
    servers = Servers(
        ctx,
        health=None,
        metrics=("127.0.0.1", mport),
        webhook=("127.0.0.1", wport),
        tls=tls,
        clock=clock,
    )
    servers.start()
    try:
        client = ssl.create_default_context(cadata=issued.ca_cert.decode())
        looks = clock.looks
        with socket.create_connection(("127.0.0.1", wport), timeout=WAIT) as raw:
            # accepted now, the ClientHello later: the handshake is timed from the accept
            clock.wait_for_looks(looks + 1)  # the loop accepted the connection
            clock.advance(BODY_DELAY)
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
                        clock.advance(BODY_DELAY)
                        continue
                    head = (
                        f"POST /hook HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
                    ).encode()
                    if uid == "c":
                        # the headers first, the body later: the wait counts as queued. The
                        # previous answer recorded, the next look at the clock is this
                        # request's arrival stamp; time passes only after it
                        _eventually(
                            lambda: servers.stage_totals[("/hook", "total")][1] == 2,
                            "the second answer recorded",
                        )
                        looks = clock.looks
                        conn.sendall(head)
                        clock.wait_for_looks(looks + 1)
                        clock.advance(BODY_DELAY)
                        conn.sendall(body)
                    else:
                        conn.sendall(head + body)
                    answer = _read_response(conn)
                    assert answer["response"]["uid"] == uid
                    assert answer["response"]["allowed"] is (uid != "deny")
                session = conn.session
                ticket_seen = session is not None and session.has_ticket
        # the last answer is recorded just after its bytes left: the client can be faster
        _eventually(
            lambda: servers.stage_totals.get(("/hook", "total"), [0, 0])[1] == 3,
            "the third answer recorded",
        )
        stages = {step: list(servers.stages[("/hook", step)]) for step in STAGE_NAMES}
        assert all(len(v) == 3 for v in stages.values()), stages
        # on the test's clock every stage is exact: only the handlers, the wait for the last
        # body and the handshake's wait for the ClientHello moved it
        assert stages["handler"] == pytest.approx([HANDLER_SECONDS] * 3)
        # the second one came BODY_DELAY after a 404 on the same connection: not queued for
        # it; the last request's wait for its body counts as queued, and as body
        assert stages["queued"] == pytest.approx([0.0, 0.0, BODY_DELAY])
        assert stages["body"] == pytest.approx([0.0, 0.0, BODY_DELAY])
        assert stages["write"] == pytest.approx([0.0] * 3)
        assert stages["total"] == pytest.approx(
            [HANDLER_SECONDS, HANDLER_SECONDS, BODY_DELAY + HANDLER_SECONDS]
        )
        if hasattr(socket, "TCP_INFO"):
            # the kernel's figure: recorded for each request (its parsing is tested above)
            assert len(servers.stages[("/hook", "socket")]) == 3
        # three requests on one kept-alive connection: one handshake, from the accept to done
        assert tls.handshakes == 1
        assert list(servers.handshake_times) == pytest.approx([BODY_DELAY])
        # and no session ticket: the API server never resumes, so none is issued
        assert ticket_seen is False
        assert servers.stage_totals[("/hook", "total")][1] == 3

        with urllib.request.urlopen(f"http://127.0.0.1:{mport}/metrics", timeout=WAIT) as r:
            text = r.read().decode()
        samples = {
            (s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(text)
            for s in family.samples
        }
        name = "workloadmap_operator_webhook_request_seconds"
        for stage in ("total", "write"):
            assert samples[(f"{name}_count", (("path", "/hook"), ("stage", stage)))] == 3
        total_sum = samples[(f"{name}_sum", (("path", "/hook"), ("stage", "total")))]
        assert total_sum == pytest.approx(3 * HANDLER_SECONDS + BODY_DELAY)
        assert ((name, (("path", "/hook"), ("quantile", "0.5"), ("stage", "handler")))) in samples
        assert samples[("workloadmap_operator_webhook_tls_handshakes_total", ())] == 1
        assert samples[("workloadmap_operator_webhook_tls_handshake_seconds_count", ())] == 1
        assert samples[("workloadmap_operator_admission_requests_total", ())] == 3
        if Path("/proc/self/schedstat").exists():  # Linux: the loop thread's own CPU time
            thread = "workloadmap_operator_webhook_loop_thread_seconds_total"
            # exported for both states (the kernel's figures: present, never compared)
            assert {(thread, (("state", state),)) for state in ("running", "waiting")} <= set(
                samples
            )
    finally:
        servers.stop()


STAGE_NAMES = ("queued", "body", "handler", "write", "total")


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
