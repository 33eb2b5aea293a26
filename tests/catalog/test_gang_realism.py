"""Gangs a scheduler can satisfy and pod counts a user can trust (issue 11), kind by kind.

Each case is a hand-written workload with the pods its real operator creates (owner references
with uid chains, the operators' labels), at the moments that matter: before the operator has
created everything, and after. Every assertion here failed before the fixes of issue 11.
"""

from __future__ import annotations

import copy
from typing import Any

from workload_map.catalog import catalog
from workload_map.engine import Workload

Obj = dict[str, Any]
GPU = {"limits": {"nvidia.com/gpu": "8"}}


def _karta(obj: Obj) -> Any:
    found = catalog.resolve(obj["apiVersion"], obj["kind"])
    assert found is not None
    return found[0]


def _view(obj: Obj, pods: list[Obj] | None) -> Obj:
    return Workload(_karta(obj), obj, pods=pods).describe()


def _owner(obj: Obj) -> Obj:
    return {
        "apiVersion": obj["apiVersion"],
        "kind": obj["kind"],
        "name": obj["metadata"]["name"],
        "uid": obj["metadata"]["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }


def _pod(
    name: str,
    owner: Obj,
    labels: dict[str, str],
    *,
    phase: str = "Running",
    ready: bool = True,
    gpus: int = 0,
    annotations: dict[str, str] | None = None,
    deleting: bool = False,
) -> Obj:
    meta: Obj = {
        "name": name,
        "namespace": owner["metadata"].get("namespace", "ml"),
        "uid": f"uid-{name}",
        "labels": labels,
        "annotations": annotations or {},
        "ownerReferences": [_owner(owner)],
    }
    if deleting:
        meta["deletionTimestamp"] = "2026-12-01T08:00:00Z"
        meta["deletionGracePeriodSeconds"] = 30
    resources = {"limits": {"nvidia.com/gpu": str(gpus)}} if gpus else {}
    conditions = [
        {"type": "PodScheduled", "status": "True"},
        {"type": "Ready", "status": "True" if ready and phase == "Running" else "False"},
    ]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": {
            "nodeName": "node-1",
            "containers": [{"name": "main", "image": "busybox", "resources": resources}],
        },
        "status": {"phase": phase, "conditions": conditions},
    }


def _template(gpus: int = 8) -> Obj:
    return {
        "spec": {
            "containers": [
                {
                    "name": "main",
                    "image": "example.com/train:1",
                    "resources": {"limits": {"nvidia.com/gpu": str(gpus)}},
                }
            ]
        }
    }


def _only_group(view: Obj) -> Obj:
    groups = view["podGroups"]
    assert len(groups) == 1, groups
    return groups[0]


# -- class 1: pods the operator creates after the gang runs ------------------------------------
def _mpijob(policy: str | None, min_available: int | None = None) -> Obj:
    spec: Obj = {
        "slotsPerWorker": 8,
        "runPolicy": {"cleanPodPolicy": "Running"},
        "mpiReplicaSpecs": {
            "Launcher": {"replicas": 1, "template": _template(0)},
            "Worker": {"replicas": 4, "template": _template(8)},
        },
    }
    if policy is not None:
        spec["launcherCreationPolicy"] = policy
    if min_available is not None:
        spec["runPolicy"]["schedulingPolicy"] = {"minAvailable": min_available}
    return {
        "apiVersion": "kubeflow.org/v2beta1",
        "kind": "MPIJob",
        "metadata": {"name": "allreduce", "namespace": "ml", "uid": "mpi-uid-1"},
        "spec": spec,
    }


