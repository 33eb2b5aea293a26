"""Whether workload-map handles a workload's gangs: opt-in, opt-out, and kinds left alone.

A workload whose own controller already creates scheduling objects must not get a second set
from us (two PodGroups for one gang deadlock or double-reserve). Those are recognised from the
object alone, so the planner, the webhook and ``describe`` agree without a cluster:

- Volcano ``batch.volcano.sh`` Jobs (Volcano's job controller makes their PodGroup);
- Kubeflow training jobs with ``spec.runPolicy.schedulingPolicy`` (the training operator's
  gang integration; one running with ``--gang-scheduler-name`` for a job without it cannot
  be told apart from the object: opt such a workload out with the annotation);
- Spark applications with ``spec.batchScheduler``;
- KubeRay objects labelled ``ray.io/scheduler-name`` or ``ray.io/gang-scheduling-enabled``;
- ``batch/v1`` Jobs with ``spec.scheduling`` (the ``WorkloadWithJob`` Job controller), and
  where the cluster runs that gate every Job the Job controller takes over (gangs/jobs.py);
- any workload whose pod templates already set ``spec.schedulingGroup``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from workload_map.gangs.config import ANNOTATION_GANG, LABEL_NAMESPACE_OPT_IN, GangConfig
from workload_map.gangs.jobs import taken_over

__all__ = ["OptIn", "left_alone", "opt_in"]

ENABLED = "enabled"
DISABLED = "disabled"

_KUBEFLOW_TRAINING = {"PyTorchJob", "TFJob", "MPIJob", "XGBoostJob", "PaddleJob", "JAXJob"}
_RAY_KINDS = {"RayCluster", "RayJob", "RayService"}
_RAY_LABELS = ("ray.io/scheduler-name", "ray.io/gang-scheduling-enabled")


@dataclass(frozen=True)
class OptIn:
    """Whether a workload is handled, and which setting decided it."""

    enabled: bool
    reason: str


def _strings(value: Any) -> Mapping[str, Any]:
    if type(value) is dict:
        return value
    # None (no labels, no annotations) is most of the rest: no ABC check for it
    return value if value is not None and isinstance(value, Mapping) else {}


_ANNOTATED_ON = OptIn(True, f"annotation {ANNOTATION_GANG}={ENABLED} on the workload")
_ANNOTATED_OFF = OptIn(False, f"annotation {ANNOTATION_GANG}={DISABLED} on the workload")
_EVERY_WORKLOAD = OptIn(True, "enabled for every workload (--gang-default-enabled)")
_NOT_OPTED_IN = OptIn(
    False, f"not opted in (namespace label or workload annotation {ANNOTATION_GANG}={ENABLED})"
)
#: (namespace, label enabled) -> the answer the namespace label gives: one per namespace
#: instead of one per workload of a resync (an answer is immutable, so it can be shared)
_BY_LABEL: dict[tuple[str, bool], OptIn] = {}
_BY_LABEL_MAX = 4096


def opt_in(
    obj: Mapping[str, Any],
    namespace_labels: Mapping[str, str] | None,
    config: GangConfig,
) -> OptIn:
    """The workload annotation wins (``enabled``/``disabled``), then the namespace label."""
    meta = _strings(obj.get("metadata"))
    namespace = meta.get("namespace")
    if isinstance(namespace, str) and namespace in config.excluded_namespaces:
        return OptIn(False, f"namespace {namespace} is excluded")
    annotation = _strings(meta.get("annotations")).get(ANNOTATION_GANG)
    if annotation == DISABLED:
        return _ANNOTATED_OFF
    if annotation == ENABLED:
        return _ANNOTATED_ON
    label = (namespace_labels or {}).get(LABEL_NAMESPACE_OPT_IN)
    if label == ENABLED or label == DISABLED:
        enabled = label == ENABLED
        if type(namespace) is not str:
            return _by_label(namespace, enabled)
        key = (namespace, enabled)
        found = _BY_LABEL.get(key)
        if found is None:
            if len(_BY_LABEL) >= _BY_LABEL_MAX:
                _BY_LABEL.clear()
            found = _BY_LABEL[key] = _by_label(namespace, enabled)
        return found
    if config.default_enabled:
        return _EVERY_WORKLOAD
    return _NOT_OPTED_IN


def _by_label(namespace: object, enabled: bool) -> OptIn:
    value = ENABLED if enabled else DISABLED
    return OptIn(enabled, f"label {LABEL_NAMESPACE_OPT_IN}={value} on namespace {namespace}")


def _is_mapping(value: Any) -> bool:
    return type(value) is dict or (value is not None and isinstance(value, Mapping))


def left_alone(
    obj: Mapping[str, Any], pod_specs: Iterable[Mapping[str, Any]], config: GangConfig
) -> str | None:
    """Why the workload's own controller makes its scheduling objects, or None."""
    api_version = obj.get("apiVersion")
    group = api_version.split("/")[0] if isinstance(api_version, str) and "/" in api_version else ""
    kind = obj.get("kind")
    spec = _strings(obj.get("spec"))
    labels = _strings(_strings(obj.get("metadata")).get("labels"))
    specs = list(pod_specs)
    if any(_is_mapping(s.get("schedulingGroup")) for s in specs):
        return "its pod templates already set spec.schedulingGroup"
    if group == "batch.volcano.sh" and kind == "Job":
        return "Volcano's job controller creates the PodGroup of a Volcano Job"
    if group == "kubeflow.org" and kind in _KUBEFLOW_TRAINING:
        if _strings(spec.get("runPolicy")).get("schedulingPolicy") is not None:
            return "the training operator creates PodGroups (spec.runPolicy.schedulingPolicy)"
    if group == "sparkoperator.k8s.io" and spec.get("batchScheduler"):
        return (
            f"the Spark operator creates PodGroups (spec.batchScheduler={spec['batchScheduler']})"
        )
    if group == "ray.io" and kind in _RAY_KINDS:
        for label in _RAY_LABELS:
            if label in labels:
                return f"KubeRay's batch-scheduler integration creates PodGroups (label {label})"
    if config.workload_with_job:
        # checked before the rest: the reason names what the Job controller does
        why = taken_over(obj)
        if why is not None:
            return why
    if group == "batch" and kind == "Job" and spec.get("scheduling") is not None:
        return "the Job controller creates Workload and PodGroup (spec.scheduling, WorkloadWithJob)"
    return None
