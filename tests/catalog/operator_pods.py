"""Pods as each operator would create them, and gang sizes as each scheduler peer computes them.

Both halves are written from the upstream projects' behaviour (PEERS.md §1.1: KAI's per-kind
groupers, Kueue's PodSets, Volcano's PodGroups), independently of our definitions, so a test can
hold the definitions' gangs against them. ``operator_for(obj)`` gives (pod maker, gang rule): the
maker returns the pods (names, labels, annotations, controller owner) the operator would create
for ``obj`` over its life; those it creates only once the workload runs (mpi-operator's launcher
under ``WaitForWorkersReady``, Spark executors, the RayJob submitter) carry the annotation
:data:`LATE`, and :func:`early_pods` leaves them out: the pods that can exist before a gang is
admitted. The gang rule returns the gang sizes a peer scheduler gives the pods, one per gang.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Obj = dict[str, Any]


#: on a generated pod: the operator creates it only after the workload's gang runs
LATE = "operator-pods.test/created-after-admission"


def _late(pod: Obj) -> Obj:
    pod["metadata"]["annotations"][LATE] = "true"
    return pod


def early_pods(obj: Obj) -> list[Obj]:
    """The pods the operator creates before the workload runs (all a gang can wait for)."""
    maker = operator_for(obj)
    assert maker is not None
    return [p for p in maker[0](obj) if not is_late(p)]


def is_late(pod: Obj) -> bool:
    return LATE in ((pod.get("metadata") or {}).get("annotations") or {})


def _pod(obj: Obj, name: str, labels: dict[str, str], **annotations: str) -> Obj:
    meta = obj.get("metadata") or {}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": meta.get("namespace", "default"),
            "uid": f"uid-{name}",
            "labels": labels,
            "annotations": annotations,
            "ownerReferences": [
                {
                    "apiVersion": obj["apiVersion"],
                    "kind": obj["kind"],
                    "name": _name(obj),
                    "uid": meta.get("uid", "owner-uid"),
                    "controller": True,
                }
            ],
        },
        "spec": {"containers": [{"name": "main", "image": "busybox"}]},
        "status": {"phase": "Pending"},
    }


def _name(obj: Obj) -> str:
    meta = obj.get("metadata") or {}
    return str(meta.get("name") or meta.get("generateName", "x-").rstrip("-"))


def _min_parallel(job_spec: Obj) -> int:
    parallelism = job_spec.get("parallelism", 1)
    return int(min(parallelism, job_spec.get("completions", parallelism)))


# -- Kubeflow training operator (v1) and mpi-operator (v2beta1) ----------------------------------
_REPLICA_SPECS = {
    "PyTorchJob": "pytorchReplicaSpecs",
    "TFJob": "tfReplicaSpecs",
    "XGBoostJob": "xgbReplicaSpecs",
    "JAXJob": "jaxReplicaSpecs",
    "PaddleJob": "paddleReplicaSpecs",
    "MPIJob": "mpiReplicaSpecs",
}


def _kubeflow_pods(obj: Obj) -> list[Obj]:
    specs = obj["spec"][_REPLICA_SPECS[obj["kind"]]]
    role_label = (
        "training.kubeflow.org/job-role"
        if obj["apiVersion"].endswith("v2beta1")
        else "training.kubeflow.org/replica-type"
    )
    pods = []
    for rtype, spec in specs.items():
        for i in range(spec.get("replicas", 1)):
            labels = {
                "training.kubeflow.org/job-name": _name(obj),
                role_label: rtype.lower(),
                "training.kubeflow.org/replica-index": str(i),
            }
            pod = _pod(obj, f"{_name(obj)}-{rtype.lower()}-{i}", labels)
            pods.append(_late(pod) if _launcher_waits(obj) and rtype == "Launcher" else pod)
    return pods


def _launcher_waits(obj: Obj) -> bool:
    """mpi-operator v2: the launcher is created only once every worker is ready."""
    return (
        obj["kind"] == "MPIJob"
        and (obj.get("spec") or {}).get("launcherCreationPolicy") == "WaitForWorkersReady"
    )


def _kubeflow_gang(obj: Obj) -> list[int]:
    """KAI (pytorch / kubeflow distributed / mpi groupers): schedulingPolicy.minAvailable, else
    (PyTorchJob) elasticPolicy.minReplicas, else every replica; the mpi grouper subtracts the
    launcher while it does not exist under WaitForWorkersReady."""
    spec = obj["spec"]
    specs = spec[_REPLICA_SPECS[obj["kind"]]]
    minimum = ((spec.get("runPolicy") or {}).get("schedulingPolicy") or {}).get("minAvailable")
    if minimum is None and obj["kind"] == "PyTorchJob":
        minimum = (spec.get("elasticPolicy") or {}).get("minReplicas")
    if minimum is None:
        minimum = sum(s.get("replicas", 1) for s in specs.values())
    if _launcher_waits(obj):
        minimum -= (specs.get("Launcher") or {}).get("replicas", 1)
    return [minimum]


# -- JobSet, Job, LeaderWorkerSet -------------------------------------------------------------
def _jobset_pods(obj: Obj) -> list[Obj]:
    pods = []
    for rj in (obj.get("spec") or {}).get("replicatedJobs") or []:
        for j in range(rj.get("replicas", 1)):
            for p in range(_min_parallel((rj.get("template") or {}).get("spec") or {})):
                labels = {
                    "jobset.sigs.k8s.io/jobset-name": _name(obj),
                    "jobset.sigs.k8s.io/replicatedjob-name": rj["name"],
                    "jobset.sigs.k8s.io/job-index": str(j),
                    "batch.kubernetes.io/job-name": f"{_name(obj)}-{rj['name']}-{j}",
                }
                pods.append(_pod(obj, f"{_name(obj)}-{rj['name']}-{j}-{p}", labels))
    return pods


def _jobset_gang(obj: Obj) -> list[int]:
    """KAI jobset grouper: every replica of every replicated job (MinSubGroup = all), unless
    kai.scheduler/batch-min-member says otherwise."""
    annotations = (obj.get("metadata") or {}).get("annotations") or {}
    if "kai.scheduler/batch-min-member" in annotations:
        return [int(annotations["kai.scheduler/batch-min-member"])]
    return [
        sum(
            rj.get("replicas", 1) * _min_parallel((rj.get("template") or {}).get("spec") or {})
            for rj in (obj.get("spec") or {}).get("replicatedJobs") or []
        )
    ]


def _job_pods(obj: Obj) -> list[Obj]:
    labels = {"batch.kubernetes.io/job-name": _name(obj), "job-name": _name(obj)}
    return [_pod(obj, f"{_name(obj)}-{i}", labels) for i in range(_min_parallel(obj["spec"]))]


def _job_gang(obj: Obj) -> list[int]:
    """KAI job grouper: 1 unless kai.scheduler/batch-min-member says otherwise."""
    annotations = (obj.get("metadata") or {}).get("annotations") or {}
    return [int(annotations.get("kai.scheduler/batch-min-member", 1))]


def _lws_pods(obj: Obj) -> list[Obj]:
    spec = obj["spec"]
    size = spec["leaderWorkerTemplate"].get("size", 1)
    pods = []
    for g in range(spec.get("replicas", 1)):
        leader = f"{_name(obj)}-{g}"
        for w in range(size):
            labels = {
                "leaderworkerset.sigs.k8s.io/name": _name(obj),
                "leaderworkerset.sigs.k8s.io/group-index": str(g),
                "leaderworkerset.sigs.k8s.io/worker-index": str(w),
            }
            if w == 0:
                pods.append(_pod(obj, leader, labels))
            else:
                annotations = {"leaderworkerset.sigs.k8s.io/leader-name": leader}
                worker = _pod(obj, f"{leader}-{w}", labels, **annotations)
                # LeaderReady: the workers' StatefulSet is created once the leader is Ready
                pods.append(_late(worker) if _leader_ready(obj) else worker)
    return pods


def _leader_ready(obj: Obj) -> bool:
    return bool(obj["spec"].get("startupPolicy") == "LeaderReady")


def _lws_gang(obj: Obj) -> list[int]:
    """KAI lws grouper / Kueue: one gang per group, of `size` pods; under LeaderReady KAI's
    grouper gives a leader that is not Ready a gang of 1 (the workers do not exist yet)."""
    spec = obj["spec"]
    size = 1 if _leader_ready(obj) else spec["leaderWorkerTemplate"].get("size", 1)
    return [size] * spec.get("replicas", 1)


# -- KubeRay ----------------------------------------------------------------------------------
def _ray_cluster_spec(obj: Obj) -> Obj:
    spec: Obj = obj["spec"]
    if obj["kind"] == "RayJob":
        return spec.get("rayClusterSpec") or {}
    if obj["kind"] == "RayService":
        return spec.get("rayClusterConfig") or {}
    return spec


def _worker_count(group: Obj, *, minimum: bool) -> int:
    if group.get("suspend"):
        return 0
    hosts = group.get("numOfHosts", 1)
    if minimum and group.get("minReplicas"):
        return int(group["minReplicas"]) * hosts
    return int(group.get("replicas", group.get("minReplicas", 0))) * hosts


def _ray_pods(obj: Obj) -> list[Obj]:
    spec = _ray_cluster_spec(obj)
    base = {"ray.io/cluster": _name(obj), "app.kubernetes.io/created-by": "kuberay-operator"}
    pods = [
        _pod(
            obj,
            f"{_name(obj)}-head",
            {**base, "ray.io/node-type": "head", "ray.io/group": "headgroup"},
        )
    ]
    for group in spec.get("workerGroupSpecs") or []:
        for i in range(_worker_count(group, minimum=False)):
            labels = {**base, "ray.io/node-type": "worker", "ray.io/group": group["groupName"]}
            pods.append(_pod(obj, f"{_name(obj)}-{group['groupName']}-{i}", labels))
    if obj["kind"] == "RayJob" and obj["spec"].get("submissionMode", "K8sJobMode") == "K8sJobMode":
        pods.append(
            _late(
                _pod(obj, f"{_name(obj)}-submitter", {"batch.kubernetes.io/job-name": _name(obj)})
            )
        )
    return pods


def _ray_gang(obj: Obj) -> list[int]:
    """KAI ray grouper: the head + Σ worker groups' minimum (minReplicas, else replicas) x hosts."""
    spec = _ray_cluster_spec(obj)
    return [1 + sum(_worker_count(g, minimum=True) for g in spec.get("workerGroupSpecs") or [])]


