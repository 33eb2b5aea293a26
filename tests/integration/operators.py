"""Real operators and a second scheduler beside the harness's control plane: KubeRay's
``ray-operator``, the Kubeflow training operator and the scheduler-plugins scheduler with the
Coscheduling plugin, built from their Go modules by ``hack/build-operators.sh`` (``make
operators``) into the harness's cache, each run as a child process of the plane outside any
cluster (``$KUBECONFIG``, leader election off, metrics, probes and webhooks on loopback ports).

They are optional parts of the suite: a missing binary skips its tests with a reason that names
``make operators``; ``make test``'s tool step builds them, so CI runs them. Each process joins the
plane's process list: it is stopped with the plane, and its log is among the tails shown when a
test fails."""

from __future__ import annotations

import base64
import os
import ssl
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.ports import free_port

from .harness import HarnessError, LocalControlPlane, _Proc, _spawn, cache_dir, tail
from .kube import Kube

BUILD_HINT = (
    "build it once with `make operators` (hack/build-operators.sh, from its Go module; "
    "`make test`'s tools step runs it)"
)
#: tool (as ``hack/build-operators.sh`` names it) -> its binary in the cache's ``bin/``
BINARIES = {
    "kuberay": "kuberay-operator",
    "training-operator": "training-operator",
    "scheduler-plugins": "scheduler-plugins",
    "jobset": "jobset-controller",
    "trainer": "trainer-controller-manager",
}
#: the name pods give to be placed by the second scheduler (KubeRay's batch scheduler
#: ``scheduler-plugins`` sets it, and it is our ``--gang-coscheduling-schedulers`` default)
COSCHEDULING_SCHEDULER = "scheduler-plugins-scheduler"
# The training operator v1.8.1 has no flag for its certificate folder. Its rotator
# (cert-controller v0.10.1) holds every controller back until a file ``tls.crt`` exists in this
# fixed folder (in a cluster: the kubelet's mount of the Secret) and reads nothing of it; its
# webhook server reads its key pair from ``$TMPDIR/k8s-webhook-server/serving-certs``
# (controller-runtime's default under Go's ``os.TempDir()``). So each run points ``TMPDIR`` at
# its plane's folder with the plane's own serving pair in it, and the fixed folder only needs a
# ``tls.crt`` of any run: runs on one machine never wait for each other nor race on its files.
TRAINING_ROTATOR_DIR = Path("/tmp/k8s-webhook-server/serving-certs")
TRAINING_CERT_SUBDIR = "k8s-webhook-server/serving-certs"
TRAINING_NAMESPACE = "kubeflow"
TRAINING_SECRET = "training-operator-webhook-cert"
TRAINING_WEBHOOK = "validator.training-operator.kubeflow.org"
# Kubeflow Trainer v2.0.0 starts the same way (its rotator is cert-controller v0.12.0, on the same
# fixed folder; its webhook server reads ``$TMPDIR``'s); its namespace is ``kubeflow-system``
# outside a pod (no service-account mount to read it from).
TRAINER_NAMESPACE = "kubeflow-system"
TRAINER_SECRET = "kubeflow-trainer-webhook-cert"
TRAINER_WEBHOOK = "validator.trainer.kubeflow.org"
# JobSet's defaulting and validating webhooks for JobSets (its pod webhooks serve exclusive
# placement only and are left out: they would sit beside ours on every pod of the plane)
_JOBSET_HOOKS = (
    ("mutating", "mjobset.kb.io", "/mutate-jobset-x-k8s-io-v1alpha2-jobset", ["CREATE"]),
    (
        "validating",
        "vjobset.kb.io",
        "/validate-jobset-x-k8s-io-v1alpha2-jobset",
        ["CREATE", "UPDATE"],
    ),
)
# KubeRay's CRDs are about 1 MB each: on a loaded machine the API server took over the start
# timeout (120 s) to establish one, so each gets several (a bound, never a speed target)
_CRD_WAITS = 4


def _built(tool: str) -> tuple[Path, str, list[Path]] | None:
    """The tool's binary, version and CRD files, where the build left all three."""
    path = cache_dir() / "bin" / BINARIES[tool]
    stamp = path.with_name(path.name + ".version")
    if not (path.is_file() and os.access(path, os.X_OK) and stamp.is_file()):
        return None
    version = stamp.read_text().split("@")[-1].strip()
    files = sorted((cache_dir() / "crds" / f"{tool}-{version}").glob("*.yaml"))
    return (path, version, files) if files else None


