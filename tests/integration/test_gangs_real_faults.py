"""Faults during a real controller's burst of pod creations (the in-tree Job controller makes
the pods of an Indexed Job stating a gang of six; the tests create only the Job):

- our operator killed after the second of the burst's admissions: no pod is blocked (the API
  server admits the rest unchanged, ``failurePolicy: Ignore``), the restarted operator reports
  the members that missed the webhook and lowers the gang's minimum to the members that joined
  (docs/gangs.md, "Members that missed the webhook"), and every pod binds;
- the API server restarted during the burst: every pod is created once, the gang is whole or
  repaired the same way, and every pod binds;
- the webhook slowed past its ``timeoutSeconds`` from the third admission on: the pods are
  created anyway, the late ones are reported and the gang repaired, and every pod binds.

The moment of each fault is an event, not a time: the API server's webhook calls go through
``AdmissionProxy``, a TLS front of the operator's webhook (its own certificate, so the
``caBundle`` the operator writes verifies it) that counts the admissions and acts at the N-th.
Nothing is timed; each wait is for an event with a bound derived from the configuration."""

from __future__ import annotations

import json
import ssl
import threading
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.gangs.e2e import (
    NODE,
    NODE_LABEL,
    bound,
    gang_operator,
    install_pod_webhook,
    make_namespace,
    podgroups,
    pods_in,
    token,
    wait,
)
from tests.gangs.real import indexed_job, native_mark
from tests.operator.live import MUTATING, OperatorProcess, delete
from workload_map.gangs.config import ANNOTATION_DECISION
from workload_map.kube.api import Api

from .harness import FakeNodes, Kube

ROOT = Path(__file__).resolve().parents[2]
SIZE = 6
#: the webhook's timeoutSeconds where it is slowed past it (the chart's is 3); held requests
#: wait up to four times as long
WEBHOOK_TIMEOUT = 2
#: elsewhere the longest the API allows, so that on a loaded machine an answer of our operator
#: is never late: which pods joined is then decided by the fault alone
PATIENT_TIMEOUT = 30
#: with the patient timeout, how long the operator waits for a pod's owner to reach its cache
#: (its default is 1 s): on a loaded machine the Job's watch event can come later than the Job
#: controller's first pods, which are then admitted unmarked by design, and the fault under test
#: would no longer be what decides which pods joined
PATIENT_MISS_WAIT = 20
PLANE_OPTIONS = {"workload_controllers": True}

# a hang guard, not a speed target: the operators' CRDs (KubeRay's are 3 MB) and processes
# take minutes to install and start on a loaded machine, inside the first test's limit
pytestmark = [pytest.mark.integration, pytest.mark.timeout(900)]


