"""Whether the cluster really keeps a pod's ``spec.schedulingGroup`` (docs/gangs.md,
"GenericWorkload, really"): probed once at start on every replica, exported as
``workloadmap_gangs_generic_workload{state}``; and whether it keeps a PodGroup's
``schedulingConstraints`` (``TopologyAwareWorkloadScheduling``, docs/gangs.md "Topology").

A field of a disabled gate is dropped silently on create, so each is a server-side dry run
that the field survives: it shows the API server's gate only, not the scheduler's."""

from __future__ import annotations

from typing import Any

from workload_map.kube.errors import ApiError, ClusterError, NotFound

__all__ = ["TOPOLOGY_PROBE_KEY", "probe_composite", "probe_generic_workload", "probe_topology"]

#: the key the topology probe asks for (any label key: a dry run places nothing)
TOPOLOGY_PROBE_KEY = "kubernetes.io/hostname"


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


def probe_topology(api: Any, namespace: str) -> tuple[str, str]:
    """Whether the cluster keeps a native PodGroup's ``schedulingConstraints.topology``:
    (state, detail), the states of :func:`probe_generic_workload` (``works``, ``dropped``:
    ``TopologyAwareWorkloadScheduling`` off on the API server, ``absent``, ``error``)."""
    base = "/apis/scheduling.k8s.io/v1beta1"
    try:
        api.get(base)
    except NotFound:
        return "absent", "scheduling.k8s.io/v1beta1 is not served (GenericWorkload off?)"
    except ClusterError as err:
        return "error", f"discovery failed: {err}"
    wanted = {"topology": [{"key": TOPOLOGY_PROBE_KEY}]}
    group = {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "PodGroup",
        "metadata": {"generateName": "wlmap-topology-probe-", "namespace": namespace},
        "spec": {"schedulingPolicy": {"gang": {"minCount": 2}}, "schedulingConstraints": wanted},
    }
    try:
        answer = api.request(
            "POST",
            f"{base}/namespaces/{namespace}/podgroups",
            group,
            query=[("dryRun", "All")],
        )
    except ClusterError as err:
        return "error", f"dry-run PodGroup create failed: {err}"
    kept = ((answer or {}).get("spec") or {}).get("schedulingConstraints")
    if kept == wanted:
        return "works", "a dry-run PodGroup kept spec.schedulingConstraints.topology"
    return (
        "dropped",
        "the API server dropped spec.schedulingConstraints (TopologyAwareWorkloadScheduling off)",
    )


def probe_composite(api: Any, namespace: str) -> tuple[str, str]:
    """Whether the cluster takes composite groups: (state, detail). ``absent``: no
    ``scheduling.k8s.io/v1alpha3`` ``compositepodgroups`` served; else a dry-run Workload of
    ``compositePodGroupTemplates`` only, which the API server refuses (not strips) with the
    ``CompositePodGroup`` gate off (``dropped``), or keeps (``works``); ``error``."""
    try:
        found = api.get("/apis/scheduling.k8s.io/v1alpha3")
    except NotFound:
        return "absent", "scheduling.k8s.io/v1alpha3 is not served"
    except ClusterError as err:
        return "error", f"discovery failed: {err}"
    names = {r.get("name") for r in (found or {}).get("resources") or [] if isinstance(r, dict)}
    if "compositepodgroups" not in names:
        return "absent", "scheduling.k8s.io/v1alpha3 serves no compositepodgroups"
    wanted = [
        {
            "name": "probe",
            "schedulingPolicy": {"gang": {"minGroupCount": 1}},
            "podGroupTemplates": [{"name": "child", "schedulingPolicy": {"gang": {"minCount": 1}}}],
        }
    ]
    workload = {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "Workload",
        "metadata": {"generateName": "wlmap-composite-probe-", "namespace": namespace},
        "spec": {"compositePodGroupTemplates": wanted},
    }
    try:
        answer = api.request(
            "POST",
            f"/apis/scheduling.k8s.io/v1beta1/namespaces/{namespace}/workloads",
            workload,
            query=[("dryRun", "All")],
        )
    except ApiError as err:
        if err.status in (400, 422):
            return (
                "dropped",
                f"a composite-only Workload was refused (CompositePodGroup off): {err}",
            )
        return "error", f"dry-run Workload create failed: {err}"
    except ClusterError as err:
        return "error", f"dry-run Workload create failed: {err}"
    kept = ((answer or {}).get("spec") or {}).get("compositePodGroupTemplates")
    if isinstance(kept, list) and [t.get("name") for t in kept] == ["probe"]:
        return "works", "a dry-run Workload kept spec.compositePodGroupTemplates"
    return "dropped", "the API server dropped spec.compositePodGroupTemplates"
