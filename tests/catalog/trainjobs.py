"""Kubeflow Trainer v2 objects built by hand: a training runtime and a TrainJob naming it.

Shared by the catalog's reference tests (``test_trainjob_runtime``) and the gang planner's
(``tests/gangs/test_trainjob_references``): one replicated job, ``node``, whose pods the
runtime's ``mlPolicy.numNodes`` counts.
"""

from __future__ import annotations

from typing import Any

__all__ = ["ANCESTOR_LABEL", "API_VERSION", "runtime", "trainjob"]

API_VERSION = "trainer.kubeflow.org/v1alpha1"
#: the label Trainer's runtimes put on the replicated job that runs the trainer
ANCESTOR_LABEL = "trainer.kubeflow.org/trainjob-ancestor-step"


def runtime(
    name: str,
    nodes: int,
    *,
    kind: str = "ClusterTrainingRuntime",
    container: dict[str, Any] | None = None,
    job_labels: dict[str, str] | None = None,
    **metadata: Any,
) -> dict[str, Any]:
    """A runtime of ``nodes`` nodes: one replicated job ``node`` running ``container`` (a bare
    ``node`` container by default); ``metadata`` adds to its name (namespace, resourceVersion)."""
    job_template: dict[str, Any] = {
        "spec": {
            "template": {"spec": {"containers": [container or {"name": "node", "image": "i"}]}}
        }
    }
    if job_labels:
        job_template = {"metadata": {"labels": dict(job_labels)}, **job_template}
    return {
        "apiVersion": API_VERSION,
        "kind": kind,
        "metadata": {"name": name, **metadata},
        "spec": {
            "mlPolicy": {"numNodes": nodes},
            "template": {"spec": {"replicatedJobs": [{"name": "node", "template": job_template}]}},
        },
    }


def trainjob(
    name: str,
    runtime_ref: dict[str, Any],
    *,
    trainer: dict[str, Any] | None = None,
    namespace: str = "ml",
    **metadata: Any,
) -> dict[str, Any]:
    """A TrainJob in ``namespace`` naming its runtime (``runtimeRef``), with ``trainer``'s
    overrides; ``metadata`` adds to its name (uid, resourceVersion)."""
    spec: dict[str, Any] = {"runtimeRef": dict(runtime_ref)}
    if trainer is not None:
        spec["trainer"] = dict(trainer)
    return {
        "apiVersion": API_VERSION,
        "kind": "TrainJob",
        "metadata": {"name": name, "namespace": namespace, **metadata},
        "spec": spec,
    }
