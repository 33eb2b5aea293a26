"""The coscheduling backend under the real scheduler-plugins scheduler (Coscheduling plugin),
beside kube-scheduler v1.37.2, with real controllers making the pods; and KubeRay set up for its
own batch scheduler, which we leave alone.

KubeRay runs here with ``--batch-scheduler=scheduler-plugins``, as a cluster that uses that
scheduler for Ray sets it up: it names ``scheduler-plugins-scheduler`` on every pod it makes, and
for a RayCluster labelled ``ray.io/gang-scheduling-enabled`` also makes a coscheduling PodGroup
of its own and labels the pods with it.

- an Indexed Job and an unlabelled RayCluster whose pods name the coscheduling scheduler, opted
  in: our coscheduling PodGroup gangs them (``tests.gangs.real.gang_round``: one node short,
  none binds; with room, all; not opted in, one by one);
- a labelled RayCluster in an opted-in namespace: left alone (a ``LeftAlone`` event, no object
  of ours, its pods unchanged by our webhook), KubeRay's own PodGroup gangs it.

Every bound pod was bound by the scheduler-plugins scheduler (its ``Scheduled`` events), never
by kube-scheduler beside it. The KubeRay CRDs are installed with the plane, before our operator
starts. Skipped, naming ``make operators``, where the scheduler-plugins or KubeRay binary is
missing."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.gangs.e2e import bound, wait
from tests.gangs.real import Round, coscheduling_mark, gang_round, indexed_job, raycluster
from tests.operator.live import OperatorProcess
from workload_map.gangs.config import LABEL_MANAGED_BY
from workload_map.kube.api import Api

from . import operators
from .harness import FakeNodes, Kube

ROOT = Path(__file__).resolve().parents[2]
COSCHEDULING_GROUPS = "/apis/scheduling.x-k8s.io/v1alpha1/namespaces/{ns}/podgroups"
GANG_LABEL = "ray.io/gang-scheduling-enabled"

# a hang guard, not a speed target: the operators' CRDs (KubeRay's are 3 MB) and processes
# take minutes to install and start on a loaded machine, inside the first test's limit
pytestmark = [pytest.mark.integration, pytest.mark.timeout(900)]


@pytest.fixture(scope="module")
def plane(kube_with_controllers: Kube) -> Iterator[Kube]:
    kube_with_controllers.install_crd(ROOT / "deploy/crds/kartas.run.ai.yaml")
    operators.install_crds(kube_with_controllers, "kuberay")
    with operators.coscheduling_scheduler(kube_with_controllers):
        yield kube_with_controllers


@pytest.fixture(scope="module")
def kuberay(plane: Kube) -> Iterator[None]:
    with operators.kuberay(plane, batch_scheduler="scheduler-plugins"):
        yield


def _groups(api: Api, ns: str) -> list[dict[str, Any]]:
    return list(api.get(COSCHEDULING_GROUPS.format(ns=ns)).get("items") or [])


def _ours(api: Api, ns: str) -> list[str]:
    return [
        g["metadata"]["name"]
        for g in _groups(api, ns)
        if (g["metadata"].get("labels") or {}).get(LABEL_MANAGED_BY)
    ]


def _placed_by_the_second_scheduler(api: Api, result: Round) -> None:
    """Every bound pod of the round, gang or not, was bound by the scheduler-plugins scheduler
    (its ``Scheduled`` events, one a pod), never by kube-scheduler beside it."""
    for ns in result.namespaces:
        pods = api.get(f"/api/v1/namespaces/{ns}/pods")["items"]
        assert {p["spec"].get("schedulerName") for p in pods} == {operators.COSCHEDULING_SCHEDULER}
        events = [
            e
            for e in api.get(f"/api/v1/namespaces/{ns}/events")["items"]
            if e.get("reason") == "Scheduled"
        ]
        assert sorted(e["involvedObject"]["name"] for e in events) == bound(api, ns)
        assert {
            e.get("reportingComponent") or (e.get("source") or {}).get("component") for e in events
        } == {operators.COSCHEDULING_SCHEDULER}


def _our_group(api: Api, result: Round) -> None:
    """The opted-in rounds' pods joined one coscheduling PodGroup of ours, of the gang's size;
    not opted in, no group at all."""
    for ns in result.namespaces[:2]:
        groups = [g for g in _groups(api, ns) if g["metadata"]["name"] in _ours(api, ns)]
        assert [g["spec"]["minMember"] for g in groups] == [result.size], groups
        pods = api.get(f"/api/v1/namespaces/{ns}/pods")["items"]
        assert {coscheduling_mark(p) for p in pods} == {groups[0]["metadata"]["name"]}
    assert _groups(api, result.namespaces[2]) == []


def test_an_indexed_job_under_the_coscheduling_scheduler(
    plane: Kube, api: Api, op: OperatorProcess, tok: str, fake_nodes: FakeNodes
) -> None:
    def job(a: Api, ns: str, pool: str) -> dict[str, Any]:
        return indexed_job(a, ns, pool, size=4, scheduler=operators.COSCHEDULING_SCHEDULER)

    result = gang_round("job-coscheduling", api, fake_nodes, tok, job, 4, mark=coscheduling_mark)
    assert (result.short, result.after_node, result.room, result.plain) == (0, 4, 4, 3)
    _our_group(api, result)
    _placed_by_the_second_scheduler(api, result)


def test_a_raycluster_under_the_coscheduling_scheduler(
    plane: Kube, api: Api, op: OperatorProcess, kuberay: None, tok: str, fake_nodes: FakeNodes
) -> None:
    """KubeRay names the scheduler on the pods; the cluster is not labelled for KubeRay's own
    gang, so ours applies (opted in)."""
    result = gang_round(
        "raycluster-coscheduling", api, fake_nodes, tok, raycluster, 3, mark=coscheduling_mark
    )
    assert (result.short, result.after_node, result.room, result.plain) == (0, 3, 3, 2)
    _our_group(api, result)
    _placed_by_the_second_scheduler(api, result)


def test_kuberay_with_its_own_batch_scheduler_is_left_alone(
    plane: Kube, api: Api, op: OperatorProcess, kuberay: None, tok: str, fake_nodes: FakeNodes
) -> None:
    def labelled(a: Api, ns: str, pool: str) -> dict[str, Any]:
        return raycluster(a, ns, pool, labels={GANG_LABEL: "true"})

    result = gang_round(
        "raycluster-own-batch-scheduler",
        api,
        fake_nodes,
        tok,
        labelled,
        3,
        mark=coscheduling_mark,
        make_plain=raycluster,  # not labelled, not opted in: no gang at all
    )
    assert (result.short, result.after_node, result.room, result.plain) == (0, 3, 3, 2)
    _placed_by_the_second_scheduler(api, result)
    assert _groups(api, result.namespaces[2]) == []  # not labelled: KubeRay made none either
    for ns in result.namespaces[:2]:  # both opted in
        # KubeRay's group (named after the cluster), none of ours, and the decision said
        assert [g["metadata"]["name"] for g in _groups(api, ns)] == ["rc"]
        assert _ours(api, ns) == []
        pods = api.get(f"/api/v1/namespaces/{ns}/pods")["items"]
        assert {coscheduling_mark(p) for p in pods} == {"rc"}
        assert not [
            k
            for p in pods
            for k in p["metadata"].get("labels") or {}
            if k.startswith("workload-map.run.ai/")
        ]
        wait(
            "the LeftAlone event",
            lambda ns=ns: [
                e
                for e in api.get(f"/api/v1/namespaces/{ns}/events")["items"]
                if e.get("reason") == "LeftAlone"
            ],
        )
