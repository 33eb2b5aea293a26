"""``wlmap get`` and ``wlmap serve`` over two real API servers (issue 25 item 4).

Two control planes (the session's and one of this module's own), each with its own CA and
admin credential, joined in one kubeconfig as contexts ``east`` and ``west``; a third context,
``broken``, names the west server with a credential it refuses. Each cluster is read through its
own context; the broken one is reported apart and the others still listed.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
import yaml

from tests.web.conftest import make_http
from workload_map.kube.options import ConnectionOptions
from workload_map.web import MultiSource

from .harness import Kube
from .test_cli_live import JOBSET_CRD, install_crd, wlmap


def _entries(kube: Kube, name: str) -> dict[str, Any]:
    doc = yaml.safe_load(Path(kube.kubeconfig).read_text())
    context = next(c for c in doc["contexts"] if c["name"] == (doc["current-context"]))
    cluster = next(c for c in doc["clusters"] if c["name"] == context["context"]["cluster"])
    user = next(u for u in doc["users"] if u["name"] == context["context"]["user"])
    return {
        "cluster": {"name": name, "cluster": cluster["cluster"]},
        "user": {"name": name, "user": user["user"]},
        "context": {"name": name, "context": {"cluster": name, "user": name}},
    }


@pytest.fixture(scope="module")
def joined(kube: Kube, module_kube: Kube, tmp_path_factory: pytest.TempPathFactory) -> Path:
    east, west = _entries(kube, "east"), _entries(module_kube, "west")
    broken = {
        "cluster": {"name": "broken", "cluster": west["cluster"]["cluster"]},
        "user": {"name": "broken", "user": {"token": "not-a-valid-token"}},
        "context": {"name": "broken", "context": {"cluster": "broken", "user": "broken"}},
    }
    parts = (east, west, broken)
    path = tmp_path_factory.mktemp("kubeconfig") / "config"
    path.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "current-context": "east",
                "clusters": [p["cluster"] for p in parts],
                "users": [p["user"] for p in parts],
                "contexts": [p["context"] for p in parts],
            }
        )
    )
    for cluster in (kube, module_kube):
        install_crd(cluster, JOBSET_CRD)
    return path


def _jobset(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {"name": name},
        "spec": {"replicatedJobs": []},
    }


@pytest.fixture
def workloads(kube: Kube, module_kube: Kube, joined: Path) -> Iterator[tuple[str, str]]:
    east_ns, west_ns = kube.create_namespace(), module_kube.create_namespace()
    kube.apply(_jobset("train-east"), east_ns)
    module_kube.apply(_jobset("train-west"), west_ns)
    try:
        yield east_ns, west_ns
    finally:
        kube.delete_namespace(east_ns)
        module_kube.delete_namespace(west_ns)


def _run(joined: Path, *argv: str) -> tuple[int, str, str]:
    # test_cli_live's runner passes the ``kubeconfig`` of what it is given: here the joined one
    return wlmap(_Config(joined), *argv)


class _Config:
    def __init__(self, path: Path) -> None:
        self.kubeconfig = path


def test_get_lists_both_clusters_with_a_cluster_column(
    joined: Path, workloads: tuple[str, str]
) -> None:
    code, out, err = _run(joined, "get", "jobsets", "-A", "--context", "east", "--context", "west")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].split()[:3] == ["CLUSTER", "NAMESPACE", "NAME"]
    rows = [line.split()[:3] for line in lines[1:]]
    assert ["east", workloads[0], "train-east"] in rows
    assert ["west", workloads[1], "train-west"] in rows
    assert not any(r[0] == "east" and r[2] == "train-west" for r in rows)


def test_all_contexts_reports_the_refused_one_apart(
    joined: Path, workloads: tuple[str, str]
) -> None:
    code, out, err = _run(joined, "get", "jobsets", "-A", "--all-contexts", "-o", "json")
    assert code == 1  # one cluster could not be listed
    items = yaml.safe_load(out)["items"]
    got = {(i["cluster"], i["name"]) for i in items}
    assert {("east", "train-east"), ("west", "train-west")} <= got
    assert not any(c == "broken" for c, _ in got)
    assert "warning: context broken: " in err and "unauthorized" in err.lower()


def test_serve_lists_both_clusters_and_reports_the_refused_one(
    joined: Path, workloads: tuple[str, str]
) -> None:
    base = ConnectionOptions(kubeconfig=str(joined), timeout=10.0)
    source = MultiSource(
        {n: msgspec.structs.replace(base, context=n) for n in ("east", "west", "broken")},
        sync_timeout=60.0,
    )
    try:
        for http in make_http(source):
            status, _, body = http.get("/?kind=JobSet")
            assert status == 200
            assert '<td class="cluster">east</td>' in body and ">train-east</a>" in body
            assert '<td class="cluster">west</td>' in body and ">train-west</a>" in body
            _, _, body = http.get("/?cluster=west&kind=JobSet")
            assert ">train-west</a>" in body and ">train-east</a>" not in body
            _, _, body = http.get("/")
            assert 'data-cluster="broken"' in body
            status, _, page = http.get(
                f"/workloads/jobset.x-k8s.io/v1alpha2/JobSet/{workloads[1]}/train-west?cluster=west"
            )
            assert status == 200 and "cluster west" in page
    finally:
        source.close()
