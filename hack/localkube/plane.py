"""The local control plane of the integration tests and ``make demo-cluster``: the Kubernetes
binaries (found or explained how to build), a throw-away CA and certificates, and etcd,
kube-apiserver, kube-controller-manager and kube-scheduler as child processes on free loopback
ports, stopped with the process (atexit, SIGTERM) however it ends. See
``tests/integration/harness.py`` for the whole picture."""

from __future__ import annotations

import atexit
import contextlib
import datetime
import ipaddress
import os
import shutil
import signal
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import yaml

from .ports import free_port

__all__ = [
    "BUILD_HINT",
    "CONTROLLERS",
    "WORKLOAD_API",
    "WORKLOAD_CONTROLLERS",
    "BinariesMissing",
    "HarnessError",
    "LocalControlPlane",
    "Proc",
    "cache_dir",
    "find_binaries",
    "find_controllers",
    "http_ok",
    "spawn",
    "start_timeout",
    "tail",
    "wait_for",
    "wait_until",
]

T = TypeVar("T")

BUILD_HINT = (
    "Build them once with `make apiserver` (runs hack/build-apiserver.sh; needs the Go toolchain, "
    "install Go from https://go.dev/dl or your package manager), or point TEST_ASSET_KUBE_APISERVER"
    "/TEST_ASSET_ETCD/TEST_ASSET_KUBE_CONTROLLER_MANAGER/TEST_ASSET_KUBE_SCHEDULER or "
    "KUBEBUILDER_ASSETS at existing binaries, or run the suite against your own "
    "cluster with WLMAP_TEST_KUBECONFIG=~/.kube/config."
)
# The controllers the local plane runs (v1.37 names; `kube-controller-manager --help` lists them):
# cascading deletion, namespace clean-up, the one that removes the finalizer the default-on
# PodGroupProtection admission plugin puts on every PodGroup, and the one that fills aggregated
# ClusterRoles (the chart's workload reader). Node lifecycle stays off, so fake nodes without a
# kubelet stay Ready and their pods are never evicted.
CONTROLLERS = (
    "garbage-collector-controller",
    "namespace-controller",
    "podgroup-protection-controller",
    "clusterrole-aggregation-controller",
)
#: the in-tree workload controllers, for planes whose tests create only the workload and let a
#: real controller make its pods (``LocalControlPlane(workload_controllers=True)``)
WORKLOAD_CONTROLLERS = (
    "job-controller",
    "replicaset-controller",
    "deployment-controller",
    "statefulset-controller",
)
WORKLOAD_API = "scheduling.k8s.io/v1beta1"


class HarnessError(RuntimeError):
    """The control plane could not be found, started or talked to (message says why and how)."""


class BinariesMissing(HarnessError):
    """A binary the harness runs (kube-apiserver, etcd, prometheus, ...) is not there yet; the
    message names how to get it."""


