"""``wlmap get``: workloads of some types (or of every covered type) with phase, pods and GPUs.

kubectl's grammar: ``TYPE[,TYPE…] [NAME…]``, ``TYPE/NAME…``, ``-n``/``-A``, ``-l``, ``-o`` (also
``jsonpath=…`` and ``custom-columns=…``, applied to the document ``-o json`` prints),
``--sort-by``, ``-L``, ``--show-labels``, ``--no-headers`` and ``-w``/``--watch-only``. Each object
is read through its definition (the engine's describe view), so PHASE, PODS (ready/desired) and
GPUS follow the same rules as ``describe``. A bare NAME that is not a type is looked up across
every covered type: one match is shown, several are an error (exit 5).

Rows are sorted by namespace then name (kubectl's order; the reference sorts newest first, see
docs/reference-differences.md). With ``-A`` the NAMESPACE column comes first; in one namespace it
is left out, as kubectl does.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import msgspec

from workload_map.cli.choices import GET_OUTPUTS, PHASES
from workload_map.cli.exits import ERROR, NOT_FOUND, OK, CliError, JsonPathError, UsageError
from workload_map.cli.get_rows import PODS_UNKNOWN, Row, make_row
from workload_map.cli.humanize import age
from workload_map.cli.live_targets import (
    ambiguous_name_error,
    covered_targets,
    find_by_name,
    resolve_type,
)
from workload_map.cli.printers import OutputSpec, is_template_output, parse_output, tab_layout
from workload_map.cli.render import dump_document, format_table
from workload_map.cli.suggest import did_you_mean
from workload_map.cli.targets import NotInstalled, Target
from workload_map.cli.workload_view import view_name
from workload_map.cluster.ownership import owning_workload, pods_by_owner
from workload_map.kube.errors import ClusterError, Forbidden, NotFound, NotServed

if TYPE_CHECKING:
    from workload_map.catalog.definitions import Definitions
    from workload_map.cli.context import Context
    from workload_map.cli.printers import OutputSpec
    from workload_map.cluster.ownership import PodIndex
    from workload_map.kube.client import Cluster

__all__ = ["OUTPUTS", "PHASES", "Request", "parse_requests", "run"]

OUTPUTS = GET_OUTPUTS


def _phases(values: list[str]) -> set[str]:
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


class Request(msgspec.Struct):
    """One TYPE the user named, with the NAMEs asked for (none: list them all)."""

    token: str
    names: list[str] = msgspec.field(default_factory=list)


def parse_requests(words: list[str]) -> list[Request]:
    """``TYPE[,TYPE…] [NAME…]`` or ``TYPE/NAME [TYPE/NAME…]`` → requests, in the order given."""
    if not words:
        return []
    if "/" in words[0]:
        out: list[Request] = []
        for word in words:
            token, slash, name = word.partition("/")
            if not slash:
                raise UsageError(
                    "there is no need to give a TYPE as a separate argument when passing "
                    f'arguments in TYPE/NAME form (e.g. "wlmap get {words[0]}" or '
                    f'"wlmap get {words[0].partition("/")[0]} {word}")'
                )
            if not token:
                raise UsageError(f'"{word}": the TYPE before "/" is missing')
            if not name or "/" in name:
                raise UsageError(f'"{word}": expected TYPE/NAME')
            for req in out:
                if req.token == token:
                    req.names.append(name)
                    break
            else:
                out.append(Request(token, [name]))
        return out
    tokens = words[0].split(",")
    if any(not t for t in tokens):
        raise UsageError(f'"{words[0]}": an empty TYPE in the comma-separated list')
    names = words[1:]
    for name in names:
        if "/" in name:
            raise UsageError(
                f'"{name}": give either TYPE NAME… or TYPE/NAME…, not both forms at once'
            )
    return [Request(t, list(names)) for t in dict.fromkeys(tokens)]


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


class _Options(msgspec.Struct):
    """What shapes the output, gathered once from the flags."""

    spec: OutputSpec
    phases: set[str]
    stuck: bool
    all_namespaces: bool
    show_type: bool
    no_headers: bool
    show_labels: bool
    label_columns: list[str]
    sort_by: Any  # a jsonpath Template or None
    namespace: str | None
    #: a CLUSTER column first (several contexts)
    cluster_column: bool = False
    #: rows go here instead of being printed (one cluster of several)
    collect: list[Row] | None = None


def _label_columns(values: list[str]) -> list[str]:
    out: list[str] = []
    for value in values:
        for key in value.split(","):
            key = key.strip()
            if key and key not in out:
                out.append(key)
    return out


def _output_spec(ctx: Context) -> OutputSpec:

    if is_template_output(ctx.settings.output):
        return parse_output(ctx.settings.output)
    return OutputSpec(ctx.output_for(OUTPUTS, "get"))


def _sort_template(text: str | None) -> Any:
    if not text:
        return None
    # lazy: JSONPath templates only where -o or --sort-by asks for them (~8 ms of imports)
    from workload_map.cli.jsonpath import compile_template, relaxed_expression

    try:
        return compile_template(relaxed_expression(text))
    except JsonPathError as exc:
        raise UsageError(f"--sort-by {text}: {exc}") from exc


def run(args: argparse.Namespace, ctx: Context) -> int:
    if len(ctx.contexts) > 1 or ctx.all_contexts:
        return _many_clusters(args, ctx)
    return _one_cluster(args, ctx)


def _many_clusters(args: argparse.Namespace, ctx: Context) -> int:
    """``get`` over several contexts: the rows of each (see :mod:`~workload_map.cli.get_clusters`)
    together, with a CLUSTER column first; exit 1 when some cluster could not be listed."""
    # lazy: the fan-out loads only when several contexts are named
    from workload_map.cli.get_clusters import gather

    rows, failed = gather(
        args, ctx, lambda sub, collected: _one_cluster(args, sub, collect=collected)
    )
    opts = _options(args, ctx, parse_requests(list(args.target)), None)
    opts.cluster_column = True
    code = _print(rows, ctx, opts, single=False)
    return ERROR if failed else code


def _one_cluster(
    args: argparse.Namespace, ctx: Context, *, collect: list[Row] | None = None
) -> int:
    spec = _output_spec(ctx)
    phases = _phases(args.phase)
    if args.chunk_size < 0:
        raise UsageError(f"--chunk-size must be 0 (no paging) or more, got {args.chunk_size}")
    requests = parse_requests(list(args.target))
    watching = bool(getattr(args, "watch", False) or getattr(args, "watch_only", False))
    if args.all_types and requests:
        raise UsageError("--all-types lists every covered type; do not also give a TYPE")
    if not requests and not args.all_types:
        raise UsageError(
            "get needs a TYPE (e.g. wlmap get jobsets) or --all-types",
            hint="the covered types: wlmap definitions",
        )
    named = any(r.names for r in requests)
    if named and args.selector:
        raise UsageError("-l/--selector filters a list; it cannot be used with a NAME")
    if named and args.all_namespaces:
        raise UsageError("a NAME is looked up in one namespace; drop -A or use -n NS")
    if watching and (args.all_types or len(requests) > 1):
        raise UsageError(
            "watch is only supported on one type at a time",
            hint="e.g. wlmap get jobsets -w",
        )
    if watching and sum(len(r.names) for r in requests) > 1:
        raise UsageError("watch follows one workload or a whole type, not several names")

    try:
        return _run(args, ctx, spec, phases, requests, watching, collect)
    except NotServed as exc:  # a type removed since discovery was cached: as not installed
        raise CliError(str(exc), NOT_FOUND) from exc
    except ClusterError as exc:
        raise CliError(str(exc), ERROR) from exc


def _options(
    args: argparse.Namespace, ctx: Context, requests: list[Request], namespace: str | None
) -> _Options:
    return _Options(
        spec=_output_spec(ctx),
        phases=_phases(args.phase),
        stuck=bool(getattr(args, "stuck", False)),
        all_namespaces=bool(args.all_namespaces),
        show_type=bool(args.all_types) or len(requests) > 1,
        no_headers=bool(getattr(args, "no_headers", False)),
        show_labels=bool(getattr(args, "show_labels", False)),
        label_columns=_label_columns(getattr(args, "label_columns", None) or []),
        sort_by=_sort_template(getattr(args, "sort_by", None)),
        namespace=namespace,
    )


def _run(
    args: argparse.Namespace,
    ctx: Context,
    spec: OutputSpec,
    phases: set[str],
    requests: list[Request],
    watching: bool,
    collect: list[Row] | None = None,
) -> int:

    cluster = ctx.cluster()
    definitions = ctx.definitions(cluster)
    namespace = None if args.all_namespaces else cluster.namespace
    opts = _options(args, ctx, requests, namespace)
    opts.spec, opts.phases = spec, phases
    opts.collect = collect
    if args.all_types:
        return _print(
            _all_types(args, ctx, cluster, definitions, namespace), ctx, opts, single=False
        )
    targets: list[Target] = []
    for req in requests:
        try:
            targets.append(resolve_type(req.token, cluster, definitions, warn=ctx.warn))
        except NotInstalled:
            raise
        except CliError as exc:
            bare = len(requests) == 1 and not req.names and "," not in req.token
            if bare and exc.payload is not None and "type" in exc.payload:
                return _bare_name(req.token, exc, ctx, cluster, definitions, opts)
            raise
    labels = _type_labels(targets)
    version = ""
    if watching:  # taken before listing, so no change between the list and the watch is lost
        from workload_map.kube.watch import list_version

        res = targets[0].resource
        name = requests[0].names[0] if requests[0].names else None
        version = list_version(
            cluster,
            res,
            (cluster.namespace if name else namespace) if res.namespaced else None,
            label_selector=args.selector,
            field_selector=f"metadata.name={name}" if name else None,
        )
    rows: list[Row] = []
    missing: list[str] = []
    watch_only = watching and bool(getattr(args, "watch_only", False))
    for req, target in zip(requests, targets, strict=True):
        if watch_only:
            break  # kubectl's --watch-only: no first screen, only changes
        label = labels[id(target)]
        if req.names:
            ns = cluster.namespace if target.resource.namespaced else None
            for name in req.names:
                try:
                    obj = cluster.get(target.resource, name, ns)
                except NotFound as exc:
                    missing.append(str(exc))
                    continue
                row = make_row(ctx, cluster, target, obj, None, label)
                if row is None:
                    raise CliError(f"could not resolve {target.resource.kind}/{name}", ERROR)
                rows.append(row)
            continue
        try:
            rows.extend(_list(args, ctx, cluster, target, namespace, label))
        except Forbidden as exc:
            raise CliError(str(exc), ERROR, hint=_rbac_hint(target, namespace)) from exc
    single = len(requests) == 1 and len(requests[0].names) == 1
    if not watch_only:
        if missing and not rows:
            raise CliError("; ".join(missing), NOT_FOUND)
        code = _print(rows, ctx, opts, single=single, quiet_empty=watching)
    else:
        code = OK
    if missing:
        raise CliError("; ".join(missing), NOT_FOUND)
    if watching:
        from workload_map.cli.get_watch import follow

        name = requests[0].names[0] if requests[0].names else None
        return follow(
            ctx, cluster, targets[0], namespace, name, args, opts, rows, _Hooks(), version
        )
    return code


class _Hooks:
    """What the watch loop needs from this module (kept here so rows look the same)."""

    def row(
        self,
        ctx: Context,
        cluster: Cluster,
        target: Target,
        obj: dict[str, Any],
        label: str,
        pods: list[dict[str, Any]] | None = None,
    ) -> Row | None:
        return make_row(ctx, cluster, target, obj, pods, label)

    def keep(self, row: Row, opts: _Options) -> bool:
        return _keep(row, opts)

    def header(self, opts: _Options) -> list[str]:
        return _headers(opts)

    def cells(self, row: Row, ctx: Context, opts: _Options) -> list[str]:
        return _cells(row, ctx, opts)


def _type_labels(targets: list[Target]) -> dict[int, str]:
    by_kind: dict[str, set[str]] = {}
    for t in targets:
        by_kind.setdefault(t.resource.kind, set()).add(t.resource.group)
    out = {}
    for t in targets:
        res = t.resource
        several = len(by_kind[res.kind]) > 1 and res.group
        out[id(t)] = f"{res.kind}.{res.group}" if several else res.kind
    return out


def _rbac_hint(target: Target, namespace: str | None) -> str:
    where = f" in namespace {namespace}" if namespace else " cluster-wide"
    return f"ask for the list verb on {target.resource.group_resource}{where}"


def _pod_index(
    ctx: Context, cluster: Cluster, namespace: str | None, chunk_size: int
) -> PodIndex | None:

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
    pods: PodIndex | None = None,
    progress: Progress | None = None,
) -> Iterator[Row]:
    progress = progress or Progress(ctx)
    objs = []
    for obj in cluster.iter_list(
        target.resource, namespace, label_selector=args.selector, chunk_size=args.chunk_size
    ):
        objs.append(obj)
        # the pods' owner chains end at these objects: answered from the list, not a GET each
        cluster.remember(obj)
        progress.update(target.resource.plural, len(objs))
    if objs and pods is None:
        pods = _pod_index(ctx, cluster, namespace, args.chunk_size)
    progress.done()
    for obj in objs:
        row = make_row(ctx, cluster, target, obj, pods, type_label)
        if row is not None:
            yield row


def _all_types(
    args: argparse.Namespace,
    ctx: Context,
    cluster: Cluster,
    definitions: Definitions,
    namespace: str | None,
) -> list[Row]:

    covered = {(d.gvk.group, d.gvk.kind) for d in definitions.all() if d.gvk is not None}
    kind_groups: dict[str, set[str]] = {}
    for group, kind in covered:
        kind_groups.setdefault(kind, set()).add(group)
    targets = []
    for target in covered_targets(cluster, definitions):  # types the cluster does not serve
        res = target.resource  # are not among them: skipped without a word
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
    pods: PodIndex | None = None
    rows: list[Row] = []
    forbidden: list[str] = []
    listed: list[tuple[Target, str, list[dict[str, Any]]]] = []
    seen = 0
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
        except Forbidden:
            forbidden.append(target.resource.group_resource)
            continue
        except NotFound:
            continue  # served at discovery, gone since (a CRD being removed): nothing to list
        seen += len(objs)
        progress.update(target.resource.plural, seen)
        for obj in objs:  # owner chains end at listed objects: answered without a GET each
            cluster.remember(obj)
        listed.append((target, label, objs))
    for target, label, objs in listed:
        top = [o for o in objs if owning_workload(cluster, o, is_covered, on_unreadable) is None]
        if top and pods is None:
            pods = _pod_index(ctx, cluster, namespace, args.chunk_size)
            if pods is None:  # forbidden: every row's pods are unknown, not 0
                pods = PODS_UNKNOWN
        for obj in top:
            row = make_row(ctx, cluster, target, obj, pods, label)
            if row is not None:
                rows.append(row)
    progress.done()
    if forbidden:
        where = f"in namespace {namespace}" if namespace else "cluster-wide"
        shown = ", ".join(forbidden[:5]) + (
            f", +{len(forbidden) - 5} more" if len(forbidden) > 5 else ""
        )
        noun = "type" if len(forbidden) == 1 else "types"
        ctx.warn(f"not allowed to list {len(forbidden)} {noun} {where} (left out): {shown}")
    return rows


def _bare_name(
    word: str,
    type_error: CliError,
    ctx: Context,
    cluster: Cluster,
    definitions: Definitions,
    opts: _Options,
) -> int:
    """``wlmap get NAME``: find NAME among every covered type in the namespace."""

    found = find_by_name(word, cluster, definitions)
    if not found:
        raise type_error
    if len(found) > 1:
        raise ambiguous_name_error(word, found, "get")
    target, obj = found[0]
    row = make_row(ctx, cluster, target, obj, None, target.resource.kind)
    if row is None:
        raise CliError(f"could not resolve {target.resource.kind}/{word}", ERROR)
    opts.show_type = True
    opts.phases = set()
    return _print([row], ctx, opts, single=True)


def _pods_cell(view: dict[str, Any]) -> str:
    pods = view.get("pods") or {}
    desired = pods.get("desired")
    ready = pods.get("ready")
    if "Completed" in (view.get("phases") or []) and not pods.get("current"):
        return "completed"  # finished: 0/3 would read as three pods missing
    d = "?" if desired is None else str(desired)
    return f"{'-' if ready is None else ready}/{d}"


def _keep(row: Row, opts: _Options) -> bool:
    if opts.phases and not opts.phases & set(row.view["phases"]):
        return False
    return not (opts.stuck and not row.view.get("stuck"))


def _sorted(rows: list[Row], opts: _Options) -> list[Row]:
    rows = sorted(rows, key=lambda r: r.sort_key)
    if opts.sort_by is None:
        return rows

    def key(row: Row) -> tuple[int, Any]:
        try:
            found = [v for group in opts.sort_by.find(row.view) for v in group]
        except JsonPathError as exc:
            raise UsageError(f"--sort-by: {exc}") from exc
        if not found:
            return (0, "")  # rows without the field first, as kubectl
        if len(found) > 1:
            raise UsageError(
                f"--sort-by {opts.sort_by.source}: the expression gives {len(found)} values for "
                f"{row.view.get('name')}; it must give one"
            )
        value = found[0]
        if isinstance(value, bool):
            return (1, int(value))
        if isinstance(value, (int, float)):
            return (2, value)
        if isinstance(value, str):
            return (3, value)
        # lazy: JSONPath templates only where -o asks for them (~8 ms of imports)
        from workload_map.cli.jsonpath import go_json

        return (4, go_json(value))

    return sorted(rows, key=key)


def _headers(opts: _Options) -> list[str]:
    kind = opts.spec.kind
    if kind == "custom-columns":
        return opts.spec.column_headers()
    headers = (["CLUSTER"] if opts.cluster_column else []) + (
        ["NAMESPACE"] if opts.all_namespaces else []
    )
    headers.append("NAME")
    if opts.show_type:
        headers.append("TYPE")
    headers += ["PHASE", "PODS", "GPUS", "AGE"]
    if kind == "wide":
        headers += ["PENDING", "HELD", "GPUS-PENDING", "GPUS-HELD", "DEFINITION", "ORIGIN", "STUCK"]
    headers += [key.rpartition("/")[2].upper() for key in opts.label_columns]
    if opts.show_labels:
        headers.append("LABELS")
    return headers


def _count(value: Any) -> str:
    return "-" if value is None else str(value)


def _labels_text(labels: dict[str, Any]) -> str:
    if not labels:
        return "<none>"
    return ",".join(f"{k}={labels[k]}" for k in sorted(labels))


def _cells(row: Row, ctx: Context, opts: _Options) -> list[str]:

    if opts.spec.kind == "custom-columns":
        return opts.spec.column_cells(row.view)
    v = row.view
    cells = [row.cluster or ""] if opts.cluster_column else []
    if opts.all_namespaces:
        cells.append(str(v.get("namespace") or ""))
    cells.append(str(v["name"]))
    if opts.show_type:
        cells.append(row.type_label)
    cells += [
        ctx.style.phase(",".join(v["phases"])),
        _pods_cell(v),
        str(v["gpus"] or 0),
        age(v["createdAt"]),
    ]
    if opts.spec.kind == "wide":
        # the shared vocabulary (engine/summary.py): GPUS is what the spec requests
        cells += [_count(v["pods"].get(k)) for k in ("pending", "held")]
        cells += [_count(v.get(k)) for k in ("gpusPending", "gpusHeld")]
        cells += [str(v["definition"]), str(v["origin"]), str(v.get("stuck") or "-")]
    labels = (v.get("metadata") or {}).get("labels") or {}
    cells += [str(labels.get(key, "")) for key in opts.label_columns]
    if opts.show_labels:
        cells.append(_labels_text(labels))
    return cells


def _print(
    rows: list[Row], ctx: Context, opts: _Options, *, single: bool, quiet_empty: bool = False
) -> int:

    if opts.collect is not None:  # one cluster of several: printed together by the caller
        opts.collect.extend(rows)
        return OK
    rows = _sorted([r for r in rows if _keep(r, opts)], opts)
    kind = opts.spec.kind
    if single and len(rows) == 1:
        doc: Any = rows[0].view
    else:
        doc = {"items": [r.view for r in rows], "count": len(rows)}
    if kind in ("json", "yaml"):
        ctx.stdout.write(dump_document(doc, kind))
        return OK
    if kind == "jsonpath":
        try:
            ctx.stdout.write(opts.spec.render_object(doc))
        except JsonPathError as exc:
            raise CliError(str(exc), ERROR) from exc
        return OK
    if not rows:
        if not quiet_empty:
            where = f"in namespace {opts.namespace}" if opts.namespace else "in any namespace"
            ctx.stderr.write(f"No workloads found {where}.\n")
        return OK
    if kind == "name":
        for r in rows:
            ctx.stdout.write(view_name(r.view) + "\n")
        return OK
    for line in _table(rows, ctx, opts):
        ctx.stdout.write(line + "\n")
    return OK


def _table(rows: list[Row], ctx: Context, opts: _Options) -> list[str]:
    if opts.spec.kind == "custom-columns":  # only templates evaluate JSONPath (and import it)
        try:
            body = [_cells(r, ctx, opts) for r in rows]
        except JsonPathError as exc:
            raise CliError(str(exc), ERROR) from exc
        return tab_layout(([] if opts.no_headers else [_headers(opts)]) + body)
    body = [_cells(r, ctx, opts) for r in rows]
    header = [] if opts.no_headers else [_headers(opts)]

    lines = format_table(header[0] if header else [""] * len(body[0]), body)
    return lines if header else lines[1:]
