"""The HTTP transport end to end over 127.0.0.1: timeouts, headers, errors, kubeconfig forms, and
that offline commands never import the ``kubernetes`` package (nor live ones, on the fast path)."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from tests.cli.fake_cluster import JOBSET, FakeAPI, obj
from tests.cli.http_fake import serve, silent_server, write_kubeconfig
from tests.fresh import fresh_python
from workload_map.cli.config import parse_request_timeout
from workload_map.cli.exits import UsageError
from workload_map.kube import ConnectionOptions, Unreachable, connect, wire
from workload_map.kube.errors import ClusterError, NotConfigured, NotFound
from workload_map.kube.kubeconfig import resolve
from workload_map.kube.transport import format_timeout

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("30", 30.0),
        ("2.5", 2.5),
        ("5s", 5.0),
        ("1m", 60.0),
        ("1m30s", 90.0),
        ("500ms", 0.5),
        ("1h", 3600.0),
    ],
)
def test_request_timeout_forms(text: str, seconds: float) -> None:
    assert parse_request_timeout(text) == seconds


def test_request_timeout_zero_means_none_and_bad_forms_are_usage_errors() -> None:
    assert parse_request_timeout("0") is None
    assert parse_request_timeout("0s") is None
    for bad in ("abc", "5x", "-1", "s", "1m 2s", "inf", "nan"):
        with pytest.raises(UsageError, match="--request-timeout"):
            parse_request_timeout(bad)
    assert (format_timeout(30), format_timeout(2.5), format_timeout(90)) == ("30s", "2.5s", "1m30s")


@pytest.mark.parametrize("scheme", ["http", "https"])
def test_hung_server_times_out_naming_server_and_timeout(
    scheme: str, tmp_path: Path, wlmap
) -> None:
    connections: list[socket.socket] = []
    with silent_server(connections) as address:
        server = f"{scheme}://{address}"
        kubeconfig = write_kubeconfig(tmp_path / "kc", server)
        result = wlmap(
            ["get", "jobsets", "--kubeconfig", str(kubeconfig), "--request-timeout", "0.5s"]
        )
    assert result.code != 0
    assert f"the API server at {server} did not answer" in result.err
    assert "within 0.5s (--request-timeout)" in result.err
    # one timeout, not one per request: the transport stops once the server has timed out
    # (counted at the server, not timed: a loaded machine stretches wall time)
    assert len(connections) == 1, connections


def test_default_timeout_is_thirty_seconds_and_applies_to_the_socket(tmp_path: Path) -> None:
    with silent_server() as address:
        kubeconfig = write_kubeconfig(tmp_path / "kc", f"http://{address}")
        env = {"HOME": str(tmp_path)}
        cluster = connect(ConnectionOptions(kubeconfig=str(kubeconfig), environ=env))
        assert cluster.transport.timeout == 30.0  # type: ignore[attr-defined]
        quick = connect(ConnectionOptions(kubeconfig=str(kubeconfig), timeout=0.3, environ=env))
        # the timeout the sockets were given, seen on the sockets (not timed: wall time on a
        # loaded machine says little); the listener's own 0.1 s poll is not a client's
        given: list[float | None] = []
        settimeout = wire._Socket.settimeout

        def spy(sock: wire._Socket, value: float | None) -> None:
            given.append(value)
            settimeout(sock, value)

        with (
            pytest.MonkeyPatch.context() as patch,
            pytest.raises(Unreachable, match=r"did not answer GET /api within 0\.3s"),
        ):
            patch.setattr(wire._Socket, "settimeout", spy)
            quick.resources()
        client = [v for v in given if v != 0.1]
        assert client and set(client) == {0.3}, given


def _jobset_api() -> FakeAPI:
    api = FakeAPI(namespace="ml").serve(JOBSET)
    api.add(obj("jobset.x-k8s.io/v1alpha2", "JobSet", "train", "ml", spec={"replicatedJobs": []}))
    return api


def test_live_get_over_http_sends_token_and_impersonation(tmp_path: Path, wlmap) -> None:
    with serve(_jobset_api()) as (server, seen):
        kubeconfig = write_kubeconfig(tmp_path / "kc", server, namespace="ml")
        result = wlmap(
            [
                "get",
                "jobsets",
                "--kubeconfig",
                str(kubeconfig),
                "-o",
                "name",
                "--as",
                "jane",
                "--as-group",
                "team-a",
                "--as-group",
                "team-b",
            ]
        )
    assert result.code == 0, result.err
    assert "train" in result.out
    assert seen and all(h.get("Authorization") == "Bearer secret-token" for h in seen)
    assert all(h.get("Impersonate-User") == "jane" for h in seen)
    assert all(h.get("Impersonate-Group") == "team-a,team-b" for h in seen)


def test_as_group_is_an_option_not_the_command(wlmap) -> None:
    result = wlmap(["--as-group", "admins", "validate", str(EXAMPLES / "nope.yaml")])
    assert 'unknown command "admins"' not in result.err


def test_api_errors_over_http_keep_the_server_message(tmp_path: Path) -> None:
    with serve(_jobset_api()) as (server, _):
        kubeconfig = write_kubeconfig(tmp_path / "kc", server)
        cluster = connect(
            ConnectionOptions(kubeconfig=str(kubeconfig), environ={"HOME": str(tmp_path)})
        )
        res = cluster.resource_for("jobset.x-k8s.io/v1alpha2", "JobSet")
        assert res is not None
        with pytest.raises(NotFound, match='JobSet "gone" not found in namespace ml'):
            cluster.get(res, "gone", "ml")
        assert [o["metadata"]["name"] for o in cluster.iter_list(res, "ml")] == ["train"]


def test_refused_connection_is_unreachable(tmp_path: Path) -> None:
    # held bound but not listening for the whole test: connections are refused, and no other
    # process can take the port in between (a closed probe port is up for grabs)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        kubeconfig = write_kubeconfig(tmp_path / "kc", f"http://127.0.0.1:{port}")
        cluster = connect(
            ConnectionOptions(kubeconfig=str(kubeconfig), environ={"HOME": str(tmp_path)})
        )
        with pytest.raises(
            Unreachable, match=rf"cannot reach the cluster at http://127.0.0.1:{port}"
        ):
            cluster.resources()


def test_kubeconfig_directory_is_reported_as_a_directory(tmp_path: Path) -> None:
    folder = tmp_path / "kube"
    folder.mkdir()
    with pytest.raises(NotConfigured, match="is a directory"):
        resolve(ConnectionOptions(environ={"HOME": str(tmp_path), "KUBECONFIG": str(folder)}))
    with pytest.raises(ClusterError, match="is a directory, not a file"):
        resolve(ConnectionOptions(kubeconfig=str(folder), environ={"HOME": str(tmp_path)}))


def test_kubeconfig_merge_first_wins_and_relative_paths(tmp_path: Path) -> None:
    (tmp_path / "a").write_text(
        "clusters: [{name: c, cluster: {server: 'https://first:6443', certificate-authority: ca.pem}}]\n"
        "users: [{name: u, user: {tokenFile: tok}}]\n"
        "contexts: [{name: x, context: {cluster: c, user: u}}]\n"
    )
    (tmp_path / "b").write_text(
        "clusters: [{name: c, cluster: {server: 'https://second:6443'}}]\n"
        "contexts: [{name: x, context: {cluster: c, user: u, namespace: other}}]\n"
        "current-context: x\n"
    )
    env = {"HOME": str(tmp_path), "KUBECONFIG": f"{tmp_path}/a:{tmp_path}/b"}
    resolved = resolve(ConnectionOptions(environ=env))
    assert resolved.server == "https://first:6443"
    assert resolved.ca_file == str(tmp_path / "ca.pem")
    assert resolved.token_file == str(tmp_path / "tok")
    assert (resolved.context, resolved.namespace) == ("x", "default")


_PROBE = """
import sys
from workload_map.cli.main import main
code = main(sys.argv[1:])
leaked = sorted(
    m for m in sys.modules if m.split(".")[0] in ("kubernetes", "urllib3", "email", "requests")
)
print("\\nLEAKED=" + ",".join(leaked[:3]), file=sys.stderr)
"""


def _imports_kubernetes(args: list[str], tmp_path: Path, stdin: str = "") -> tuple[bool, str]:
    done = fresh_python(_PROBE, *args, home=tmp_path, stdin=stdin)
    leaked = done.stderr.rsplit("LEAKED=", 1)[-1].strip()
    return bool(leaked), done.stdout + done.stderr


def test_offline_commands_never_import_kubernetes(tmp_path: Path) -> None:
    job = EXAMPLES / "pytorchjob" / "pytorchjob.yaml"
    karta = next(iter(sorted((ROOT / "src/workload_map/catalog/data").glob("*.yaml"))))
    for args, stdin in (
        (["describe", "-f", str(job)], ""),
        (["describe", "-f", str(job), "-o", "json"], ""),
        (["jq", "-n", "1+1"], ""),
        (["jq", ".a"], '{"a": 1}'),
        (["validate", str(karta)], ""),
    ):
        leaked, output = _imports_kubernetes(args, tmp_path, stdin)
        assert not leaked, f"wlmap {' '.join(args)} imported kubernetes:\n{output}"


def test_live_commands_skip_kubernetes_on_the_fast_path(tmp_path: Path) -> None:
    # nor urllib3: its InsecureRequestWarning can never be printed raw (insecure-skip-tls-verify
    # is in this kubeconfig)
    with serve(_jobset_api()) as (server, _):
        kubeconfig = write_kubeconfig(tmp_path / "kc", server, namespace="ml")
        for args in (["get", "jobsets"], ["describe", "jobset/train"]):
            leaked, output = _imports_kubernetes([*args, "--kubeconfig", str(kubeconfig)], tmp_path)
            assert not leaked, output
            assert "train" in output, output


def test_exec_plugins_run_without_the_official_client(tmp_path: Path) -> None:
    plugin = tmp_path / "plugin.sh"
    plugin.write_text(
        "#!/bin/sh\necho '"
        + json.dumps(
            {
                "apiVersion": "client.authentication.k8s.io/v1",
                "kind": "ExecCredential",
                "status": {"token": "from-exec"},
            }
        )
        + "'\n"
    )
    plugin.chmod(0o755)
    kubeconfig = tmp_path / "kc"
    kubeconfig.write_text(
        "clusters: [{name: c, cluster: {server: 'https://127.0.0.1:1', insecure-skip-tls-verify: true}}]\n"
        f"users: [{{name: u, user: {{exec: {{apiVersion: client.authentication.k8s.io/v1, command: {plugin}, interactiveMode: Never}}}}}}]\n"
        "contexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n"
    )
    resolved = resolve(
        ConnectionOptions(
            kubeconfig=str(kubeconfig), environ={"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
        )
    )
    assert resolved.exec_plugin is not None and resolved.server == "https://127.0.0.1:1"
    from workload_map.kube.auth import Credentials

    assert Credentials(resolved).authorization() == "Bearer from-exec"


def test_wire_chunked_gzip_keepalive_and_close(tmp_path: Path) -> None:
    """The hand-written HTTP/1.1 framing: chunked and gzip bodies, a kept-alive connection
    reused, and a server that closes it (the next request reconnects)."""
    import gzip
    import socket
    import threading

    body = gzip.compress(json.dumps({"kind": "APIVersions", "versions": ["v1"]}).encode())
    chunked = b"".join(
        f"{len(body[i : i + 7]):x}\r\n".encode() + body[i : i + 7] + b"\r\n"
        for i in range(0, len(body), 7)
    )
    answers = [
        b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n"
        + chunked
        + b"0\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}",
        b"HTTP/1.1 404 Not Found\r\nContent-Length: 44\r\n\r\n"
        b'{"kind":"Status","message":"nope","code":40}',
    ]
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)
    connections: list[int] = []

    def serve() -> None:
        pending = list(answers)
        while pending:
            conn, _ = listener.accept()
            connections.append(1)
            with conn, conn.makefile("rb") as reader:
                while pending:
                    while reader.readline() not in (b"\r\n", b""):
                        pass
                    answer = pending.pop(0)
                    conn.sendall(answer)
                    if b"Connection: close" in answer:
                        break

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    kubeconfig = write_kubeconfig(tmp_path / "kc", f"http://127.0.0.1:{listener.getsockname()[1]}")
    cluster = connect(
        ConnectionOptions(kubeconfig=str(kubeconfig), environ={"HOME": str(tmp_path)})
    )
    transport = cluster.transport
    assert transport.get("/api") == {"kind": "APIVersions", "versions": ["v1"]}
    assert transport.get("/apis") == {}
    with pytest.raises(NotFound, match="nope"):
        transport.get("/api/v1/x")
    thread.join(5)
    listener.close()
    assert len(connections) == 2  # one kept alive for two requests, one after the close
