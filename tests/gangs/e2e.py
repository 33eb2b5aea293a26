"""Helpers of the gang end-to-end tests: the operator with gangs on, workloads and their pods
created the way each kind's operator creates them (owners, labels, ``generateName``)."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from hack.localkube import operator as harness
from hack.localkube.plane import wait_until
from tests.gangs import custom
from tests.operator.live import OperatorProcess
from workload_map.gangs.config import ANNOTATION_GANG, LABEL_NAMESPACE_OPT_IN
from workload_map.kube.api import Api
from workload_map.kube.errors import ApiError

GPU = "nvidia.com/gpu"
NODE = {"cpu": "16", "memory": "64Gi", "pods": "110", GPU: "8"}
TEST_NS_LABEL = "wlmap-gangs-test"
NODE_LABEL = "wlmap-gangs-test/pool"
Obj = dict[str, Any]


def install_pod_webhook(api: Api, *, port: int, name: str, token: str, timeout: int = 3) -> None:
    """``{name}-mutating`` with the gang pod hook only, for namespaces labelled ``token``."""
    harness.install_pod_webhook(
        api, port=port, name=name, namespace_labels={TEST_NS_LABEL: token}, timeout=timeout
    )


def gang_operator(
    api: Api,
    kubeconfig: Path,
    namespace: str,
    workdir: Path,
    token: str,
    *,
    extra: list[str] | None = None,
    leader_elect: bool = False,
    install: bool = True,
) -> AbstractContextManager[OperatorProcess]:
    """The harness's gang operator, its pod webhook only for the namespaces of ``token``."""
    return harness.gang_operator(
        api,
        kubeconfig,
        namespace,
        workdir,
        f"wlmap-gangs-{token}",
        namespace_labels={TEST_NS_LABEL: token},
        extra=extra,
        leader_elect=leader_elect,
        install=install,
    )


def make_namespace(api: Api, token: str, *, opted_in: bool = True) -> str:
    labels = {TEST_NS_LABEL: token}
    if opted_in:
        labels[LABEL_NAMESPACE_OPT_IN] = "enabled"
    body = {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"generateName": "wlmap-gang-", "labels": labels},
    }
    return str(api.request("POST", "/api/v1/namespaces", body)["metadata"]["name"])


