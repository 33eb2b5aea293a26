"""``describe -f`` over every upstream manifest in ../shared/realworld: never a crash.

Each file ends in a view (0), a usage error such as a file holding several workloads (2) or
"no definition covers the type" (4); an internal error (1 with ``unexpected``) is a bug.
Skipped with a reason where ../shared is absent; our own examples cover the features.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest


def _manifests(shared: Path) -> list[Path]:
    root = shared / "realworld"
    files = sorted(root.glob("*/*.yaml")) + sorted(root.glob("*/with-status/*.yaml"))
    return [f for f in files if "karta-upstream" not in f.parts]


@pytest.mark.shared
def test_describe_every_realworld_manifest(wlmap, shared_dir: Path) -> None:
    seen = {0: 0, 2: 0, 4: 0}
    for path in _manifests(shared_dir):
        r = wlmap(["describe", "-f", str(path), "-o", "json"])
        assert r.code in seen, f"{path}: exit {r.code}: {r.err}"
        assert "unexpected" not in r.err, f"{path}: {r.err}"
        seen[r.code] += 1
        if r.code == 0:
            view = json.loads(r.out)
            assert view["kind"] and view["components"] is not None, path
    assert seen[0] > 50, seen  # most upstream workloads are covered by the catalog


@pytest.mark.shared
def test_describe_with_upstream_pods(wlmap, shared_dir: Path) -> None:
    base = shared_dir / "realworld" / "kubeflow-mpi-operator-v2beta1"
    r = wlmap(
        [
            "describe",
            "-f",
            str(base / "with-status" / "tensorflow-benchmarks.mpijob-v2beta1.status.yaml"),
            "--pods",
            str(base / "pods" / "pi-mpijob-v2beta1.pods-metadata.yaml"),
            "-o",
            "json",
        ]
    )
    assert r.code == 0, r.err
    assert json.loads(r.out)["pods"]["current"] is not None


@pytest.mark.shared
def test_workload_with_its_service_and_a_pick_among_several(wlmap, shared_dir: Path) -> None:
    lws = shared_dir / "realworld" / "lws" / "vllm-gpu-lws.yaml"
    r = wlmap(["describe", "-f", str(lws), "-o", "json"])
    assert r.code == 0, r.err  # the Service next to it is not the workload
    assert json.loads(r.out)["kind"] == "LeaderWorkerSet"
    nim = shared_dir / "realworld" / "nvidia-nim" / "standalone-basic-llm.yaml"
    r = wlmap(["describe", "-f", str(nim)])
    assert r.code == 2 and "holds 2 workloads a definition covers" in r.err
    r = wlmap(["describe", "-f", str(nim), "nimservice/meta-llama-3-2-1b-instruct", "-o", "json"])
    assert r.code == 0, r.err
    assert json.loads(r.out)["kind"] == "NIMService"