# -- Grove --------------------------------------------------------------------------------------
def _grove_groups(obj: Obj) -> dict[str, Obj]:
    out: dict[str, Obj] = {}
    for sg in obj["spec"]["template"].get("podCliqueScalingGroups") or []:
        for clique in sg.get("cliqueNames") or []:
            out[clique] = sg
    return out


def _grove_pods(obj: Obj) -> list[Obj]:
    pods = []
    groups = _grove_groups(obj)
    for r in range(obj["spec"].get("replicas", 1)):
        for clique in obj["spec"]["template"]["cliques"]:
            sg = groups.get(clique["name"])
            base = {
                "app.kubernetes.io/part-of": _name(obj),
                "grove.io/podcliqueset-replica-index": str(r),
            }
            for s in range((sg or {}).get("replicas", 1)):
                labels = dict(base)
                if sg is None:
                    labels["grove.io/podclique"] = f"{_name(obj)}-{r}-{clique['name']}"
                else:
                    pcsg = f"{_name(obj)}-{r}-{sg['name']}"
                    labels["grove.io/podcliquescalinggroup"] = pcsg
                    labels["grove.io/podcliquescalinggroup-replica-index"] = str(s)
                    labels["grove.io/podclique"] = f"{pcsg}-{s}-{clique['name']}"
                for i in range(clique["spec"].get("replicas", 1)):
                    pods.append(_pod(obj, f"{labels['grove.io/podclique']}-{i}", labels))
    return pods


