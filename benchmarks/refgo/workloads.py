"""The pods an operator would create for a workload object, labelled as that operator labels them.

Both the differential test (``tests/engine/test_reference_diff.py``) and the speed comparison
(``benchmarks/reference_bench.py``) need pods for realworld objects, which upstream seldom
publishes. This module knows the pod labels of three operators — LeaderWorkerSet, JobSet and the
Kubeflow training operators — and nothing else; other kinds get no pods. Pods own up directly to
the workload (controller owner reference with its uid), carry one container and run.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping
from typing import Any

__all__ = ["operator_pods", "pod"]


def pod(
    owner: Mapping[str, Any],
    name: str,
    labels: Mapping[str, str],
    annotations: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """A running Pod named ``name``, controlled by ``owner``."""
    meta = owner.get("metadata") or {}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": meta.get("namespace", "default"),
            "uid": "pod-" + hashlib.sha1(name.encode()).hexdigest()[:12],
            "labels": dict(labels),
            "annotations": dict(annotations or {}),
            "ownerReferences": [
                {
                    "apiVersion": owner.get("apiVersion", ""),
                    "kind": owner.get("kind", ""),
                    "name": meta.get("name", ""),
                    "uid": meta.get("uid", ""),
                    "controller": True,
                }
            ],
        },
        "spec": {"containers": [{"name": "main", "image": "registry.example/main:1"}]},
        "status": {"phase": "Running"},
    }


def _count(value: Any, default: int) -> int:
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    return default


def _leaderworkerset(obj: Mapping[str, Any], name: str) -> Iterator[dict[str, Any]]:
    spec = obj.get("spec") or {}
    size = _count((spec.get("leaderWorkerTemplate") or {}).get("size"), 1)
    for group in range(_count(spec.get("replicas"), 1)):
        leader = f"{name}-{group}"
        for worker in range(size):
            labels = {
                "leaderworkerset.sigs.k8s.io/name": name,
                "leaderworkerset.sigs.k8s.io/group-index": str(group),
                "leaderworkerset.sigs.k8s.io/worker-index": str(worker),
            }
            notes = {"leaderworkerset.sigs.k8s.io/size": str(size)}
            if worker:
                notes["leaderworkerset.sigs.k8s.io/leader-name"] = leader
            yield pod(obj, f"{leader}-{worker}" if worker else leader, labels, notes)


def _jobset(obj: Mapping[str, Any], name: str) -> Iterator[dict[str, Any]]:
    for rjob in (obj.get("spec") or {}).get("replicatedJobs") or []:
        rname = str(rjob.get("name"))
        job_spec = (rjob.get("template") or {}).get("spec") or {}
        for job in range(_count(rjob.get("replicas"), 1)):
            for index in range(_count(job_spec.get("parallelism"), 1)):
                labels = {
                    "jobset.sigs.k8s.io/jobset-name": name,
                    "jobset.sigs.k8s.io/replicatedjob-name": rname,
                    "jobset.sigs.k8s.io/job-index": str(job),
                    "batch.kubernetes.io/job-completion-index": str(index),
                }
                yield pod(obj, f"{name}-{rname}-{job}-{index}", labels)


def _kubeflow(obj: Mapping[str, Any], name: str) -> Iterator[dict[str, Any]]:
    spec = obj.get("spec") or {}
    replica_specs = next(
        (v for k, v in spec.items() if k.endswith("ReplicaSpecs") and isinstance(v, dict)), {}
    )
    for rtype, rspec in replica_specs.items():
        role = str(rtype).lower()
        for index in range(_count((rspec or {}).get("replicas"), 1)):
            labels = {
                "training.kubeflow.org/job-name": name,
                "training.kubeflow.org/replica-type": role,
                "training.kubeflow.org/replica-index": str(index),
                "training.kubeflow.org/job-role": role,
            }
            yield pod(obj, f"{name}-{role}-{index}", labels)


def operator_pods(obj: Mapping[str, Any], *, limit: int | None = None) -> list[dict[str, Any]]:
    """The pods the operator of ``obj`` creates (at most ``limit``), or [] for other kinds."""
    name = str((obj.get("metadata") or {}).get("name", "workload"))
    kind = obj.get("kind")
    if kind == "LeaderWorkerSet":
        pods = _leaderworkerset(obj, name)
    elif kind == "JobSet":
        pods = _jobset(obj, name)
    elif str(obj.get("apiVersion", "")).startswith("kubeflow.org/"):
        pods = _kubeflow(obj, name)
    else:
        return []
    out: list[dict[str, Any]] = []
    for item in pods:
        if limit is not None and len(out) >= limit:
            break
        out.append(item)
    return out
