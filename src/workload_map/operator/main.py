"""``wlmap operator`` / ``workload-map-operator``: flags, start-up, leadership, graceful shutdown.

Start order: caches and controllers that run on every replica (webhooks, certificate loading),
then the HTTP servers (so the webhook routes exist when the port opens), then leader election;
the elected replica starts the controllers that write. SIGTERM/SIGINT stop controllers, release
the Lease, close the servers and exit 0; losing the Lease exits 1 so that the pod restarts as a
follower (controller-runtime does the same).
"""

from __future__ import annotations

import argparse
import gc
import importlib
import json
import logging
import os
import signal
import socket
import sys
import threading
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from prometheus_client import Gauge

from workload_map import __version__
from workload_map.engine.evaluations import Evaluations
from workload_map.errors import WlmapError
from workload_map.kube.cache import InformerSet
from workload_map.kube.connect_api import open_api
from workload_map.kube.flags import add_connection_flags
from workload_map.kube.options import connection_options
from workload_map.operator import controllers
from workload_map.operator.certs import (
    CertIssuer,
    CertSettings,
    FileCertLoader,
    SecretCertLoader,
    parse_duration,
)
from workload_map.operator.controllers import OperatorConfig, OperatorContext
from workload_map.operator.events import EventRecorder
from workload_map.operator.gcpauses import READINESS, GcPauses, settle_when
from workload_map.operator.leader import LeaderElector
from workload_map.operator.plugins import PluginLoadError, load_plugins
from workload_map.operator.server import Servers, TlsSource, parse_bind_address

__all__ = ["SharedContext", "build_parser", "entry", "main"]

log = logging.getLogger("workload_map.operator")

_SA_NAMESPACE = Path("/var/run/secrets/kubernetes.io/serviceaccount/namespace")


def _load_builtin_controllers() -> list[str]:
    """The operator's one lazy boundary: its built-in controllers register when imported (the
    one registry is :mod:`workload_map.operator.controllers`), here at start rather than when
    this module is imported (``wlmap`` imports it to parse flags, tests to drive it); the
    other rooms' controllers (gangs, metrics) are plug-ins found by entry point
    (:mod:`workload_map.operator.plugins`): their names are returned."""
    for module in ("karta_controller", "karta_webhooks", "catalog_installer"):
        importlib.import_module(f"workload_map.operator.{module}")
    return load_plugins()


