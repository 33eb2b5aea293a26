"""Owner chains the way each kind's operator builds them, for the admission tests.

JobSet: JobSet → Job ``<js>-<rj>-<i>`` → pods (``generateName`` ``<job>-``).
LeaderWorkerSet: LWS → leader StatefulSet ``<lws>`` → leader pod ``<lws>-<g>`` → worker
StatefulSet ``<lws>-<g>`` → worker pods ``<lws>-<g>-<w>``.
PyTorchJob and RayCluster: the pods are the job's own.
"""

from __future__ import annotations

import uuid
from typing import Any

Obj = dict[str, Any]


def ref(obj: Obj) -> Obj:
    return {
        "apiVersion": obj["apiVersion"],
        "kind": obj["kind"],
        "name": obj["metadata"]["name"],
        "uid": obj["metadata"]["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }


def owned(
    api_version: str,
    kind: str,
    name: str,
    owner: Obj,
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
) -> Obj:
    meta: Obj = {
        "name": name,
        "namespace": owner["metadata"]["namespace"],
        "uid": str(uuid.uuid4()),
        "ownerReferences": [ref(owner)],
        "labels": dict(labels or {}),
    }
    if annotations:
        meta["annotations"] = dict(annotations)
    return {"apiVersion": api_version, "kind": kind, "metadata": meta}


def new_pod(
    owner: Obj,
    *,
    name: str | None = None,
    generate_name: str | None = None,
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
    scheduler: str | None = None,
    gpus: int = 0,
) -> Obj:
    """A pod as its controller sends it to CREATE: no uid, maybe only ``generateName``."""
    meta: Obj = {"namespace": owner["metadata"]["namespace"], "ownerReferences": [ref(owner)]}
    if name:
        meta["name"] = name
    if generate_name:
        meta["generateName"] = generate_name
    if labels:
        meta["labels"] = dict(labels)
    if annotations:
        meta["annotations"] = dict(annotations)
    container: Obj = {"name": "main", "image": "busybox"}
    if gpus:
        container["resources"] = {
            "requests": {"nvidia.com/gpu": str(gpus)},
            "limits": {"nvidia.com/gpu": str(gpus)},
        }
    spec: Obj = {"containers": [container]}
    if scheduler:
        spec["schedulerName"] = scheduler
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def jobset_chain(jobset: Obj) -> tuple[list[Obj], list[Obj]]:
    """(Jobs, pods) of a JobSet, as the JobSet and Job controllers create them."""
    name = jobset["metadata"]["name"]
    jobs, pods = [], []
    for rj in jobset["spec"]["replicatedJobs"]:
        template = rj["template"]["spec"]
        per_job = min(template.get("parallelism", 1), template.get("completions", 1))
        for i in range(rj.get("replicas", 1)):
            labels = {
                "jobset.sigs.k8s.io/jobset-name": name,
                "jobset.sigs.k8s.io/replicatedjob-name": rj["name"],
                "jobset.sigs.k8s.io/job-index": str(i),
            }
            job = owned("batch/v1", "Job", f"{name}-{rj['name']}-{i}", jobset, labels)
            jobs.append(job)
            spec = template["template"].get("spec") or {}
            for k in range(per_job):
                pod = new_pod(
                    job,
                    generate_name=f"{job['metadata']['name']}-{k}-",
                    labels={**labels, "batch.kubernetes.io/job-name": job["metadata"]["name"]},
                    scheduler=spec.get("schedulerName"),
                )
                pods.append(pod)
    return jobs, pods


def lws_chain(lws: Obj) -> tuple[list[Obj], list[Obj]]:
    """(StatefulSets and leader pods, worker pods) of a LeaderWorkerSet."""
    name = lws["metadata"]["name"]
    size = lws["spec"]["leaderWorkerTemplate"].get("size", 1)
    base = {"leaderworkerset.sigs.k8s.io/name": name}
    leader_sts = owned("apps/v1", "StatefulSet", name, lws, base)
    owners, pods = [leader_sts], []
    for g in range(lws["spec"].get("replicas", 1)):
        labels = {
            **base,
            "leaderworkerset.sigs.k8s.io/group-index": str(g),
            "leaderworkerset.sigs.k8s.io/worker-index": "0",
        }
        leader = new_pod(leader_sts, name=f"{name}-{g}", labels=labels)
        pods.append(leader)
        # once created, the leader pod is an owner (of its group's worker StatefulSet)
        created = {**leader, "metadata": {**leader["metadata"], "uid": str(uuid.uuid4())}}
        owners.append(created)
        workers = owned("apps/v1", "StatefulSet", f"{name}-{g}", created, base)
        owners.append(workers)
        for w in range(1, size):
            pods.append(
                new_pod(
                    workers,
                    name=f"{name}-{g}-{w}",
                    labels={**labels, "leaderworkerset.sigs.k8s.io/worker-index": str(w)},
                    annotations={"leaderworkerset.sigs.k8s.io/leader-name": f"{name}-{g}"},
                )
            )
    return owners, pods
