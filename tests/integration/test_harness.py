"""The test harness itself: a real API server that behaves like a cluster, and leaves no trace."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from kubernetes import client, config
from kubernetes.client.exceptions import ApiException

from .harness import (
    BinariesMissing,
    HarnessError,
    Kube,
    LocalControlPlane,
    _Proc,
    _spawn,
    cache_dir,
    find_binaries,
    find_controllers,
    load_objects,
)

ROOT = Path(__file__).resolve().parents[2]
BUILD_SCRIPT = ROOT / "hack" / "build-apiserver.sh"


def local_plane(kube: Kube) -> LocalControlPlane:
    if kube.plane is None:
        pytest.skip("checks the local control plane; WLMAP_TEST_KUBECONFIG names another cluster")
    return kube.plane


def alive(pid: int) -> bool:
    """True while the pid exists and is not a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def port_free(url: str) -> bool:
    port = int(url.rsplit(":", 1)[1].split("/")[0])
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) != 0


def test_server_reports_its_stamped_release(kube: Kube) -> None:
    info = client.VersionApi(kube.api_client()).get_code()
    assert info.major == "1"
    assert info.git_version.startswith("v1."), info.git_version
    assert "master" not in info.git_version and "0.0.0" not in info.git_version
    plane = kube.plane
    if plane is not None:
        printed = subprocess.run(
            [str(plane.apiserver_bin), "--version"], capture_output=True, text=True, check=True
        ).stdout.strip()
        assert printed == f"Kubernetes {info.git_version}"
        assert info.minor == info.git_version.split(".")[1]


def test_kubeconfig_file_reaches_the_server(kube: Kube) -> None:
    api = client.CoreV1Api(config.new_client_from_config(config_file=str(kube.kubeconfig)))
    names = {ns.metadata.name for ns in api.list_namespace().items}
    assert {"default", "kube-system"} <= names
    assert kube.server.startswith("https://")


def test_admin_is_a_cluster_admin(kube: Kube) -> None:
    local_plane(kube)
    review = kube.request(
        "POST",
        "/apis/authentication.k8s.io/v1/selfsubjectreviews",
        {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"},
    )
    user = review["status"]["userInfo"]
    assert user["username"] == "admin"
    assert "system:masters" in user["groups"]


def test_namespaces_are_fresh_and_isolated(kube: Kube, namespace: str) -> None:
    other = kube.create_namespace()
    try:
        assert other != namespace
        for ns, value in ((namespace, "one"), (other, "two")):
            kube.apply(
                {
                    "apiVersion": "v1",
                    "kind": "ConfigMap",
                    "metadata": {"name": "shared-name"},
                    "data": {"v": value},
                },
                namespace=ns,
            )
        api = client.CoreV1Api(kube.api_client())
        mine = api.list_namespaced_config_map(namespace).items
        assert [(c.metadata.name, c.data) for c in mine if c.metadata.name == "shared-name"] == [
            ("shared-name", {"v": "one"})
        ]
        assert api.read_namespaced_config_map("shared-name", other).data == {"v": "two"}
    finally:
        kube.delete_namespace(other)


def test_objects_in_a_missing_namespace_are_rejected(kube: Kube) -> None:
    with pytest.raises(ApiException) as err:
        kube.apply(
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}},
            namespace="wlmap-no-such-namespace",
        )
    assert err.value.status == 404


