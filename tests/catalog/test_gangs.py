"""Gang sizes: the definitions' pod groups against what the scheduler peers compute.

For every upstream sample of a gang-scheduled kind (and our own manifests), the pods the operator
would create are generated (``operator_pods.py``), grouped by the catalog definition through the
engine, and the groups' minimum member counts compared with the peer rule for the same object.
Known, documented divergences are listed in ``DIVERGENT`` with the reason.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.catalog.conftest import FIXTURES, iter_objects, objects_in, realworld
from tests.catalog.operator_pods import operator_for
from workload_map.catalog import catalog
from workload_map.engine import Workload

# Our gang differs from the peer's, on purpose or for lack of expressiveness (see docs/catalog.md).
DIVERGENT: dict[str, str] = {}


def _gangs(obj: dict[str, Any]) -> tuple[list[int], list[dict[str, Any]]]:
    found = catalog.resolve(obj["apiVersion"], obj["kind"])
    assert found is not None
    karta = found[0]
    maker = operator_for(obj)
    assert maker is not None
    pods = maker[0](obj)
    groups = Workload(karta, obj, pods=pods).describe()["podGroups"]
    return sorted(g["minMember"] for g in groups), groups


def _cases() -> list[tuple[str, dict[str, Any]]]:
    out = []
    root = realworld()
    sources = [("fixtures", FIXTURES / "gangs")] + ([("realworld", root)] if root else [])
    for label, base in sources:
        for rel, obj in iter_objects(base, skip=("karta-upstream/", "with-status/", "pods/")):
            if operator_for(obj) is None or catalog.resolve(obj["apiVersion"], obj["kind"]) is None:
                continue
            if obj["kind"] == "RayJob" and not (obj.get("spec") or {}).get("rayClusterSpec"):
                continue  # runs on an existing cluster: it has no pods of its own to gang
            meta = obj.get("metadata") or {}
            name = meta.get("name") or meta.get("generateName", "?")
            out.append((f"{label}:{rel}:{obj['kind']}/{name}", obj))
    return out


CASES = _cases()


def test_there_are_cases_for_every_gang_kind() -> None:
    kinds = {obj["kind"] for _, obj in CASES}
    assert {"PyTorchJob", "JobSet", "LeaderWorkerSet", "RayCluster", "PodCliqueSet"} <= kinds


@pytest.mark.parametrize(("case", "obj"), CASES, ids=[c for c, _ in CASES])
def test_gang_sizes_match_the_peer(case: str, obj: dict[str, Any]) -> None:
    maker = operator_for(obj)
    assert maker is not None
    # a gang the peer would size 0 implies no pods: the engine lists no such gang (it notes why)
    expected = sorted(size for size in maker[1](obj) if size > 0)
    ours, groups = _gangs(obj)
    if case in DIVERGENT:
        assert ours != expected, f"{case} no longer diverges: drop it from DIVERGENT"
        pytest.xfail(DIVERGENT[case])
    assert ours == expected, groups
    # every generated pod the definition means to gang is in exactly one group
    members = [p for g in groups for p in g["pods"]]
    assert len(members) == len(set(members))


def test_pytorch_master_and_workers_are_one_gang() -> None:
    obj = objects_in(FIXTURES / "gangs" / "pytorchjob.yaml")[0]
    ours, groups = _gangs(obj)
    assert ours == [4]  # 1 master + 3 workers, not the first pod's component alone
    assert len(groups[0]["pods"]) == 4


def test_leaderworkerset_has_one_gang_of_size_per_group() -> None:
    obj = objects_in(FIXTURES / "gangs" / "leaderworkerset.yaml")[0]
    ours, groups = _gangs(obj)
    assert ours == [4, 4, 4]  # replicas 3 x size 4, never size x size
    assert all(len(g["pods"]) == 4 for g in groups)


@pytest.fixture(scope="module")
def gang_fixture_dir() -> Path:
    return FIXTURES / "gangs"


def _lws_pod(name: str, lws: str, group: int, worker: int, **labels: str) -> dict[str, Any]:
    meta_labels = {
        "leaderworkerset.sigs.k8s.io/name": lws,
        "leaderworkerset.sigs.k8s.io/group-index": str(group),
        "leaderworkerset.sigs.k8s.io/worker-index": str(worker),
        **labels,
    }
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": meta_labels}}


def test_nimservice_multi_node_replica_is_a_gang_of_pipeline_pods() -> None:
    obj = objects_in(FIXTURES / "nimservice.yaml")[0]
    karta = catalog.for_api_version(obj["apiVersion"], obj["kind"])
    assert karta is not None
    pods = [_lws_pod(f"llama-405b-0-{w}", "llama-405b", 0, w) for w in range(2)]
    groups = Workload(karta, obj, pods=pods).describe()["podGroups"]
    assert [(g["minMember"], len(g["pods"])) for g in groups] == [(2, 2)]


def test_llminferenceservice_decode_groups_are_gangs_of_the_lws_size() -> None:
    obj = objects_in(FIXTURES / "llminferenceservice.yaml")[0]
    karta = catalog.for_api_version(obj["apiVersion"], obj["kind"])
    assert karta is not None
    component = {"app.kubernetes.io/component": "llminferenceservice-workload"}
    worker = {"app.kubernetes.io/component": "llminferenceservice-workload-worker"}
    pods = [
        _lws_pod(f"deepseek-kserve-{g}", "deepseek-kserve", g, 0, **component) for g in range(2)
    ] + [_lws_pod(f"deepseek-kserve-{g}-1", "deepseek-kserve", g, 1, **worker) for g in range(2)]
    scheduler = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "sched",
            "labels": {"app.kubernetes.io/component": "llminferenceservice-router-scheduler"},
        },
    }
    groups = Workload(karta, obj, pods=[*pods, scheduler]).describe()["podGroups"]
    assert sorted((g["minMember"], len(g["pods"])) for g in groups) == [(2, 2), (2, 2)]
