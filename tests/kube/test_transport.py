"""The one request path on an in-memory sender: the request it builds, errors per status,
retries of reads on 429/5xx (counted, with the waits the injected sleep was asked for), one
credentials refresh on 401, the pager, and the watch (bookmarks, resume, 410)."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import pytest

from workload_map.kube.auth import Credentials
from workload_map.kube.cache import Informer
from workload_map.kube.errors import (
    ApiError,
    Conflict,
    Forbidden,
    Gone,
    Invalid,
    NotFound,
    TooManyRequests,
    Unauthorized,
    Unreachable,
)
from workload_map.kube.kubeconfig import Impersonation, ResolvedConfig
from workload_map.kube.pager import list_all
from workload_map.kube.transport import MAX_WAIT, READ_RETRIES, KubeTransport
from workload_map.kube.watch import Watch, WatchExpired


@dataclass
class Sent:
    method: str
    path: str
    query: list[tuple[str, str]]
    headers: list[tuple[str, str]]
    body: bytes | None
    timeout: float | None
    stream: bool


@dataclass
class _Reply:
    status: int
    body: bytes
    head: dict[str, str] = field(default_factory=dict)
    finished: list[bool] = field(default_factory=list)

    def getheader(self, name: str, default: str = "") -> str:
        return self.head.get(name.lower(), default)

    def read1(self, amount: int = 1 << 16) -> bytes:
        out, self.body = self.body[:amount], self.body[amount:]
        return out

    def finish(self, *, reuse: bool) -> None:
        self.finished.append(reuse)

    def abort(self) -> None:
        self.body = b""


Answer = tuple[int, Any] | tuple[int, Any, dict[str, str]]


class FakeSender:
    """Answers from a script: ``answer(sent) -> (status, JSON or bytes[, headers])``."""

    def __init__(self, answer: Callable[[Sent], Answer]) -> None:
        self.answer = answer
        self.sent: list[Sent] = []
        self.resets = 0

    def send(
        self,
        method: str,
        target: str,
        headers: list[tuple[str, str]],
        body: bytes | None,
        *,
        timeout: float | None,
        stream: bool = False,
    ) -> _Reply:
        url = urlsplit(target)
        sent = Sent(method, url.path, parse_qsl(url.query), headers, body, timeout, stream)
        self.sent.append(sent)
        status, payload, *rest = self.answer(sent)
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        head = {k.lower(): v for k, v in (rest[0] if rest else {}).items()}
        return _Reply(status, data, head)

    def reset(self) -> None:
        self.resets += 1

    def close(self) -> None:
        pass


def _resolved(**kw: Any) -> ResolvedConfig:
    base: dict[str, Any] = {
        "server": "https://k.example:6443/prefix",
        "namespace": "ml",
        "context": "c",
        "source": "test",
        "token": "t0",
    }
    return ResolvedConfig(**{**base, **kw})


def _transport(
    answer: Callable[[Sent], Answer], **kw: Any
) -> tuple[KubeTransport, FakeSender, list[float]]:
    sender = FakeSender(answer)
    waits: list[float] = []
    resolved = kw.pop("resolved", None) or _resolved()
    transport = KubeTransport(resolved, sender=sender, sleep=waits.append, **kw)
    return transport, sender, waits


def _status(code: int, message: str) -> dict[str, Any]:
    return {"kind": "Status", "code": code, "message": message, "reason": "R"}


# -- the request ------------------------------------------------------------------------------
def test_the_request_carries_prefix_query_credentials_impersonation_and_timeout() -> None:
    resolved = _resolved(impersonation=Impersonation(user="u", groups=("a", "b,c")), timeout=7.0)
    transport, sender, _ = _transport(lambda s: (200, {"ok": 1}), resolved=resolved)
    assert transport.get("/api/v1/pods", [("limit", "5")]) == {"ok": 1}
    assert transport.request("PATCH", "/x", {"a": 1}, content_type="application/merge-patch+json")
    get, patch = sender.sent
    assert (get.method, get.path, get.query) == ("GET", "/prefix/api/v1/pods", [("limit", "5")])
    assert get.timeout == 7.0 and not get.stream and get.body is None
    headers = get.headers
    assert ("Authorization", "Bearer t0") in headers
    assert [v for k, v in headers if k == "Impersonate-Group"] == ["a", "b,c"]
    assert ("Impersonate-User", "u") in headers and ("Accept", "application/json") in headers
    assert json.loads(patch.body or b"") == {"a": 1}
    assert ("Content-Type", "application/merge-patch+json") in patch.headers
    assert (transport.calls, transport.writes) == (2, 1)


@pytest.mark.parametrize(
    ("status", "kind", "words"),
    [
        (404, NotFound, "not found: cannot delete jobsets.jobset.x-k8s.io/train"),
        (409, Conflict, "conflict: cannot delete"),
        (410, Gone, "gone: cannot delete"),
        (422, Invalid, "invalid: cannot delete"),
        (429, TooManyRequests, "too many requests"),
        (403, Forbidden, "forbidden: cannot delete jobsets.jobset.x-k8s.io/train"),
        (401, Unauthorized, "while trying to delete"),
        (500, ApiError, "answered 500 to delete"),
    ],
)
def test_errors_per_status_name_the_verb_and_the_object(
    status: int, kind: type[ApiError], words: str
) -> None:
    transport, _, _ = _transport(lambda s: (status, _status(status, "the server's words")))
    with pytest.raises(kind, match=words) as caught:
        transport.request("DELETE", "/x", what="jobsets.jobset.x-k8s.io/train")
    assert caught.value.status == status and caught.value.detail == "the server's words"
    assert "the server's words" in str(caught.value)


# -- retries ----------------------------------------------------------------------------------
def test_a_read_answered_503_is_retried_with_backoff_then_answers() -> None:
    answers = iter([(503, {}), (503, {}), (200, {"items": []})])
    transport, sender, waits = _transport(lambda s: next(answers))
    assert transport.get("/api/v1/pods") == {"items": []}
    assert len(sender.sent) == 3 and transport.retries == 2
    assert waits == [0.5, 1.0]  # exponential, from the injected sleep


def test_retry_after_is_honoured_and_bounded() -> None:
    answers = iter([(429, {}, {"Retry-After": "3"}), (429, {}, {"Retry-After": "900"}), (200, {})])
    transport, _, waits = _transport(lambda s: next(answers))
    transport.get("/x")
    assert waits == [3.0, MAX_WAIT]


def test_retries_are_bounded_and_the_last_error_is_raised() -> None:
    transport, sender, waits = _transport(lambda s: (503, _status(503, "busy")))
    with pytest.raises(ApiError, match="answered 503"):
        transport.get("/x")
    assert len(sender.sent) == READ_RETRIES + 1 and len(waits) == READ_RETRIES


def test_writes_are_not_retried() -> None:
    transport, sender, waits = _transport(lambda s: (503, _status(503, "busy")))
    with pytest.raises(ApiError):
        transport.request("POST", "/x", {"a": 1})
    assert len(sender.sent) == 1 and waits == []


# -- 401: refresh once ------------------------------------------------------------------------
def test_a_401_runs_the_exec_plugin_again_once_and_retries() -> None:
    tokens = iter(["old", "new", "newer"])
    runs: list[list[str]] = []

    def run_exec(argv: list[str], env: dict[str, str]) -> str:
        runs.append(argv)
        status = {"token": next(tokens)}
        return json.dumps({"apiVersion": "client.authentication.k8s.io/v1", "status": status})

    resolved = _resolved(token=None, exec_plugin={"command": "plugin", "args": ["get"]})
    credentials = Credentials(resolved, run_exec=run_exec)

    def answer(sent: Sent) -> Answer:
        auth = dict(sent.headers)["Authorization"]
        return (200, {"auth": auth}) if auth == "Bearer new" else (401, _status(401, "expired"))

    transport, _, _ = _transport(answer, resolved=resolved, credentials=credentials)
    assert transport.get("/x") == {"auth": "Bearer new"}
    assert runs == [["plugin", "get"], ["plugin", "get"]] and credentials.refreshes == 1
    # still refused after the refresh: one refresh per request, then the error
    transport2, sender2, _ = _transport(
        lambda s: (401, _status(401, "no")), resolved=resolved, credentials=credentials
    )
    with pytest.raises(Unauthorized):
        transport2.get("/x")
    assert len(sender2.sent) == 2 and credentials.refreshes == 2


def test_a_401_with_a_static_token_is_not_retried() -> None:
    transport, sender, _ = _transport(lambda s: (401, _status(401, "no")))
    with pytest.raises(Unauthorized):
        transport.get("/x")
    assert len(sender.sent) == 1


def test_a_token_file_is_read_again_after_a_401(tmp_path: Any) -> None:
    token = tmp_path / "token"
    token.write_text("first\n")
    resolved = _resolved(token=None, token_file=str(token))

    def answer(sent: Sent) -> Answer:
        if dict(sent.headers)["Authorization"] == "Bearer second":
            return (200, {})
        token.write_text("second")  # rotated meanwhile
        return (401, _status(401, "expired"))

    transport, sender, _ = _transport(answer, resolved=resolved)
    transport.get("/x")
    assert len(sender.sent) == 2


def test_an_exec_plugin_without_credentials_is_a_clear_error() -> None:
    resolved = _resolved(token=None, exec_plugin={"command": "plugin"})
    credentials = Credentials(resolved, run_exec=lambda argv, env: json.dumps({"status": {}}))
    with pytest.raises(Exception, match="neither a token nor a client certificate"):
        credentials.authorization()


# -- the pager --------------------------------------------------------------------------------
def test_one_pager_follows_continue_tokens() -> None:
    pages = {
        None: {"metadata": {"continue": "a", "resourceVersion": "1"}, "items": [{"n": 1}]},
        "a": {"metadata": {"continue": "b", "resourceVersion": "1"}, "items": [{"n": 2}]},
        "b": {"metadata": {"resourceVersion": "9"}, "items": [{"n": 3}]},
    }
    transport, sender, _ = _transport(lambda s: (200, pages[dict(s.query).get("continue")]))
    items, version = list_all(transport, "/api/v1/pods", [("labelSelector", "a=b")], limit=1)
    assert [i["n"] for i in items] == [1, 2, 3] and version == "9"
    assert all(
        ("limit", "1") in s.query and ("labelSelector", "a=b") in s.query for s in sender.sent
    )
    assert len(sender.sent) == 3


def test_the_pager_names_the_list_in_errors() -> None:
    transport, _, _ = _transport(lambda s: (403, _status(403, "user x cannot list")))
    with pytest.raises(Forbidden, match="forbidden: cannot list pods: user x cannot list"):
        list_all(transport, "/api/v1/pods", what="pods")


# -- the watch --------------------------------------------------------------------------------
def _lines(*docs: dict[str, Any]) -> bytes:
    return b"".join(json.dumps(d).encode() + b"\n" for d in docs)


def test_the_watch_asks_for_bookmarks_resumes_from_the_last_version_and_raises_on_410() -> None:
    obj = {"metadata": {"name": "a", "resourceVersion": "5"}}
    scripts = iter(
        [
            _lines(
                {"type": "ADDED", "object": obj},
                {"type": "BOOKMARK", "object": {"metadata": {"resourceVersion": "8"}}},
            ),
            _lines({"type": "ERROR", "object": {"code": 410, "message": "too old"}}),
        ]
    )
    transport, sender, _ = _transport(lambda s: (200, next(scripts)))
    watch = Watch(transport, "/api/v1/pods", resource_version="3", kind="Pod", api_version="v1")
    seen = []
    with pytest.raises(WatchExpired, match="resource version 8"):
        for event in watch.events():
            seen.append((event.type, event.object["kind"]))
    assert seen == [("ADDED", "Pod")]  # a bookmark only moves the version
    first, second = (dict(s.query) for s in sender.sent)
    assert first["resourceVersion"] == "3" and first["allowWatchBookmarks"] == "true"
    assert second["resourceVersion"] == "8"  # resumed after the bookmark
    assert all(s.stream for s in sender.sent)


def test_an_informer_lists_again_after_410_and_diffs_its_cache() -> None:
    lists = iter(
        [
            [{"metadata": {"name": "a"}}, {"metadata": {"name": "b"}}],
            [{"metadata": {"name": "b"}}, {"metadata": {"name": "c"}}],
        ]
    )
    done = threading.Event()

    def answer(sent: Sent) -> Answer:
        if not sent.stream:
            items = next(lists, None)
            if items is None:
                done.set()
                return (500, {})
            return (200, {"metadata": {"resourceVersion": "10"}, "items": items})
        if len([s for s in sender_ref[0].sent if s.stream]) == 1:
            return (410, _status(410, "too old"))  # the first watch: gone
        done.set()
        return (200, b"")

    transport, sender, _ = _transport(answer)
    sender_ref = [sender]
    informer = Informer(transport, "/api/v1/configmaps", kind="ConfigMap", api_version="v1")
    events: list[tuple[str, str]] = []
    informer.add_handler(lambda e, o: events.append((e, o["metadata"]["name"])))
    informer.stopping.wait = lambda t=None: done.is_set()  # type: ignore[method-assign,assignment]
    run = threading.Thread(target=informer._run, daemon=True)
    run.start()
    assert done.wait(10)
    informer.stop()
    run.join(10)
    assert informer.lists == 2 and informer.expired == 1
    assert events[:2] == [("ADDED", "a"), ("ADDED", "b")]
    assert sorted(events[2:5]) == [("ADDED", "c"), ("DELETED", "a"), ("MODIFIED", "b")]
    assert sorted(o["metadata"]["name"] for o in informer.list()) == ["b", "c"]


def test_an_unreachable_command_fails_fast_afterwards() -> None:
    class Down(FakeSender):
        def send(self, *a: Any, **k: Any) -> _Reply:
            self.sent.append(Sent("GET", "", [], [], None, None, False))
            raise ConnectionRefusedError("refused")

    sender = Down(lambda s: (200, {}))
    transport = KubeTransport(_resolved(), sender=sender, remember_unreachable=True)
    for _ in range(2):
        with pytest.raises(Unreachable, match="cannot reach the cluster"):
            transport.get("/x")
    assert len(sender.sent) == 1


def test_a_write_after_the_server_closed_an_idle_connection_goes_on_a_fresh_one() -> None:
    """The pooled sender notices that the server closed an idle kept-alive connection (as the
    API server does after its idle timeout) before it sends a write, which is not retried."""
    import socket

    from workload_map.kube.api import Api

    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    accepted: list[int] = []
    closed = threading.Event()

    def serve() -> None:
        for _ in range(2):
            conn, _ = listener.accept()
            accepted.append(1)
            with conn:
                data = b""
                while b"\r\n\r\n" not in data:
                    data += conn.recv(65536)
                head, _, body = data.partition(b"\r\n\r\n")
                length = next(
                    (
                        int(line.split(b":")[1])
                        for line in head.split(b"\r\n")
                        if line.lower().startswith(b"content-length")
                    ),
                    0,
                )
                while len(body) < length:
                    body += conn.recv(65536)
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}")
            closed.set()  # closed without "Connection: close": the client kept it

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    api = Api(KubeTransport(_resolved(server=f"http://127.0.0.1:{port}"), pooled=True))
    try:
        assert api.get("/version") == {}
        assert closed.wait(10)
        assert api.merge_patch("/x", {"a": 1}) == {}
        assert len(accepted) == 2
    finally:
        api.close()
        listener.close()


@pytest.mark.parametrize(
    "body",
    [
        b'{"items": [{"a": 1, "b": [true, null, 1.5, -0.0, "\\u00e9"]}], "n": 12345678901234567890123}',
        b'{"a": 1, "a": 2}',  # the last one wins, as in json.loads
        b"[1e400]",  # out of msgspec's range: read by json.loads (inf)
        b'["\\ud800"]',  # a lone surrogate: json.loads keeps it
        b'  {"x": "y"}  ',
    ],
)
def test_an_answer_reads_as_json_loads_reads_it(body: bytes) -> None:
    transport, _, _ = _transport(lambda s: (200, body))
    assert transport.get("/x") == json.loads(body)


def test_an_answer_that_is_not_json_is_an_api_error() -> None:
    transport, _, _ = _transport(lambda s: (200, b"{not json"))
    with pytest.raises(ApiError, match="the API server sent non-JSON to GET /x"):
        transport.get("/x")
