"""Gangs whose pods JobSet and Kubeflow Trainer v2 make, with their real controllers: the tests
create only the workload.

- a JobSet (a leader and two workers, three Jobs): the JobSet controller (``sigs.k8s.io/jobset``)
  makes the Jobs, the in-tree Job controller the pods; the catalog's JobSet definition plans the
  gang;
- a TrainJob naming a ClusterTrainingRuntime and no node count: the Trainer v2 controller manager
  (``github.com/kubeflow/trainer/v2``) makes the JobSet from the runtime, the JobSet controller
  the Job, the Job controller the pods; our webhook plans the gang from the runtime the TrainJob
  references (the TrainJob alone says nothing of its size).

Each goes through ``tests.gangs.real.gang_round``: one node short, none binds; with room, all
bind (the seconds from creation to the whole gang bound are printed: ``pytest -s``); not opted
in, the pods bind one by one. Both controllers are built by ``bash hack/build-operators.sh jobset
trainer``; a module whose binary is not built skips, naming the build."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.catalog.trainjobs import ANCESTOR_LABEL, runtime
from tests.catalog.trainjobs import trainjob as trainjob_body
from tests.gangs.e2e import GPU, NODE_LABEL, create, podgroups
from tests.gangs.real import Obj, gang_round
from tests.operator.live import OperatorProcess, delete
from workload_map.kube.api import Api

from . import operators
from .harness import FakeNodes, Kube

ROOT = Path(__file__).resolve().parents[2]
RUNTIMES = "/apis/trainer.kubeflow.org/v1alpha1/clustertrainingruntimes"

# a hang guard, not a speed target: the CRDs (Trainer's runtimes are 700 KB each) and the
# controllers take minutes to install and start on a loaded machine
pytestmark = [pytest.mark.integration, pytest.mark.timeout(1800)]


@pytest.fixture(scope="module")
def plane(kube_with_controllers: Kube) -> Kube:
    """The plane with the in-tree workload controllers, the Karta CRD and the JobSet and
    Trainer CRDs, all installed before our operator starts (it watches the kinds it finds
    served at start)."""
    kube_with_controllers.install_crd(ROOT / "deploy/crds/kartas.run.ai.yaml")
    operators.install_crds(kube_with_controllers, "jobset")
    operators.install_crds(kube_with_controllers, "trainer")
    return kube_with_controllers


@pytest.fixture(scope="module")
def jobset_controller(plane: Kube) -> Iterator[None]:
    with operators.jobset(plane):
        yield


@pytest.fixture(scope="module")
def trainer_controller(plane: Kube, jobset_controller: None) -> Iterator[None]:
    with operators.trainer(plane):
        yield


def _pod_spec(pool: str, container: str) -> Obj:
    return {
        "terminationGracePeriodSeconds": 0,
        "nodeSelector": {NODE_LABEL: pool},
        "containers": [
            {
                "name": container,
                "image": "registry.invalid/never-pulled",
                "resources": {"requests": {GPU: "8"}, "limits": {GPU: "8"}},
            }
        ],
    }


def jobset(api: Api, ns: str, pool: str) -> Obj:
    """A JobSet of a leader Job and two worker Jobs of one pod each (3 pods in 3 Jobs), as a
    user writes it (no defaults: JobSet's webhook fills them)."""

    def replicated(name: str, replicas: int) -> Obj:
        return {
            "name": name,
            "replicas": replicas,
            "template": {
                "spec": {
                    "parallelism": 1,
                    "completions": 1,
                    "backoffLimit": 0,
                    "template": {"spec": _pod_spec(pool, name)},
                }
            },
        }

    body = {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {"name": "js"},
        "spec": {"replicatedJobs": [replicated("leader", 1), replicated("workers", 2)]},
    }
    return create(api, f"/apis/jobset.x-k8s.io/v1alpha2/namespaces/{ns}/jobsets", body)


TRAINJOB_NODES = 3


def runtime_for(pool: str) -> str:
    return f"torch-{pool}"


def cluster_training_runtime(pool: str) -> Obj:
    """A ClusterTrainingRuntime like Trainer's ``torch-distributed`` (v2.0.0's manifests): one
    ``node`` replicated job, ``numNodes`` in its torch ML policy; GPUs and the node pool in its
    pod template (one runtime per pool)."""
    spec = _pod_spec(pool, "node")
    body = runtime(
        runtime_for(pool),
        TRAINJOB_NODES,
        container=spec.pop("containers")[0],
        job_labels={ANCESTOR_LABEL: "trainer"},
    )
    body["spec"]["mlPolicy"]["torch"] = {"numProcPerNode": "auto"}
    (job,) = body["spec"]["template"]["spec"]["replicatedJobs"]
    job["template"]["spec"]["template"]["spec"].update(spec)
    return body


def trainjob(api: Api, ns: str, pool: str) -> Obj:
    """A TrainJob naming its pool's runtime, with no node count of its own."""
    ref = {"apiGroup": "trainer.kubeflow.org", "kind": "ClusterTrainingRuntime"}
    body = trainjob_body("train", {**ref, "name": runtime_for(pool)}, namespace=ns)
    return create(api, f"/apis/trainer.kubeflow.org/v1alpha1/namespaces/{ns}/trainjobs", body)


def _gang_of(api: Api, ns: str) -> tuple[str, str, int]:
    """The namespace's one PodGroup: the kind and name of the workload owning it, its minimum."""
    (group,) = podgroups(api, ns)
    (owner,) = group["metadata"]["ownerReferences"]
    return owner["kind"], owner["name"], group["spec"]["schedulingPolicy"]["gang"]["minCount"]


def test_a_jobset_made_by_the_jobset_controller(
    plane: Kube,
    api: Api,
    op: OperatorProcess,
    jobset_controller: None,
    tok: str,
    fake_nodes: FakeNodes,
) -> None:
    result = gang_round("jobset", api, fake_nodes, tok, jobset, 3)
    assert (result.short, result.after_node, result.room, result.plain) == (0, 3, 3, 2)
    for ns in result.namespaces:
        jobs = api.get(f"/apis/batch/v1/namespaces/{ns}/jobs")["items"]
        owners = {(o["kind"], o["name"]) for j in jobs for o in j["metadata"]["ownerReferences"]}
        assert (len(jobs), owners) == (3, {("JobSet", "js")}), (ns, jobs)
    short, room, _ = result.namespaces
    assert _gang_of(api, short) == _gang_of(api, room) == ("JobSet", "js", 3)


def test_a_trainjob_made_by_trainer_from_its_runtime(
    plane: Kube,
    api: Api,
    op: OperatorProcess,
    trainer_controller: None,
    tok: str,
    fake_nodes: FakeNodes,
) -> None:
    made: list[str] = []

    def make(api: Api, ns: str, pool: str) -> Obj:
        create(api, RUNTIMES, cluster_training_runtime(pool))
        made.append(runtime_for(pool))
        return trainjob(api, ns, pool)

    try:
        result = gang_round("trainjob", api, fake_nodes, tok, make, TRAINJOB_NODES)
        assert (result.short, result.after_node, result.room, result.plain) == (0, 3, 3, 2)
        for ns in result.namespaces:
            # Trainer made the JobSet (owned by the TrainJob), JobSet the Job
            (js,) = api.get(f"/apis/jobset.x-k8s.io/v1alpha2/namespaces/{ns}/jobsets")["items"]
            assert [o["kind"] for o in js["metadata"]["ownerReferences"]] == ["TrainJob"]
            (job,) = api.get(f"/apis/batch/v1/namespaces/{ns}/jobs")["items"]
            assert [o["kind"] for o in job["metadata"]["ownerReferences"]] == ["JobSet"]
            assert job["spec"]["parallelism"] == TRAINJOB_NODES
        # planned for the TrainJob from its runtime (the TrainJob alone says nothing of 3)
        short, room, _ = result.namespaces
        assert _gang_of(api, short) == _gang_of(api, room) == ("TrainJob", "train", 3)
    finally:
        for name in made:
            delete(api, f"{RUNTIMES}/{name}")
