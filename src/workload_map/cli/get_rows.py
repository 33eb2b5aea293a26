"""One row of ``wlmap get``: what the list and the watch both print, and how it is made from
a workload (its own module so that :mod:`~workload_map.cli.get_watch` does not import the
command it serves, and the command keeps to listing and printing)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import msgspec

from workload_map.cli.get_views import GetItem, GetMetadata
from workload_map.cli.workload_view import DescribeFailed, evaluate
from workload_map.cluster.ownership import find_pods
from workload_map.cluster.references import run_resolver
from workload_map.engine import EngineError
from workload_map.engine.gangs import PodGroup
from workload_map.engine.pod_status import read_pod
from workload_map.engine.resources import GPU
from workload_map.engine.summary import PodCounts, WorkloadSummary
from workload_map.kube.errors import Forbidden
from workload_map.model.views import to_json

if TYPE_CHECKING:
    from workload_map.catalog.definitions import Definition
    from workload_map.cli.context import Context
    from workload_map.cli.targets import Target
    from workload_map.cluster.ownership import PodIndex
    from workload_map.engine import Workload
    from workload_map.kube.client import Cluster

__all__ = ["PODS_UNKNOWN", "Row", "RowFacts", "make_row", "read_facts", "row_item", "stuck_reason"]

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
        return _unschedulable(unschedulable)
    if _SETTLED & set(view.get("phases") or []):
        return None
    if (view.get("pods") or {}).get("current") is None:
        return None  # no pods known: nothing to say about gangs
    return _short_gang(list(view.get("podGroups") or []))


def _unschedulable(count: int) -> str:
    return f"{count} {'pod' if count == 1 else 'pods'} Unschedulable"


def _short_gang(groups: list[Any]) -> str | None:
    """The first gang (depth first) with fewer member pods than its minimum, in words; groups
    as describe's ``podGroups`` JSON or the engine's ``PodGroup`` views."""
    for group in groups:
        if isinstance(group, dict):
            name, pods = group.get("name"), group.get("pods") or []
            minimum, subs = group.get("minMember"), group.get("subGroups") or []
        elif isinstance(group, PodGroup):
            name, pods, minimum, subs = group.name, group.pods, group.min_member, group.sub_groups
        else:
            continue
        members = len(pods)
        if isinstance(minimum, int) and not isinstance(minimum, bool) and members < minimum:
            return f"gang {name} has {members} of {minimum} pods"
        inner = _short_gang(list(subs))
        if inner:
            return inner
    return None


class RowFacts(msgspec.Struct, frozen=True):
    """What a row shows of a workload: the shared evaluation (phases, pod counts, requests),
    why it is stuck and what its references could not resolve (see :func:`read_facts`)."""

    summary: WorkloadSummary
    stuck: str | None
    problems: tuple[tuple[str, str], ...]


def read_facts(workload: Workload) -> RowFacts:
    """A row's facts from the workload's shared evaluation (``summary()``), not its describe
    view: the same numbers, by the same rules (engine/summary.py is what describe counts
    with), without the component tree and an entry per pod, which a row does not show (about
    half of a row's cost, a fleet's ``get -A`` makes a row per workload).

    ``stuck`` is :func:`stuck_reason` of the describe view: its Unschedulable pods counted
    as describe lists them (:func:`_listed_unschedulable`), and the gangs, the same objects as
    its ``podGroups``."""
    summary = workload.summary()
    stuck: str | None
    count = _listed_unschedulable(workload)
    if count is None:
        stuck = stuck_reason(workload.describe())
    elif count:
        stuck = _unschedulable(count)
    elif _SETTLED & set(summary.phases) or summary.totals.current is None:
        stuck = None
    else:
        stuck = _short_gang(list(workload.gangs.groups))
    problems = tuple((ref.name, ref.problem) for ref in workload.resolution.views if ref.problem)
    return RowFacts(summary, stuck, problems)


def _listed_unschedulable(workload: Workload) -> int | None:
    """How many pods Pending as Unschedulable describe's components list, without building
    them: the attributed pods of each (component, instance) node, once per node that lists
    them (a grouping component of several instances lists its children under each), on
    describe's walk from the root; a component whose instances cannot be read lists none.
    None when a component splits its nodes per replica (``replicaSelector``: LeaderWorkerSet
    and a few others) and some pod is Unschedulable: then describe itself is read."""
    found: dict[tuple[str, str], int] = {}
    for pod, placement in zip(workload.candidate_pods, workload.placements, strict=True):
        if not placement.attributed or placement.component is None:
            continue
        status = pod.get("status")
        if (
            isinstance(status, Mapping)
            and status.get("phase") == "Pending"
            and read_pod(pod).reason == "Unschedulable"
        ):
            key = (placement.component, placement.instance or "")
            found[key] = found.get(key, 0) + 1
    if not found:
        return 0
    structure = workload.structure
    for component in structure.components.values():
        if component.pod_selector is not None and component.pod_selector.replica_selector:
            return None
    extractor = workload.extractor

    def listed(name: str) -> int:
        try:
            instances = extractor.instances(name)
        except EngineError:
            return 0  # describe's error node lists no pods
        pod_bearing = structure.components[name].has_pod_definition
        total = 0
        for instance in instances.values():
            total += sum(listed(child) for child in structure.children[name])
            if pod_bearing:
                total += found.get((name, instance.instance_id), 0)
        return total

    root = structure.root
    if root.has_pod_definition:
        return listed(root.name)
    return sum(listed(child) for child in structure.children[root.name])


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
        facts = evaluate(obj, pod_list, d, read_facts, references=run_resolver(cluster))
    except DescribeFailed as exc:
        ctx.warn(f"could not resolve {exc.label}: {exc.cause}")
        return None
    for name, problem in facts.problems:  # the row is still shown, with what the workload
        ctx.warn(  # alone says
            f"{obj.get('kind')} {_where(meta)}: reference '{name}': "
            f"{problem}; shown with what the {obj.get('kind')} alone says"
        )
    return Row(row_item(obj, d, facts), type_label, str(meta.get("creationTimestamp") or ""), obj)


def row_item(obj: dict[str, Any], definition: Definition, facts: RowFacts) -> dict[str, Any]:
    """The JSON of one row (``get -o json``'s item)."""
    meta = obj.get("metadata") or {}
    totals = facts.summary.totals
    labels = meta.get("labels")
    item = GetItem(
        name=meta.get("name"),
        namespace=meta.get("namespace"),
        kind=obj.get("kind"),
        api_version=obj.get("apiVersion"),
        created_at=meta.get("creationTimestamp"),
        definition=definition.name,
        origin=definition.origin,
        phases=facts.summary.phases or ("Undefined",),
        pods=PodCounts(totals.desired, totals.current, totals.ready, totals.pending, totals.held),
        gpus=totals.requested.get(GPU, 0),
        gpus_pending=_gpus(totals.pending_requests),
        gpus_held=_gpus(totals.held_requests),
        stuck=facts.stuck,
        # kubectl habits (custom-columns=NAME:.metadata.name, --sort-by, --show-labels)
        metadata=GetMetadata(
            name=meta.get("name"),
            namespace=meta.get("namespace"),
            uid=meta.get("uid"),
            labels=dict(labels) if isinstance(labels, dict) else {},
            creation_timestamp=meta.get("creationTimestamp"),
        ),
    )
    out: dict[str, Any] = to_json(item)
    return out


def _gpus(requests: Mapping[str, int] | None) -> int | None:
    """GPUs among pods' requests (None: no pods known), as describe's ``pendingResources``."""
    return None if requests is None else requests.get(GPU, 0)


def _where(meta: dict[str, Any]) -> str:
    namespace = meta.get("namespace")
    return f"{namespace}/{meta.get('name')}" if namespace else str(meta.get("name"))