def ref(obj: Obj) -> Obj:
    meta = obj["metadata"]
    return {
        "apiVersion": obj["apiVersion"],
        "kind": obj["kind"],
        "name": meta["name"],
        "uid": meta["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }


def pod_spec(pool: str, gpus: int = 8) -> Obj:
    return {
        "terminationGracePeriodSeconds": 0,
        "nodeSelector": {NODE_LABEL: pool},
        "containers": [
            {
                "name": "main",
                "image": "registry.invalid/never-pulled",
                "resources": {"requests": {GPU: str(gpus)}, "limits": {GPU: str(gpus)}},
            }
        ],
    }


def template(pool: str, labels: dict[str, str] | None = None) -> Obj:
    return {"metadata": {"labels": dict(labels or {})}, "spec": pod_spec(pool)}


def create(api: Api, path: str, obj: Obj, *, timeout: float | None = None) -> Obj:
    return dict(api.request("POST", path, obj, timeout=timeout))


def create_pod(
    api: Api,
    ns: str,
    owner: Obj,
    *,
    name: str | None = None,
    generate: str | None = None,
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
    pool: str,
    timeout: float | None = None,
    dry_run: bool = False,
) -> Obj:
    """A pod of ``owner`` as its controller makes it; ``dry_run``: admitted (webhooks
    included) and answered, never stored."""
    meta: Obj = {"ownerReferences": [ref(owner)], "labels": dict(labels or {})}
    if name:
        meta["name"] = name
    else:
        meta["generateName"] = generate
    if annotations:
        meta["annotations"] = dict(annotations)
    body = {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": pod_spec(pool)}
    path = f"/api/v1/namespaces/{ns}/pods"
    if dry_run:
        return dict(api.request("POST", path, body, query=[("dryRun", "All")], timeout=timeout))
    return create(api, path, body, timeout=timeout)


def _job(api: Api, ns: str, owner: Obj, name: str, labels: dict[str, str], pool: str) -> Obj:
    body = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "labels": labels, "ownerReferences": [ref(owner)]},
        "spec": {
            "suspend": True,  # no job controller runs here; suspended keeps it inert anyway
            "template": {
                "metadata": {"labels": labels},
                "spec": {**pod_spec(pool), "restartPolicy": "Never"},
            },
        },
    }
    return create(api, f"/apis/batch/v1/namespaces/{ns}/jobs", body)


def _statefulset(
    api: Api, ns: str, owner: Obj, name: str, labels: dict[str, str], pool: str
) -> Obj:
    body = {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": name, "labels": labels, "ownerReferences": [ref(owner)]},
        "spec": {
            "replicas": 0,
            "serviceName": name,
            "selector": {"matchLabels": labels},
            "template": {"metadata": {"labels": labels}, "spec": pod_spec(pool)},
        },
    }
    return create(api, f"/apis/apps/v1/namespaces/{ns}/statefulsets", body)


# -- the kinds ------------------------------------------------------------------------------
def jobset(api: Api, ns: str, pool: str, workers: int = 2) -> tuple[Obj, Callable[[], list[Obj]]]:
    """A JobSet (driver 1 + workers ``workers``): Jobs, then their pods (generateName)."""
    body = {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {"name": "train"},
        "spec": {
            "replicatedJobs": [
                {
                    "name": "driver",
                    "replicas": 1,
                    "template": {
                        "spec": {"parallelism": 1, "completions": 1, "template": template(pool)}
                    },
                },
                {
                    "name": "workers",
                    "replicas": 1,
                    "template": {
                        "spec": {
                            "parallelism": workers,
                            "completions": workers,
                            "template": template(pool),
                        }
                    },
                },
            ]
        },
    }
    js = create(api, f"/apis/jobset.x-k8s.io/v1alpha2/namespaces/{ns}/jobsets", body)

    def pods() -> list[Obj]:
        out = []
        for rj, count in (("driver", 1), ("workers", workers)):
            labels = {
                "jobset.sigs.k8s.io/jobset-name": "train",
                "jobset.sigs.k8s.io/replicatedjob-name": rj,
                "jobset.sigs.k8s.io/job-index": "0",
                "jobset.sigs.k8s.io/jobset-uid": js["metadata"]["uid"],
            }
            job = _job(api, ns, js, f"train-{rj}-0", labels, pool)
            for k in range(count):
                out.append(
                    create_pod(
                        api,
                        ns,
                        job,
                        generate=f"train-{rj}-0-{k}-",
                        labels={**labels, "batch.kubernetes.io/job-name": f"train-{rj}-0"},
                        pool=pool,
                    )
                )
        return out

    return js, pods


def lws(
    api: Api, ns: str, pool: str, replicas: int = 2, size: int = 2
) -> tuple[Obj, Callable[[], list[Obj]]]:
    """A LeaderWorkerSet: leader StatefulSet → leader pods → worker StatefulSets → workers."""
    body = {
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "metadata": {"name": "serve"},
        "spec": {
            "replicas": replicas,
            "leaderWorkerTemplate": {"size": size, "workerTemplate": template(pool)},
        },
    }
    obj = create(api, f"/apis/leaderworkerset.x-k8s.io/v1/namespaces/{ns}/leaderworkersets", body)

    def pods() -> list[Obj]:
        base = {"leaderworkerset.sigs.k8s.io/name": "serve"}
        leader_sts = _statefulset(api, ns, obj, "serve", base, pool)
        out = []
        for g in range(replicas):
            labels = {
                **base,
                "leaderworkerset.sigs.k8s.io/group-index": str(g),
                "leaderworkerset.sigs.k8s.io/worker-index": "0",
            }
            leader = create_pod(api, ns, leader_sts, name=f"serve-{g}", labels=labels, pool=pool)
            out.append(leader)
            workers = _statefulset(
                api,
                ns,
                leader,
                f"serve-{g}",
                {**base, "leaderworkerset.sigs.k8s.io/group-index": str(g)},
                pool,
            )
            for w in range(1, size):
                out.append(
                    create_pod(
                        api,
                        ns,
                        workers,
                        name=f"serve-{g}-{w}",
                        labels={**labels, "leaderworkerset.sigs.k8s.io/worker-index": str(w)},
                        annotations={"leaderworkerset.sigs.k8s.io/leader-name": f"serve-{g}"},
                        pool=pool,
                    )
                )
        return out

    return obj, pods


def pytorchjob(
    api: Api, ns: str, pool: str, workers: int = 2
) -> tuple[Obj, Callable[[], list[Obj]]]:
    def replica(n: int) -> Obj:
        t = template(pool)
        t["spec"]["containers"][0]["name"] = "pytorch"
        return {"replicas": n, "restartPolicy": "OnFailure", "template": t}

    body = {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {"name": "ddp"},
        "spec": {"pytorchReplicaSpecs": {"Master": replica(1), "Worker": replica(workers)}},
    }
    obj = create(api, f"/apis/kubeflow.org/v1/namespaces/{ns}/pytorchjobs", body)

    def pods() -> list[Obj]:
        out = []
        for rtype, count in (("master", 1), ("worker", workers)):
            for i in range(count):
                labels = {
                    "training.kubeflow.org/job-name": "ddp",
                    "training.kubeflow.org/operator-name": "pytorchjob-controller",
                    "training.kubeflow.org/replica-type": rtype,
                    "training.kubeflow.org/replica-index": str(i),
                }
                out.append(
                    create_pod(api, ns, obj, name=f"ddp-{rtype}-{i}", labels=labels, pool=pool)
                )
        return out

    return obj, pods


def raycluster(
    api: Api, ns: str, pool: str, workers: int = 2
) -> tuple[Obj, Callable[[], list[Obj]]]:
    def ray_template() -> Obj:
        t = template(pool)
        t["spec"]["containers"][0]["name"] = "ray"
        return t

    body = {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": "rc"},
        "spec": {
            "headGroupSpec": {"rayStartParams": {}, "template": ray_template()},
            "workerGroupSpecs": [
                {
                    "groupName": "gpu",
                    "replicas": workers,
                    "minReplicas": workers,
                    "maxReplicas": workers,
                    "rayStartParams": {},
                    "template": ray_template(),
                }
            ],
        },
    }
    obj = create(api, f"/apis/ray.io/v1/namespaces/{ns}/rayclusters", body)

    def pods() -> list[Obj]:
        base = {"ray.io/cluster": "rc", "app.kubernetes.io/created-by": "kuberay-operator"}
        out = [
            create_pod(
                api,
                ns,
                obj,
                generate="rc-head-",
                labels={**base, "ray.io/node-type": "head", "ray.io/group": "headgroup"},
                pool=pool,
            )
        ]
        for _ in range(workers):
            out.append(
                create_pod(
                    api,
                    ns,
                    obj,
                    generate="rc-gpu-worker-",
                    labels={**base, "ray.io/node-type": "worker", "ray.io/group": "gpu"},
                    pool=pool,
                )
            )
        return out

    return obj, pods


PARTSET_CRD: Obj = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": f"partsets.{custom.GROUP}"},
    "spec": {
        "group": custom.GROUP,
        "scope": "Namespaced",
        "names": {
            "plural": "partsets",
            "singular": "partset",
            "kind": custom.KIND,
            "listKind": "PartSetList",
        },
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "x-kubernetes-preserve-unknown-fields": True,
                    }
                },
                "subresources": {"status": {}},
            }
        ],
    },
}