def _grove_gang(obj: Obj) -> list[int]:
    """Grove's base PodGang per PodCliqueSet replica (what KAI's grove grouper reads):
    every clique's minAvailable, x its scaling group's minAvailable."""
    groups = _grove_groups(obj)
    per_replica = 0
    for clique in obj["spec"]["template"]["cliques"]:
        spec = clique["spec"]
        sg = groups.get(clique["name"])
        per_replica += spec.get("minAvailable", spec.get("replicas", 1)) * (
            1 if sg is None else sg.get("minAvailable", sg.get("replicas", 1))
        )
    return [per_replica] * obj["spec"].get("replicas", 1)


# -- Volcano, Spark, AppWrapper -----------------------------------------------------------------
def _volcano_pods(obj: Obj) -> list[Obj]:
    pods = []
    for task in obj["spec"]["tasks"]:
        for i in range(task.get("replicas", 1)):
            labels = {"volcano.sh/job-name": _name(obj), "volcano.sh/task-spec": task["name"]}
            pods.append(
                _pod(
                    obj,
                    f"{_name(obj)}-{task['name']}-{i}",
                    labels,
                    **{"volcano.sh/task-spec": task["name"]},
                )
            )
    return pods


def _volcano_gang(obj: Obj) -> list[int]:
    """Volcano's PodGroup: spec.minAvailable, else Σ tasks' minAvailable (else replicas)."""
    spec = obj["spec"]
    if "minAvailable" in spec:
        return [spec["minAvailable"]]
    return [sum(t.get("minAvailable", t.get("replicas", 1)) for t in spec["tasks"])]