def _mpi_pods(job: Obj, *, launcher: bool) -> list[Obj]:
    base = {
        "training.kubeflow.org/job-name": "allreduce",
        "training.kubeflow.org/operator-name": "mpi-operator",
    }
    pods = [
        _pod(
            f"allreduce-worker-{i}",
            job,
            {
                **base,
                "training.kubeflow.org/job-role": "worker",
                "training.kubeflow.org/replica-index": str(i),
            },
            gpus=8,
        )
        for i in range(4)
    ]
    if launcher:
        labels = {**base, "training.kubeflow.org/job-role": "launcher"}
        pods.append(_pod("allreduce-launcher-x7k2p", job, labels))
    return pods


def test_mpijob_waiting_for_workers_does_not_wait_for_its_launcher() -> None:
    job = _mpijob("WaitForWorkersReady")
    before = _only_group(_view(job, _mpi_pods(job, launcher=False)))
    assert before["minMember"] == 4  # the launcher cannot exist yet
    assert len(before["pods"]) == 4
    assert before["createdLater"] == 1
    after = _only_group(_view(job, _mpi_pods(job, launcher=True)))
    assert after["minMember"] == 4
    assert "allreduce-launcher-x7k2p" in after["pods"]
    offline = _only_group(_view(job, None))
    assert offline["minMember"] == 4


def test_mpijob_at_startup_gangs_launcher_and_workers() -> None:
    for policy in (None, "AtStartup"):
        job = _mpijob(policy)
        group = _only_group(_view(job, _mpi_pods(job, launcher=True)))
        assert group["minMember"] == 5
        assert "createdLater" not in group


def test_mpijob_stated_minimum_is_bounded_by_what_can_exist() -> None:
    job = _mpijob("WaitForWorkersReady", min_available=5)
    group = _only_group(_view(job, _mpi_pods(job, launcher=False)))
    assert group["minMember"] == 4  # 5 stated, only the 4 workers can exist before admission
    job = _mpijob("WaitForWorkersReady", min_available=2)
    assert _only_group(_view(job, _mpi_pods(job, launcher=False)))["minMember"] == 2


def _spark() -> Obj:
    return {
        "apiVersion": "sparkoperator.k8s.io/v1beta2",
        "kind": "SparkApplication",
        "metadata": {"name": "etl", "namespace": "spark", "uid": "spark-uid-1"},
        "spec": {
            "type": "Scala",
            "mode": "cluster",
            "image": "spark:3.5.3",
            "mainClass": "org.example.Etl",
            "mainApplicationFile": "local:///opt/app.jar",
            "sparkVersion": "3.5.3",
            "driver": {"cores": 1, "memory": "2g"},
            "executor": {
                "instances": 3,
                "cores": 4,
                "memory": "8g",
                "gpu": {"name": "nvidia.com/gpu", "quantity": 1},
            },
        },
    }


def _spark_pods(app: Obj, executors: int) -> list[Obj]:
    base = {
        "sparkoperator.k8s.io/app-name": "etl",
        "sparkoperator.k8s.io/launched-by-spark-operator": "true",
        "spark-app-selector": "spark-0a1b2c",
        "spark-app-name": "etl",
    }
    driver = _pod("etl-driver", app, {**base, "spark-role": "driver"})
    pods = [driver]
    for i in range(executors):
        # executors are owned by the driver pod, as Spark on Kubernetes creates them
        executor = _pod(
            f"etl-0a1b2c-exec-{i + 1}",
            app,
            {**base, "spark-role": "executor", "spark-exec-id": str(i + 1)},
        )
        executor["metadata"]["ownerReferences"] = [
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "name": "etl-driver",
                "uid": driver["metadata"]["uid"],
                "controller": True,
            }
        ]
        pods.append(executor)
    return pods


def test_spark_gang_is_the_driver_and_reserves_the_executors() -> None:
    app = _spark()
    driver_only = _only_group(_view(app, _spark_pods(app, 0)))
    assert driver_only["minMember"] == 1  # the driver creates the executors once it runs
    assert driver_only["pods"] == ["etl-driver"]
    assert driver_only["createdLater"] == 3
    assert "minResources" in driver_only
    full = _only_group(_view(app, _spark_pods(app, 3)))
    assert full["minMember"] == 1
    assert len(full["pods"]) == 4
    assert _only_group(_view(app, None))["minMember"] == 1