def test_pod_without_kubelet_gets_status_through_subresource(kube: Kube, namespace: str) -> None:
    pod = kube.apply(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "worker-0", "labels": {"app": "demo"}},
            "spec": {
                "containers": [
                    {"name": "main", "image": "busybox", "resources": {"requests": {"cpu": "1"}}}
                ]
            },
        },
        namespace=namespace,
    )
    assert pod["metadata"]["namespace"] == namespace
    assert pod["status"]["phase"] == "Pending"  # nothing schedules or runs it

    status = {
        "phase": "Running",
        "conditions": [
            {"type": "Ready", "status": "True"},
            {"type": "PodScheduled", "status": "True"},
        ],
        "containerStatuses": [
            {
                "name": "main",
                "image": "busybox",
                "imageID": "",
                "ready": True,
                "restartCount": 2,
                "state": {"running": {"startedAt": "2026-01-01T00:00:00Z"}},
            }
        ],
        "podIP": "10.1.2.3",
    }
    stored = kube.set_status({**pod, "status": status})
    assert stored["status"]["phase"] == "Running"

    read = client.CoreV1Api(kube.api_client()).read_namespaced_pod("worker-0", namespace)
    assert read.status.phase == "Running"
    assert read.status.pod_ip == "10.1.2.3"
    assert read.status.container_statuses[0].restart_count == 2
    assert {(c.type, c.status) for c in read.status.conditions} == {
        ("Ready", "True"),
        ("PodScheduled", "True"),
    }
    assert read.spec.containers[0].resources.requests == {"cpu": "1"}  # spec untouched

    kube.delete("v1", "Pod", "worker-0", namespace)
    with pytest.raises(ApiException) as err:
        kube.get("v1", "Pod", "worker-0", namespace)
    assert err.value.status == 404


def test_apply_takes_multi_document_yaml_and_is_idempotent(kube: Kube, namespace: str) -> None:
    text = textwrap.dedent("""\
        apiVersion: v1
        kind: ConfigMap
        metadata: {name: a, namespace: elsewhere, resourceVersion: "42", uid: stale}
        data: {k: "1"}
        ---
        apiVersion: apps/v1
        kind: Deployment
        metadata: {name: web}
        spec:
          replicas: 3
          selector: {matchLabels: {app: web}}
          template:
            metadata: {labels: {app: web}}
            spec: {containers: [{name: c, image: nginx}]}
        """)
    first = kube.apply(text, namespace=namespace)
    again = kube.apply(text, namespace=namespace)
    assert [o["kind"] for o in first] == ["ConfigMap", "Deployment"]
    assert all(o["metadata"]["namespace"] == namespace for o in again)
    assert [o["metadata"]["resourceVersion"] for o in again] == [
        o["metadata"]["resourceVersion"] for o in first
    ]  # no change, no new version
    # A Deployment controller would create ReplicaSets; none runs, so there are none.
    rs = client.AppsV1Api(kube.api_client()).list_namespaced_replica_set(namespace).items
    assert rs == []


def test_create_with_status_sets_deployment_status(kube: Kube, namespace: str) -> None:
    obj = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "api", "uid": "from-another-cluster", "resourceVersion": "7"},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "api"}},
            "template": {
                "metadata": {"labels": {"app": "api"}},
                "spec": {"containers": [{"name": "c", "image": "x"}]},
            },
        },
        "status": {
            "replicas": 2,
            "readyReplicas": 1,
            "availableReplicas": 1,
            "conditions": [
                {"type": "Available", "status": "False", "reason": "MinimumReplicasUnavailable"}
            ],
        },
    }
    stored = kube.create_with_status(obj, namespace=namespace)
    assert stored["status"]["readyReplicas"] == 1
    read = client.AppsV1Api(kube.api_client()).read_namespaced_deployment("api", namespace)
    assert read.status.conditions[0].reason == "MinimumReplicasUnavailable"
    assert read.metadata.uid != "from-another-cluster"


def test_load_objects_flattens_lists() -> None:
    docs = load_objects("kind: List\napiVersion: v1\nitems:\n- {kind: A}\n- {kind: B}\n")
    assert [d["kind"] for d in docs] == ["A", "B"]