def partset(api: Api, ns: str, pool: str, replicas: int = 3) -> tuple[Obj, Callable[[], list[Obj]]]:
    """The custom kind (known only through a cluster Karta): pods through a ReplicaSet."""
    body = custom.partset("parts", [replicas], namespace=ns)
    body["spec"]["p0"]["template"]["spec"] = pod_spec(pool)
    obj = create(api, f"/apis/{custom.GROUP}/v1/namespaces/{ns}/partsets", body)

    def pods() -> list[Obj]:
        labels = {"example.wlmap.io/part": "p0"}
        rs_body = {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": {"name": "parts-p0", "labels": labels, "ownerReferences": [ref(obj)]},
            "spec": {
                "replicas": 0,
                "selector": {"matchLabels": labels},
                "template": {"metadata": {"labels": labels}, "spec": pod_spec(pool)},
            },
        }
        rs = create(api, f"/apis/apps/v1/namespaces/{ns}/replicasets", rs_body)
        return [
            create_pod(api, ns, rs, generate="parts-p0-", labels=labels, pool=pool)
            for _ in range(replicas)
        ]

    return obj, pods


KINDS: dict[str, tuple[Callable[..., tuple[Obj, Callable[[], list[Obj]]]], list[int]]] = {
    "jobset": (jobset, [3]),
    "lws": (lws, [2, 2]),
    "pytorchjob": (pytorchjob, [3]),
    "raycluster": (raycluster, [3]),
    "partset": (partset, [3]),
}