def binary(tool: str) -> tuple[Path, str]:
    """The tool's binary and its version, or a skip naming the command that builds it."""
    built = _built(tool)
    if built is None:
        where = cache_dir() / "bin" / BINARIES[tool]
        pytest.skip(f"{tool} ({where}, its CRDs beside) is not built: {BUILD_HINT}")
    return built[0], built[1]


def crds(tool: str) -> list[Path]:
    """The CRD files the build copied from the tool's module (or a skip naming the target)."""
    binary(tool)
    built = _built(tool)
    assert built is not None
    return built[2]


def install_crds(kube: Kube, tool: str, *kinds: str) -> None:
    """Install the tool's CRDs (those of ``kinds``, lower-case plurals like ``pytorchjobs``,
    when given) on ``kube``; again is free. The gang modules call this before our operator
    starts, as a cluster has its CRDs before workloads come: our operator watches a kind it
    finds served at start, and one installed later only from its next discovery (every 10 s),
    so a workload made in between would miss the webhook (reported, not grouped). A tool not
    built installs nothing here: its tests skip where they start it."""
    plane = _plane(kube)
    built = _built(tool)
    for crd in built[2] if built else []:
        if not kinds or any(f"_{k}." in crd.name for k in kinds):
            kube.install_crd(crd, timeout=_CRD_WAITS * plane.start_timeout)


def _ok(url: str, ctx: ssl.SSLContext | None = None) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2, context=ctx) as resp:
            return int(resp.status) == 200
    except (urllib.error.URLError, OSError, ValueError):
        return False


def _plane(kube: Kube) -> LocalControlPlane:
    if kube.plane is None:
        pytest.skip("the real operators run beside the local control plane only")
    return kube.plane


def _wait_ready(plane: LocalControlPlane, proc: _Proc, url: str, ctx: Any = None) -> None:
    deadline = time.monotonic() + plane.start_timeout
    while not _ok(url, ctx):
        if not proc.running():
            raise HarnessError(
                f"{proc.name} exited with code {proc.popen.returncode} before {url} answered; "
                f"last lines of {proc.log}:\n{tail(proc.log)}"
            )
        if time.monotonic() > deadline:
            raise HarnessError(
                f"{proc.name}: {url} not ready after {plane.start_timeout:.0f} s "
                f"(WLMAP_TEST_START_TIMEOUT raises it); last lines of {proc.log}:\n{tail(proc.log)}"
            )
        time.sleep(0.2)


def _spawn_env(name: str, argv: list[str], log: Path, env: dict[str, str]) -> _Proc:
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)  # _spawn passes the environment on; restored at once
    try:
        return _spawn(name, argv, log)
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def _stop(plane: LocalControlPlane, proc: _Proc) -> None:
    proc.stop()
    with suppress(ValueError):
        plane.procs.remove(proc)


@contextmanager
def _running(
    plane: LocalControlPlane,
    name: str,
    argv: list[str],
    ready: str,
    *,
    env: dict[str, str] | None = None,
    ctx: Any = None,
) -> Iterator[_Proc]:
    """``argv`` as the plane's child ``name`` (log ``<workdir>/<name>.log``, ``env`` added to
    its environment), yielded once ``ready`` answers; stopped and dropped from the plane's
    processes afterwards (the plane's shutdown would otherwise stop it twice)."""
    proc = _spawn_env(name, argv, plane.workdir / f"{name}.log", env or {})
    plane.procs.append(proc)
    try:
        _wait_ready(plane, proc, ready, ctx)
        yield proc
    finally:
        _stop(plane, proc)


@contextmanager
def kuberay(
    kube: Kube, *, batch_scheduler: str = "", namespaces: list[str] | None = None
) -> Iterator[_Proc]:
    """KubeRay's operator on ``kube`` (its CRDs installed first), ready once its manager
    answers ``/readyz``; ``batch_scheduler`` as KubeRay's ``--batch-scheduler``."""
    path, _ = binary("kuberay")
    plane = _plane(kube)
    install_crds(kube, "kuberay")  # RayCluster, RayJob, RayService: all three, or it stops
    assert plane.kubeconfig is not None
    probe = free_port()
    argv = [
        str(path),
        f"--metrics-addr=127.0.0.1:{free_port()}",
        f"--health-probe-bind-address=127.0.0.1:{probe}",
        "--enable-leader-election=false",
        "--log-stdout-encoder=console",
    ]
    if batch_scheduler:
        argv.append(f"--batch-scheduler={batch_scheduler}")
    if namespaces:
        argv.append(f"--watch-namespace={','.join(namespaces)}")
    name = "kuberay-operator" + (f"-{batch_scheduler}" if batch_scheduler else "")
    env = {"KUBECONFIG": str(plane.kubeconfig)}
    with _running(plane, name, argv, f"http://127.0.0.1:{probe}/readyz", env=env) as proc:
        yield proc


