"""`make dist` (hack/dist.sh) and what the wheel does once installed, as the image runs it.

The sdist and the wheel are built and checked by twine, the wheel is installed into a clean
virtual environment (a system interpreter, nothing from the development venv), and run the way the chart runs the pod: uid/gid 65532 with no
supplementary groups, no capabilities, and a read-only root file system (a private mount
namespace whose ``/`` is remounted read-only). Entry points, packaged data (catalog, jq
builtins) and the generated CRD must all work from there.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
UID = 65532

# The module's fixtures build the wheel and pip-install it with its dependencies into a fresh
# venv: 207 s idle-ish, over the suite's 300 s per-test timeout on a loaded machine (the first
# test's setup was killed mid pip install). Their own subprocess bounds (600 + 300 + 900 s)
# are the real limits.
pytestmark = pytest.mark.timeout(1800)


def _interpreter() -> str:
    """A Python >= 3.11 that uid 65532 can run (the dev venv's may live under /root)."""
    for candidate in (os.environ.get("WLMAP_IMAGE_PYTHON"), "/usr/bin/python3", sys.executable):
        if not candidate or not Path(candidate).exists():
            continue
        probe = subprocess.run(
            [
                "setpriv",
                f"--reuid={UID}",
                f"--regid={UID}",
                "--clear-groups",
                candidate,
                "-c",
                "import sys, venv, ensurepip; assert sys.version_info >= (3, 11)",
            ],
            capture_output=True,
            timeout=60,
        )
        if probe.returncode == 0:
            return candidate
    pytest.fail(
        "no Python >= 3.11 with venv/ensurepip that uid 65532 can execute; set WLMAP_IMAGE_PYTHON",
        pytrace=False,
    )


@pytest.fixture(scope="module")
def workdir() -> Iterator[Path]:
    """A world-readable temp dir (uid 65532 must reach the venv in it)."""
    work = Path(tempfile.mkdtemp(prefix="wlmap-image-"))
    work.chmod(0o755)
    try:
        yield work
    finally:
        shutil.rmtree(work, ignore_errors=True)


@pytest.fixture(scope="module")
def dist(workdir: Path) -> Path:
    """`make dist` (hack/dist.sh): sdist and wheel, twine check, the wheel installed into a
    fresh venv of a system interpreter (one uid 65532 can run) and its entry points run."""
    for tool in ("unshare", "setpriv", "mount"):
        if shutil.which(tool) is None:
            pytest.fail(f"{tool} (util-linux) is needed to run the image check", pytrace=False)
    # nothing of the caller's environment may make pip think the project is installed already
    # (a PYTHONPATH naming a source tree with its egg-info: pip then installs no entry points)
    clean = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    run = subprocess.run(
        ["bash", str(ROOT / "hack/dist.sh"), str(workdir / "dist"), str(workdir / "venv")],
        capture_output=True,
        text=True,
        timeout=1500,
        env={**clean, "PY": sys.executable, "WLMAP_DIST_PYTHON": _interpreter()},
    )
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-3000:]
    assert "installed into a clean venv" in run.stdout, run.stdout
    return workdir / "dist"


@pytest.fixture(scope="module")
def wheel(dist: Path) -> Path:
    [built] = dist.glob("workload_map-*.whl")
    return built


@pytest.fixture(scope="module")
def installed(dist: Path, workdir: Path) -> Path:
    """The venv's bin/ directory."""
    return workdir / "venv" / "bin"


def test_sdist_carries_the_package_data(dist: Path) -> None:
    [sdist] = dist.glob("workload_map-*.tar.gz")
    with tarfile.open(sdist) as tar:
        names = tar.getnames()
    assert any(n.endswith("src/workload_map/catalog/data/bundle.jsonl") for n in names)
    assert any(n.endswith("/pyproject.toml") for n in names)


def as_nonroot_readonly(*argv: str) -> subprocess.CompletedProcess[str]:
    """Run argv as 65532:65532, no capabilities, on a read-only root, with an empty env."""
    script = (
        "set -e; mount --make-rprivate /; mount --bind / /; mount -o remount,bind,ro /; "
        f"exec setpriv --reuid={UID} --regid={UID} --clear-groups --inh-caps=-all "
        '--bounding-set=-all --no-new-privs "$@"'
    )
    return subprocess.run(
        ["unshare", "--mount", "sh", "-c", script, "sh", *argv],
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": "/usr/bin:/bin", "HOME": "/nonexistent", "LANG": "C.UTF-8"},
    )