def test_missing_binaries_fail_with_build_instructions(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("TEST_ASSET_KUBE_APISERVER", str(tmp_path / "kube-apiserver"))
    monkeypatch.setenv("TEST_ASSET_ETCD", str(tmp_path / "etcd"))
    with pytest.raises(BinariesMissing) as err:
        find_binaries()
    message = str(err.value)
    assert "make apiserver" in message and "https://go.dev/dl" in message
    assert "kube-apiserver" in message and "etcd" in message


def test_missing_controller_binaries_fail_with_build_instructions(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("TEST_ASSET_KUBE_SCHEDULER", str(tmp_path / "kube-scheduler"))
    with pytest.raises(BinariesMissing) as err:
        find_controllers()
    assert "kube-scheduler" in str(err.value) and "make apiserver" in str(err.value)


def test_every_binary_reports_the_same_release(kube: Kube) -> None:
    plane = local_plane(kube)
    kcm, sched = find_controllers()
    printed = {
        subprocess.run(
            [str(b), "--version"], capture_output=True, text=True, check=True
        ).stdout.strip()
        for b in (plane.apiserver_bin, kcm, sched)
    }
    assert printed == {f"Kubernetes {os.environ.get('WLMAP_KUBE_VERSION', 'v1.37.2')}"}


def test_build_script_without_go_says_how_to_get_it(tmp_path: Path) -> None:
    tools = tmp_path / "path"
    tools.mkdir()
    for tool in ("bash", "head", "grep", "date", "cat", "mkdir"):
        found = shutil.which(tool)
        assert found, tool
        (tools / tool).symlink_to(found)
    run = subprocess.run(
        ["bash", str(BUILD_SCRIPT)],
        capture_output=True,
        text=True,
        env={"PATH": str(tools), "HOME": str(tmp_path), "WLMAP_CACHE": str(tmp_path / "cache")},
        timeout=60,
    )
    assert run.returncode != 0
    assert "https://go.dev/dl" in run.stderr and "make apiserver" in run.stderr


def test_build_script_does_not_rebuild(kube: Kube) -> None:
    plane = local_plane(kube)
    if plane.apiserver_bin.parent != cache_dir() / "bin":
        pytest.skip("binaries come from TEST_ASSET_*/KUBEBUILDER_ASSETS, not the build cache")
    before = plane.apiserver_bin.stat().st_mtime_ns
    # no rebuild: the script says so and the binary is untouched (not timed: the cached run
    # still starts every binary for its --version, seconds on a loaded machine)
    run = subprocess.run(["bash", str(BUILD_SCRIPT)], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert "already in" in run.stderr
    assert plane.apiserver_bin.stat().st_mtime_ns == before


def test_stop_leaves_no_process_port_or_file(kube: Kube) -> None:
    plane = local_plane(kube)
    second = LocalControlPlane(plane.apiserver_bin, plane.etcd_bin).start()
    pids, workdir, server = second.pids(), second.workdir, second.server
    assert len(pids) == 2 and all(alive(p) for p in pids)
    assert workdir.is_dir()
    second.stop()
    assert not any(alive(p) for p in pids)
    assert not workdir.exists()
    assert port_free(server)
    second.stop()  # idempotent


def test_full_plane_stops_every_component_and_its_scheduler_restarts(kube: Kube) -> None:
    plane = local_plane(kube)
    kcm, sched = find_controllers()
    full = LocalControlPlane(
        plane.apiserver_bin,
        plane.etcd_bin,
        controller_manager_bin=kcm,
        scheduler_bin=sched,
        scheduler=True,
    ).start()
    try:
        names = [p.name for p in full.procs]
        assert names == ["etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler"]
        first = full.pids()
        full.stop_scheduler()
        assert not full.scheduler_running and not alive(first[3])
        full.start_scheduler()
        assert full.scheduler_running
        pids = full.pids()
        assert all(alive(p) for p in pids)
    finally:
        full.stop()
    assert not any(alive(p) for p in pids)
    assert not full.workdir.exists()


CHILD = """
import json, os, signal, sys, time
sys.path.insert(0, {root!r})
from tests.integration.harness import LocalControlPlane
plane = LocalControlPlane({apiserver!r}, {etcd!r}).start()
print(json.dumps({{"pids": plane.pids(), "workdir": str(plane.workdir)}}), flush=True)
os.kill(os.getpid(), signal.{sig})
time.sleep(60)
"""


@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM", "SIGKILL"])
def test_interrupted_session_leaves_no_process(kube: Kube, sig: str) -> None:
    """Ctrl-C and SIGTERM run the atexit hook; even SIGKILL takes the children down."""
    plane = local_plane(kube)
    code = CHILD.format(
        root=str(ROOT), apiserver=str(plane.apiserver_bin), etcd=str(plane.etcd_bin), sig=sig
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=180)
    assert run.returncode != 0
    info = json.loads(run.stdout.splitlines()[0])
    deadline = time.monotonic() + 30
    while any(alive(p) for p in info["pids"]) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not any(alive(p) for p in info["pids"]), run.stderr[-2000:]
    if sig != "SIGKILL":  # a killed process cannot clean its temp dir; the others must
        assert not Path(info["workdir"]).exists()
    else:
        shutil.rmtree(info["workdir"], ignore_errors=True)


def test_memory_of_the_control_plane_is_reported(kube: Kube) -> None:
    plane = local_plane(kube)
    rss = plane.rss_mb()
    # The session plane: the scheduler only runs under the `scheduler` fixture.
    assert {"etcd", "kube-apiserver", "kube-controller-manager"} <= set(rss)
    assert all(mb > 1 for mb in rss.values())
    print(f"startup {plane.startup_seconds:.1f} s; RSS MiB {json.dumps(rss)}")


def test_suite_runs_against_an_existing_cluster(kube: Kube) -> None:
    """WLMAP_TEST_KUBECONFIG: the same tests, no local plane (here: pointed at this session's)."""
    env = {**os.environ, "WLMAP_TEST_KUBECONFIG": str(kube.kubeconfig)}
    chosen = "namespaces_are_fresh or pod_without_kubelet or admin_is_a_cluster_admin"
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-k",
            chosen,
            str(Path(__file__)),
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=240,
    )
    assert run.returncode == 0, run.stdout[-3000:]
    assert "2 passed, 1 skipped" in run.stdout, run.stdout[-3000:]


def fake_binary(path: Path, body: str) -> Path:
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)
    return path


def test_a_server_that_dies_at_start_is_reported_with_its_log(tmp_path: Path) -> None:
    etcd = fake_binary(tmp_path / "etcd", 'echo "etcd: bad flag $1" >&2; exit 3')
    plane = LocalControlPlane(fake_binary(tmp_path / "kas", "exit 0"), etcd, start_timeout=30)
    with pytest.raises(HarnessError) as err:
        plane.start()
    message = str(err.value)
    assert "etcd exited with code 3" in message and "etcd: bad flag --data-dir=" in message
    assert not plane.workdir.exists() and plane.procs == []


def test_a_server_that_never_gets_ready_times_out_and_is_stopped(tmp_path: Path) -> None:
    etcd = fake_binary(tmp_path / "etcd", "echo starting; exec sleep 600")
    plane = LocalControlPlane(fake_binary(tmp_path / "kas", "exit 0"), etcd, start_timeout=1)
    with pytest.raises(HarnessError) as err:
        plane.start()
    assert "etcd /health not ready after 1 s" in str(err.value) and "starting" in str(err.value)
    assert plane.procs == [] and not plane.workdir.exists()


def test_a_port_lost_before_the_childs_bind_is_retried_on_a_new_one(tmp_path: Path) -> None:
    """Every component start (etcd and API server at once; controller-manager, scheduler and
    extra API servers alone) tries a new port when the child reports the old one taken."""
    clash = fake_binary(
        tmp_path / "clash", 'echo "listen tcp 127.0.0.1:$1: bind: address already in use"; exit 1'
    )
    plane = LocalControlPlane(fake_binary(tmp_path / "kas", "exit 0"), clash, start_timeout=30)
    tried: list[int] = []

    def start(port: int, clashes: int) -> _Proc:
        tried.append(port)
        proc = _spawn("kube-scheduler", [str(clash), str(port)], tmp_path / f"s{port}.log")
        plane.procs.append(proc)
        if len(tried) <= clashes:
            plane._wait(proc, lambda: False, "kube-scheduler /healthz")
        return proc

    try:
        plane._on_free_port(lambda port: start(port, clashes=2))
        assert len(tried) == 3 and len(set(tried)) == 3  # a new port each time
        assert [p.popen.args[1] for p in plane.procs] == [str(tried[2])]  # the dead ones dropped
        plane._stop_procs()
        tried.clear()
        with pytest.raises(HarnessError, match="address already in use"):
            plane._on_free_port(lambda port: start(port, clashes=3))
        assert len(tried) == 3 and plane.procs == []
    finally:
        plane.stop()
