"""One row of ``wlmap get``: what the list and the watch both print, and how it is made from
a workload (its own module so that :mod:`~workload_map.cli.get_watch` does not import the
command it serves, and the command keeps to listing and printing)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import msgspec

from workload_map.cli.get_views import GetItem, GetMetadata
from workload_map.cli.workload_view import DescribeFailed, describe_view
from workload_map.cluster.ownership import find_pods
from workload_map.cluster.references import run_resolver
from workload_map.engine.describe import PodCounts
from workload_map.kube.errors import Forbidden
from workload_map.model.views import to_json

if TYPE_CHECKING:
    from workload_map.cli.context import Context
    from workload_map.cli.targets import Target
    from workload_map.cluster.ownership import PodIndex
    from workload_map.kube.client import Cluster

__all__ = ["PODS_UNKNOWN", "Row", "make_row", "stuck_reason"]

# phases in which missing gang members are expected, not a sign of a stuck workload
_SETTLED = {"Completed", "Failed", "Suspended", "Suspending"}

#: the pod index when pods could not be listed (a distinct object: an empty index means no pods)
PODS_UNKNOWN: Any = object()


class Row(msgspec.Struct):
    view: dict[str, Any]
    type_label: str
    created: str
    obj: dict[str, Any] | None = None
    #: the kubeconfig context the row was read through (``get`` over several clusters)
    cluster: str | None = None

    @property
    def sort_key(self) -> tuple[str, str, str, str]:
        return (
            self.cluster or "",
            str(self.view.get("namespace") or ""),
            str(self.view["name"]),
            self.type_label,
        )

    @property
    def key(self) -> str:
        meta = self.view.get("metadata") or {}
        return str(meta.get("uid") or f"{self.type_label}/{self.sort_key}")


def stuck_reason(view: dict[str, Any]) -> str | None:
    """Why a workload is stuck, from its describe view: pods Pending as Unschedulable, or a gang
    with fewer member pods than its minimum (not counted once the workload is settled)."""
    unschedulable = 0

    def walk(components: list[Any]) -> None:
        nonlocal unschedulable
        for comp in components:
            if not isinstance(comp, dict):
                continue
            for pod in comp.get("pods") or []:
                if (
                    isinstance(pod, dict)
                    and pod.get("phase") == "Pending"
                    and pod.get("reason") == "Unschedulable"
                ):
                    unschedulable += 1
            walk(list(comp.get("children") or []))

    walk(list(view.get("components") or []))
    if unschedulable:
        noun = "pod" if unschedulable == 1 else "pods"
        return f"{unschedulable} {noun} Unschedulable"
    if _SETTLED & set(view.get("phases") or []):
        return None
    if (view.get("pods") or {}).get("current") is None:
        return None  # no pods known: nothing to say about gangs

    def short(groups: list[Any]) -> str | None:
        for group in groups:
            if not isinstance(group, dict):
                continue
            members = len(group.get("pods") or [])
            minimum = group.get("minMember")
            if isinstance(minimum, int) and not isinstance(minimum, bool) and members < minimum:
                return f"gang {group.get('name')} has {members} of {minimum} pods"
            inner = short(list(group.get("subGroups") or []))
            if inner:
                return inner
        return None

    return short(list(view.get("podGroups") or []))


def make_row(
    ctx: Context,
    cluster: Cluster,
    target: Target,
    obj: dict[str, Any],
    pods: PodIndex | list[dict[str, Any]] | None,
    type_label: str,
) -> Row | None:
    """One row; ``pods`` is the shared pod index, the workload's own pods (the watch loop's),
    or None to find them now."""
    meta = obj.get("metadata") or {}
    if pods is None:
        try:
            pod_list: list[dict[str, Any]] | None = find_pods(cluster, obj)
        except Forbidden:
            pod_list = None
    elif pods is PODS_UNKNOWN:
        pod_list = None
    elif isinstance(pods, list):
        pod_list = pods
    else:
        pod_list = pods.pods_of(obj)
    d = target.definition

    try:
        # references (a TrainJob's runtime) read once per run, however many rows name them
        view = describe_view(obj, pod_list, d, references=run_resolver(cluster))
    except DescribeFailed as exc:
        ctx.warn(f"could not resolve {exc.label}: {exc.cause}")
        return None
    for ref in view.get("references") or ():
        if ref.get("problem"):  # the row is still shown, with what the workload alone says
            ctx.warn(
                f"{obj.get('kind')} {_where(meta)}: reference '{ref.get('name')}': "
                f"{ref['problem']}; shown with what the {obj.get('kind')} alone says"
            )
    counts = view.get("pods") or {}
    labels = meta.get("labels")

    item = GetItem(
        name=meta.get("name"),
        namespace=meta.get("namespace"),
        kind=obj.get("kind"),
        api_version=obj.get("apiVersion"),
        created_at=meta.get("creationTimestamp"),
        definition=d.name,
        origin=d.origin,
        phases=tuple(view.get("phases") or ["Undefined"]),
        pods=PodCounts(
            counts.get("desired", 0),
            counts.get("current"),
            counts.get("ready"),
            counts.get("pending"),
            counts.get("held"),
        ),
        gpus=(view.get("resources") or {}).get("gpus", 0),
        gpus_pending=(view.get("pendingResources") or {}).get("gpus"),
        gpus_held=(view.get("heldResources") or {}).get("gpus"),
        stuck=stuck_reason(dict(view)),
        # kubectl habits (custom-columns=NAME:.metadata.name, --sort-by, --show-labels)
        metadata=GetMetadata(
            name=meta.get("name"),
            namespace=meta.get("namespace"),
            uid=meta.get("uid"),
            labels=dict(labels) if isinstance(labels, dict) else {},
            creation_timestamp=meta.get("creationTimestamp"),
        ),
    )
    row_view = to_json(item)
    return Row(row_view, type_label, str(meta.get("creationTimestamp") or ""), obj)


def _where(meta: dict[str, Any]) -> str:
    namespace = meta.get("namespace")
    return f"{namespace}/{meta.get('name')}" if namespace else str(meta.get("name"))