def _satisfy_cert_rotator(
    kube: Kube, plane: LocalControlPlane, namespace: str, secret: str, webhook: str, tmp: str
) -> Path:
    """What a cert-controller rotator (the training operator's, Trainer's) waits for before any
    controller runs: its namespace, the Secret it fills, a validating configuration listing no
    webhook (so none is ever called), and a mounted ``tls.crt``. Returns the folder to pass as
    ``TMPDIR``, where the webhook server reads the plane's serving pair."""
    _create(kube, "/api/v1/namespaces", {"metadata": {"name": namespace}})
    _create(
        kube,
        f"/api/v1/namespaces/{namespace}/secrets",
        {"metadata": {"name": secret}, "type": "Opaque"},
    )
    _create(
        kube,
        "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations",
        {"metadata": {"name": webhook}, "webhooks": []},
    )
    tmpdir = plane.workdir / tmp
    _serving_pair(plane, tmpdir / TRAINING_CERT_SUBDIR)
    _serving_pair(plane, TRAINING_ROTATOR_DIR, keep=True)
    return tmpdir


@contextmanager
def training_operator(kube: Kube, *schemes: str) -> Iterator[_Proc]:
    """The Kubeflow training operator on ``kube`` for ``schemes`` (default ``pytorchjob``),
    ready once its ``/readyz`` answers (its certificates rotated, its webhook server up).

    Its certificate rotator blocks every controller until its Secret and its validating
    configuration exist (created here: an empty Secret it fills, a configuration listing no
    webhook, so none of it is ever called) and a certificate is "mounted" (see
    ``TRAINING_ROTATOR_DIR``)."""
    path, _ = binary("training-operator")
    plane = _plane(kube)
    schemes = schemes or ("pytorchjob",)
    install_crds(kube, "training-operator", *[f"{s}s" for s in schemes])
    assert plane.kubeconfig is not None
    tmpdir = _satisfy_cert_rotator(
        kube, plane, TRAINING_NAMESPACE, TRAINING_SECRET, TRAINING_WEBHOOK, "training-operator-tmp"
    )
    probe = free_port()
    argv = [
        str(path),
        f"--metrics-bind-address=127.0.0.1:{free_port()}",
        f"--health-probe-bind-address=127.0.0.1:{probe}",
        f"--webhook-server-port={free_port()}",
        *[f"--enable-scheme={s}" for s in schemes],
    ]
    env = {
        "KUBECONFIG": str(plane.kubeconfig),
        # its namespace (not KUBEFLOW_NAMESPACE: that also narrows what it watches)
        "MY_POD_NAMESPACE": TRAINING_NAMESPACE,
        "TMPDIR": str(tmpdir),
    }
    ready = f"http://127.0.0.1:{probe}/readyz"
    with _running(plane, "training-operator", argv, ready, env=env) as proc:
        yield proc


def _create(kube: Kube, path: str, body: dict[str, Any]) -> None:
    """Create, or keep what is there (a second start on the same plane)."""
    from kubernetes.client.exceptions import ApiException

    try:
        kube.request("POST", path, body)
    except ApiException as err:
        if err.status != 409:
            raise


def _serving_pair(plane: LocalControlPlane, folder: Path, *, keep: bool = False) -> None:
    """The plane's own serving key pair as ``tls.crt``/``tls.key`` in ``folder``; with ``keep``
    a pair already there (another run's) stays. Each file is renamed into place whole, so a
    reader never sees half of one."""
    folder.mkdir(parents=True, exist_ok=True)
    for source, name in (("apiserver.key", "tls.key"), ("apiserver.crt", "tls.crt")):
        target = folder / name
        if keep and target.exists():
            continue
        partial = folder / f".{name}.{os.getpid()}.tmp"
        partial.write_bytes((plane.workdir / source).read_bytes())
        partial.chmod(0o600)
        partial.replace(target)