def test_rayjob_gang_still_leaves_out_the_submitter() -> None:
    job = {
        "apiVersion": "ray.io/v1",
        "kind": "RayJob",
        "metadata": {"name": "tune", "namespace": "ray", "uid": "rayjob-uid-1"},
        "spec": {
            "entrypoint": "python tune.py",
            "rayClusterSpec": {
                "headGroupSpec": {"template": _template(0)},
                "workerGroupSpecs": [
                    {"groupName": "gpu", "replicas": 2, "minReplicas": 2, "template": _template()}
                ],
            },
        },
    }
    group = _only_group(_view(job, None))
    assert group["minMember"] == 3


# -- class 2: minimums the workload states ----------------------------------------------------
def _pytorch(min_available: int | None) -> Obj:
    run_policy: Obj = {"cleanPodPolicy": "None"}
    if min_available is not None:
        run_policy["schedulingPolicy"] = {"minAvailable": min_available}
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {"name": "llm", "namespace": "ml", "uid": "pt-uid-1"},
        "spec": {
            "runPolicy": run_policy,
            "elasticPolicy": {"rdzvBackend": "c10d", "minReplicas": 2, "maxReplicas": 6},
            "pytorchReplicaSpecs": {
                "Master": {"replicas": 1, "template": _template()},
                "Worker": {"replicas": 4, "template": _template()},
            },
        },
    }


def _pytorch_pods(job: Obj) -> list[Obj]:
    pods = []
    for rtype, count in (("master", 1), ("worker", 4)):
        for i in range(count):
            labels = {
                "training.kubeflow.org/job-name": "llm",
                "training.kubeflow.org/operator-name": "pytorchjob-controller",
                "training.kubeflow.org/replica-type": rtype,
                "training.kubeflow.org/replica-index": str(i),
            }
            if rtype == "master":
                labels["training.kubeflow.org/job-role"] = "master"
            pods.append(_pod(f"llm-{rtype}-{i}", job, labels, gpus=8))
    return pods


def test_pytorchjob_elastic_with_stated_minimum() -> None:
    job = _pytorch(4)
    assert _only_group(_view(job, _pytorch_pods(job)))["minMember"] == 4
    assert _only_group(_view(job, None))["minMember"] == 4
    job = _pytorch(9)  # more than the 5 pods the job has: bounded by what can exist
    assert _only_group(_view(job, _pytorch_pods(job)))["minMember"] == 5
    # without a stated minimum: the master and the elastic minimum of workers (1 + 2)
    job = _pytorch(None)
    assert _only_group(_view(job, _pytorch_pods(job)))["minMember"] == 3
    job["spec"].pop("elasticPolicy")
    assert _only_group(_view(job, _pytorch_pods(job)))["minMember"] == 5  # 1 + N kept


def test_volcano_multi_task_job_uses_its_own_min_available() -> None:
    job = {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": "tf-dist", "namespace": "vc", "uid": "vc-uid-1"},
        "spec": {
            "minAvailable": 3,
            "schedulerName": "volcano",
            "tasks": [
                {"name": "ps", "replicas": 1, "template": _template(0)},
                {"name": "worker", "replicas": 4, "template": _template()},
            ],
        },
    }
    pods = []
    for task, count in (("ps", 1), ("worker", 4)):
        for i in range(count):
            labels = {
                "volcano.sh/job-name": "tf-dist",
                "volcano.sh/job-namespace": "vc",
                "volcano.sh/task-spec": task,
                "volcano.sh/queue-name": "default",
            }
            pods.append(
                _pod(
                    f"tf-dist-{task}-{i}",
                    job,
                    labels,
                    annotations={
                        "volcano.sh/task-spec": task,
                        "scheduling.k8s.io/group-name": "tf-dist-vc-uid-1",
                    },
                )
            )
    assert _only_group(_view(job, pods))["minMember"] == 3
    assert _only_group(_view(job, None))["minMember"] == 3


