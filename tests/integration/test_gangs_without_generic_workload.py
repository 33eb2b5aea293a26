"""With GenericWorkload off the operator says so at start, writes no native objects, and the
same pods are bound one by one: the gang on the other plane came from the feature."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.gangs.e2e import (
    NODE,
    NODE_LABEL,
    bound,
    gang_operator,
    make_namespace,
    part_pod,
    partset_gpu,
    prepare_plane,
    token,
    wait,
)
from tests.operator.live import delete
from workload_map.kube.api import Api

from .harness import FakeNodes, Kube

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def plane(kube_without_generic_workload: Kube) -> Kube:
    return prepare_plane(kube_without_generic_workload)


def test_without_generic_workload_pods_bind_one_by_one(
    kube_without_generic_workload: Kube, api: Api, fake_nodes: FakeNodes, tmp_path: Path
) -> None:
    tok = token()
    op_ns = make_namespace(api, tok, opted_in=False)
    ns = make_namespace(api, tok)
    pool = f"{tok}-off"
    try:
        with gang_operator(
            api, kube_without_generic_workload.kubeconfig, op_ns, tmp_path, tok
        ) as op:
            wait(
                "the probe reports it",
                lambda: op.metric('workloadmap_gangs_generic_workload{state="absent"}') == 1,
                60,
            )
            obj = partset_gpu(api, ns, 3, pool)
            pods = [part_pod(api, ns, obj, pool) for _ in range(3)]
            assert not any(p["spec"].get("schedulingGroup") for p in pods)
            assert all(
                p["metadata"]["labels"]["workload-map.run.ai/workload"] == "parts" for p in pods
            )
            fake_nodes.add(2, NODE, labels={NODE_LABEL: pool})
            wait("bound one by one", lambda: len(bound(api, ns)) == 2, 60)
            events = api.get(f"/api/v1/namespaces/{ns}/events").get("items") or []
            assert any(e.get("reason") == "SchedulingApiAbsent" for e in events)
    finally:
        delete(api, f"/api/v1/namespaces/{ns}")
        delete(api, f"/api/v1/namespaces/{op_ns}")
