"""The operators' owner labels: the evidence left when an owner chain does not resolve.

A ``--pods`` file without the intermediate Jobs, a Job already garbage-collected: each operator
stamps its pods with the name (some also the uid) of the workload they serve, e.g. JobSet's
``jobset.sigs.k8s.io/jobset-name`` and ``jobset-uid``. :data:`OWNER_LABELS` lists them per
workload kind, from the operators' sources; no library collects them. :func:`label_verdict`
reads a pod's labels against one workload; when they count (only where the chain is broken) is
``engine/partition.py``'s rule.

``label_checker`` (the verdict with its reason, the rule looked up once for many pods) and
``expected_labels`` (the labels a workload's pods carry) are engine-internal, shared with
``engine/partition.py``: not in ``__all__``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from workload_map.engine.owners import OwnerRef, self_ref
from workload_map.model.views import View

__all__ = ["OWNER_LABELS", "OwnerLabels", "label_verdict"]


class OwnerLabels(View):
    """The labels an operator puts on the pods of one workload kind.

    ``name``/``uid``: labels whose value is the workload's name / uid; ``kind``: a label whose
    value, when present, tells which kind of workload the pod serves (one of ``kind_values``).
    """

    name: tuple[str, ...] = ()
    uid: tuple[str, ...] = ()
    kind: str | None = None
    kind_values: frozenset[str] = frozenset()


def _kubeflow(*operators: str) -> OwnerLabels:
    return OwnerLabels(
        name=("training.kubeflow.org/job-name",),
        kind="training.kubeflow.org/operator-name",
        kind_values=frozenset(operators),
    )


#: (group, kind) of a workload -> the owner labels its operator stamps on its pods
OWNER_LABELS: dict[tuple[str, str], OwnerLabels] = {
    ("jobset.x-k8s.io", "JobSet"): OwnerLabels(
        name=("jobset.sigs.k8s.io/jobset-name",), uid=("jobset.sigs.k8s.io/jobset-uid",)
    ),
    # the trainer creates a JobSet of the TrainJob's own name (its uid is the JobSet's)
    ("trainer.kubeflow.org", "TrainJob"): OwnerLabels(name=("jobset.sigs.k8s.io/jobset-name",)),
    ("leaderworkerset.x-k8s.io", "LeaderWorkerSet"): OwnerLabels(
        name=("leaderworkerset.sigs.k8s.io/name",)
    ),
    ("kubeflow.org", "PyTorchJob"): _kubeflow("pytorchjob-controller"),
    ("kubeflow.org", "TFJob"): _kubeflow("tfjob-controller"),
    ("kubeflow.org", "XGBoostJob"): _kubeflow("xgboostjob-controller"),
    ("kubeflow.org", "PaddleJob"): _kubeflow("paddlejob-controller"),
    ("kubeflow.org", "JAXJob"): _kubeflow("jaxjob-controller"),
    ("kubeflow.org", "MPIJob"): _kubeflow("mpijob-controller", "mpi-operator"),
    ("batch", "Job"): OwnerLabels(
        name=("batch.kubernetes.io/job-name", "job-name"),
        uid=("batch.kubernetes.io/controller-uid", "controller-uid"),
    ),
    ("ray.io", "RayCluster"): OwnerLabels(name=("ray.io/cluster",)),
    ("ray.io", "RayJob"): OwnerLabels(
        name=("ray.io/originated-from-cr-name",),
        kind="ray.io/originated-from-crd",
        kind_values=frozenset({"RayJob"}),
    ),
    ("ray.io", "RayService"): OwnerLabels(
        name=("ray.io/originated-from-cr-name",),
        kind="ray.io/originated-from-crd",
        kind_values=frozenset({"RayService"}),
    ),
    ("batch.volcano.sh", "Job"): OwnerLabels(name=("volcano.sh/job-name",)),
    ("sparkoperator.k8s.io", "SparkApplication"): OwnerLabels(
        name=("sparkoperator.k8s.io/app-name",)
    ),
    ("serving.knative.dev", "Service"): OwnerLabels(name=("serving.knative.dev/service",)),
    ("serving.kserve.io", "InferenceService"): OwnerLabels(
        name=("serving.kserve.io/inferenceservice",)
    ),
    ("workload.codeflare.dev", "AppWrapper"): OwnerLabels(
        name=("workload.codeflare.dev/appwrapper",)
    ),
    ("argoproj.io", "Workflow"): OwnerLabels(name=("workflows.argoproj.io/workflow",)),
    ("tekton.dev", "PipelineRun"): OwnerLabels(name=("tekton.dev/pipelineRun",)),
    ("tekton.dev", "TaskRun"): OwnerLabels(name=("tekton.dev/taskRun",)),
    ("kubeflow.org", "Notebook"): OwnerLabels(name=("notebook-name",)),
}


def label_verdict(pod: Mapping[str, Any], workload: Mapping[str, Any]) -> bool | None:
    """What the pod's owner labels say about ``workload``'s claim on it.

    True: they name this workload; False: they name a different one (another name or uid, or
    a workload of another kind of the same operator); None: no owner labels of the workload's
    kind (no evidence either way).
    """
    check = label_checker(workload)
    if check is None:
        return None
    meta = pod.get("metadata")
    return check(meta.get("labels") if isinstance(meta, Mapping) else None)[0]


_NO_EVIDENCE: tuple[bool | None, str] = (None, "")
_NAMED: tuple[bool | None, str] = (True, "")


def label_checker(
    workload: Mapping[str, Any], top: OwnerRef | None = None
) -> Callable[[Any], tuple[bool | None, str]] | None:
    """:func:`label_verdict`, with the reason, of a pod's ``metadata.labels`` (any value) for
    one workload (``top``: its reference, when the caller has it): its rule is looked up once,
    as a file of many pods is checked pod by pod. None when the workload's kind has no owner
    labels (no evidence, whatever the labels)."""
    top = top if top is not None else self_ref(workload)
    rule = OWNER_LABELS.get((top.group, top.kind))
    if rule is None:
        return None
    kind = top.kind
    expected = expected_labels(top, rule)
    kind_label, kind_values = rule.kind, rule.kind_values

    def check(labels: Any) -> tuple[bool | None, str]:
        if type(labels) is not dict and not isinstance(labels, Mapping):
            return _NO_EVIDENCE
        seen = False
        for key, wanted, what in expected:
            value = labels.get(key)
            if type(value) is str:
                if wanted and value != wanted:
                    return False, f"its label {key}={value} names another {kind}{what}"
                seen = True
        if not seen:
            return _NO_EVIDENCE
        if kind_label is not None:
            value = labels.get(kind_label)
            if type(value) is str and value not in kind_values:
                return False, f"its label {kind_label}={value} names a workload of another kind"
        return _NAMED

    return check


def expected_labels(top: OwnerRef, rule: OwnerLabels) -> tuple[tuple[str, str, str], ...]:
    """(label, the value the workload's pods carry or "" when unknown, what the label names)
    of the rule, name labels first: one loop per pod."""
    return (
        *((key, top.name, "") for key in rule.name),
        *((key, top.uid or "", " (uid)") for key in rule.uid),
    )