def _spark_pods(obj: Obj) -> list[Obj]:
    spec = obj["spec"]
    base = {"sparkoperator.k8s.io/app-name": _name(obj)}
    pods = [_pod(obj, f"{_name(obj)}-driver", {**base, "spark-role": "driver"})]
    dyn = spec.get("dynamicAllocation") or {}
    count = (
        dyn.get("initialExecutors", dyn.get("minExecutors", 0))
        if dyn.get("enabled")
        else (spec.get("executor") or {}).get("instances", 1)
    )
    for i in range(count):  # the running driver asks for its executors
        labels = {**base, "spark-role": "executor"}
        pods.append(_late(_pod(obj, f"{_name(obj)}-exec-{i + 1}", labels)))
    return pods


def _spark_gang(obj: Obj) -> list[int]:
    """KAI's spark grouper and Volcano's Spark integration: the driver (minMember 1; Volcano
    reserves the executors through minResources)."""
    return [1]


# -- Knative, NIM ---------------------------------------------------------------------------------
def _knative_scale(obj: Obj) -> tuple[int, int]:
    """(initial pods, min-scale) of the Service's current revision."""
    annotations = ((obj["spec"].get("template") or {}).get("metadata") or {}).get(
        "annotations"
    ) or {}
    minimum = int(annotations.get("autoscaling.knative.dev/min-scale", 0))
    initial = int(annotations.get("autoscaling.knative.dev/initial-scale", 1))
    return max(initial, minimum), minimum


def _knative_pods(obj: Obj) -> list[Obj]:
    """The revision's deployment starts at initial-scale (default 1), at least min-scale."""
    revision = f"{_name(obj)}-00001"
    labels = {
        "serving.knative.dev/service": _name(obj),
        "serving.knative.dev/configuration": _name(obj),
        "serving.knative.dev/revision": revision,
    }
    count = _knative_scale(obj)[0]
    return [_pod(obj, f"{revision}-deployment-{i}", labels) for i in range(count)]


def _knative_gang(obj: Obj) -> list[int]:
    """KAI's knative grouper (gang mode): one group per revision, min-scale, else 1."""
    return [_knative_scale(obj)[1] or 1]


def _nim_pods(obj: Obj) -> list[Obj]:
    spec = obj["spec"]
    scale = spec.get("scale") or {}
    replicas = spec.get("replicas", 1)
    if scale.get("enabled"):
        replicas = (scale.get("hpa") or {}).get("minReplicas", replicas)
    multi = spec.get("multiNode")
    if multi is None:
        labels = {"app": _name(obj), "app.kubernetes.io/name": _name(obj)}
        return [_pod(obj, f"{_name(obj)}-7d9f8-{i}", labels) for i in range(replicas)]
    size = (multi.get("parallelism") or {}).get("pipeline", 1)
    pods = []
    for g in range(replicas):
        for w in range(size):
            labels = {
                "leaderworkerset.sigs.k8s.io/name": _name(obj),
                "leaderworkerset.sigs.k8s.io/group-index": str(g),
                "leaderworkerset.sigs.k8s.io/worker-index": str(w),
            }
            name = f"{_name(obj)}-{g}" + (f"-{w}" if w else "")
            pods.append(_pod(obj, name, labels))
    return pods


def _nim_gang(obj: Obj) -> list[int]:
    """KAI's lws grouper on the LeaderWorkerSet the NIM operator creates: `pipeline` per group.
    A Deployment-mode service gets KAI's deployment grouper: a group of 1 per pod, no gang."""
    spec = obj["spec"]
    multi = spec.get("multiNode")
    if multi is None:
        return []
    scale = spec.get("scale") or {}
    replicas = spec.get("replicas", 1)
    if scale.get("enabled"):
        replicas = (scale.get("hpa") or {}).get("minReplicas", replicas)
    return [(multi.get("parallelism") or {}).get("pipeline", 1)] * replicas


