"""Synthetic clusters for the benchmarks: workloads of mixed catalog kinds with their pods.

``cluster(n, each)`` gives ``n`` top-level workloads (40% Jobs, 30% Deployments through a
ReplicaSet, 30% JobSets through two Jobs), ``each`` pods apiece, spread over 50 namespaces,
with owner references by uid as their controllers write them.
"""

from __future__ import annotations

from typing import Any

__all__ = ["cluster"]


def cluster(n: int, each: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(workload-and-link objects, pods)."""

    def pod(name, ns, owner, gpus):
        return {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": name,
                "namespace": ns,
                "uid": "p-" + name,
                "resourceVersion": "1",
                "labels": {"app": owner["metadata"]["name"]},
                "ownerReferences": [
                    {
                        "apiVersion": owner["apiVersion"],
                        "kind": owner["kind"],
                        "name": owner["metadata"]["name"],
                        "uid": owner["metadata"]["uid"],
                        "controller": True,
                    }
                ],
            },
            "spec": {
                "nodeName": "node-1",
                "containers": [
                    {
                        "name": "c",
                        "resources": {
                            "limits": {"nvidia.com/gpu": str(gpus), "cpu": "2", "memory": "8Gi"}
                        },
                    }
                ],
            },
            "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]},
        }

    def template(gpus):
        return {
            "spec": {
                "containers": [
                    {
                        "name": "c",
                        "image": "x",
                        "resources": {
                            "limits": {"nvidia.com/gpu": str(gpus), "cpu": "2", "memory": "8Gi"}
                        },
                    }
                ]
            }
        }

    def ref(obj):
        m = obj["metadata"]
        return {
            "apiVersion": obj["apiVersion"],
            "kind": obj["kind"],
            "name": m["name"],
            "uid": m["uid"],
            "controller": True,
        }

    workloads: list[dict[str, Any]] = []
    pods: list[dict[str, Any]] = []
    for i in range(n):
        ns = f"team-{i % 50}"
        name = f"w{i}"
        meta = {"name": name, "namespace": ns, "uid": f"u-{i}", "resourceVersion": "1"}
        kind = i % 10
        if kind < 4:
            job = {
                "apiVersion": "batch/v1",
                "kind": "Job",
                "metadata": meta,
                "spec": {"parallelism": each, "completions": each, "template": template(1)},
                "status": {"active": each},
            }
            workloads.append(job)
            pods += [pod(f"{name}-{k}", ns, job, 1) for k in range(each)]
        elif kind < 7:
            dep = {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": meta,
                "spec": {"replicas": each, "template": template(1)},
                "status": {"replicas": each, "readyReplicas": each},
            }
            rs_meta = {
                "name": name + "-rs",
                "namespace": ns,
                "uid": f"rs-{i}",
                "resourceVersion": "1",
                "ownerReferences": [ref(dep)],
            }
            rs = {
                "apiVersion": "apps/v1",
                "kind": "ReplicaSet",
                "metadata": rs_meta,
                "spec": {"replicas": each, "template": template(1)},
            }
            workloads += [dep, rs]
            pods += [pod(f"{name}-{k}", ns, rs, 1) for k in range(each)]
        else:
            half = each // 2
            js = {
                "apiVersion": "jobset.x-k8s.io/v1alpha2",
                "kind": "JobSet",
                "metadata": meta,
                "spec": {
                    "replicatedJobs": [
                        {
                            "name": r,
                            "replicas": 1,
                            "template": {
                                "spec": {
                                    "parallelism": half,
                                    "completions": half,
                                    "template": template(8),
                                }
                            },
                        }
                        for r in ("a", "b")
                    ]
                },
            }
            workloads.append(js)
            for r in ("a", "b"):
                jmeta = {
                    "name": f"{name}-{r}-0",
                    "namespace": ns,
                    "uid": f"j-{i}-{r}",
                    "resourceVersion": "1",
                    "ownerReferences": [ref(js)],
                    "labels": {
                        "jobset.sigs.k8s.io/jobset-name": name,
                        "jobset.sigs.k8s.io/replicatedjob-name": r,
                    },
                }
                job = {
                    "apiVersion": "batch/v1",
                    "kind": "Job",
                    "metadata": jmeta,
                    "spec": {"parallelism": half, "completions": half, "template": template(8)},
                }
                workloads.append(job)
                for k in range(half):
                    p = pod(f"{name}-{r}-0-{k}", ns, job, 8)
                    p["metadata"]["labels"].update(jmeta["labels"])
                    pods.append(p)

    return workloads, pods