# -- class 3: pods of other workloads ---------------------------------------------------------
def _jobset(name: str, uid: str) -> Obj:
    return {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {"name": name, "namespace": "ml", "uid": uid},
        "spec": {
            "replicatedJobs": [
                {
                    "name": "workers",
                    "replicas": 2,
                    "template": {
                        "spec": {"parallelism": 2, "completions": 2, "template": _template()}
                    },
                }
            ]
        },
    }


def _jobset_pods(jobset: Obj) -> list[Obj]:
    """Pods whose owner Jobs are not in the file: only their labels lead to the JobSet."""
    name, uid = jobset["metadata"]["name"], jobset["metadata"]["uid"]
    pods = []
    for j in range(2):
        job = {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": f"{name}-workers-{j}", "uid": f"{uid}-job-{j}", "namespace": "ml"},
        }
        for p in range(2):
            labels = {
                "jobset.sigs.k8s.io/jobset-name": name,
                "jobset.sigs.k8s.io/jobset-uid": uid,
                "jobset.sigs.k8s.io/replicatedjob-name": "workers",
                "jobset.sigs.k8s.io/job-index": str(j),
                "batch.kubernetes.io/job-name": f"{name}-workers-{j}",
                "batch.kubernetes.io/controller-uid": f"{uid}-job-{j}",
            }
            pods.append(_pod(f"{name}-workers-{j}-{p}-abcde", job, labels, gpus=8))
    return pods


def test_jobset_pods_reach_it_only_through_labels() -> None:
    mine, other = _jobset("train", "js-uid-1"), _jobset("eval", "js-uid-2")
    pods = _jobset_pods(mine) + _jobset_pods(other)
    view = _view(mine, pods)
    assert view["pods"]["current"] == 4
    assert sorted(view["unattributedPods"]) == sorted(
        p["metadata"]["name"] for p in _jobset_pods(other)
    )
    assert len(_only_group(view)["pods"]) == 4
    # a namesake of another uid (deleted and recreated) is not ours either
    namesake = _jobset("train", "js-uid-0")
    view = _view(mine, _jobset_pods(namesake))
    assert view["pods"]["current"] == 0


def test_namespace_dump_does_not_mix_kubeflow_jobs() -> None:
    pt = _pytorch(None)
    tf = {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": {"name": "llm-eval", "namespace": "ml", "uid": "tf-uid-1"},
        "spec": {"tfReplicaSpecs": {"Worker": {"replicas": 2, "template": _template()}}},
    }
    tf_pods = [
        _pod(
            f"llm-eval-worker-{i}",
            tf,
            {
                "training.kubeflow.org/job-name": "llm-eval",
                "training.kubeflow.org/operator-name": "tfjob-controller",
                "training.kubeflow.org/replica-type": "worker",
                "training.kubeflow.org/replica-index": str(i),
            },
        )
        for i in range(2)
    ]
    # the dump holds the pods only (a `kubectl get pods -o yaml`): no chain resolves
    view = _view(pt, _pytorch_pods(pt) + tf_pods)
    assert view["pods"]["current"] == 5
    assert sorted(view["unattributedPods"]) == ["llm-eval-worker-0", "llm-eval-worker-1"]
    # the same name, another training operator's kind: still not ours
    for pod in tf_pods:
        pod["metadata"]["labels"]["training.kubeflow.org/job-name"] = "llm"
    view = _view(pt, _pytorch_pods(pt) + tf_pods)
    assert view["pods"]["current"] == 5


