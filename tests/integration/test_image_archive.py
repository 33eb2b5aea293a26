"""The operator image of `make image` (hack/build-image.py): built twice, same digest; an OCI
layout with Docker's manifest.json that Debian's skopeo reads and converts; and its entry points
run from the image's own root file system as the chart runs the pod (uid 65532, read-only
root, no capabilities: ``imagebox``), the operator serving its admission webhooks with the
certificates it issued against the harness API server.

Root only (chroot, mount namespaces): elsewhere the module skips with that reason.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.operator.live import (
    KARTAS,
    OperatorProcess,
    api_for,
    ca_bundles,
    delete,
    eventually,
    install_webhooks,
    remove_webhooks,
    widget_karta,
)
from workload_map.kube.api import Api
from workload_map.kube.errors import ApiError

from .harness import Kube
from .imagebox import UID, box_argv, unpack
from .test_operator import ensure_karta_crd

ROOT = Path(__file__).resolve().parents[2]
VERSION = "0.1.0"
REF = f"localhost/workload-map-operator:{VERSION}"

pytestmark = [
    pytest.mark.skipif(
        os.geteuid() != 0, reason="the image check needs root (chroot and mount namespaces)"
    ),
    # two image builds (~100 s each idle, the .debs and wheels cached after the first)
    pytest.mark.timeout(2400),
]


def build(out: Path) -> tuple[str, Path]:
    """`make image` into ``out``: the digest it prints and the archive."""
    run = subprocess.run(
        [sys.executable, str(ROOT / "hack/build-image.py"), "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert run.returncode == 0, run.stderr[-4000:]
    digest = next(line.split()[1] for line in run.stdout.splitlines() if line.startswith("digest:"))
    return digest, out / f"workload-map-operator-{VERSION}.oci.tar"


def skopeo(*args: str) -> subprocess.CompletedProcess[str]:
    if shutil.which("skopeo") is None:
        pytest.fail("the image checks need Debian's skopeo: `make image-tools`", pytrace=False)
    return subprocess.run(["skopeo", *args], capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("image")
    path.chmod(0o755)
    return path


@pytest.fixture(scope="module")
def built(work: Path) -> tuple[str, Path]:
    return build(work / "first")


@pytest.fixture(scope="module")
def layout(work: Path, built: tuple[str, Path]) -> Path:
    out = work / "layout"
    with tarfile.open(built[1]) as tar:
        tar.extractall(out, filter="data")
    return out


@pytest.fixture(scope="module")
def rootfs(work: Path, layout: Path) -> Path:
    root = work / "rootfs"
    root.mkdir()
    root.chmod(0o755)
    unpack(layout, root)
    return root


def box_tmp(work: Path, name: str) -> Path:
    """A /tmp for one boxed run (the chart's emptyDir), writable by 65532 only."""
    tmp = work / name
    tmp.mkdir()
    os.chown(tmp, UID, UID)
    tmp.chmod(0o700)
    return tmp


def in_image(rootfs: Path, tmp: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        box_argv(rootfs, tmp, list(argv)), capture_output=True, text=True, timeout=300
    )


def test_two_builds_give_the_same_digest(work: Path, built: tuple[str, Path]) -> None:
    digest, archive = built
    again, second = build(work / "second")
    assert again == digest
    assert second.read_bytes() == archive.read_bytes()


def test_archive_is_an_oci_layout_with_dockers_manifest(
    built: tuple[str, Path], layout: Path
) -> None:
    digest, archive = built
    assert json.loads((layout / "oci-layout").read_text()) == {"imageLayoutVersion": "1.0.0"}
    [entry] = json.loads((layout / "index.json").read_text())["manifests"]
    assert entry["digest"] == digest
    assert entry["annotations"]["io.containerd.image.name"] == REF
    [docker] = json.loads((layout / "manifest.json").read_text())
    assert docker["RepoTags"] == [REF]
    for path in (docker["Config"], *docker["Layers"]):
        assert (layout / path).is_file(), path
    inspect = skopeo("inspect", f"oci-archive:{archive}")
    assert inspect.returncode == 0, inspect.stderr
    assert json.loads(inspect.stdout)["Digest"] == digest
    config = json.loads(skopeo("inspect", "--config", f"oci-archive:{archive}").stdout)["config"]
    assert config["User"] == f"{UID}:{UID}"
    assert config["Entrypoint"] == ["workload-map-operator"]
    converted = layout.parent / "docker.tar"
    copy = skopeo("copy", "-q", f"oci-archive:{archive}", f"docker-archive:{converted}:{REF}")
    assert copy.returncode == 0, copy.stderr
    with tarfile.open(converted) as tar:
        assert json.loads(tar.extractfile("manifest.json").read())[0]["RepoTags"] == [REF]  # type: ignore[union-attr]


def test_sbom_lists_every_pinned_input(built: tuple[str, Path], rootfs: Path) -> None:
    beside = json.loads(
        built[1].with_name(f"workload-map-operator-{VERSION}.sbom.json").read_text()
    )
    inside = json.loads((rootfs / "usr/share/doc/workload-map/sbom.json").read_text())
    assert beside == inside
    debs = [
        line.split()[:2]
        for line in (ROOT / "image/debian.lock").read_text().splitlines()
        if line and not line.startswith("#")
    ]
    assert [[d["name"], d["version"]] for d in inside["debian"]] == debs
    locked = [
        line.split()[0]
        for line in (ROOT / "image/requirements.lock").read_text().splitlines()
        if line and not line.startswith("#")
    ]
    assert [p["requirement"] for p in inside["python"]] == locked
    assert set(inside["entrypoints"]) >= {"wlmap", "workload-map-operator"}


def test_no_shell_and_no_package_manager_inside(rootfs: Path) -> None:
    for tool in (
        "bin/sh",
        "bin/bash",
        "usr/bin/dash",
        "usr/bin/dpkg",
        "usr/bin/apt",
        "usr/bin/pip",
    ):
        assert not (rootfs / tool).exists(), tool
    assert (rootfs / "usr/bin/python3.11").is_file()
    # byte-compiled at build time (the root is read-only at run time), without source mtimes
    pyc = next(
        (rootfs / "usr/local/lib/python3.11/dist-packages/workload_map").glob("__pycache__/*.pyc")
    )
    flags = int.from_bytes(pyc.read_bytes()[4:8], "little")
    assert flags == 0b01, "unchecked-hash .pyc expected"


def test_entry_points_run_as_65532_on_the_read_only_root(work: Path, rootfs: Path) -> None:
    tmp = box_tmp(work, "tmp-entry")
    version = in_image(rootfs, tmp, "/usr/local/bin/workload-map-operator", "--version")
    assert version.returncode == 0, version.stderr
    assert version.stdout.strip() == VERSION
    crd = in_image(rootfs, tmp, "/usr/local/bin/wlmap", "crd", "show")
    assert crd.returncode == 0, crd.stderr
    assert "name: kartas.run.ai" in crd.stdout
    probe = in_image(
        rootfs,
        tmp,
        "/usr/bin/python3.11",
        "-c",
        "import os; s = open('/proc/self/status').read(); print(os.getuid(), os.getgid(), "
        "os.getgroups(), 'CapBnd:\\t0000000000000000' in s, 'NoNewPrivs:\\t1' in s); "
        "open('/probe', 'w')",
    )
    assert probe.stdout.split("\n")[0] == f"{UID} {UID} [] True True", probe.stderr
    assert "Read-only file system" in probe.stderr


@pytest.fixture(scope="module")
def api(kube: Kube) -> Iterator[Api]:
    client = api_for(kube.kubeconfig)
    ensure_karta_crd(client)
    yield client
    client.close()


def test_operator_from_the_image_serves_its_webhooks(
    kube: Kube, api: Api, work: Path, rootfs: Path
) -> None:
    token = "img" + os.urandom(3).hex()
    name = f"wlmap-image-{token}"
    ns = api.request(
        "POST",
        "/api/v1/namespaces",
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"generateName": "wlmap-img-"}},
    )["metadata"]["name"]
    tmp = box_tmp(work, "tmp-operator")
    # the kubeconfig lives in the box's /tmp (its certificates are embedded)
    shutil.copy(kube.kubeconfig, tmp / "kubeconfig")
    os.chown(tmp / "kubeconfig", UID, UID)
    op = OperatorProcess(kube.kubeconfig, ns, work / "operator-log", config_name=name)
    inner = [
        "/usr/local/bin/workload-map-operator",
        *(
            "--kubeconfig=/tmp/kubeconfig"
            if a.startswith("--kubeconfig=")
            else "--webhook-cert-dir=/tmp/k8s-webhook-server/serving-certs"
            if a.startswith("--webhook-cert-dir=")
            else a
            for a in op.args[3:]
        ),
    ]
    op.args = box_argv(rootfs, tmp, inner)
    install_webhooks(api, port=op.webhook_port, name=name, token=token)
    op.start()
    try:
        op.wait_ready(120)
        eventually(lambda: all(ca_bundles(api, name)), 60, "caBundle patched by the image")
        assert (tmp / "k8s-webhook-server/serving-certs/tls.crt").is_file()
        created: dict[str, Any] = api.request(
            "POST", KARTAS, widget_karta(f"widgets-{token}", f"w-{token}.example.com", token=token)
        )
        # the image's mutating webhook stamped the GVK labels over TLS
        assert created["metadata"]["labels"]["run.ai/karta-kind"] == "Widget"
        bad = widget_karta(f"broken-{token}", f"b-{token}.example.com", token=token)
        bad["spec"]["structureDefinition"]["childComponents"] = [{"name": "a"}]
        with pytest.raises(ApiError) as refused:
            api.request("POST", KARTAS, bad)
        # the image's validating webhook refused it, naming the field
        assert refused.value.status in (400, 403, 422)
        assert "childComponents[0].ownerRef" in (refused.value.detail or str(refused.value))
        delete(api, f"{KARTAS}/widgets-{token}")
    finally:
        code = op.stop()
        remove_webhooks(api, name)
        delete(api, f"/api/v1/namespaces/{ns}")
    assert code == 0, f"operator exit code {code}:\n{op.log_tail()}"