def test_the_sandbox_really_is_read_only_and_unprivileged(installed: Path) -> None:
    run = as_nonroot_readonly("sh", "-c", "id -u; id -g; touch /tmp/wlmap-probe")
    lines = run.stdout.split()
    assert lines[:2] == [str(UID), str(UID)]
    assert run.returncode != 0 and "Read-only file system" in run.stderr


def test_wheel_has_every_entry_point_and_data_file(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        entry_points = next(zf.read(n).decode() for n in names if n.endswith("entry_points.txt"))
    for script in ("wlmap", "kubectl-wlmap", "workload-map-operator"):
        assert f"{script} = " in entry_points, entry_points
    # the operator finds the rooms' controllers only through these (operator/plugins.py)
    assert "[workload_map.operator.controllers]" in entry_points, entry_points
    assert "gangs = workload_map.gangs.operator" in entry_points, entry_points
    catalog = {
        n for n in names if n.startswith("workload_map/catalog/data/") and n.endswith(".yaml")
    }
    packaged = {p.name for p in (ROOT / "src/workload_map/catalog/data").glob("*.yaml")}
    assert {Path(n).name for n in catalog} == packaged
    assert any(n.startswith("workload_map/jq/builtins/") and n.endswith(".jq") for n in names)
    assert "workload_map/py.typed" in names


def test_operator_help_runs_as_65532_on_a_read_only_root(installed: Path) -> None:
    for argv in (
        (str(installed / "wlmap"), "operator", "--help"),
        (str(installed / "workload-map-operator"), "--help"),
    ):
        run = as_nonroot_readonly(*argv)
        assert run.returncode == 0, run.stderr[-3000:]
        assert "--metrics-bind-address" in run.stdout and "--leader-elect" in run.stdout
        # the gang and metrics controllers' flags: their plug-ins loaded from the wheel
        assert "--enable-gang-scheduling" in run.stdout, run.stdout
        assert "--enable-workload-metrics" in run.stdout, run.stdout


def test_cli_and_packaged_data_work_from_the_install(installed: Path) -> None:
    wlmap = str(installed / "wlmap")
    run = as_nonroot_readonly(wlmap, "--help")
    assert run.returncode == 0 and "definitions" in run.stdout, run.stderr
    # No cluster: the packaged catalog alone.
    run = as_nonroot_readonly("env", "KUBECONFIG=/nonexistent", wlmap, "definitions")
    assert run.returncode == 0, run.stderr[-2000:]
    listed = {line.split()[0] for line in run.stdout.splitlines()[1:] if line.strip()}
    packaged = {p.stem for p in (ROOT / "src/workload_map/catalog/data").glob("*.yaml")}
    assert packaged <= listed
    run = as_nonroot_readonly(
        str(installed / "python"),
        "-c",
        "from workload_map.model.crd import crd_manifest; print(crd_manifest()['metadata']['name'])",
    )
    assert run.returncode == 0 and run.stdout.strip() == "kartas.run.ai", run.stderr
    # jq builtins are package data too (`add`, `map` are defined in jq source files).
    run = as_nonroot_readonly(
        "sh", "-c", f"echo '{{\"a\":[1,2]}}' | {wlmap} jq -c '.a | map(. * 2) | add'"
    )
    assert run.stdout.strip() == "6", run.stderr


def test_containerfile_matches_the_chart_and_the_wheel(wheel: Path) -> None:
    """The image's user and entry point are the ones the chart and the wheel assume."""
    lines = [
        line.strip()
        for line in (ROOT / "Containerfile").read_text().splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]
    assert f"USER {UID}:{UID}" in lines
    assert 'ENTRYPOINT ["workload-map-operator"]' in lines
    with zipfile.ZipFile(wheel) as zf:
        entry_points = next(
            zf.read(n).decode() for n in zf.namelist() if n.endswith("entry_points.txt")
        )
    assert "workload-map-operator = " in entry_points
    values = (ROOT / "charts/workload-map/values.yaml").read_text()
    assert f"runAsUser: {UID}" in values