# -- class 4: finished and terminating pods ---------------------------------------------------
def test_indexed_job_with_retries_counts_active_pods_only() -> None:
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "shards", "namespace": "ml", "uid": "job-uid-1"},
        "spec": {
            "completionMode": "Indexed",
            "completions": 4,
            "parallelism": 2,
            "backoffLimitPerIndex": 2,
            "template": _template(1),
        },
    }

    def pod(index: int, suffix: str, phase: str, ready: bool = True) -> Obj:
        labels = {
            "batch.kubernetes.io/job-name": "shards",
            "job-name": "shards",
            "batch.kubernetes.io/controller-uid": "job-uid-1",
            "controller-uid": "job-uid-1",
            "batch.kubernetes.io/job-completion-index": str(index),
        }
        annotations = {"batch.kubernetes.io/job-completion-index": str(index)}
        return _pod(
            f"shards-{index}-{suffix}",
            job,
            labels,
            phase=phase,
            ready=ready,
            gpus=1,
            annotations=annotations,
        )

    pods = [
        pod(0, "aaaaa", "Succeeded"),
        pod(1, "bbbbb", "Failed"),
        pod(1, "ccccc", "Failed"),
        pod(1, "ddddd", "Running"),
        pod(2, "eeeee", "Running", ready=False),
    ]
    view = _view(job, pods)
    # the two active pods are on nodes: held; the finished ones hold nothing
    assert view["pods"] == {"desired": 2, "current": 2, "ready": 1, "pending": 0, "held": 2}
    assert view["observedResources"]["gpus"] == 2  # only the active pods hold GPUs
    listed = {p["name"]: p for c in view["components"] for p in c["pods"]}
    assert len(listed) == 5  # finished pods are listed with their state
    assert listed["shards-0-aaaaa"]["state"] == "Succeeded"
    assert "state" not in listed["shards-1-ddddd"]


def test_terminating_pod_is_listed_but_not_current() -> None:
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "api", "namespace": "serve", "uid": "dep-uid-1"},
        "spec": {"replicas": 2, "template": _template(1)},
    }
    rs = {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {
            "name": "api-5d8f7",
            "namespace": "serve",
            "uid": "rs-uid-1",
            "ownerReferences": [_owner(deployment)],
        },
    }
    labels = {"app": "api", "pod-template-hash": "5d8f7"}
    pods = [
        _pod("api-5d8f7-aaaaa", rs, labels, gpus=1),
        _pod("api-5d8f7-bbbbb", rs, labels, gpus=1),
        _pod("api-5d8f7-ccccc", rs, labels, gpus=1, deleting=True),
    ]
    view = _view(deployment, [rs, *pods])
    # the terminating pod still bound is held (the scheduler accounts for it), not current
    assert view["pods"] == {"desired": 2, "current": 2, "ready": 2, "pending": 0, "held": 3}
    assert view["observedResources"]["gpus"] == 2
    listed = {p["name"]: p for c in view["components"] for p in _all_pods(c)}
    assert listed["api-5d8f7-ccccc"]["state"] == "Terminating"


def _all_pods(node: Obj) -> list[Obj]:
    out = list(node["pods"])
    for child in node["children"]:
        out += _all_pods(child)
    return out


# -- class 5: the same groups with and without pods -------------------------------------------
def _nimservice(multi_node: bool) -> Obj:
    spec: Obj = {
        "image": {"repository": "nvcr.io/nim/meta/llama-3.1-8b-instruct", "tag": "1.3.3"},
        "replicas": 2,
        "resources": GPU,
        "expose": {"service": {"type": "ClusterIP", "port": 8000}},
    }
    if multi_node:
        spec["multiNode"] = {"backendType": "lws", "parallelism": {"pipeline": 2, "tensor": 8}}
    return {
        "apiVersion": "apps.nvidia.com/v1alpha1",
        "kind": "NIMService",
        "metadata": {"name": "llama", "namespace": "nim", "uid": "nim-uid-1"},
        "spec": spec,
    }