@contextmanager
def coscheduling_scheduler(kube: Kube, *, permit_wait: int = 10) -> Iterator[_Proc]:
    """The scheduler-plugins scheduler (v1.31 libraries) as a second scheduler named
    ``COSCHEDULING_SCHEDULER``, with the Coscheduling plugin in its profile (queue sort
    included, the defaults' disabled); the PodGroup CRD of its module installed first."""
    path, _ = binary("scheduler-plugins")
    plane = _plane(kube)
    install_crds(kube, "scheduler-plugins")
    assert plane.kubeconfig is not None
    config = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "leaderElection": {"leaderElect": False},
        "clientConnection": {"kubeconfig": str(plane.kubeconfig)},
        "profiles": [
            {
                "schedulerName": COSCHEDULING_SCHEDULER,
                "plugins": {
                    "multiPoint": {"enabled": [{"name": "Coscheduling"}]},
                    "queueSort": {
                        "enabled": [{"name": "Coscheduling"}],
                        "disabled": [{"name": "*"}],
                    },
                },
                "pluginConfig": [
                    {"name": "Coscheduling", "args": {"permitWaitingTimeSeconds": permit_wait}}
                ],
            }
        ],
    }
    config_file = plane.workdir / "scheduler-plugins.yaml"
    config_file.write_text(yaml.safe_dump(config))
    certdir = plane.workdir / "scheduler-plugins-certs"
    certdir.mkdir(exist_ok=True)
    port = free_port()
    argv = [
        str(path),
        f"--config={config_file}",
        f"--authentication-kubeconfig={plane.kubeconfig}",
        f"--authorization-kubeconfig={plane.kubeconfig}",
        f"--cert-dir={certdir}",
        "--bind-address=127.0.0.1",
        f"--secure-port={port}",
        "--v=1",
    ]
    insecure = ssl.create_default_context()
    insecure.check_hostname = False
    insecure.verify_mode = ssl.CERT_NONE  # its own throw-away certificate, on loopback
    ready = f"https://127.0.0.1:{port}/healthz"
    with _running(plane, "scheduler-plugins", argv, ready, ctx=insecure) as proc:
        yield proc


def _delete(kube: Kube, path: str) -> None:
    from kubernetes.client.exceptions import ApiException

    with suppress(ApiException):
        kube.request("DELETE", path)


@contextmanager
def jobset(kube: Kube) -> Iterator[_Proc]:
    """The JobSet controller (``sigs.k8s.io/jobset``) on ``kube``: its CRD installed first, its
    internal certificate management off (``--config``: no Secret, no rotator), its webhook
    server on a loopback port with the plane's serving pair, and its JobSet defaulting and
    validating webhooks registered by URL with the plane's CA, as its manifests register them
    by Service. Ready once ``/readyz`` answers and a dry-run JobSet comes back defaulted (the
    API server calls the webhook); the registrations are removed when it stops (they fail
    closed)."""
    path, _ = binary("jobset")
    plane = _plane(kube)
    install_crds(kube, "jobset")
    assert plane.kubeconfig is not None
    port, probe = free_port(), free_port()
    certdir = plane.workdir / "jobset-certs"
    _serving_pair(plane, certdir)
    config = {
        "apiVersion": "config.jobset.x-k8s.io/v1alpha1",
        "kind": "Configuration",
        "leaderElection": {"leaderElect": False},
        "internalCertManagement": {"enable": False},
        "webhook": {
            "host": "127.0.0.1",
            "port": port,
            "certDir": str(certdir),
        },
        "metrics": {"bindAddress": f"127.0.0.1:{free_port()}"},
        "health": {"healthProbeBindAddress": f"127.0.0.1:{probe}"},
    }
    config_file = plane.workdir / "jobset-config.yaml"
    config_file.write_text(yaml.safe_dump(config))
    argv = [str(path), f"--config={config_file}"]
    env = {"KUBECONFIG": str(plane.kubeconfig)}
    name = f"wlmap-test-jobset-{port}"
    bundle = base64.b64encode((plane.workdir / "serving-ca.crt").read_bytes()).decode()
    registered: list[str] = []
    ready = f"http://127.0.0.1:{probe}/readyz"
    with _running(plane, "jobset-controller", argv, ready, env=env) as proc:
        try:
            for kind, hook, url_path, operations in _JOBSET_HOOKS:
                resource = f"/apis/admissionregistration.k8s.io/v1/{kind}webhookconfigurations"
                body = {
                    "metadata": {"name": name},
                    "webhooks": [
                        {
                            "name": hook,
                            "admissionReviewVersions": ["v1"],
                            "sideEffects": "None",
                            "failurePolicy": "Fail",
                            "timeoutSeconds": 10,
                            "clientConfig": {
                                "url": f"https://127.0.0.1:{port}{url_path}",
                                "caBundle": bundle,
                            },
                            "rules": [
                                {
                                    "apiGroups": ["jobset.x-k8s.io"],
                                    "apiVersions": ["v1alpha2"],
                                    "operations": operations,
                                    "resources": ["jobsets"],
                                }
                            ],
                        }
                    ],
                }
                kube.request("POST", resource, body)
                registered.append(f"{resource}/{name}")
            _wait_defaulted(kube, plane, proc)
            yield proc
        finally:  # before the controller stops: the registrations fail closed
            for resource in registered:
                _delete(kube, resource)


