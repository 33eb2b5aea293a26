"""``wlmap get``: workloads of one type (or of every covered type) with phase, pods and GPUs.

kubectl's grammar (``TYPE[/NAME] [NAME]``, ``-n``/``-A``, ``-l``, ``-o``). Each object is read
through its definition (the engine's describe view) so PHASE, PODS (ready/desired) and GPUS come
from the same rules as ``describe``. A bare NAME that is not a type is looked up across every
covered type: one match is shown, several are an error (exit 5).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from workload_map.cli.exits import ERROR, NOT_FOUND, OK, CliError, UsageError
from workload_map.cli.targets import NotInstalled, Target, parse_target, resolve_type

if TYPE_CHECKING:
    from workload_map.cli.context import Context
    from workload_map.cluster.client import Cluster
    from workload_map.cluster.definitions import Definitions

__all__ = ["OUTPUTS", "PHASES", "run"]

PHASES = (
    "Undefined",
    "Resuming",
    "Suspending",
    "Suspended",
    "Running",
    "Failed",
    "Completed",
    "Initializing",
    "Degraded",
)
OUTPUTS = ("table", "wide", "json", "yaml", "name")


def _phases(values: list[str]) -> set[str]:
    from workload_map.cli.suggest import did_you_mean

    by_lower = {p.lower(): p for p in PHASES}
    out = set()
    for value in values:
        for word in value.split(","):
            word = word.strip()
            if not word:
                continue
            if word.lower() not in by_lower:
                raise UsageError(
                    f'--phase: unknown phase "{word}" (valid: {", ".join(PHASES)})',
                    hint=did_you_mean(word, PHASES),
                )
            out.add(by_lower[word.lower()])
    return out


class Progress:
    """``listing jobsets… 1200`` on stderr when stdout is a terminal and listing is slow."""

    def __init__(self, ctx: Context, delay: float = 1.0) -> None:
        isatty = getattr(ctx.stdout, "isatty", None)
        self.enabled = bool(isatty and isatty())
        self.stream = ctx.stderr
        self.start = time.monotonic()
        self.delay = delay
        self.shown = False

    def update(self, what: str, count: int) -> None:
        if self.enabled and time.monotonic() - self.start >= self.delay:
            self.stream.write(f"\rlisting {what}... {count}\x1b[K")
            self.stream.flush()
            self.shown = True

    def done(self) -> None:
        if self.shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()


@dataclass
class Row:
    view: dict[str, Any]
    type_label: str
    created: str

    @property
    def sort_key(self) -> tuple[float, str, str]:
        from workload_map.cli.humanize import parse_timestamp

        ts = parse_timestamp(self.created)
        return (-(ts.timestamp() if ts else 0.0), str(self.view["kind"]), str(self.view["name"]))


def run(args: argparse.Namespace, ctx: Context) -> int:
    fmt = ctx.output_for(OUTPUTS, "get")
    phases = _phases(args.phase)
    if args.chunk_size < 0:
        raise UsageError(f"--chunk-size must be 0 (no paging) or more, got {args.chunk_size}")
    type_token, name = parse_target(list(args.target), "get")
    if args.all_types and type_token is not None:
        raise UsageError("--all-types lists every covered type; do not also give a TYPE")
    if type_token is None and not args.all_types:
        raise UsageError(
            "get needs a TYPE (e.g. wlmap get jobsets) or --all-types",
            hint="the covered types: wlmap definitions",
        )
    if name is not None and args.selector:
        raise UsageError("-l/--selector filters a list; it cannot be used with a NAME")
    if name is not None and args.all_namespaces:
        raise UsageError("a NAME is looked up in one namespace; drop -A or use -n NS")
    from workload_map.cluster.errors import ClusterError

    try:
        return _run(args, ctx, fmt, phases, type_token, name)
    except ClusterError as exc:
        raise CliError(str(exc), ERROR) from exc


def _run(
    args: argparse.Namespace,
    ctx: Context,
    fmt: str,
    phases: set[str],
    type_token: str | None,
    name: str | None,
) -> int:
    from workload_map.cluster.errors import Forbidden, NotFound

    cluster = ctx.cluster()
    definitions = ctx.definitions(cluster)
    namespace = None if args.all_namespaces else cluster.namespace
    if args.all_types:
        rows = _all_types(args, ctx, cluster, definitions, namespace)
        return _print(rows, ctx, fmt, phases, namespace, all_types=True)
    assert type_token is not None
    try:
        target = resolve_type(type_token, cluster, definitions, warn=ctx.warn)
    except NotInstalled as exc:
        if name is not None:
            raise
        ctx.warn(str(exc))
        return _print([], ctx, fmt, phases, namespace, all_types=False)
    except CliError as exc:
        if name is None and exc.payload is not None and "type" in exc.payload:
            return _bare_name(type_token, exc, args, ctx, cluster, definitions, fmt)
        raise
    if name is not None:
        ns = cluster.namespace if target.resource.namespaced else None
        try:
            obj = cluster.get(target.resource, name, ns)
        except NotFound as exc:
            raise CliError(str(exc), NOT_FOUND) from exc
        row = _row(ctx, cluster, target, obj, None, target.resource.kind)
        if row is None:
            raise CliError(f"could not resolve {target.resource.kind}/{name}", ERROR)
        if fmt in ("json", "yaml"):
            from workload_map.cli.render import dump_document

            ctx.stdout.write(dump_document(row.view, fmt))
            return OK
        return _print([row], ctx, fmt, phases, namespace, all_types=False)
    try:
        rows = list(_list(args, ctx, cluster, target, namespace, target.resource.kind))
    except Forbidden as exc:
        raise CliError(str(exc), ERROR, hint=_rbac_hint(target, namespace)) from exc
    return _print(rows, ctx, fmt, phases, namespace, all_types=False)


def _rbac_hint(target: Target, namespace: str | None) -> str:
    where = f" in namespace {namespace}" if namespace else " cluster-wide"
    return f"ask for the list verb on {target.resource.group_resource}{where}"


def _pod_index(
    ctx: Context, cluster: Cluster, namespace: str | None, chunk_size: int
) -> dict[str, list[dict[str, Any]]] | None:
    from workload_map.cluster.errors import Forbidden
    from workload_map.cluster.ownership import pods_by_owner

    try:
        return pods_by_owner(cluster, namespace, chunk_size=chunk_size)
    except Forbidden as exc:
        ctx.warn(f"{exc}; the PODS column shows desired counts only")
        return None


def _list(
    args: argparse.Namespace,
    ctx: Context,
    cluster: Cluster,
    target: Target,
    namespace: str | None,
    type_label: str,
    pods: dict[str, list[dict[str, Any]]] | None = None,
    progress: Progress | None = None,
) -> Iterator[Row]:
    progress = progress or Progress(ctx)
    objs = []
    for obj in cluster.iter_list(
        target.resource, namespace, label_selector=args.selector, chunk_size=args.chunk_size
    ):
        objs.append(obj)
        progress.update(target.resource.plural, len(objs))
    if objs and pods is None:
        pods = _pod_index(ctx, cluster, namespace, args.chunk_size)
    progress.done()
    for obj in objs:
        row = _row(ctx, cluster, target, obj, pods, type_label)
        if row is not None:
            yield row


def _row(
    ctx: Context,
    cluster: Cluster,
    target: Target,
    obj: dict[str, Any],
    pods: dict[str, list[dict[str, Any]]] | None,
    type_label: str,
) -> Row | None:
    from workload_map.engine import Workload
    from workload_map.errors import WlmapError
    from workload_map.jq.errors import JqError

    meta = obj.get("metadata") or {}
    uid = str(meta.get("uid") or "")
    if pods is None:
        from workload_map.cluster.errors import Forbidden
        from workload_map.cluster.ownership import find_pods

        try:
            pod_list: list[dict[str, Any]] | None = find_pods(cluster, obj)
        except Forbidden:
            pod_list = None
    else:
        pod_list = pods.get(uid, [])
    d = target.definition
    try:
        view = Workload(d.karta, obj, pod_list, definition_name=d.name, origin=d.origin).describe()
    except (WlmapError, JqError, ValueError, TypeError, KeyError) as exc:
        ctx.warn(f"could not resolve {obj.get('kind')}/{meta.get('name')}: {exc}")
        return None
    counts = view.get("pods") or {}
    row_view = {
        "name": meta.get("name"),
        "namespace": meta.get("namespace"),
        "kind": obj.get("kind"),
        "apiVersion": obj.get("apiVersion"),
        "createdAt": meta.get("creationTimestamp"),
        "definition": d.name,
        "origin": d.origin,
        "phases": list(view.get("phases") or ["Undefined"]),
        "pods": {
            "desired": counts.get("desired"),
            "current": counts.get("current"),
            "ready": counts.get("ready"),
        },
        "gpus": (view.get("resources") or {}).get("gpus", 0),
    }
    return Row(row_view, type_label, str(meta.get("creationTimestamp") or ""))


def _all_types(
    args: argparse.Namespace,
    ctx: Context,
    cluster: Cluster,
    definitions: Definitions,
    namespace: str | None,
) -> list[Row]:
    from workload_map.cli.targets import covered_targets
    from workload_map.cluster.errors import Forbidden
    from workload_map.cluster.ownership import owning_workload

    covered = {(d.gvk.group, d.gvk.kind) for d in definitions.all() if d.gvk is not None}
    kind_groups: dict[str, set[str]] = {}
    for group, kind in covered:
        kind_groups.setdefault(kind, set()).add(group)
    targets = []
    for target in covered_targets(cluster, definitions):
        res = target.resource
        label = (
            f"{res.kind}.{res.group}" if len(kind_groups[res.kind]) > 1 and res.group else res.kind
        )
        targets.append((target, label))

    def is_covered(api_version: str, kind: str) -> bool:
        return (api_version.rpartition("/")[0], kind) in covered

    unreadable: set[str] = set()

    def on_unreadable(ref: dict[str, Any]) -> None:
        what = f"{ref.get('kind')}/{ref.get('name')}"
        if what not in unreadable:
            unreadable.add(what)
            ctx.warn(f"could not read owner {what}; keeping its objects as top-level")

    progress = Progress(ctx)
    pods: dict[str, list[dict[str, Any]]] | None = None
    rows: list[Row] = []
    for target, label in targets:
        try:
            objs = list(
                cluster.iter_list(
                    target.resource,
                    namespace,
                    label_selector=args.selector,
                    chunk_size=args.chunk_size,
                )
            )
        except Forbidden as exc:
            ctx.warn(str(exc))
            continue
        progress.update(target.resource.plural, len(rows) + len(objs))
        top = [o for o in objs if owning_workload(cluster, o, is_covered, on_unreadable) is None]
        if top and pods is None:
            pods = _pod_index(ctx, cluster, namespace, args.chunk_size) or {}
        for obj in top:
            row = _row(ctx, cluster, target, obj, pods, label)
            if row is not None:
                rows.append(row)
    progress.done()
    return rows


def _bare_name(
    word: str,
    type_error: CliError,
    args: argparse.Namespace,
    ctx: Context,
    cluster: Cluster,
    definitions: Definitions,
    fmt: str,
) -> int:
    """``wlmap get NAME``: find NAME among every covered type in the namespace."""
    from workload_map.cli.targets import ambiguous_name_error, find_by_name

    found = find_by_name(word, cluster, definitions)
    if not found:
        raise type_error
    if len(found) > 1:
        raise ambiguous_name_error(word, found, "get")
    target, obj = found[0]
    row = _row(ctx, cluster, target, obj, None, target.resource.kind)
    if row is None:
        raise CliError(f"could not resolve {target.resource.kind}/{word}", ERROR)
    if fmt in ("json", "yaml"):
        from workload_map.cli.render import dump_document

        ctx.stdout.write(dump_document(row.view, fmt))
        return OK
    return _print([row], ctx, fmt, set(), cluster.namespace, all_types=True)


def _pods_cell(pods: dict[str, Any]) -> str:
    desired = pods.get("desired")
    ready = pods.get("ready")
    d = "?" if desired is None else str(desired)
    return f"{'-' if ready is None else ready}/{d}"


def _print(
    rows: list[Row],
    ctx: Context,
    fmt: str,
    phases: set[str],
    namespace: str | None,
    *,
    all_types: bool,
) -> int:
    from workload_map.cli.humanize import age

    if phases:
        rows = [r for r in rows if phases & set(r.view["phases"])]
    rows.sort(key=lambda r: r.sort_key)
    if fmt in ("json", "yaml"):
        from workload_map.cli.render import dump_document

        ctx.stdout.write(dump_document({"items": [r.view for r in rows], "count": len(rows)}, fmt))
        return OK
    if not rows:
        where = f"in namespace {namespace}" if namespace else "in any namespace"
        ctx.stderr.write(f"No workloads found {where}.\n")
        return OK
    if fmt == "name":
        for r in rows:
            group = str(r.view["apiVersion"]).rpartition("/")[0]
            kind = str(r.view["kind"]).lower() + (f".{group}" if group else "")
            ctx.stdout.write(f"{kind}/{r.view['name']}\n")
        return OK
    from workload_map.cli.render import format_table

    headers = (
        ["NAME", "NAMESPACE"] + (["TYPE"] if all_types else []) + ["PHASE", "PODS", "GPUS", "AGE"]
    )
    if fmt == "wide":
        headers += ["DEFINITION", "ORIGIN"]
    table = []
    for r in rows:
        v = r.view
        cells = [str(v["name"]), str(v["namespace"] or "<none>")]
        if all_types:
            cells.append(r.type_label)
        cells += [
            ctx.style.phase(",".join(v["phases"])),
            _pods_cell(v["pods"]),
            str(v["gpus"] or 0),
            age(v["createdAt"]),
        ]
        if fmt == "wide":
            cells += [str(v["definition"]), str(v["origin"])]
        table.append(cells)
    for line in format_table(headers, table):
        ctx.stdout.write(line + "\n")
    return OK