def _nim_pods(svc: Obj) -> list[Obj]:
    if "multiNode" not in svc["spec"]:
        deployment = {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "llama", "namespace": "nim", "uid": "nim-dep-uid"},
        }
        labels = {"app": "llama", "app.kubernetes.io/name": "llama"}
        return [_pod(f"llama-6f9c8-{i}", deployment, labels, gpus=8) for i in range(2)]
    lws = {
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "metadata": {"name": "llama", "namespace": "nim", "uid": "nim-lws-uid"},
    }
    pods = []
    for g in range(2):
        for w in range(2):
            labels = {
                "leaderworkerset.sigs.k8s.io/name": "llama",
                "leaderworkerset.sigs.k8s.io/group-index": str(g),
                "leaderworkerset.sigs.k8s.io/worker-index": str(w),
            }
            pods.append(_pod(f"llama-{g}" + (f"-{w}" if w else ""), lws, labels, gpus=8))
    return pods


def test_nimservice_deployment_mode_has_no_gang_with_or_without_pods() -> None:
    svc = _nimservice(multi_node=False)
    offline = _view(svc, None)
    live = _view(svc, _nim_pods(svc))
    assert offline["podGroups"] == [] and live["podGroups"] == []
    assert live["pods"]["current"] == 2
    # pods that match no group member are reported, not silently dropped
    notes = " ".join(live.get("podGroupNotes", []))
    assert "llama-6f9c8-0" in notes


def test_nimservice_multi_node_groups_are_the_same_with_and_without_pods() -> None:
    svc = _nimservice(multi_node=True)
    offline = _view(svc, None)["podGroups"]
    live = _view(svc, _nim_pods(svc))["podGroups"]
    assert [g["minMember"] for g in offline] == [g["minMember"] for g in live] == [2, 2]
    assert [len(g["pods"]) for g in live] == [2, 2]


# -- class 6: kinds KAI gangs by default ------------------------------------------------------
def test_knative_revision_is_a_gang_of_its_min_scale() -> None:
    svc = {
        "apiVersion": "serving.knative.dev/v1",
        "kind": "Service",
        "metadata": {"name": "embed", "namespace": "serve", "uid": "ksvc-uid-1"},
        "spec": {
            "template": {
                "metadata": {
                    "annotations": {
                        "autoscaling.knative.dev/min-scale": "2",
                        "autoscaling.knative.dev/max-scale": "5",
                    }
                },
                "spec": {"containers": [{"image": "example.com/embed:1", "resources": GPU}]},
            }
        },
    }
    revision = {
        "apiVersion": "serving.knative.dev/v1",
        "kind": "Revision",
        "metadata": {
            "name": "embed-00001",
            "namespace": "serve",
            "uid": "rev-uid-1",
            "ownerReferences": [
                {
                    "apiVersion": "serving.knative.dev/v1",
                    "kind": "Configuration",
                    "name": "embed",
                    "uid": "cfg-uid-1",
                    "controller": True,
                }
            ],
        },
    }
    labels = {
        "serving.knative.dev/service": "embed",
        "serving.knative.dev/configuration": "embed",
        "serving.knative.dev/revision": "embed-00001",
        "app": "embed-00001",
    }
    rs = copy.deepcopy(revision)
    rs.update({"apiVersion": "apps/v1", "kind": "ReplicaSet"})
    rs["metadata"].update({"name": "embed-00001-deployment-7c9d", "uid": "ksvc-rs-uid"})
    rs["metadata"]["ownerReferences"] = [_owner(revision)]
    pods = [_pod(f"embed-00001-deployment-7c9d-{i}", rs, labels, gpus=8) for i in range(2)]
    group = _only_group(_view(svc, pods))
    assert group["minMember"] == 2
    assert len(group["pods"]) == 2
    assert _only_group(_view(svc, None))["minMember"] == 2


