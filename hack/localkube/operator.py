"""``python -m workload_map.operator`` as a child process beside a cluster (outside it: a
kubeconfig, loopback ports for probes, metrics and webhooks), and the gang pod webhook it serves.

The tests start it in many shapes (``OperatorProcess`` with their flags); ``gang_operator``
is the shape with gang scheduling on: the pod webhook configuration installed first, pointing at
the operator's loopback port, which the operator fills with its CA (``caBundle``)."""

from __future__ import annotations

import contextlib
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from workload_map.gangs.webhook import pod_webhook
from workload_map.kube.api import Api
from workload_map.kube.errors import NotFound

from .plane import HarnessError, Proc, spawn, wait_for
from .ports import free_port

__all__ = [
    "LEASE_DURATION",
    "MUTATING",
    "RETRY_PERIOD",
    "OperatorProcess",
    "delete",
    "gang_operator",
    "install_pod_webhook",
]

MUTATING = "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations"
#: the leader election of an OperatorProcess (seconds): a standby takes an abandoned Lease
#: once it has seen it unrenewed for LEASE_DURATION, trying every RETRY_PERIOD
LEASE_DURATION = 4
RETRY_PERIOD = 1


def delete(api: Api, path: str) -> None:
    """DELETE ``path``; already gone is fine."""
    with contextlib.suppress(NotFound):
        api.request("DELETE", path)


class OperatorProcess:
    """``python -m workload_map.operator`` against a cluster, on loopback ports; its output in
    ``workdir/operator.log``. A child in a session of its own, killed if its parent dies."""

    def __init__(
        self,
        kubeconfig: Path,
        namespace: str,
        workdir: Path,
        *,
        webhook: bool = True,
        leader_elect: bool = False,
        config_name: str = "wlmap-test",
        extra: list[str] | None = None,
    ) -> None:
        self.health = free_port()
        self.metrics_port = free_port()
        self.webhook_port = free_port()
        self.workdir = workdir
        workdir.mkdir(parents=True, exist_ok=True)
        self.log = workdir / "operator.log"
        args = [
            sys.executable,
            "-m",
            "workload_map.operator",
            f"--kubeconfig={kubeconfig}",
            f"--namespace={namespace}",
            f"--health-probe-bind-address=127.0.0.1:{self.health}",
            f"--metrics-bind-address=127.0.0.1:{self.metrics_port}",
            "--log-level=info",
        ]
        if webhook:
            args += [
                "--enable-webhook",
                "--webhook-host=127.0.0.1",
                f"--webhook-port={self.webhook_port}",
                f"--webhook-cert-dir={workdir / 'certs'}",
                "--webhook-cert-extra-sans=127.0.0.1",
                f"--webhook-cert-secret={config_name}-cert",
                f"--mutating-webhook-name={config_name}-mutating",
                f"--validating-webhook-name={config_name}-validating",
            ]
        if leader_elect:
            args += [
                "--leader-elect",
                f"--leader-election-id={config_name}-lease",
                f"--leader-elect-lease-duration={LEASE_DURATION}s",
                "--leader-elect-renew-deadline=3s",
                f"--leader-elect-retry-period={RETRY_PERIOD}s",
            ]
        self.args = args + list(extra or [])
        self.child: Proc | None = None
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> OperatorProcess:
        self.child = spawn("wlmap-operator", self.args, self.log)
        self.proc = self.child.popen
        return self

    def get(self, port: int, path: str) -> tuple[int, str]:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=3) as r:
                return int(r.status), r.read().decode()
        except urllib.error.HTTPError as err:
            return int(err.code), err.read().decode()

    def ready(self) -> bool:
        try:
            return self.get(self.health, "/readyz")[0] == 200
        except OSError:
            return False

    def wait_ready(self, timeout: float = 60.0) -> None:
        """Until ``/readyz`` answers 200; HarnessError with the log's tail if it exits first
        or ``timeout`` (seconds) passes."""
        if self.child is None:
            raise HarnessError("OperatorProcess.wait_ready: the operator was never started")
        wait_for(self.child, self.ready, "the operator's /readyz", timeout)

    def metric(self, name: str) -> float:
        _, text = self.get(self.metrics_port, "/metrics")
        for line in text.splitlines():
            if line.startswith(name + " "):
                return float(line.split()[1])
        return float("nan")

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 20.0) -> int | None:
        """Send ``sig`` and wait ``timeout`` seconds, then kill; returns the exit code."""
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        return self.proc.returncode

    def log_tail(self, lines: int = 30) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""


def install_pod_webhook(
    api: Api,
    *,
    port: int,
    name: str,
    namespace_labels: Mapping[str, str] | None = None,
    timeout: int = 3,
) -> None:
    """``{name}-mutating`` with the gang pod hook only, calling ``https://127.0.0.1:port``;
    ``namespace_labels``: only for namespaces so labelled (else the hook's own selector)."""
    hook = pod_webhook(url=f"https://127.0.0.1:{port}", timeout_seconds=timeout)
    if namespace_labels:
        hook["namespaceSelector"] = {"matchLabels": dict(namespace_labels)}
    body = {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "MutatingWebhookConfiguration",
        "metadata": {"name": f"{name}-mutating"},
        "webhooks": [hook],
    }
    delete(api, f"{MUTATING}/{name}-mutating")
    api.request("POST", MUTATING, body)


def _ca_bundle(api: Api, name: str) -> bool:
    hooks: list[dict[str, Any]] = api.get(f"{MUTATING}/{name}-mutating").get("webhooks") or []
    return bool(hooks) and all((h.get("clientConfig") or {}).get("caBundle") for h in hooks)


@contextlib.contextmanager
def gang_operator(
    api: Api,
    kubeconfig: Path,
    namespace: str,
    workdir: Path,
    name: str,
    *,
    namespace_labels: Mapping[str, str] | None = None,
    extra: list[str] | None = None,
    leader_elect: bool = False,
    install: bool = True,
    timeout: float = 120.0,
) -> Iterator[OperatorProcess]:
    """The operator with gang scheduling on, ready, its pod webhook configuration ``name``
    installed (``install``) and filled with its CA; stopped, the configuration deleted, on
    exit. ``timeout`` bounds each wait (seconds)."""
    proc = OperatorProcess(
        kubeconfig,
        namespace,
        workdir,
        config_name=name,
        leader_elect=leader_elect,
        extra=["--enable-gang-scheduling", "--gang-resync-period=30", *(extra or [])],
    )
    if install:
        install_pod_webhook(
            api, port=proc.webhook_port, name=name, namespace_labels=namespace_labels
        )
    proc.start()
    try:
        proc.wait_ready(timeout)
        if install:
            deadline = time.monotonic() + timeout
            while not _ca_bundle(api, name):
                if time.monotonic() > deadline or not proc.alive():
                    raise HarnessError(
                        f"the operator did not patch the caBundle of {name}-mutating within "
                        f"{timeout:.0f} s; last lines of {proc.log}:\n{proc.log_tail()}"
                    )
                time.sleep(0.2)
        yield proc
    finally:
        proc.stop()
        if install:
            delete(api, f"{MUTATING}/{name}-mutating")
