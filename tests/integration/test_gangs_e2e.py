"""Gang enforcement end to end: the operator, its pod webhook called by the API server over TLS,
the real kube-scheduler and fake nodes (v1.37.2, GenericWorkload on).

For each kind the pods are created the way its operator creates them (owner references,
labels, ``generateName``): with room for one pod fewer than a gang, no pod of it is bound; with
room added, all are. The same pods in a namespace that is not opted in are bound one by one,
which proves the gang came from us.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.gangs import custom
from tests.gangs.e2e import (
    KINDS,
    NODE,
    NODE_LABEL,
    PARTSET_CRD,
    bound,
    gang_operator,
    make_namespace,
    podgroups,
    token,
    wait,
)
from tests.operator.live import KARTAS, OperatorProcess, api_for, delete
from workload_map.gangs.config import ANNOTATION_DECISION
from workload_map.operator.kube import Api

from .harness import FakeNodes, Kube

ROOT = Path(__file__).resolve().parents[2]
REALWORLD_CRDS = (
    "jobset/jobset.x-k8s.io_jobsets.yaml.gz",
    "lws/leaderworkerset.x-k8s.io_leaderworkersets.yaml.gz",
    "kubeflow-training-v1/kubeflow.org_pytorchjobs.yaml.gz",
    "ray/ray.io_rayclusters.yaml.gz",
)

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def plane(module_kube: Kube, shared_dir: Path) -> Kube:
    for rel in REALWORLD_CRDS:
        module_kube.install_crd(shared_dir / "realworld" / rel)
    module_kube.install_crd(PARTSET_CRD)
    module_kube.install_crd(ROOT / "deploy/crds/kartas.run.ai.yaml")
    return module_kube


@pytest.fixture(scope="module")
def api(plane: Kube) -> Iterator[Api]:
    client = api_for(plane.kubeconfig)
    # the custom kind is known only through a Karta in the cluster
    karta = custom.karta(1)
    delete(client, f"{KARTAS}/{karta['metadata']['name']}")
    client.request("POST", KARTAS, karta)
    yield client
    client.close()


@pytest.fixture(scope="module")
def tok() -> str:
    return token()


@pytest.fixture(scope="module")
def op(
    plane: Kube, api: Api, tok: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[OperatorProcess]:
    ns = make_namespace(api, tok, opted_in=False)
    with gang_operator(api, plane.kubeconfig, ns, tmp_path_factory.mktemp("gangs"), tok) as proc:
        yield proc
    delete(api, f"/api/v1/namespaces/{ns}")


def _nodes(nodes: FakeNodes, pool: str, count: int) -> None:
    if count > 0:
        nodes.add(count, NODE, labels={NODE_LABEL: pool})


def test_gangs_bind_all_or_nothing_for_every_kind(
    plane: Kube, api: Api, op: OperatorProcess, tok: str, module_kube: Kube, fake_nodes: FakeNodes
) -> None:
    cases: dict[str, tuple[str, str, list[int], list[Any]]] = {}
    for kind, (make, gangs) in KINDS.items():
        ns = make_namespace(api, tok)
        pool = f"{tok}-{kind}"
        _, create_pods = make(api, ns, pool)
        pods = create_pods()  # owner first, pods right after, as the operators do
        cases[kind] = (ns, pool, gangs, pods)
        # room for one pod fewer than the smallest gang (the LWS: one node for two gangs of 2)
        _nodes(fake_nodes, pool, (min(gangs) - 1) if len(gangs) == 1 else 1)
    try:
        for kind, (ns, _, gangs, pods) in cases.items():
            assert all(p["spec"].get("schedulingGroup") for p in pods), (kind, op.log_tail())
            groups = wait(
                f"{kind} PodGroups",
                lambda ns=ns, n=len(gangs): len(podgroups(api, ns)) == n and podgroups(api, ns),  # noqa: B008
            )
            assert sorted(
                g["spec"]["schedulingPolicy"]["gang"]["minCount"] for g in groups
            ) == sorted(gangs)
            for g in groups:
                decision = json.loads(g["metadata"]["annotations"][ANNOTATION_DECISION])
                assert decision["backend"] == "native" and decision["rule"]
        time.sleep(12)  # the scheduler had every chance to bind what fits
        for kind, (ns, _, _, _) in cases.items():
            assert bound(api, ns) == [], kind
        for _ns, pool, gangs, _ in cases.values():
            have = (min(gangs) - 1) if len(gangs) == 1 else 1
            _nodes(fake_nodes, pool, sum(gangs) - have)
        for kind, (ns, _, gangs, _) in cases.items():
            total = sum(gangs)
            wait(f"{kind} bound", lambda ns=ns, n=total: len(bound(api, ns)) == n, 90)
    finally:
        for ns, *_ in cases.values():
            delete(api, f"/api/v1/namespaces/{ns}")


def test_without_opt_in_the_same_pods_bind_one_by_one(
    plane: Kube, api: Api, op: OperatorProcess, tok: str, fake_nodes: FakeNodes
) -> None:
    ns = make_namespace(api, tok, opted_in=False)
    pool = f"{tok}-plain"
    try:
        make, (size,) = KINDS["pytorchjob"]
        _, create_pods = make(api, ns, pool)
        pods = create_pods()
        assert not any(p["spec"].get("schedulingGroup") for p in pods)
        _nodes(fake_nodes, pool, size - 1)
        wait("pods bound one by one", lambda: len(bound(api, ns)) == size - 1, 60)
        assert podgroups(api, ns) == []
    finally:
        delete(api, f"/api/v1/namespaces/{ns}")
