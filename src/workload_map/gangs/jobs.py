"""Coexistence with the in-tree Job controller under ``WorkloadWithJob`` (docs/gangs.md).

With that gate on (alpha, Kubernetes v1.36+), the v1.37.2 Job controller
(``pkg/controller/job/job_scheduling_manager.go``) makes the scheduling objects of a Job itself,
before it creates the Job's first pod, and stamps ``spec.schedulingGroup`` on every pod it
creates:

- a Job whose pod template sets no ``schedulingGroup`` and that has no controller owner gets a
  ``scheduling.k8s.io/v1beta1`` Workload (``spec.controllerRef`` and a controller owner
  reference to the Job, one template ``<job>-pgt-0``: the gang of ``spec.scheduling``, else the
  Basic policy) and a PodGroup from it;
- a Job with a controller owner and the annotation ``scheduling.k8s.io/group-template-name``
  gets a PodGroup from that template of its parent's Workload (the parent's controller makes
  the Workload);
- only a Job that never started (no pods, no ``startTime``, no finished pods, never suspended):
  one that ran before the gate was turned on is left as it is.

Our webhook leaves a pod that already names a group alone, so a second set from us would never
be joined and the gang would silently be the Job controller's (Basic, unless ``spec.scheduling``
asks for a gang). Such Jobs are therefore recognised from the object alone, before anything is
written, once the cluster is known to run the gate (:func:`probe_workload_with_job` at start, a
Workload the Job controller made for a Job seen later), and left alone; a Workload with a Job as
``controllerRef`` or pods arriving with a group that is not ours say so after the fact.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from workload_map.gangs.naming import dns_subdomain
from workload_map.kube.errors import ApiError, ClusterError

__all__ = [
    "GROUP_TEMPLATE_ANNOTATION",
    "foreign_group",
    "is_job_controllers",
    "probe_workload_with_job",
    "taken_over",
]

#: on a child Job: its parent's Workload template the Job controller makes its PodGroup from
GROUP_TEMPLATE_ANNOTATION = "scheduling.k8s.io/group-template-name"

_EMPTY: Mapping[str, Any] = {}


def _map(value: Any) -> Mapping[str, Any]:
    # type() first: the ABC check costs a Python call, and a resync asks it per pod
    return value if type(value) is dict or isinstance(value, Mapping) else _EMPTY


def _is_job(obj: Mapping[str, Any]) -> bool:
    return obj.get("apiVersion") == "batch/v1" and obj.get("kind") == "Job"


def _has_controller(meta: Mapping[str, Any]) -> bool:
    refs = meta.get("ownerReferences")
    return isinstance(refs, list) and any(
        isinstance(r, Mapping) and r.get("controller") is True for r in refs
    )


def _annotated(value: Any) -> bool:
    """Whether any ``metadata.annotations`` inside ``value`` (a parent's Job templates) names a
    template of the parent's Workload."""
    if isinstance(value, Mapping):
        if GROUP_TEMPLATE_ANNOTATION in _map(_map(value.get("metadata")).get("annotations")):
            return True
        return any(_annotated(v) for v in value.values() if isinstance(v, (Mapping, list)))
    if isinstance(value, list):
        return any(_annotated(v) for v in value)
    return False


def taken_over(obj: Mapping[str, Any]) -> str | None:
    """Why the Job controller (``WorkloadWithJob`` on) makes ``obj``'s scheduling objects, or
    None; a workload whose pod templates set ``schedulingGroup`` is left alone before this."""
    meta = _map(obj.get("metadata"))
    if _is_job(obj):
        if GROUP_TEMPLATE_ANNOTATION in _map(meta.get("annotations")):
            return (
                "the Job controller makes its PodGroup from its parent's Workload (annotation "
                f"{GROUP_TEMPLATE_ANNOTATION}, WorkloadWithJob)"
            )
        if _has_controller(meta):
            return None  # a child Job: its owner's controller decides (a parent's gangs count)
        policy = _map(_map(_map(obj.get("spec")).get("scheduling")).get("schedulingPolicy"))
        gang = policy.get("gang")
        if isinstance(gang, Mapping):
            size = gang.get("minCount")
            return (
                "the Job controller makes its Workload and PodGroup (WorkloadWithJob): its gang "
                f"is spec.scheduling's (minCount {size if size is not None else 'parallelism'})"
            )
        return (
            "the Job controller makes its Workload and PodGroup (WorkloadWithJob) with the Basic "
            "policy, so its pods are scheduled one by one: set "
            "spec.scheduling.schedulingPolicy.gang for an all-or-nothing gang"
        )
    if _annotated(obj.get("spec")):
        return (
            "its Job templates name a template of its Workload (annotation "
            f"{GROUP_TEMPLATE_ANNOTATION}): its controller makes the Workload and the Job "
            "controller the PodGroups (WorkloadWithJob)"
        )
    return None


def is_job_controllers(workload_object: Mapping[str, Any]) -> bool:
    """Whether a ``scheduling.k8s.io`` Workload is one the Job controller made for a Job (its
    ``spec.controllerRef`` is a ``batch`` Job): proof the cluster runs ``WorkloadWithJob``."""
    ref = _map(_map(workload_object.get("spec")).get("controllerRef"))
    return ref.get("apiGroup") == "batch" and ref.get("kind") == "Job"


def foreign_group(workload: Mapping[str, Any], pods: Iterable[Mapping[str, Any]]) -> str | None:
    """A native pod group another controller stamped on a Job's pods (not a name we give), or
    None: the Job controller took the Job over although we did not expect it."""
    if not _is_job(workload):
        return None
    uid = _map(workload.get("metadata")).get("uid")
    ours = dns_subdomain(f"pg-{uid or _map(workload.get('metadata')).get('name')}")[:40]
    for pod in pods:
        spec = pod.get("spec")
        stamped = (spec if type(spec) is dict else _map(spec)).get("schedulingGroup")
        if stamped is None:
            continue  # most pods (read per pod of every Job a resync plans)
        group = _map(stamped).get("podGroupName")
        if isinstance(group, str) and group and not group.startswith(ours):
            return group
    return None


def probe_workload_with_job(api: Any, namespace: str) -> tuple[str, str]:
    """Whether the API server keeps a Job's ``spec.scheduling``: (state, detail).

    ``on`` (a server-side dry-run Job kept it: the API server runs ``WorkloadWithJob``), ``off``
    (dropped or refused), ``error`` (the dry run failed otherwise, e.g. no permission to create
    Jobs). This shows the API server's gate; the Job controller's shows once it makes a
    Workload (:func:`is_job_controllers`).
    """
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "generateName": "wlmap-gang-probe-",
            "namespace": namespace,
            "annotations": {"workload-map.run.ai/gang-scheduling": "disabled"},
        },
        "spec": {
            "scheduling": {"schedulingPolicy": {"gang": {"minCount": 1}}},
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [{"name": "probe", "image": "registry.k8s.io/pause:3.10"}],
                }
            },
        },
    }
    try:
        answer = api.request(
            "POST", f"/apis/batch/v1/namespaces/{namespace}/jobs", job, query=[("dryRun", "All")]
        )
    except ApiError as err:
        if err.status in (400, 422):
            return "off", f"the API server refused spec.scheduling (WorkloadWithJob off): {err}"
        return "error", f"dry-run Job create failed: {err}"
    except ClusterError as err:
        return "error", f"dry-run Job create failed: {err}"
    kept = _map(_map(answer).get("spec")).get("scheduling")
    if isinstance(kept, Mapping) and kept.get("schedulingPolicy"):
        return "on", "a dry-run Job kept spec.scheduling (WorkloadWithJob on the API server)"
    return "off", "the API server dropped spec.scheduling (WorkloadWithJob off)"