def cache_dir() -> Path:
    env = os.environ.get("WLMAP_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "workload-map"


def _tool_path(name: str, var: str) -> Path:
    assets = os.environ.get("KUBEBUILDER_ASSETS")
    if os.environ.get(var):
        return Path(os.environ[var])
    if assets:
        return Path(assets) / name
    return cache_dir() / "bin" / name


def _missing(found: Mapping[str, Path]) -> list[str]:
    return [
        f"{name} ({path})"
        for name, path in found.items()
        if not (path.is_file() and os.access(path, os.X_OK))
    ]


def _find(tools: Mapping[str, str], needed: str) -> list[Path]:
    """The paths of ``tools`` (name -> envtest variable), or BinariesMissing naming the absent
    ones after ``needed`` (what the tests need, in words)."""
    found = {name: _tool_path(name, var) for name, var in tools.items()}
    missing = _missing(found)
    if missing:
        raise BinariesMissing(
            f"this needs {needed}, but " + " and ".join(missing) + " is missing. " + BUILD_HINT
        )
    return list(found.values())


def find_binaries() -> tuple[Path, Path]:
    """(kube-apiserver, etcd): envtest's variables first, then the build script's cache dir."""
    apiserver, etcd = _find(
        {"kube-apiserver": "TEST_ASSET_KUBE_APISERVER", "etcd": "TEST_ASSET_ETCD"},
        "a real kube-apiserver and etcd",
    )
    return apiserver, etcd


def find_controllers() -> tuple[Path, Path]:
    """(kube-controller-manager, kube-scheduler), found like ``find_binaries``."""
    manager, scheduler = _find(
        {
            "kube-controller-manager": "TEST_ASSET_KUBE_CONTROLLER_MANAGER",
            "kube-scheduler": "TEST_ASSET_KUBE_SCHEDULER",
        },
        "kube-controller-manager and kube-scheduler",
    )
    return manager, scheduler


# --------------------------------------------------------------------------- certificates


def _certificates(workdir: Path, names: list[str]) -> dict[str, Path]:
    """Serving CA + cert, a separate client CA + admin cert, the service-account key pair."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    now = datetime.datetime.now(datetime.UTC)
    files: dict[str, Path] = {}

    def write_key(name: str, key: ec.EllipticCurvePrivateKey) -> None:
        path = workdir / f"{name}.key"
        path.write_bytes(
            key.private_bytes(
                serialization.Encoding.PEM,
                serialization.PrivateFormat.PKCS8,
                serialization.NoEncryption(),
            )
        )
        path.chmod(0o600)
        files[f"{name}.key"] = path

    def write_cert(name: str, cert: x509.Certificate) -> None:
        path = workdir / f"{name}.crt"
        path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        files[f"{name}.crt"] = path

    def subject(cn: str, org: str | None = None) -> x509.Name:
        attrs = [x509.NameAttribute(NameOID.COMMON_NAME, cn)]
        if org:
            attrs.append(x509.NameAttribute(NameOID.ORGANIZATION_NAME, org))
        return x509.Name(attrs)

    def issue(
        name: str,
        cn: str,
        org: str | None,
        ca: tuple[x509.Certificate, Any] | None,
        usage: list[x509.ObjectIdentifier] | None = None,
        sans: list[x509.GeneralName] | None = None,
    ) -> tuple[x509.Certificate, Any]:
        key = ec.generate_private_key(ec.SECP256R1())
        issuer_name, issuer_key = (ca[0].subject, ca[1]) if ca else (subject(cn, org), key)
        builder = (
            x509.CertificateBuilder()
            .subject_name(subject(cn, org))
            .issuer_name(issuer_name)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=7))
            .add_extension(x509.BasicConstraints(ca=ca is None, path_length=None), critical=True)
        )
        if ca is None:
            builder = builder.add_extension(
                x509.KeyUsage(
                    digital_signature=True,
                    key_cert_sign=True,
                    crl_sign=True,
                    content_commitment=False,
                    key_encipherment=False,
                    data_encipherment=False,
                    key_agreement=False,
                    encipher_only=False,
                    decipher_only=False,
                ),
                critical=True,
            )
        if usage:
            builder = builder.add_extension(x509.ExtendedKeyUsage(usage), critical=False)
        if sans:
            builder = builder.add_extension(x509.SubjectAlternativeName(sans), critical=False)
        cert = builder.sign(issuer_key, hashes.SHA256())
        write_key(name, key)
        write_cert(name, cert)
        return cert, key

    serving_ca = issue("serving-ca", "wlmap-test-serving-ca", "workload-map", None)
    sans: list[x509.GeneralName] = []
    for host in names:
        try:
            sans.append(x509.IPAddress(ipaddress.ip_address(host)))
        except ValueError:
            sans.append(x509.DNSName(host))
    issue("apiserver", "localhost", None, serving_ca, [ExtendedKeyUsageOID.SERVER_AUTH], sans)
    client_ca = issue("client-ca", "wlmap-test-client-ca", "workload-map", None)
    issue("admin", "admin", "system:masters", client_ca, [ExtendedKeyUsageOID.CLIENT_AUTH])
    write_key("service-account", ec.generate_private_key(ec.SECP256R1()))
    sa_key = serialization.load_pem_private_key(files["service-account.key"].read_bytes(), None)
    pub = workdir / "service-account.pub"
    pub.write_bytes(
        sa_key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )
    files["service-account.pub"] = pub
    return files


def tail(path: Path, lines: int = 40) -> str:
    try:
        text = path.read_text(errors="replace").splitlines()
    except OSError:
        return f"({path} not readable)"
    return "\n".join(text[-lines:])


# --------------------------------------------------------------------------- processes


def _die_with_parent() -> None:
    """Child side of fork: get SIGKILLed if the test process dies without cleaning up (Linux)."""
    if sys.platform.startswith("linux"):
        import ctypes

        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


@dataclass
class Proc:
    name: str
    popen: subprocess.Popen[bytes]
    log: Path

    def running(self) -> bool:
        return self.popen.poll() is None

    def stop(self, grace: float = 20.0) -> None:
        """SIGTERM the process group, wait, then SIGKILL it; always reaps the child."""
        if self.popen.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.popen.pid, signal.SIGTERM)
            try:
                self.popen.wait(grace)
            except subprocess.TimeoutExpired:
                pass
        # Anything left in the group (the leader or stray children) goes now.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.popen.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.popen.wait(10)


def spawn(name: str, argv: list[str], log: Path, *, env: Mapping[str, str] | None = None) -> Proc:
    """``argv`` as a child in a session of its own (a Ctrl-C at the terminal reaches only its
    parent, which stops it in order), killed if its parent dies, its output appended to ``log``
    (a restarted server keeps its earlier log; the child holds its own descriptor, no pipe to
    fill up); ``env`` adds to the environment."""
    with log.open("ab") as out:
        popen = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=_die_with_parent,
            cwd=log.parent,
            env={**os.environ, **env} if env else None,
        )
    return Proc(name, popen, log)


_LIVE: set[LocalControlPlane] = set()
_LIVE_LOCK = threading.Lock()


def _stop_all() -> None:
    with _LIVE_LOCK:
        planes = list(_LIVE)
    for plane in planes:
        plane.stop()


atexit.register(_stop_all)


def _install_sigterm_handler() -> None:
    """Turn SIGTERM into SystemExit so atexit (and fixture finalisers) still run."""
    if threading.current_thread() is not threading.main_thread():
        return
    if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:

        def on_term(signum: int, frame: object) -> None:
            raise SystemExit(128 + signum)

        signal.signal(signal.SIGTERM, on_term)


# --------------------------------------------------------------------------- control plane


@dataclass(eq=False)
class LocalControlPlane:
    """etcd + kube-apiserver (+ kube-controller-manager, + kube-scheduler) as child processes in
    a temp dir; ``stop()`` leaves nothing behind.

    The controller-manager runs when ``controller_manager_bin`` is given; the scheduler when
    ``scheduler_bin`` is given and ``scheduler`` is true, or later through ``start_scheduler()``.
    ``generic_workload=False`` starts the same binaries without the workload-aware scheduling
    API: a v1.37 cluster as it comes by default. ``workload_controllers=True`` adds the in-tree
    Job, ReplicaSet, Deployment and StatefulSet controllers, which make the pods themselves. ``restart_apiserver()`` (or ``stop_apiserver()``
    then ``start_apiserver()``) bounces only the API server, on the same address and etcd data,
    while the other components keep running and reconnect."""

    apiserver_bin: Path
    etcd_bin: Path
    start_timeout: float = 120.0
    workdir: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="wlmap-kube-")))
    keep_workdir: bool = False
    controller_manager_bin: Path | None = None
    scheduler_bin: Path | None = None
    scheduler: bool = False
    generic_workload: bool = True
    workload_controllers: bool = False
    #: more feature gates for every component (``("WorkloadWithJob",)``: on), and more API
    #: versions served (``("scheduling.k8s.io/v1alpha3",)``)
    extra_gates: tuple[str, ...] = ()
    extra_apis: tuple[str, ...] = ()
    #: an etcd data dir (of a stopped plane) to start from instead of an empty store: its
    #: copy becomes this plane's, made a one-member cluster on the new ports (benchmarks keep a
    #: fleet of objects this way; the certificates are new, the objects and their uids are not)
    etcd_data_from: Path | None = None
    procs: list[Proc] = field(default_factory=list)
    etcd_url: str = ""
    kubeconfig: Path | None = None
    server: str = ""
    startup_seconds: float = 0.0
    _apiserver_argv: list[str] = field(default_factory=list, repr=False)
    _certs: dict[str, Path] = field(default_factory=dict, repr=False)

    def __hash__(self) -> int:
        return id(self)

    @property
    def feature_gates(self) -> str:
        gates = [f"GenericWorkload={'true' if self.generic_workload else 'false'}"]
        gates += [g if "=" in g else f"{g}=true" for g in self.extra_gates]
        return ",".join(gates)

    def start(self) -> LocalControlPlane:
        _install_sigterm_handler()
        with _LIVE_LOCK:
            _LIVE.add(self)
        begin = time.monotonic()
        try:
            for attempt in range(3):  # free ports are racy: retry on a lost bind
                try:
                    self._start_once()
                    break
                except _PortClash:
                    self._stop_procs()
                    if attempt == 2:
                        raise
        except BaseException:
            self.stop()
            raise
        self.startup_seconds = time.monotonic() - begin
        return self

    def _start_once(self) -> None:
        etcd_port, peer_port, api_port = free_port(), free_port(), free_port()
        self._certs = certs = _certificates(self.workdir, ["127.0.0.1", "localhost"])
        data = self.workdir / "etcd-data"
        shutil.rmtree(data, ignore_errors=True)
        seeded: list[str] = []
        if self.etcd_data_from is not None:
            shutil.copytree(self.etcd_data_from, data)
            # the copy's member list names the old peer URL: start over as a lone member
            seeded = ["--force-new-cluster"]
        etcd_url, peer_url = f"http://127.0.0.1:{etcd_port}", f"http://127.0.0.1:{peer_port}"
        self.etcd_url = etcd_url
        etcd = spawn(
            "etcd",
            [
                str(self.etcd_bin),
                f"--data-dir={data}",
                f"--listen-client-urls={etcd_url}",
                f"--advertise-client-urls={etcd_url}",
                f"--listen-peer-urls={peer_url}",
                f"--initial-advertise-peer-urls={peer_url}",
                f"--initial-cluster=default={peer_url}",
                "--unsafe-no-fsync=true",
                "--log-level=warn",
                *seeded,
            ],
            self.workdir / "etcd.log",
        )
        self.procs.append(etcd)
        self._wait(etcd, lambda: http_ok(f"{etcd_url}/health"), "etcd /health")

        self.server = f"https://127.0.0.1:{api_port}"
        certdir = self.workdir / "apiserver-certs"
        certdir.mkdir(exist_ok=True)
        apis = ([WORKLOAD_API] if self.generic_workload else []) + list(self.extra_apis)
        workload_api = [f"--runtime-config={','.join(f'{a}=true' for a in apis)}"] if apis else []
        self._apiserver_argv = [
            str(self.apiserver_bin),
            f"--etcd-servers={etcd_url}",
            f"--cert-dir={certdir}",
            f"--tls-cert-file={certs['apiserver.crt']}",
            f"--tls-private-key-file={certs['apiserver.key']}",
            f"--secure-port={api_port}",
            "--bind-address=127.0.0.1",
            "--advertise-address=127.0.0.1",
            "--endpoint-reconciler-type=none",
            "--service-cluster-ip-range=10.0.0.0/24",
            f"--service-account-issuer={self.server}",
            f"--service-account-key-file={certs['service-account.pub']}",
            f"--service-account-signing-key-file={certs['service-account.key']}",
            "--authorization-mode=RBAC",
            f"--client-ca-file={certs['client-ca.crt']}",
            "--allow-privileged=true",
            # No ServiceAccount controller runs (no `default` account), nothing removes PVC
            # protection finalizers, and TaintNodesByCondition would put a not-ready taint on
            # every fake node that only the node-lifecycle controller (off) removes.
            "--disable-admission-plugins="
            "ServiceAccount,StorageObjectInUseProtection,TaintNodesByCondition",
            "--enable-priority-and-fairness=false",
            f"--feature-gates={self.feature_gates}",
            *workload_api,
            "--profiling=false",
            # on SIGTERM, close open watches within 2 s and exit: at the default (0) a stop
            # with clients watching (controller-manager, scheduler, operators) hung until the
            # harness killed it at its 20 s grace, in every API server restart of the suite
            "--shutdown-watch-termination-grace-period=2s",
            "--v=1",
        ]
        self.kubeconfig = self.workdir / "kubeconfig"
        self.kubeconfig.write_text(_kubeconfig(self.server, certs))
        self.kubeconfig.chmod(0o600)
        self.start_apiserver()
        if self.controller_manager_bin is not None:
            self._start_controller_manager()
        if self.scheduler and self.scheduler_bin is not None:
            self.start_scheduler()

    def _admin_context(self) -> ssl.SSLContext:
        ctx = ssl.create_default_context(cafile=str(self._certs["serving-ca.crt"]))
        ctx.load_cert_chain(str(self._certs["admin.crt"]), str(self._certs["admin.key"]))
        return ctx

    def _find(self, name: str) -> Proc | None:
        return next((p for p in self.procs if p.name == name), None)

    # -- kube-apiserver -----------------------------------------------------------------------

    def start_apiserver(self) -> None:
        """Start the API server (after ``stop_apiserver``); returns once ``/readyz`` is 200."""
        if not self._apiserver_argv:
            raise HarnessError("start_apiserver: the plane was never started")
        if self._find("kube-apiserver") is not None:
            raise HarnessError("start_apiserver: kube-apiserver is already running")
        apiserver = spawn(
            "kube-apiserver", self._apiserver_argv, self.workdir / "kube-apiserver.log"
        )
        # etcd first in the list, so that stopping everything stops the API server before it.
        self.procs.insert(1, apiserver)
        ctx = self._admin_context()
        self._wait(
            apiserver, lambda: http_ok(f"{self.server}/readyz", ctx), "kube-apiserver /readyz"
        )
        self._wait(
            apiserver,
            lambda: http_ok(f"{self.server}/api/v1/namespaces/default", ctx),
            "the default namespace",
        )

    def stop_apiserver(self, grace: float = 20.0) -> None:
        """Stop only the API server (SIGTERM, like a rolling restart); etcd keeps the data."""
        proc = self._find("kube-apiserver")
        if proc is not None:
            proc.stop(grace)
            self.procs.remove(proc)

    def restart_apiserver(self, grace: float = 20.0) -> float:
        """Stop and start the API server on the same port; returns the seconds it was away."""
        begin = time.monotonic()
        self.stop_apiserver(grace)
        self.start_apiserver()
        return time.monotonic() - begin

    def add_apiserver(self, *flags: str) -> tuple[str, Path]:
        """Start one more kube-apiserver on the same etcd and certificates, on a new port, with
        ``flags`` appended (later flags win, e.g. ``--watch-cache=false``, under which a watch
        from an etcd-compacted resourceVersion really gets 410 Gone). Returns its URL and an
        admin kubeconfig for it; ``stop()`` stops it with the rest."""
        if not self._apiserver_argv:
            raise HarnessError("add_apiserver: the plane was never started")
        index = 2 + sum(1 for p in self.procs if p.name.startswith("kube-apiserver-"))
        name = f"kube-apiserver-{index}"
        argv = [a for a in self._apiserver_argv if not a.startswith("--secure-port=")]
        ctx = self._admin_context()
        server = ""

        def start(port: int) -> Proc:
            nonlocal server
            server = f"https://127.0.0.1:{port}"
            log = self.workdir / f"{name}.log"
            proc = spawn(name, [*argv, f"--secure-port={port}", *flags], log)
            self.procs.append(proc)
            self._wait(proc, lambda: http_ok(f"{server}/readyz", ctx), f"{name} /readyz")
            return proc

        self._on_free_port(start)
        kubeconfig = self.workdir / f"kubeconfig-{index}"
        kubeconfig.write_text(_kubeconfig(server, self._certs))
        kubeconfig.chmod(0o600)
        return server, kubeconfig

    # -- kube-controller-manager and kube-scheduler -------------------------------------------

    def _component_argv(self, binary: Path, name: str, port: int) -> list[str]:
        assert self.kubeconfig is not None
        certdir = self.workdir / f"{name}-certs"
        certdir.mkdir(exist_ok=True)
        return [
            str(binary),
            f"--kubeconfig={self.kubeconfig}",
            # Delegated authn/authz through the admin, so /healthz answers without in-cluster
            # config; the self-signed serving cert lands in certdir.
            f"--authentication-kubeconfig={self.kubeconfig}",
            f"--authorization-kubeconfig={self.kubeconfig}",
            f"--cert-dir={certdir}",
            "--bind-address=127.0.0.1",
            f"--secure-port={port}",
            "--leader-elect=false",
            f"--feature-gates={self.feature_gates}",
            "--v=1",
        ]

    def _on_free_port(self, start: Callable[[int], Proc]) -> None:
        """``start(port)`` on a fresh free port, again on a new one when the port was lost
        between the probe and the child's bind (``_PortClash``); the dead child is dropped."""
        for attempt in range(3):
            before = list(self.procs)
            try:
                start(free_port())
                return
            except _PortClash:
                for proc in [p for p in self.procs if p not in before]:
                    proc.stop()
                    self.procs.remove(proc)
                if attempt == 2:
                    raise

    def _start_component(self, name: str, argv: list[str], port: int) -> Proc:
        proc = spawn(name, argv, self.workdir / f"{name}.log")
        self.procs.append(proc)
        insecure = ssl.create_default_context()
        insecure.check_hostname = False
        insecure.verify_mode = ssl.CERT_NONE  # its own throw-away cert, on loopback
        self._wait(
            proc,
            lambda: http_ok(f"https://127.0.0.1:{port}/healthz", insecure),
            f"{name} /healthz",
        )
        return proc

    def _start_controller_manager(self) -> None:
        binary = self.controller_manager_bin
        assert binary is not None

        def start(port: int) -> Proc:
            argv = self._component_argv(binary, "kube-controller-manager", port)
            controllers = CONTROLLERS + (WORKLOAD_CONTROLLERS if self.workload_controllers else ())
            argv += [
                f"--controllers={','.join(controllers)}",
                "--use-service-account-credentials=false",
            ]
            return self._start_component("kube-controller-manager", argv, port)

        self._on_free_port(start)

    @property
    def scheduler_running(self) -> bool:
        proc = self._find("kube-scheduler")
        return proc is not None and proc.running()

    def start_scheduler(self) -> None:
        """Start kube-scheduler (default profile: with the gate on, GangScheduling included)."""
        if self.scheduler_bin is None:
            raise HarnessError("start_scheduler: this plane was made without a kube-scheduler")
        if self._find("kube-scheduler") is not None:
            return
        binary = self.scheduler_bin
        self._on_free_port(
            lambda port: self._start_component(
                "kube-scheduler", self._component_argv(binary, "kube-scheduler", port), port
            )
        )
        self.scheduler = True

    def stop_scheduler(self) -> None:
        proc = self._find("kube-scheduler")
        if proc is not None:
            proc.stop()
            self.procs.remove(proc)
        self.scheduler = False

    # -- waiting, introspection, stopping -----------------------------------------------------

    def _wait(self, proc: Proc, ready: Callable[[], bool], what: str) -> None:
        wait_for(proc, ready, what, self.start_timeout)

    def pids(self) -> list[int]:
        return [p.popen.pid for p in self.procs]

    def rss_mb(self) -> dict[str, float]:
        """Resident memory of each running child in MiB (Linux /proc)."""
        out: dict[str, float] = {}
        for proc in self.procs:
            with contextlib.suppress(OSError):
                for line in Path(f"/proc/{proc.popen.pid}/status").read_text().splitlines():
                    if line.startswith("VmRSS:"):
                        out[proc.name] = int(line.split()[1]) / 1024
        return out

    def log_tails(self, lines: int = 30) -> str:
        return "\n".join(
            f"--- {p.log.name} (last {lines} lines) ---\n{tail(p.log, lines)}" for p in self.procs
        )

    def _stop_procs(self) -> None:
        for proc in reversed(self.procs):  # scheduler, controller-manager, apiserver, etcd
            proc.stop()
        self.procs.clear()

    def stop(self) -> None:
        """Idempotent: stop children (last started first), remove the temp dir."""
        self._stop_procs()
        with _LIVE_LOCK:
            _LIVE.discard(self)
        if not self.keep_workdir:
            shutil.rmtree(self.workdir, ignore_errors=True)

    def __enter__(self) -> LocalControlPlane:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class _PortClash(HarnessError):
    pass


def wait_until(check: Callable[[], T | None], what: str, timeout: float) -> T:
    """``check()``'s first truthy value, polled every quarter second for ``timeout`` seconds
    at most (a bound from configuration, never a speed target); HarnessError naming ``what``
    after that."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise HarnessError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(0.25)


def wait_for(proc: Proc, ready: Callable[[], bool], what: str, timeout: float) -> None:
    """Poll ``ready()`` until true, ``timeout`` seconds at most (a bound from configuration:
    ``WLMAP_TEST_START_TIMEOUT``); HarnessError with the log's tail when ``proc`` exits first
    or time runs out (``_PortClash`` when it lost its port)."""
    deadline = time.monotonic() + timeout
    delay = 0.05
    while not ready():
        if not proc.running():
            log = tail(proc.log)
            if "address already in use" in log:
                raise _PortClash(log)
            raise HarnessError(
                f"{proc.name} exited with code {proc.popen.returncode} before "
                f"{what} was ready; last lines of {proc.log}:\n{log}"
            )
        if time.monotonic() > deadline:
            raise HarnessError(
                f"{what} not ready after {timeout:.0f} s "
                f"(WLMAP_TEST_START_TIMEOUT raises it); last lines of "
                f"{proc.log}:\n{tail(proc.log)}"
            )
        time.sleep(delay)
        delay = min(delay * 1.5, 0.5)


def http_ok(url: str, ctx: ssl.SSLContext | None = None) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2, context=ctx) as resp:
            return int(resp.status) == 200
    except (urllib.error.URLError, OSError, ValueError):
        return False


def _kubeconfig(server: str, certs: Mapping[str, Path]) -> str:
    import base64

    def b64(name: str) -> str:
        return base64.b64encode(certs[name].read_bytes()).decode()

    return yaml.safe_dump(
        {
            "apiVersion": "v1",
            "kind": "Config",
            "current-context": "wlmap-test",
            "clusters": [
                {
                    "name": "wlmap-test",
                    "cluster": {
                        "server": server,
                        "certificate-authority-data": b64("serving-ca.crt"),
                    },
                }
            ],
            "users": [
                {
                    "name": "admin",
                    "user": {
                        "client-certificate-data": b64("admin.crt"),
                        "client-key-data": b64("admin.key"),
                    },
                }
            ],
            "contexts": [
                {"name": "wlmap-test", "context": {"cluster": "wlmap-test", "user": "admin"}}
            ],
        }
    )


def start_timeout() -> float:
    raw = os.environ.get("WLMAP_TEST_START_TIMEOUT", "120")
    try:
        return float(raw)
    except ValueError as err:
        raise HarnessError(f"WLMAP_TEST_START_TIMEOUT must be seconds, got {raw!r}") from err