class AdmissionProxy:
    """The URL the API server calls for the gang webhook: TLS with the operator's own serving
    certificate (HTTP/1.1, one request at a time per connection), each request forwarded to
    the operator's webhook port. ``on_request(n)`` runs before the n-th request is forwarded;
    ``hold_from``: from that request on, each is held past the webhook's timeout first (the
    API server has given up by then), then forwarded. A request the operator does not answer
    gets a 502, which ``failurePolicy: Ignore`` turns into an unchanged pod."""

    def __init__(self) -> None:
        self.target = 0
        self.cert_dir: Path | None = None
        self.count = 0
        self.answered = 0
        self._answers = threading.Condition()
        self.on_request: Callable[[int], None] = lambda n: None
        self.hold_from = 0
        self.released = threading.Event()
        self._lock = threading.Lock()
        self._tls: ssl.SSLContext | None = None
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                status, data = proxy.forward(self.path, body)
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        class Server(ThreadingHTTPServer):
            daemon_threads = True

            def get_request(self) -> tuple[Any, Any]:
                sock, addr = self.socket.accept()
                # the handshake happens in the request's thread, at its first read
                return proxy.tls().wrap_socket(
                    sock, server_side=True, do_handshake_on_connect=False
                ), addr

        self.server = Server(("127.0.0.1", 0), Handler)
        self.port = int(self.server.server_address[1])
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self._thread.start()

    def tls(self) -> ssl.SSLContext:
        with self._lock:
            if self._tls is None:
                assert self.cert_dir is not None, "the proxy was called before the operator ran"
                ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
                ctx.load_cert_chain(self.cert_dir / "tls.crt", self.cert_dir / "tls.key")
                self._tls = ctx
            return self._tls

    def forward(self, path: str, body: bytes) -> tuple[int, bytes]:
        with self._lock:
            self.count += 1
            n = self.count
        self.on_request(n)
        if self.hold_from and n >= self.hold_from:
            self.released.wait(4 * WEBHOOK_TIMEOUT)
        ctx = ssl.create_default_context()
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE  # the operator's certificate, on loopback
        request = urllib.request.Request(
            f"https://127.0.0.1:{self.target}{path}",
            data=body,
            headers={"Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, context=ctx, timeout=10) as answer:
                return int(answer.status), answer.read()
        except (urllib.error.URLError, OSError) as err:
            return 502, json.dumps({"error": str(err)}).encode()
        finally:
            with self._answers:
                self.answered += 1
                self._answers.notify_all()

    def wait_answered(self, count: int, timeout: float) -> None:
        """Until ``count`` requests have had the operator's answer (or its failure)."""
        with self._answers:
            done = self._answers.wait_for(lambda: self.answered >= count, timeout)
        assert done, f"{self.answered} of {count} admissions answered in {timeout} s"

    def close(self) -> None:
        self.released.set()
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="module")
def plane(kube_with_gates: Kube) -> Kube:
    kube_with_gates.install_crd(ROOT / "deploy/crds/kartas.run.ai.yaml")
    return kube_with_gates


class Setup:
    def __init__(self, api: Api, plane: Kube, tok: str, workdir: Path, proxy: AdmissionProxy):
        self.api, self.plane, self.tok, self.workdir, self.proxy = api, plane, tok, workdir, proxy
        self.op_ns = make_namespace(api, tok, opted_in=False)
        self.restarts = 0

    @property
    def name(self) -> str:
        return f"wlmap-gangs-{self.tok}"

    def install(self, timeout: int) -> None:
        """The gang webhook's configuration, naming the proxy (before the operator starts: it
        writes the ``caBundle`` of the configurations it finds at start)."""
        install_pod_webhook(
            self.api, port=self.proxy.port, name=self.name, token=self.tok, timeout=timeout
        )

    def operator(self, miss_wait: float | None = None) -> Any:
        """Our operator behind the proxy (its webhook configuration names the proxy), waiting
        ``miss_wait`` seconds for an owner not cached yet (else its default)."""
        self.restarts += 1
        return gang_operator(
            self.api,
            self.plane.kubeconfig,
            self.op_ns,
            self.workdir / f"op-{self.restarts}",
            self.tok,
            install=False,
            extra=[] if miss_wait is None else [f"--gang-webhook-miss-wait={miss_wait}"],
        )

    def attach(self, proc: OperatorProcess) -> None:
        self.proxy.target = proc.webhook_port
        self.proxy.cert_dir = proc.workdir / "certs"
        config = f"{MUTATING}/{self.name}-mutating"
        wait(
            "caBundle patched",
            lambda: all(
                h.get("clientConfig", {}).get("caBundle")
                for h in self.api.get(config).get("webhooks") or [{}]
            ),
        )


@pytest.fixture
def setup(plane: Kube, api: Api, tmp_path: Path) -> Iterator[Setup]:
    tok = token()
    proxy = AdmissionProxy()
    s = Setup(api, plane, tok, tmp_path, proxy)
    try:
        yield s
    finally:
        proxy.close()
        delete(api, f"{MUTATING}/{s.name}-mutating")
        delete(api, f"/api/v1/namespaces/{s.op_ns}")


def _events(api: Api, ns: str, reason: str) -> list[dict[str, Any]]:
    items = api.get(f"/api/v1/namespaces/{ns}/events").get("items") or []
    return [e for e in items if e.get("reason") == reason]


def _repaired(api: Api, ns: str, fake_nodes: FakeNodes, pool: str) -> tuple[int, int]:
    """Every pod created once; the gang's minimum is the members that joined (planned
    ``SIZE``), a MissedWebhook report where some missed; with room, every pod binds. Returns
    (joined, missed)."""
    pods = wait(f"{SIZE} pods", lambda: len(pods_in(api, ns)) == SIZE and pods_in(api, ns), 180)
    assert sorted(
        p["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"] for p in pods
    ) == [str(i) for i in range(SIZE)]
    marks = [native_mark(p) for p in pods]
    joined = sum(1 for m in marks if m)
    missed = SIZE - joined
    assert len({m for m in marks if m}) <= 1
    if joined:
        (group,) = wait("our PodGroup", lambda: podgroups(api, ns))
        assert marks.count(group["metadata"]["name"]) == joined
        wait(
            f"the minimum lowered to the {joined} members that joined",
            lambda: (
                [g["spec"]["schedulingPolicy"]["gang"]["minCount"] for g in podgroups(api, ns)]
                == [joined]
            ),
        )
    if missed:
        wait("a MissedWebhook report", lambda: _events(api, ns, "MissedWebhook"))
        if joined:
            decision = json.loads(
                podgroups(api, ns)[0]["metadata"]["annotations"][ANNOTATION_DECISION]
            )
            assert (decision["plannedMinCount"], len(decision["missed"])) == (SIZE, missed), (
                decision
            )
    fake_nodes.add(SIZE - len(bound(api, ns)), NODE, labels={NODE_LABEL: pool})
    wait("every pod bound", lambda: len(bound(api, ns)) == SIZE, 120)
    print(
        f"real-gang fault in {ns}: {joined} joined, {missed} missed the webhook; all {SIZE} bound"
    )
    return joined, missed


def test_operator_killed_in_the_middle_of_the_job_controllers_burst(
    setup: Setup, api: Api, fake_nodes: FakeNodes
) -> None:
    ns = make_namespace(api, setup.tok)
    pool = f"{setup.tok}-kill"
    setup.install(PATIENT_TIMEOUT)
    with setup.operator(PATIENT_MISS_WAIT) as first:
        setup.attach(first)
        killed = threading.Event()

        def kill(n: int) -> None:
            if n == 3:  # two members joined; the operator dies with this admission in flight
                # the second may be in flight beside it
                setup.proxy.wait_answered(2, 2 * PATIENT_TIMEOUT)
                assert first.proc is not None
                first.proc.kill()
                first.proc.wait(30)
                killed.set()

        setup.proxy.on_request = kill
        indexed_job(api, ns, pool, size=SIZE)
        wait("the operator killed at the third admission", killed.is_set)
        # no pod blocked: the Job controller's burst completes while the operator is down
        pods = wait(
            f"all {SIZE} pods created", lambda: len(pods_in(api, ns)) == SIZE and pods_in(api, ns)
        )
        assert sum(1 for p in pods if native_mark(p)) == 2
        before = [g["metadata"]["uid"] for g in podgroups(api, ns)]
    setup.proxy.on_request = lambda n: None
    with setup.operator(PATIENT_MISS_WAIT) as second:
        setup.attach(second)
        joined, missed = _repaired(api, ns, fake_nodes, pool)
        assert (joined, missed) == (2, SIZE - 2)
        # the restarted operator kept the group it had made (no duplicate, no recreation)
        assert before == [] or [g["metadata"]["uid"] for g in podgroups(api, ns)] == before


def test_api_server_restarted_during_the_burst(
    setup: Setup, api: Api, plane: Kube, fake_nodes: FakeNodes
) -> None:
    ns = make_namespace(api, setup.tok)
    pool = f"{setup.tok}-restart"
    setup.install(PATIENT_TIMEOUT)
    with setup.operator(PATIENT_MISS_WAIT) as proc:
        setup.attach(proc)
        third = threading.Event()
        setup.proxy.on_request = lambda n: third.set() if n == 3 else None
        indexed_job(api, ns, pool, size=SIZE)
        # restarted from this thread: a child's parent-death signal follows the thread that
        # started it, so a helper thread's API server would die with the helper
        wait("the third admission of the burst", third.is_set)
        admitted = setup.proxy.count
        plane.restart_apiserver()  # raises past the configured start timeout
        print(f"real-gang fault: API server restarted after {admitted} admissions")
        joined, missed = _repaired(api, ns, fake_nodes, pool)
        assert joined >= 2 and joined + missed == SIZE
        assert proc.alive()


def test_webhook_slowed_past_its_timeout(setup: Setup, api: Api, fake_nodes: FakeNodes) -> None:
    ns = make_namespace(api, setup.tok)
    pool = f"{setup.tok}-slow"
    setup.install(WEBHOOK_TIMEOUT)
    with setup.operator() as proc:
        setup.attach(proc)
        setup.proxy.hold_from = 3  # from the third admission on, answered past the timeout
        indexed_job(api, ns, pool, size=SIZE)
        # failurePolicy Ignore: the API server creates every pod anyway
        pods = wait(
            f"all {SIZE} pods created",
            lambda: len(pods_in(api, ns)) == SIZE and pods_in(api, ns),
            60,
        )
        # the two answered in time joined (on a loaded machine an answer within the 2 s can
        # still be late: then fewer), the held ones cannot have
        assert sum(1 for p in pods if native_mark(p)) <= 2
        setup.proxy.released.set()
        joined, missed = _repaired(api, ns, fake_nodes, pool)
        assert joined <= 2 and missed >= SIZE - 2
        assert proc.alive()