def _duration(text: str) -> float:
    try:
        return parse_duration(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _gc_thresholds(text: str) -> tuple[int, int, int]:
    parts = text.split(",")
    try:
        values = tuple(int(x) for x in parts)
    except ValueError:
        values = ()
    if len(values) != 3 or any(v < 0 for v in values):
        raise argparse.ArgumentTypeError(
            f"--gc-thresholds {text!r}: three non-negative integers G0,G1,G2 (gc.set_threshold)"
        )
    return values[0], values[1], values[2]


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="wlmap operator",
        description="The workload-map operator: Karta controller, admission webhooks, and the "
        "controllers of other workload-map rooms that are enabled.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    # kubectl's connection flags, the same set as every wlmap command's
    add_connection_flags(
        p,
        namespace_help="namespace of the operator's own objects (Lease, Secret); "
        "default: $POD_NAMESPACE, else the service account's, else default",
    )
    p.add_argument("--as-uid", dest="as_uid", metavar="UID", help="impersonate this UID")
    p.add_argument("--metrics-bind-address", default=":8080", help='metrics endpoint ("0" = off)')
    p.add_argument(
        "--health-probe-bind-address", default=":8081", help='/healthz and /readyz ("0" = off)'
    )
    p.add_argument("--leader-elect", action="store_true", help="elect a leader through a Lease")
    p.add_argument(
        "--leader-election-id", default="workload-map-operator.run.ai", help="name of the Lease"
    )
    p.add_argument(
        "--leader-election-namespace", help="namespace of the Lease (default: --namespace)"
    )
    p.add_argument("--leader-elect-lease-duration", type=_duration, default="15s")
    p.add_argument("--leader-elect-renew-deadline", type=_duration, default="10s")
    p.add_argument("--leader-elect-retry-period", type=_duration, default="2s")
    p.add_argument("--enable-webhook", action="store_true", help="serve the admission webhooks")
    p.add_argument(
        "--webhook-host", default="", help="address the webhook server binds (default: all)"
    )
    p.add_argument("--webhook-port", type=int, default=9443)
    p.add_argument(
        "--webhook-namespace",
        help="namespace of the webhook Service and Secret (default: --namespace)",
    )
    p.add_argument("--webhook-cert-dir", default="/tmp/k8s-webhook-server/serving-certs")
    p.add_argument("--webhook-cert-mode", choices=("auto", "manual"), default="auto")
    p.add_argument("--webhook-cert-secret", default="workload-map-operator-webhook-cert")
    p.add_argument("--webhook-service-name", default="workload-map-operator-webhook")
    p.add_argument(
        "--webhook-cert-extra-sans",
        default="",
        help="comma list of more DNS names or IPs for the auto certificate",
    )
    p.add_argument(
        "--webhook-cert-lifetime",
        type=_duration,
        default="8760h",
        help="validity of auto serving certificates; re-issued with 1/3 left",
    )
    p.add_argument("--mutating-webhook-name", default="workload-map-operator-mutating")
    p.add_argument("--validating-webhook-name", default="workload-map-operator-validating")
    p.add_argument(
        "--install-catalog",
        action="store_true",
        help="apply the built-in definitions as Kartas when elected",
    )
    p.add_argument("--karta-workers", type=int, default=8)
    p.add_argument(
        "--gc-thresholds",
        type=_gc_thresholds,
        default="50000,20,100",
        metavar="G0,G1,G2",
        help="the cyclic collector's thresholds (gc.set_threshold); Python's own are 700,10,10",
    )
    p.add_argument("--disable-karta-controller", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--log-level", default="info", choices=("debug", "info", "warning", "error"))
    p.add_argument("--log-json", action="store_true", help="one JSON object per log line")
    p.add_argument("--version", action="store_true", help="print the version and exit")
    for add in controllers.flag_adders():
        add(p)
    return p


class _JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "ts": round(record.created, 3),
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        if record.exc_info:
            out["error"] = self.formatException(record.exc_info)
        return json.dumps(out)


def _setup_logging(level: str, as_json: bool) -> None:
    handler = logging.StreamHandler(sys.stderr)
    if as_json:
        handler.setFormatter(_JsonFormatter())
    else:
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    if level != "debug":  # aiohttp logs every request at info
        logging.getLogger("aiohttp.access").setLevel(logging.WARNING)


def _namespace(flag: str | None) -> str:
    if flag:
        return flag
    env = os.environ.get("POD_NAMESPACE")
    if env:
        return env
    try:
        return _SA_NAMESPACE.read_text().strip() or "default"
    except OSError:
        return "default"


@dataclass
class SharedContext(OperatorContext):
    """The operator's context, with what its rooms share beyond the watch caches:
    ``evaluations``, one engine evaluation per workload that the exporter's inventory and the
    gang planner both read (they evaluate the same objects of one informer per kind; issue 21
    item 4). A room handed a plain :class:`OperatorContext` (tests, another host) evaluates
    alone."""

    evaluations: Evaluations = field(default_factory=Evaluations)


class Operator:
    """One running operator process (also driven in-process by tests)."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        namespace = _namespace(args.namespace)
        identity = f"{socket.gethostname()}_{uuid.uuid4().hex[:8]}"
        self.config = OperatorConfig(args=args, namespace=namespace, identity=identity)
        self.api = open_api(connection_options(args, os.environ))
        self.ctx = SharedContext(
            config=self.config,
            api=self.api,
            informers=InformerSet(self.api.transport()),
            events=EventRecorder(self.api, instance=identity),
        )
        self.controllers: list[Any] = []
        for factory in controllers.factories():
            made = factory(self.config)
            if made is not None:
                self.controllers.append(made)
        self.tls: TlsSource | None = None
        self.servers: Any = None
        self.elector: Any = None
        self.exit_code = 0
        self.done = threading.Event()
        self._leading_started = False
        self._lock = threading.Lock()
        if args.enable_webhook:
            self._add_cert_components()

    def _add_cert_components(self) -> None:
        args = self.args
        tls = self.tls = TlsSource()
        cert_dir = Path(args.webhook_cert_dir)
        if args.webhook_cert_mode == "manual":
            self.controllers.append(FileCertLoader(cert_dir, tls))
            return
        settings = CertSettings(
            namespace=args.webhook_namespace or self.config.namespace,
            secret=args.webhook_cert_secret,
            service=args.webhook_service_name,
            extra_sans=tuple(
                s.strip() for s in args.webhook_cert_extra_sans.split(",") if s.strip()
            ),
            lifetime=args.webhook_cert_lifetime,
            cert_dir=cert_dir,
            mutating=args.mutating_webhook_name,
            validating=args.validating_webhook_name,
        )
        self.controllers.append(SecretCertLoader(settings, tls))
        self.controllers.append(CertIssuer(settings))

    # -- run ------------------------------------------------------------------------------

    def start(self) -> None:
        args = self.args
        for c in self.controllers:
            if not c.needs_leader:
                log.info("starting %s", c.name)
                c.start(self.ctx)
        webhook = (
            (args.webhook_host or "0.0.0.0", args.webhook_port) if args.enable_webhook else None
        )
        self.servers = Servers(
            self.ctx,
            health=parse_bind_address(args.health_probe_bind_address),
            metrics=parse_bind_address(args.metrics_bind_address),
            webhook=webhook,
            tls=self.tls,
        )
        self.servers.start()
        leader = Gauge(
            "workloadmap_operator_leader", "1 while this replica is the leader.", registry=None
        )
        leader.set_function(lambda: 1 if self.ctx.is_leader() else 0)
        self.ctx.registry.register(leader)

        # the collection before the freeze is itself a pause: the replica turns ready after it
        self.gc_pauses = GcPauses()
        self.ctx.registry.register(self.gc_pauses)
        self.ctx.add_readiness(READINESS, lambda: self.gc_pauses.freezes > 0)
        servers = self.servers
        settle_when(
            lambda: all(ok for name, ok in servers.readiness().items() if name != READINESS),
            self.ctx.stopping,
            self.gc_pauses,
        )
        if args.leader_elect:
            self.elector = LeaderElector(
                self.api,
                name=args.leader_election_id,
                namespace=args.leader_election_namespace or self.config.namespace,
                identity=self.config.identity,
                lease_duration=args.leader_elect_lease_duration,
                renew_deadline=args.leader_elect_renew_deadline,
                retry_period=args.leader_elect_retry_period,
                on_started=self._start_leading,
                on_stopped=self._lost_lead,
            )
            self.elector.start()
        else:
            self._start_leading()

    def _start_leading(self) -> None:
        with self._lock:
            if self._leading_started or self.ctx.stopping.is_set():
                return
            self._leading_started = True
        log.info("%s is the leader", self.config.identity)
        self.ctx.leader.set()
        for c in self.controllers:
            if c.needs_leader:
                log.info("starting %s", c.name)
                c.start(self.ctx)

    def _lost_lead(self) -> None:
        log.error("lost the leader Lease; exiting so that a standby takes over")
        self.ctx.leader.clear()
        self.shutdown(exit_code=1)

    def shutdown(self, exit_code: int = 0) -> None:
        with self._lock:
            if self.ctx.stopping.is_set():
                return
            self.ctx.stopping.set()
        self.exit_code = exit_code
        log.info("shutting down")
        for c in reversed(self.controllers):
            try:
                c.stop()
            except Exception:
                log.exception("stopping %s", c.name)
        if self.elector is not None:
            self.elector.release()
        if self.servers is not None:
            self.servers.stop()
        self.ctx.informers.stop()
        self.done.set()

    def wait(self) -> int:
        while not self.done.wait(0.5):
            pass
        return self.exit_code


def main(argv: Sequence[str] | None = None) -> int:
    try:
        plugins = _load_builtin_controllers()
    except PluginLoadError as exc:  # before the flags: plug-ins add their own
        print(f"wlmap operator: cannot start: {exc}", file=sys.stderr)
        return 1
    parser = build_parser()
    args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    if args.version:
        print(__version__)
        return 0
    _setup_logging(args.log_level, args.log_json)
    log.info("controller plug-ins: %s", ", ".join(plugins) or "none")
    # hand the GIL over sooner: the webhook server's loop must not wait 5 ms behind a
    # reconcile or a validation running in another thread
    sys.setswitchinterval(0.001)
    # caches hold many small dicts that live for the process's life: collect the young
    # generation less often, so admission answers are not held up by collector pauses
    gc.set_threshold(*args.gc_thresholds)

    try:
        op = Operator(args)
    except (WlmapError, ValueError) as exc:
        log.error("cannot start: %s", exc)
        return 1

    def on_signal(signum: int, _frame: Any) -> None:
        log.info("received signal %d", signum)
        threading.Thread(target=op.shutdown, name="shutdown", daemon=True).start()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    started = time.monotonic()
    try:
        op.start()
    except (WlmapError, ValueError, OSError, RuntimeError) as exc:
        log.error("cannot start: %s", exc)
        op.shutdown(exit_code=1)
        return 1
    log.info("started in %.1fs", time.monotonic() - started)
    return op.wait()


def entry() -> None:
    raise SystemExit(main())
