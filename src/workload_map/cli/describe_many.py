"""``wlmap describe TYPE``: every workload of a type, as kubectl's ``describe TYPE`` does.

The reference refuses a TYPE without NAME (exit 2, REFERENCE.md §8 #40); kubectl users expect
all of them, so that is what happens (docs/reference-differences.md). Workloads come in
namespace/name order, pods are listed once for the namespace and attributed by owner chains,
and each view is the same as ``describe TYPE/NAME`` prints; ``-o json|yaml`` gives
``{items, count}`` and ``-o name`` one ``kind.group/name`` per line.
"""

from __future__ import annotations

import argparse
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from workload_map.catalog.definitions import Definitions
from workload_map.cli.describe_cmd import gang_pods
from workload_map.cli.describe_events import render_events
from workload_map.cli.describe_view import RenderOptions, render_describe
from workload_map.cli.exits import ERROR, OK, CliError
from workload_map.cli.humanize import age
from workload_map.cli.live_targets import resolve_type
from workload_map.cli.manifests import describe_object
from workload_map.cli.render import dump_document
from workload_map.cli.targets import definition_kind_match
from workload_map.cli.workload_view import describe_view, view_name
from workload_map.cluster.events import EventReader, workload_events
from workload_map.cluster.ownership import pods_by_owner
from workload_map.kube.errors import ClusterError, Forbidden
from workload_map.model.views import to_json

if TYPE_CHECKING:
    from workload_map.catalog.definitions import Definition
    from workload_map.cli.context import Context
    from workload_map.cluster.ownership import PodIndex

__all__ = ["describe_type", "names_a_type"]


def names_a_type(token: str, ctx: Context | None = None) -> bool:
    """Whether a bare word is a covered type (kind, plural, ``kind.version.group``): in the
    catalog, else (with ``ctx``) served by the cluster and covered by one of its Kartas."""

    if definition_kind_match(token, Definitions.builtin()):
        return True
    if ctx is None:
        return False

    try:
        cluster = ctx.cluster()
        served = cluster.match_type(token)
        definitions = ctx.definitions(cluster)
    except ClusterError:
        return False  # the usual path reports the cluster problem
    return any(definitions.for_group_kind(r.group, r.kind) for r in served)


def describe_type(token: str, args: argparse.Namespace, ctx: Context, fmt: str) -> int:
    """Describe every workload of ``token`` in the namespace (``-A``: in all of them)."""

    cluster = ctx.cluster()
    all_namespaces = bool(getattr(args, "all_namespaces", False))
    namespace = None if all_namespaces else cluster.namespace
    try:
        definitions = ctx.definitions(cluster)
        target = resolve_type(token, cluster, definitions, warn=ctx.warn)
        res = target.resource
        try:
            objs = list(
                cluster.iter_list(
                    res,
                    namespace if res.namespaced else None,
                    label_selector=getattr(args, "selector", None),
                )
            )
        except Forbidden as exc:
            raise CliError(
                str(exc), ERROR, hint=f"ask for the list verb on {res.group_resource}"
            ) from exc
        for obj in objs:  # the pods' owner chains end here: no GET for each of them
            cluster.remember(obj)
        pods = _pod_index(ctx, cluster, namespace) if objs else None
    except ClusterError as exc:
        raise CliError(str(exc), ERROR) from exc
    objs.sort(
        key=lambda o: (
            (o.get("metadata") or {}).get("namespace") or "",
            (o.get("metadata") or {}).get("name") or "",
        )
    )
    views = [_view(o, pods, target.definition, ctx) for o in objs]
    if getattr(args, "show_events", True) and fmt != "name":
        # each namespace's events read once for all its workloads
        reader = EventReader(cluster, whole_namespaces=True)
        for obj, view in zip(objs, views, strict=True):
            found = workload_events(
                cluster,
                obj,
                None if pods is None else pods.pods_of(obj),
                gang_pods=gang_pods(view),
                reader=reader,
            )
            view["events"] = to_json(found)
    if fmt in ("json", "yaml"):
        ctx.stdout.write(dump_document({"items": views, "count": len(views)}, fmt))
        return OK
    if not views:
        where = f"in namespace {namespace}" if namespace else "in any namespace"
        ctx.stderr.write(f"No workloads found {where}.\n")
        return OK
    if fmt == "name":
        ctx.stdout.write("".join(view_name(v) + "\n" for v in views))
        return OK

    for index, (obj, view) in enumerate(zip(objs, views, strict=True)):
        opts = RenderOptions(
            pod_limit=args.pod_limit,
            component_limit=args.component_limit,
            age=age((obj.get("metadata") or {}).get("creationTimestamp")),
            style=ctx.style,
        )
        if index:
            ctx.stdout.write("\n")
        ctx.stdout.write(render_describe(view, opts))
        if isinstance(view.get("events"), dict):
            ctx.stdout.write("\n" + render_events(view["events"], ctx.style, datetime.now(UTC)))
    return OK


def _pod_index(ctx: Context, cluster: Any, namespace: str | None) -> PodIndex | None:

    try:
        return pods_by_owner(cluster, namespace)
    except Forbidden as exc:
        ctx.warn(f"{exc}; showing the workloads without their pods")
        return None


def _view(
    obj: dict[str, Any],
    pods: PodIndex | None,
    definition: Definition,
    ctx: Context,
) -> dict[str, Any]:

    view = describe_view(obj, None if pods is None else pods.pods_of(obj), definition)
    label = describe_object(obj)
    for message in view.get("errors") or []:
        ctx.warn(f"{label}: {message}")
    return view
