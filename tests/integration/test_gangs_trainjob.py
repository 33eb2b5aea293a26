"""Gangs from references, end to end: a Kubeflow Trainer v2 TrainJob planned from its runtime.

The Trainer CRDs and a ClusterTrainingRuntime are installed; the TrainJob names the runtime and
no node count, so only the runtime says how many nodes there are (``mlPolicy.numNodes: 3``;
without the runtime the definition would see 1). Its pods are created here as Trainer's JobSet
would create them (TrainJob -> JobSet -> Job -> pods, JobSet's labels), so that the runtime
edit and the replan it causes are under the test's control; the same path with the real
Trainer, JobSet and Job controllers is ``test_gangs_real_jobset_trainer.py``. With room for one
pod fewer than the gang no pod binds; with room added all do. Editing the runtime (4 nodes)
replans the TrainJob's gang.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.gangs.e2e import (
    NODE,
    NODE_LABEL,
    _job,
    bound,
    create,
    create_pod,
    make_namespace,
    podgroups,
    pods_in,
    template,
    wait,
)
from tests.operator.live import OperatorProcess, delete
from workload_map.kube.api import Api

from .harness import FakeNodes, Kube

ROOT = Path(__file__).resolve().parents[2]
CRDS = (
    "jobset/jobset.x-k8s.io_jobsets.yaml.gz",
    "kubeflow-trainer-v2/trainer.kubeflow.org_trainjobs.yaml.gz",
    "kubeflow-trainer-v2/trainer.kubeflow.org_clustertrainingruntimes.yaml.gz",
    "kubeflow-trainer-v2/trainer.kubeflow.org_trainingruntimes.yaml.gz",
)
RUNTIMES = "/apis/trainer.kubeflow.org/v1alpha1/clustertrainingruntimes"

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def plane(module_kube: Kube, shared_dir: Path) -> Kube:
    for rel in CRDS:
        module_kube.install_crd(shared_dir / "realworld" / rel)
    module_kube.install_crd(ROOT / "deploy/crds/kartas.run.ai.yaml")
    return module_kube


def _runtime(name: str, pool: str, nodes: int) -> dict[str, Any]:
    labels = {"trainer.kubeflow.org/trainjob-ancestor-step": "trainer"}
    return {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "ClusterTrainingRuntime",
        "metadata": {"name": name},
        "spec": {
            "mlPolicy": {"numNodes": nodes, "torch": {}},
            "template": {
                "spec": {
                    "replicatedJobs": [
                        {
                            "name": "node",
                            "template": {
                                "metadata": {"labels": labels},
                                "spec": {"template": template(pool)},
                            },
                        }
                    ]
                }
            },
        },
    }


def _trainjob(
    api: Api, ns: str, runtime: str, pool: str, nodes: int
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The TrainJob, then what Trainer and JobSet make of it: a JobSet, its node Job, the pods."""
    tj = create(
        api,
        f"/apis/trainer.kubeflow.org/v1alpha1/namespaces/{ns}/trainjobs",
        {
            "apiVersion": "trainer.kubeflow.org/v1alpha1",
            "kind": "TrainJob",
            "metadata": {"name": "train"},
            "spec": {"runtimeRef": {"name": runtime}},
        },
    )
    owner = {
        "apiVersion": tj["apiVersion"],
        "kind": "TrainJob",
        "name": "train",
        "uid": tj["metadata"]["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }
    js = create(
        api,
        f"/apis/jobset.x-k8s.io/v1alpha2/namespaces/{ns}/jobsets",
        {
            "apiVersion": "jobset.x-k8s.io/v1alpha2",
            "kind": "JobSet",
            "metadata": {"name": "train", "ownerReferences": [owner]},
            "spec": {
                "replicatedJobs": [
                    {
                        "name": "node",
                        "replicas": 1,
                        "template": {
                            "spec": {
                                "parallelism": nodes,
                                "completions": nodes,
                                "template": template(pool),
                            }
                        },
                    }
                ]
            },
        },
    )
    labels = {
        "jobset.sigs.k8s.io/jobset-name": "train",
        "jobset.sigs.k8s.io/replicatedjob-name": "node",
        "jobset.sigs.k8s.io/job-index": "0",
        "jobset.sigs.k8s.io/jobset-uid": js["metadata"]["uid"],
        "trainer.kubeflow.org/trainjob-ancestor-step": "trainer",
    }
    job = _job(api, ns, js, "train-node-0", labels, pool)
    pods = [
        create_pod(
            api,
            ns,
            job,
            generate=f"train-node-0-{k}-",
            labels={**labels, "batch.kubernetes.io/job-name": "train-node-0"},
            pool=pool,
        )
        for k in range(nodes)
    ]
    return tj, pods


def _min_counts(api: Api, ns: str) -> list[int]:
    return sorted(g["spec"]["schedulingPolicy"]["gang"]["minCount"] for g in podgroups(api, ns))


def test_a_trainjob_gang_comes_from_its_runtime(
    plane: Kube, api: Api, op: OperatorProcess, tok: str, fake_nodes: FakeNodes
) -> None:
    runtime = f"torch-{tok}"
    pool = f"{tok}-trainjob"
    ns = make_namespace(api, tok)
    create(api, RUNTIMES, _runtime(runtime, pool, 2))
    try:
        _, pods = _trainjob(api, ns, runtime, pool, 3)
        assert all(p["spec"].get("schedulingGroup") for p in pods), (
            [p["metadata"].get("annotations") for p in pods],
            op.log_tail(),
        )
        # the runtime says 2 nodes (the TrainJob alone would say 1)
        wait("the TrainJob's PodGroup of 2", lambda: _min_counts(api, ns) == [2], 60)
        # a runtime edited replans the gangs of its TrainJobs
        current = api.get(f"{RUNTIMES}/{runtime}")
        current["spec"]["mlPolicy"]["numNodes"] = 3
        api.request("PUT", f"{RUNTIMES}/{runtime}", current)
        wait("the PodGroup to follow the runtime", lambda: _min_counts(api, ns) == [3], 90)
        fake_nodes.add(2, NODE, labels={NODE_LABEL: pool})
        wait(
            "the scheduler to try every pod",
            lambda: (
                sum(
                    any(
                        c.get("reason") == "Unschedulable"
                        for c in (p.get("status") or {}).get("conditions") or []
                    )
                    for p in pods_in(api, ns)
                )
                == 3
            ),
            120,
        )
        assert bound(api, ns) == []
        fake_nodes.add(1, NODE, labels={NODE_LABEL: pool})
        wait("all three bound", lambda: len(bound(api, ns)) == 3, 90)
    finally:
        delete(api, f"/api/v1/namespaces/{ns}")
        delete(api, f"{RUNTIMES}/{runtime}")