# -- single-pod kinds -------------------------------------------------------------------------
def _single_pod(label: str | None, suffix: str) -> Callable[[Obj], list[Obj]]:
    def make(obj: Obj) -> list[Obj]:
        labels = {label: _name(obj)} if label else {}
        return [_pod(obj, f"{_name(obj)}{suffix}", labels)]

    return make


def _bare_pod(obj: Obj) -> list[Obj]:
    return [obj]


def _vm_pods(obj: Obj) -> list[Obj]:
    spec = obj.get("spec") or {}
    strategy = spec.get("runStrategy") or ("Always" if spec.get("running") else "Halted")
    if strategy == "Halted":
        return []
    return _single_pod("vm.kubevirt.io/name", "-launcher")(obj)


def _one_gang(obj: Obj) -> list[int]:
    """KAI's default (and notebook) grouper: one group of 1."""
    return [1]


def _vm_gang(obj: Obj) -> list[int]:
    return [1] if _vm_pods(obj) else []


def _devworkspace_pods(obj: Obj) -> list[Obj]:
    """The DevWorkspace operator's Deployment of one pod while started, none while stopped."""
    if (obj.get("spec") or {}).get("started") is not True:
        return []
    return _single_pod("controller.devfile.io/devworkspace_name", "-7d9f8c-abcde")(obj)


def _devworkspace_gang(obj: Obj) -> list[int]:
    return [1] if _devworkspace_pods(obj) else []


def _llmisvc_pods(obj: Obj) -> list[Obj]:
    """KServe: a Deployment of `replicas` pods, or with `worker` a LeaderWorkerSet of
    `replicas` groups of `parallelism.pipeline` pods (leader + workers)."""
    spec = obj["spec"]
    replicas = spec.get("replicas", 1)
    lws = f"{_name(obj)}-kserve-mn"
    if spec.get("worker") is None:
        labels = {"app.kubernetes.io/component": "llminferenceservice-workload"}
        return [_pod(obj, f"{_name(obj)}-kserve-7f9c-{i}", labels) for i in range(replicas)]
    size = _kserve_group_size(spec.get("parallelism") or {})
    pods = []
    for g in range(replicas):
        for w in range(size):
            role = "llminferenceservice-workload" + ("" if w == 0 else "-worker")
            labels = {
                "app.kubernetes.io/component": role,
                "leaderworkerset.sigs.k8s.io/name": lws,
                "leaderworkerset.sigs.k8s.io/group-index": str(g),
                "leaderworkerset.sigs.k8s.io/worker-index": str(w),
            }
            pods.append(_pod(obj, f"{lws}-{g}" + (f"-{w}" if w else ""), labels))
    return pods


def _llmisvc_gang(obj: Obj) -> list[int]:
    """KAI's lws grouper on KServe's LeaderWorkerSet (Deployment replicas: no gang)."""
    spec = obj["spec"]
    if spec.get("worker") is None:
        return []
    return [_kserve_group_size(spec.get("parallelism") or {})] * spec.get("replicas", 1)


