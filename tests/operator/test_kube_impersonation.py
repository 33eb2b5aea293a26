"""Impersonation through the one configuration: the kubeconfig user's ``as`` fields and the
``--as``/``--as-group`` flags become ``Impersonate-*`` header lines on every request, of the
operator's pooled API and of the command line's reads alike."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from workload_map.kube.api import Api
from workload_map.kube.client import connect
from workload_map.kube.errors import NotConfigured
from workload_map.kube.kubeconfig import resolve
from workload_map.kube.options import ConnectionOptions, connection_options
from workload_map.operator.main import build_parser


def _options(kubeconfig: Path, **kw: object) -> ConnectionOptions:
    return ConnectionOptions(kubeconfig=str(kubeconfig), **kw)  # type: ignore[arg-type]


class _Recorder(http.server.BaseHTTPRequestHandler):
    seen: list[list[tuple[str, str]]] = []

    def do_GET(self) -> None:
        type(self).seen.append(list(self.headers.items()))
        body = b'{"kind": "Status"}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_args: object) -> None:
        pass


@pytest.fixture
def recorder() -> Iterator[tuple[str, list[list[tuple[str, str]]]]]:
    seen: list[list[tuple[str, str]]] = []
    handler = type("Handler", (_Recorder,), {"seen": seen})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", seen
    finally:
        server.shutdown()
        server.server_close()


def _kubeconfig(path: Path, server: str, user: dict[str, object]) -> Path:
    path.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "current-context": "main",
                "clusters": [{"name": "c", "cluster": {"server": server}}],
                "users": [
                    {"name": "plain", "user": {"token": "t1"}},
                    {"name": "actor", "user": {"token": "t2", **user}},
                ],
                "contexts": [
                    {"name": "main", "context": {"cluster": "c", "user": "actor"}},
                    {"name": "other", "context": {"cluster": "c", "user": "plain"}},
                ],
            }
        )
    )
    return path


def _impersonation_lines(headers: list[tuple[str, str]]) -> list[tuple[str, str]]:
    return [(k, v) for k, v in headers if k.lower().startswith("impersonate-")]


def test_kubeconfig_as_fields_become_one_header_line_each(
    tmp_path: Path, recorder: tuple[str, list[list[tuple[str, str]]]]
) -> None:
    server, seen = recorder
    groups = ["system:serviceaccounts", "system:serviceaccounts:ns", "a,b"]
    kubeconfig = _kubeconfig(
        tmp_path / "kc",
        server,
        {
            "as": "system:serviceaccount:ns:sa",
            "as-groups": groups,
            "as-uid": "1234",
            "as-user-extra": {"scopes.example.com/x": ["one", "two"]},
        },
    )
    api = Api.connect(_options(kubeconfig))
    try:
        api.get("/version")
        api.request("GET", "/api", query=[("watch", "0")])
    finally:
        api.close()
    connect(_options(kubeconfig)).transport.get("/version")  # the CLI's reads: the same lines
    assert len(seen) == 3
    for headers in seen:
        lines = _impersonation_lines(headers)
        assert ("Impersonate-User", "system:serviceaccount:ns:sa") in lines
        assert ("Impersonate-Uid", "1234") in lines
        # every group its own line, in order; the comma inside one group stays in that group
        assert [v for k, v in lines if k == "Impersonate-Group"] == groups
        extra = [v for k, v in lines if k == "Impersonate-Extra-scopes.example.com%2Fx"]
        assert extra == ["one", "two"]
        assert ("authorization", "bearer t2") in [(k.lower(), v.lower()) for k, v in headers]


def test_flags_replace_the_kubeconfig_fields(
    tmp_path: Path, recorder: tuple[str, list[list[tuple[str, str]]]]
) -> None:
    server, seen = recorder
    kubeconfig = _kubeconfig(tmp_path / "kc", server, {"as": "from-file", "as-groups": ["g"]})
    args = build_parser().parse_args(
        [f"--kubeconfig={kubeconfig}", "--as=flag-user", "--as-group=x", "--as-group=y"]
    )
    api = Api.connect(connection_options(args, {}))
    try:
        api.get("/version")
    finally:
        api.close()
    lines = _impersonation_lines(seen[0])
    assert lines == [
        ("Impersonate-User", "flag-user"),
        ("Impersonate-Group", "x"),
        ("Impersonate-Group", "y"),
    ]


def test_a_context_without_as_fields_sends_none(
    tmp_path: Path, recorder: tuple[str, list[list[tuple[str, str]]]]
) -> None:
    server, seen = recorder
    kubeconfig = _kubeconfig(tmp_path / "kc", server, {"as": "someone"})
    api = Api.connect(_options(kubeconfig, context="other"))
    try:
        api.get("/version")
    finally:
        api.close()
    assert not api.impersonation
    assert _impersonation_lines(seen[0]) == []


def test_malformed_as_groups_names_the_field(tmp_path: Path) -> None:
    kubeconfig = _kubeconfig(tmp_path / "kc", "http://127.0.0.1:1", {"as-groups": "oops"})
    with pytest.raises(NotConfigured, match=r"users\[actor\]\.as-groups"):
        resolve(_options(kubeconfig))