def test_single_pod_kinds_get_a_group_of_one() -> None:
    notebook = {
        "apiVersion": "kubeflow.org/v1",
        "kind": "Notebook",
        "metadata": {"name": "lab", "namespace": "users", "uid": "nb-uid-1"},
        "spec": {"template": _template(1)},
    }
    group = _only_group(_view(notebook, None))
    assert group["minMember"] == 1


def test_live_chain_broken_at_a_collected_job_falls_back_to_labels() -> None:
    from workload_map.engine import is_owned_by

    mine, other = _jobset("train", "js-uid-1"), _jobset("eval", "js-uid-2")
    objects = {mine["metadata"]["uid"]: mine}

    def fetch(ref: Any) -> Obj | None:  # the Jobs were garbage-collected
        return objects.get(ref.uid)

    assert all(is_owned_by(p, mine, fetch) for p in _jobset_pods(mine))
    assert not any(is_owned_by(p, mine, fetch) for p in _jobset_pods(other))
    # a chain that resolves to another top owner is not overruled by labels
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "train-workers-0", "uid": "js-uid-1-job-0", "namespace": "ml"},
    }
    objects[job["metadata"]["uid"]] = job  # now a top-level Job of its own
    assert not is_owned_by(_jobset_pods(mine)[0], mine, fetch)


def test_single_node_llminferenceservice_predicts_no_gangs() -> None:
    svc = {
        "apiVersion": "serving.kserve.io/v1alpha2",
        "kind": "LLMInferenceService",
        "metadata": {"name": "qwen", "namespace": "ml", "uid": "llm-uid-1"},
        "spec": {
            "replicas": 2,
            "model": {"uri": "hf://Qwen/Qwen2-7B"},
            "template": {"containers": [{"name": "main", "image": "vllm", "resources": GPU}]},
        },
    }
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "qwen-kserve", "namespace": "ml", "uid": "llm-dep-uid"},
    }
    labels = {"app.kubernetes.io/component": "llminferenceservice-workload"}
    pods = [_pod(f"qwen-kserve-5c7d9-{i}", deployment, labels, gpus=8) for i in range(2)]
    assert _view(svc, None)["podGroups"] == []  # before: two phantom multi-node groups of 1
    live = _view(svc, pods)
    assert live["podGroups"] == [] and live["pods"]["current"] == 2


def test_describe_of_a_namespace_dump_counts_only_the_named_workload(tmp_path: Any) -> None:
    import io
    import json

    import yaml

    from workload_map.cli.main import main

    pt = _pytorch(None)
    tf = {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": {"name": "llm-eval", "namespace": "ml", "uid": "tf-uid-1"},
        "spec": {"tfReplicaSpecs": {"Worker": {"replicas": 2, "template": _template()}}},
    }
    tf_labels = {
        "training.kubeflow.org/job-name": "llm-eval",
        "training.kubeflow.org/operator-name": "tfjob-controller",
        "training.kubeflow.org/replica-type": "worker",
    }
    tf_pods = [_pod(f"llm-eval-worker-{i}", tf, tf_labels) for i in range(2)]
    for pod in tf_pods:  # a TFJob deleted meanwhile: its pods' chain leaves the dump
        pod["metadata"]["ownerReferences"][0]["uid"] = "tf-uid-0"
    dump = tmp_path / "dump.yaml"
    dump.write_text(
        yaml.safe_dump(
            {"apiVersion": "v1", "kind": "List", "items": [pt, tf, *_pytorch_pods(pt), *tf_pods]}
        )
    )
    out, err = io.StringIO(), io.StringIO()
    argv = ["describe", "-f", str(dump), "PyTorchJob/llm", "--pods", str(dump), "-o", "json"]
    code = main(argv, io.StringIO(""), out, err, environ={"HOME": str(tmp_path)})
    assert code == 0, err.getvalue()
    view = json.loads(out.getvalue())
    assert view["pods"]["current"] == 5
    assert sorted(view["unattributedPods"]) == ["llm-eval-worker-0", "llm-eval-worker-1"]
