"""Status mappings against objects with a real status.

The expected phases were worked out by reading each object and the controller's meaning of its
conditions/phases (not by running the definitions), e.g. a Job with ``ready: 0`` and no
terminal condition is still starting; a JobSet whose ``workers`` job is held suspended by its
startup policy while nothing is ready is starting; an InferenceService with ``Stopped=True`` is
suspended; a Deployment with 2 of 3 replicas available is degraded.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.catalog.conftest import FIXTURES, objects_in
from workload_map.catalog import catalog
from workload_map.engine import Workload

UPSTREAM: dict[str, list[str]] = {
    "argo-workflows/with-status/dag-disable-fail-fast.yaml": ["Failed"],
    # Running, with failed pods inside retries that are still being worked through
    "argo-workflows/with-status/dag-exhausted-retries-xfail.yaml": ["Running", "Degraded"],
    # trimmed fixture without a phase: started, not finished
    "argo-workflows/with-status/dag_retry_succeeded.yaml": ["Running"],
    "builtin/with-status/argocd-cronjob-active.yaml": ["Running"],
    "builtin/with-status/argocd-deployment.yaml": ["Degraded"],
    "builtin/with-status/argocd-job-active.yaml": ["Initializing"],
    "builtin/with-status/argocd-job-completed.yaml": ["Completed"],
    "builtin/with-status/argocd-job-failed.yaml": ["Failed"],
    "builtin/with-status/argocd-job-suspended.yaml": ["Suspended"],
    "builtin/with-status/argocd-statefulset.yaml": ["Running"],
    "builtin/with-status/pi.job.status.yaml": ["Running"],
    "jobset/with-status/sleep-job-x5ffx.jobset.status.yaml": ["Initializing"],
    "knative-serving/with-status/argocd-ksvc-degraded.yaml": ["Failed"],
    "knative-serving/with-status/argocd-ksvc-healthy.yaml": ["Running"],
    "knative-serving/with-status/argocd-ksvc-progressing.yaml": ["Initializing"],
    "kserve/with-status/argocd-isvc-degraded.yaml": ["Failed"],
    "kserve/with-status/argocd-isvc-healthy.yaml": ["Running"],
    "kserve/with-status/argocd-isvc-healthy_raw.yaml": ["Running"],
    "kserve/with-status/argocd-isvc-progressing.yaml": ["Initializing"],
    "kserve/with-status/argocd-isvc-stopped.yaml": ["Suspended"],
    "kubeflow-mpi-operator-v2beta1/with-status/tensorflow-benchmarks.mpijob-v2beta1.status.yaml": [
        "Completed"
    ],
    "kubeflow-training-v1/with-status/dist-mnist-for-e2e-test.tfjob-running.status.yaml": [
        "Running"
    ],
    "kubeflow-training-v1/with-status/jaxjob-mnist.status.yaml": ["Completed"],
    "kubeflow-training-v1/with-status/jaxjob-simple.status.yaml": ["Completed"],
    "kubeflow-training-v1/with-status/lightgbm-dist-train-test.status.yaml": ["Completed"],
    "kubeflow-training-v1/with-status/paddle-simple-cpu.status.yaml": ["Completed"],
    "kubeflow-training-v1/with-status/pytorch-tcp-dist-mnist.status.yaml": ["Completed"],
    "kubeflow-training-v1/with-status/tfjob-simple.status.yaml": ["Completed"],
    "kubeflow-training-v1/with-status/xgboost-dist-iris-test-predict_local.status.yaml": [
        "Completed"
    ],
    "kubeflow-training-v1/with-status/xgboost-dist-iris-test-train.status.yaml": ["Completed"],
    "kubeflow-training-v1/with-status/xgboost-dist-iris-test-train_local.status.yaml": [
        "Completed"
    ],
    "kubeflow-training-v1/with-status/xgboost-dist-test.status.yaml": ["Completed"],
    "spark/with-status/argocd-sparkapp-degraded.yaml": ["Failed"],
    "spark/with-status/argocd-sparkapp-healthy.yaml": ["Running"],
    "spark/with-status/argocd-sparkapp-healthy_dynamic_alloc.yaml": ["Running"],
    "spark/with-status/argocd-sparkapp-progressing.yaml": ["Initializing"],
    "spark/with-status/spark-pi.status.yaml": ["Completed"],
    # 3 of minMember 3 running
    "podgroup-gang-scheduling/with-status/pg1.scheduler-plugins.status.yaml": ["Running"],
}

OURS: dict[str, list[str]] = {
    "appwrapper.yaml": ["Running"],
    "cronjob.yaml": ["Suspended"],
    "deployment-stuck.yaml": ["Failed"],  # progress deadline exceeded
    "deployment.yaml": ["Running"],
    "dynamographdeployment-v1alpha1.yaml": ["Initializing"],
    "inferenceservice.yaml": ["Suspending", "Running"],  # stop annotation set, still Ready
    "jaxjob.yaml": ["Suspended"],  # created suspended, never started
    "knative-service.yaml": ["Running"],
    "llminferenceservice.yaml": ["Running"],
    "milvus.yaml": ["Running"],
    "mpijob-v1.yaml": ["Running"],
    "nimcache.yaml": ["Running"],  # download in progress
    "nimservice.yaml": ["Running"],
    "paddlejob.yaml": ["Failed"],
    "pod.yaml": ["Running", "Degraded"],  # running, not ready
    "podgroup-scheduler-plugins.yaml": ["Initializing"],
    "podgroup-volcano.yaml": ["Running", "Degraded"],  # 3 of minMember 4 running
    "rayjob.yaml": ["Failed"],  # deployment complete, Ray job FAILED
    "rayservice.yaml": ["Degraded"],  # no serve endpoints
    "replicaset.yaml": ["Suspended"],  # scaled to zero
    "statefulset.yaml": ["Degraded"],  # 1 of 3 ready
    "trainjob.yaml": ["Running"],
    "workflow.yaml": ["Suspended"],
    "xgboostjob.yaml": ["Degraded"],  # restarting a failed worker
    "daemonset.yaml": ["Degraded"],  # 3 of 4 nodes ready
    "dynamographdeployment-v1beta1.yaml": ["Running"],
    "kueue-workload.yaml": ["Running"],  # admitted, pods ready
    "nodeset.yaml": ["Degraded"],  # 2 of 4 ready
    "notebook-stopped-v1beta1.yaml": ["Suspended"],
    "notebook.yaml": ["Running"],
    "pipelinerun.yaml": ["Completed"],
    "sandbox-v1alpha1.yaml": ["Running"],
    "sandbox-v1beta1.yaml": ["Suspending"],  # mode Suspended, controller not there yet
    "scheduledsparkapplication.yaml": ["Running"],
    "seldondeployment.yaml": ["Running"],
    "taskrun.yaml": ["Running"],
    "vm.yaml": ["Suspended"],
    "vmi.yaml": ["Running"],
}


def _phases(obj: dict[str, Any]) -> list[str]:
    found = catalog.resolve(obj["apiVersion"], obj["kind"])
    assert found is not None, f"{obj['apiVersion']} {obj['kind']} is not covered"
    karta, exact = found
    assert exact
    return Workload(karta, obj).phases()


@pytest.mark.parametrize(("rel", "expected"), sorted(UPSTREAM.items()))
def test_upstream_objects_with_status(realworld_dir: Path, rel: str, expected: list[str]) -> None:
    objects = objects_in(realworld_dir / rel)
    assert len(objects) == 1, rel
    assert _phases(objects[0]) == expected


@pytest.mark.parametrize(("name", "expected"), sorted(OURS.items()))
def test_hand_written_objects_with_status(name: str, expected: list[str]) -> None:
    objects = objects_in(FIXTURES / name)
    assert len(objects) == 1
    assert _phases(objects[0]) == expected


# Fixtures of several objects: the phases per object name.
OURS_BY_NAME: dict[str, dict[str, list[str]]] = {
    "podgroup-kai.yaml": {
        "pg-train-running": ["Running"],  # resources allocated to its bound pods
        "pg-train-waiting": ["Initializing"],  # nothing allocated, unschedulable on its pool
        "pg-elastic": ["Running", "Degraded"],  # placed in part, the rest unschedulable
    },
    "scheduledworkflow.yaml": {
        "nightly-train": ["Running"],  # Enabled, last run succeeded
        "weekly-eval": ["Suspended"],  # enabled: false
        "hourly-ingest": ["Running", "Degraded"],  # scheduling; the latest finished run failed
        "new-schedule": ["Initializing"],  # enabled, no condition recorded yet
    },
    "devworkspace.yaml": {
        "ml-dev": ["Running"],
        "stopped-dev": ["Suspended"],  # started: false, phase Stopped
    },
}


@pytest.mark.parametrize(("name", "expected"), sorted(OURS_BY_NAME.items()))
def test_hand_written_objects_with_status_by_name(
    name: str, expected: dict[str, list[str]]
) -> None:
    got = {o["metadata"]["name"]: _phases(o) for o in objects_in(FIXTURES / name)}
    assert got == expected


def _with_status(obj: dict[str, Any], status: dict[str, Any], **spec: Any) -> dict[str, Any]:
    return {**obj, "spec": {**obj.get("spec", {}), **spec}, "status": status}


JOB = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"}, "spec": {}}
PYTORCH = {
    "apiVersion": "kubeflow.org/v1",
    "kind": "PyTorchJob",
    "metadata": {"name": "p"},
    "spec": {"pytorchReplicaSpecs": {"Worker": {"replicas": 2, "template": {}}}},
}


def _cond(kind: str, status: str = "True", reason: str = "") -> dict[str, str]:
    return {"type": kind, "status": status, "reason": reason}


@pytest.mark.parametrize(
    ("obj", "expected"),
    [
        # the Job controller's lifecycle
        (_with_status(JOB, {}), ["Initializing"]),
        (_with_status(JOB, {"active": 2, "ready": 2}), ["Running"]),
        (_with_status(JOB, {"active": 2, "ready": 1, "failed": 1}), ["Running", "Degraded"]),
        (_with_status(JOB, {"active": 2}, suspend=True), ["Suspending"]),
        (_with_status(JOB, {"conditions": [_cond("Suspended")]}), ["Resuming", "Suspended"]),
        (_with_status(JOB, {}, suspend=True), ["Suspended"]),
        (
            _with_status(
                JOB, {"conditions": [_cond("SuccessCriteriaMet")], "active": 1, "ready": 1}
            ),
            ["Completed"],
        ),
        # the training operator's conditions
        (_with_status(PYTORCH, {"conditions": [_cond("Created")]}), ["Initializing"]),
        (_with_status(PYTORCH, {"conditions": [_cond("Created"), _cond("Running")]}), ["Running"]),
        (
            _with_status(PYTORCH, {"conditions": [_cond("Running", "False"), _cond("Restarting")]}),
            ["Degraded"],
        ),
        (
            _with_status(PYTORCH, {"conditions": [_cond("Running", "False"), _cond("Failed")]}),
            ["Failed"],
        ),
        (_with_status(PYTORCH, {}, runPolicy={"suspend": True}), ["Suspended"]),
        (
            _with_status(PYTORCH, {"conditions": [_cond("Running")]}, runPolicy={"suspend": True}),
            ["Suspending", "Running"],
        ),
        (_with_status(PYTORCH, {"conditions": [_cond("Suspended")]}), ["Resuming", "Suspended"]),
    ],
    ids=lambda v: "" if isinstance(v, dict) else ",".join(v),
)
def test_lifecycle_transitions(obj: dict[str, Any], expected: list[str]) -> None:
    assert _phases(obj) == expected


@pytest.mark.parametrize(
    ("name", "api_version", "kind", "spec"),
    [
        ("batch-job-v1", "batch/v1", "Job", {}),
        ("kubeflow-org-pytorchjob-v1", "kubeflow.org/v1", "PyTorchJob", {}),
        ("jobset-x-k8s-io-jobset-v1alpha2", "jobset.x-k8s.io/v1alpha2", "JobSet", {}),
        ("ray-io-raycluster-v1", "ray.io/v1", "RayCluster", {}),
        (
            "sparkoperator-k8s-io-sparkapplication-v1beta2",
            "sparkoperator.k8s.io/v1beta2",
            "SparkApplication",
            {},
        ),
        ("agents-x-k8s-io-sandbox-v1beta1", "agents.x-k8s.io/v1beta1", "Sandbox", {}),
        ("kubevirt-io-virtualmachine-v1", "kubevirt.io/v1", "VirtualMachine", {}),
        (
            "serving-kserve-io-inferenceservice-v1beta1",
            "serving.kserve.io/v1beta1",
            "InferenceService",
            {},
        ),
    ],
)
def test_suspend_then_resume_round_trips(
    name: str, api_version: str, kind: str, spec: dict[str, Any]
) -> None:
    obj = {"apiVersion": api_version, "kind": kind, "metadata": {"name": "w"}, "spec": spec}
    karta = catalog.by_name(name)
    assert karta is not None
    suspended = Workload(karta, obj).suspend()
    assert suspended != obj
    resumed = Workload(karta, suspended).resume()
    assert resumed != suspended
    # suspending twice changes nothing more; resuming gives a runnable object again
    assert Workload(karta, suspended).suspend() == suspended
    assert "Suspended" not in Workload(karta, resumed).phases() or kind == "VirtualMachine"
