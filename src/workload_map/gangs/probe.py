"""Whether the cluster really keeps a pod's ``spec.schedulingGroup`` (docs/gangs.md,
"GenericWorkload, really"): probed once at start on every replica, exported as
``workloadmap_gangs_generic_workload{state}``."""

from __future__ import annotations

from typing import Any

from workload_map.kube.errors import ClusterError, NotFound

__all__ = ["probe_generic_workload"]


def probe_generic_workload(api: Any, namespace: str) -> tuple[str, str]:
    """Whether the cluster keeps a pod's ``spec.schedulingGroup``: (state, detail).

    ``works`` (a server-side dry-run pod kept it), ``dropped`` (the API server drops the field:
    ``GenericWorkload`` off), ``absent`` (no ``scheduling.k8s.io/v1beta1`` PodGroups served),
    ``error``.
    """
    try:
        api.get("/apis/scheduling.k8s.io/v1beta1")
    except NotFound:
        return "absent", "scheduling.k8s.io/v1beta1 is not served (GenericWorkload off?)"
    except ClusterError as err:
        return "error", f"discovery failed: {err}"
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "generateName": "wlmap-gang-probe-",
            "namespace": namespace,
            "labels": {"workload-map.run.ai/gang-scheduling": "disabled"},
        },
        "spec": {
            "schedulingGroup": {"podGroupName": "wlmap-gang-probe"},
            # admissible under PodSecurity "restricted" (the chart's namespace enforces it)
            "securityContext": {
                "runAsNonRoot": True,
                "runAsUser": 65532,
                "seccompProfile": {"type": "RuntimeDefault"},
            },
            "containers": [
                {
                    "name": "probe",
                    "image": "registry.k8s.io/pause:3.10",
                    "securityContext": {
                        "allowPrivilegeEscalation": False,
                        "capabilities": {"drop": ["ALL"]},
                    },
                }
            ],
        },
    }
    try:
        answer = api.request(
            "POST", f"/api/v1/namespaces/{namespace}/pods", pod, query=[("dryRun", "All")]
        )
    except ClusterError as err:
        return "error", f"dry-run pod create failed: {err}"
    kept = ((answer or {}).get("spec") or {}).get("schedulingGroup")
    if kept == {"podGroupName": "wlmap-gang-probe"}:
        return "works", "a dry-run pod kept spec.schedulingGroup"
    return "dropped", "the API server dropped spec.schedulingGroup (GenericWorkload off)"