def _kserve_group_size(parallelism: Obj) -> int:
    """KServe's LeaderWorkerSet size: data / dataLocal with data parallelism, else pipeline."""
    if parallelism.get("data", 0) > 0:
        return int(parallelism["data"] // parallelism.get("dataLocal", 1))
    return int(parallelism.get("pipeline") or 1)


# -- Kubeflow Trainer, AppWrapper --------------------------------------------------------------
def _trainjob_pods(obj: Obj) -> list[Obj]:
    """The trainer's JobSet (named as the TrainJob) runs `numNodes` pods of its `node` job."""
    nodes = ((obj.get("spec") or {}).get("trainer") or {}).get("numNodes", 1)
    labels = {
        "jobset.sigs.k8s.io/jobset-name": _name(obj),
        "jobset.sigs.k8s.io/replicatedjob-name": "node",
        "jobset.sigs.k8s.io/job-index": "0",
    }
    return [_pod(obj, f"{_name(obj)}-node-0-{i}", labels) for i in range(nodes)]


def _trainjob_gang(obj: Obj) -> list[int]:
    """KAI has no TrainJob plugin; the JobSet it creates is gang-scheduled whole."""
    return [((obj.get("spec") or {}).get("trainer") or {}).get("numNodes", 1)]


def _inferred_podsets(template: Obj) -> list[Obj]:
    """The pod sets AppWrapper infers for the well-known kinds it wraps (no `podSets` given)."""
    kind, spec = template.get("kind"), template.get("spec") or {}
    if kind == "Pod":
        return [{"replicas": 1}]
    if kind in ("Deployment", "StatefulSet", "ReplicaSet"):
        return [{"replicas": spec.get("replicas", 1)}]
    if kind == "Job":
        return [{"replicas": spec.get("parallelism", 1)}]
    if kind == "PyTorchJob":
        return [{"replicas": r.get("replicas", 1)} for r in spec["pytorchReplicaSpecs"].values()]
    if kind == "JobSet":
        return [
            {"replicas": rj.get("replicas", 1) * _min_parallel(rj["template"]["spec"])}
            for rj in spec.get("replicatedJobs") or []
        ]
    return []


def _appwrapper_pods(obj: Obj) -> list[Obj]:
    """Each wrapped component's pod sets (declared, else inferred): pods labelled with the set."""
    pods = []
    for c, component in enumerate((obj.get("spec") or {}).get("components") or []):
        podsets = component.get("podSets") or _inferred_podsets(component.get("template") or {})
        for s, podset in enumerate(podsets):
            labels = {"workload.codeflare.dev/appwrapper": _name(obj)}
            labels["workload.codeflare.dev/podset"] = f"{c}-{s}"
            for i in range(podset.get("replicas", 1)):
                pods.append(_pod(obj, f"{_name(obj)}-{c}-{s}-{i}", labels))
    return pods


def _appwrapper_gang(obj: Obj) -> list[int]:
    """The AppWrapper controller (with Kueue) admits and starts every wrapped pod together."""
    return [len(_appwrapper_pods(obj))]


PodMaker = Callable[[Obj], list[Obj]]
GangRule = Callable[[Obj], list[int]]

OPERATORS: dict[str, tuple[PodMaker, GangRule]] = {
    **{kind: (_kubeflow_pods, _kubeflow_gang) for kind in _REPLICA_SPECS},
    "JobSet": (_jobset_pods, _jobset_gang),
    "Job": (_job_pods, _job_gang),
    "LeaderWorkerSet": (_lws_pods, _lws_gang),
    "RayCluster": (_ray_pods, _ray_gang),
    "RayJob": (_ray_pods, _ray_gang),
    "RayService": (_ray_pods, _ray_gang),
    "PodCliqueSet": (_grove_pods, _grove_gang),
    "SparkApplication": (_spark_pods, _spark_gang),
    "Service": (_knative_pods, _knative_gang),
    "NIMService": (_nim_pods, _nim_gang),
    "Pod": (_bare_pod, _one_gang),
    "Notebook": (_single_pod("notebook-name", "-0"), _one_gang),
    "Sandbox": (_single_pod(None, ""), _one_gang),
    "TaskRun": (_single_pod("tekton.dev/taskRun", "-pod"), _one_gang),
    "VirtualMachineInstance": (_single_pod("kubevirt.io/domain", "-launcher"), _one_gang),
    "VirtualMachine": (_vm_pods, _vm_gang),
    "NIMCache": (_single_pod(None, "-job"), _one_gang),
    "DevWorkspace": (_devworkspace_pods, _devworkspace_gang),
    "TrainJob": (_trainjob_pods, _trainjob_gang),
    "AppWrapper": (_appwrapper_pods, _appwrapper_gang),
    "LLMInferenceService": (_llmisvc_pods, _llmisvc_gang),
}
VOLCANO = (_volcano_pods, _volcano_gang)


#: kinds whose name is not unique across API groups: the group they mean here
_GROUP_OF = {
    "Job": "batch",
    "Service": "serving.knative.dev",
    "Pod": "",
}


def operator_for(obj: Obj) -> tuple[PodMaker, GangRule] | None:
    api_version = obj["apiVersion"]
    if api_version.startswith("batch.volcano.sh/"):
        return VOLCANO
    group = api_version.rpartition("/")[0] if "/" in api_version else ""
    if obj["kind"] in _GROUP_OF and _GROUP_OF[obj["kind"]] != group:
        return None
    return OPERATORS.get(obj["kind"])