def _wait_defaulted(kube: Kube, plane: LocalControlPlane, proc: _Proc) -> None:
    """Until the API server calls JobSet's defaulting webhook (a dry-run create in
    ``default`` answers with ``successPolicy`` filled in)."""
    from kubernetes.client.exceptions import ApiException

    body = {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {"name": "wlmap-webhook-probe"},
        "spec": {
            "replicatedJobs": [
                {
                    "name": "probe",
                    "template": {
                        "spec": {
                            "template": {
                                "spec": {
                                    "restartPolicy": "Never",
                                    "containers": [{"name": "c", "image": "registry.invalid/x"}],
                                }
                            }
                        }
                    },
                }
            ]
        },
    }
    deadline = time.monotonic() + plane.start_timeout
    last = ""
    while True:
        try:
            answer = kube.request(
                "POST",
                "/apis/jobset.x-k8s.io/v1alpha2/namespaces/default/jobsets",
                body,
                query={"dryRun": "All"},
            )
            if (answer.get("spec") or {}).get("successPolicy"):
                return
            last = "answered without defaults"
        except ApiException as err:
            last = f"{err.status} {err.reason}"
        if not proc.running() or time.monotonic() > deadline:
            raise HarnessError(
                f"the API server never got JobSet's defaulting webhook to answer ({last}); "
                f"last lines of {proc.log}:\n{tail(proc.log)}"
            )
        time.sleep(0.2)


@contextmanager
def trainer(kube: Kube) -> Iterator[_Proc]:
    """The Kubeflow Trainer v2 controller manager on ``kube``: its CRDs (and JobSet's, whose
    JobSets it makes) installed first, ready once ``/readyz`` answers (certificates rotated,
    webhook server up). Its rotator holds every controller back until its Secret and its
    validating configuration exist (created here: an empty Secret it fills, a configuration
    listing no webhook, so its validation is never called) and a ``tls.crt`` is "mounted" (see
    ``TRAINER_NAMESPACE``). Run the JobSet controller beside it for pods."""
    path, _ = binary("trainer")
    plane = _plane(kube)
    binary("jobset")  # its CRD (the JobSets Trainer makes) comes with its build
    install_crds(kube, "jobset")
    install_crds(kube, "trainer")
    assert plane.kubeconfig is not None
    tmpdir = _satisfy_cert_rotator(
        kube, plane, TRAINER_NAMESPACE, TRAINER_SECRET, TRAINER_WEBHOOK, "trainer-tmp"
    )
    probe = free_port()
    argv = [
        str(path),
        "--leader-elect=false",
        f"--metrics-bind-address=127.0.0.1:{free_port()}",
        f"--health-probe-bind-address=127.0.0.1:{probe}",
        f"--webhook-server-port={free_port()}",
    ]
    env = {"KUBECONFIG": str(plane.kubeconfig), "TMPDIR": str(tmpdir)}
    ready = f"http://127.0.0.1:{probe}/readyz"
    with _running(plane, "trainer-controller-manager", argv, ready, env=env) as proc:
        yield proc


__all__ = [
    "BINARIES",
    "BUILD_HINT",
    "COSCHEDULING_SCHEDULER",
    "binary",
    "coscheduling_scheduler",
    "crds",
    "install_crds",
    "jobset",
    "kuberay",
    "trainer",
    "training_operator",
]