def part_jobs(api: Api, ns: str, owner: Obj, pool: str, sizes: list[int]) -> None:
    """One Job per part of a PartSet (``sizes``: pods per part), labelled with the
    part as its controller would make them; the in-tree Job controller makes the pods."""
    for i, size in enumerate(sizes):
        labels = {custom.PART_LABEL: f"p{i}"}
        create(
            api,
            f"/apis/batch/v1/namespaces/{ns}/jobs",
            {
                "apiVersion": "batch/v1",
                "kind": "Job",
                "metadata": {
                    "name": f"parts-p{i}",
                    "labels": labels,
                    "ownerReferences": [ref(owner)],
                },
                "spec": {
                    "parallelism": size,
                    "completions": size,
                    "backoffLimit": 0,
                    "template": {
                        "metadata": {"labels": labels},
                        "spec": {**pod_spec(pool), "restartPolicy": "Never"},
                    },
                },
            },
        )


def partset_with_jobs(api: Api, ns: str, pool: str, sizes: list[int]) -> float:
    """A PartSet of ``sizes`` with its Jobs (:func:`part_jobs`); when the workload was created
    (``time.monotonic()``)."""
    body = custom.partset("parts", sizes, namespace=ns)
    for i in range(len(sizes)):
        body["spec"][f"p{i}"]["template"]["spec"] = pod_spec(pool)
    partset = create(api, f"/apis/{custom.GROUP}/v1/namespaces/{ns}/partsets", body)
    created = time.monotonic()
    part_jobs(api, ns, partset, pool, sizes)
    return created


def pods_in(api: Api, ns: str) -> list[Obj]:
    return list(api.get(f"/api/v1/namespaces/{ns}/pods").get("items") or [])


def bound(api: Api, ns: str) -> list[str]:
    return sorted(p["metadata"]["name"] for p in pods_in(api, ns) if p["spec"].get("nodeName"))


def failed_scheduling(api: Api, ns: str) -> set[str]:
    """The pods of ``ns`` the scheduler reported it could not place (it tried: "stays unbound"
    is then observed, not timed)."""
    items = api.get(f"/api/v1/namespaces/{ns}/events").get("items") or []
    return {
        str(e["involvedObject"]["name"])
        for e in items
        if e.get("reason") == "FailedScheduling" and e["involvedObject"].get("kind") == "Pod"
    }


def podgroups(api: Api, ns: str) -> list[Obj]:
    try:
        return list(
            api.get(f"/apis/scheduling.k8s.io/v1beta1/namespaces/{ns}/podgroups").get("items") or []
        )
    except ApiError:
        return []


def wait(what: str, check: Callable[[], Any], timeout: float = 60.0) -> Any:
    """``check()``'s first truthy value within ``timeout`` seconds (the harness's poll, which
    fails naming ``what``)."""
    return wait_until(check, what, timeout)


def token() -> str:
    return uuid.uuid4().hex[:8]


__all__ = ["ANNOTATION_GANG"]


def prepare_plane(kube: Any, *crds: Any) -> Any:
    """The Karta CRD, the custom PartSet kind, its cluster Karta and ``crds`` (objects or
    files) on ``kube``, which it returns: a gang module's ``plane`` fixture. The Karta is in
    place before the module's operator starts (the custom kind is known only through it)."""
    root = Path(__file__).resolve().parents[2]
    for crd in (*crds, PARTSET_CRD, root / "deploy/crds/kartas.run.ai.yaml"):
        kube.install_crd(crd)
    kube.apply(custom.karta(1))
    return kube


def partset_gpu(api: Api, ns: str, replicas: int, pool: str) -> Obj:
    body = custom.partset("parts", [replicas], namespace=ns)
    body["spec"]["p0"]["template"]["spec"] = pod_spec(pool)
    return dict(api.request("POST", f"/apis/{custom.GROUP}/v1/namespaces/{ns}/partsets", body))


def part_pod(api: Api, ns: str, owner: Obj, pool: str) -> Obj:
    return create_pod(
        api, ns, owner, generate="parts-p0-", labels={"example.wlmap.io/part": "p0"}, pool=pool
    )


def min_counts(api: Api, ns: str) -> list[int]:
    return sorted(g["spec"]["schedulingPolicy"]["gang"]["minCount"] for g in podgroups(api, ns))


def review(port: int, pod: Obj, namespace: str) -> Obj:
    """One AdmissionReview sent straight to a replica's webhook (what the API server sends)."""
    import json
    import ssl
    import urllib.request

    body = {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {"uid": token(), "operation": "CREATE", "namespace": namespace, "object": pod},
    }
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    request = urllib.request.Request(
        f"https://127.0.0.1:{port}/mutate-v1-pod-gangs",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, context=ctx, timeout=10) as answer:
        return dict(json.loads(answer.read()))
