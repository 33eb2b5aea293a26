"""``wlmap get -w`` / ``--watch-only``: follow one type (or one workload) through the API's watch.

Each event on a workload re-reads it through its definition (its pods fetched fresh), and the
row is printed again only when what it shows changed, like kubectl. Table columns keep the
widths of the first screen so the rows stay aligned; JSON/YAML print one document per change.
Runs until interrupted (Ctrl-C exits 130, as a shell reports a SIGINT).
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from workload_map.cli.exits import OK

if TYPE_CHECKING:
    from workload_map.cli.context import Context
    from workload_map.cli.get_cmd import Row
    from workload_map.cli.targets import Target
    from workload_map.cluster.client import Cluster

__all__ = ["follow"]


class _Screen:
    """Prints rows as they change, aligned to the first screen's column widths."""

    def __init__(self, ctx: Context, opts: Any, hooks: Any, initial: list[Row]) -> None:
        self.ctx = ctx
        self.opts = opts
        self.hooks = hooks
        self.last: dict[str, str] = {}
        self.widths: list[int] = []
        self.header_done = bool(initial) or opts.no_headers
        kept = [r for r in initial if hooks.keep(r, opts)]
        table = self.tabular
        if table:
            lines = [] if opts.no_headers else [hooks.header(opts)]
            lines += [hooks.cells(r, ctx, opts) for r in kept]
            self._grow(lines)
        for row in kept:
            self.last[row.key] = self._text(row)

    @property
    def tabular(self) -> bool:
        return self.opts.spec.kind in ("table", "wide", "custom-columns")

    def _grow(self, lines: list[list[str]]) -> None:
        from workload_map.cli.render import _visible_len

        for cells in lines:
            for i, cell in enumerate(cells):
                if i >= len(self.widths):
                    self.widths.append(0)
                self.widths[i] = max(self.widths[i], _visible_len(cell))

    def _line(self, cells: list[str]) -> str:
        from workload_map.cli.render import _visible_len

        gap = 3
        out = []
        for i, cell in enumerate(cells):
            last = i == len(cells) - 1
            width = self.widths[i] if i < len(self.widths) else 0
            if self.opts.spec.kind == "custom-columns":
                width = max(width + gap, 6) - gap
            out.append(cell if last else cell + " " * max(width - _visible_len(cell), 0))
        return (" " * gap).join(out).rstrip()

    def _text(self, row: Row) -> str:
        from workload_map.cli.render import dump_document

        kind = self.opts.spec.kind
        if self.tabular:
            return "\t".join(self.hooks.cells(row, self.ctx, self.opts))
        if kind in ("json", "yaml"):
            return dump_document(row.view, kind)
        if kind == "name":
            from workload_map.cli.get_cmd import name_of

            return name_of(row.view) + "\n"
        return str(self.opts.spec.render_object(row.view))

    def show(self, row: Row) -> None:
        if not self.hooks.keep(row, self.opts):
            return
        text = self._text(row)
        if self.last.get(row.key) == text:
            return
        self.last[row.key] = text
        out = self.ctx.stdout
        if self.tabular:
            cells = self.hooks.cells(row, self.ctx, self.opts)
            if not self.header_done:
                header = self.hooks.header(self.opts)
                self._grow([header, cells])
                out.write(self._line(header) + "\n")
                self.header_done = True
            self._grow([cells])
            out.write(self._line(cells) + "\n")
        elif self.opts.spec.kind == "yaml":
            out.write("---\n" + text)
        else:
            out.write(text)
        out.flush()


def follow(
    ctx: Context,
    cluster: Cluster,
    target: Target,
    namespace: str | None,
    name: str | None,
    args: argparse.Namespace,
    opts: Any,
    initial: list[Row],
    hooks: Any,
    version: str,
) -> int:
    """Print changes from ``version`` on until interrupted."""
    from workload_map.cluster.watch import WatchExpired, list_version, watch

    res = target.resource
    ns = namespace if res.namespaced else None
    if name is not None:
        ns = cluster.namespace if res.namespaced else None
    field_selector = f"metadata.name={name}" if name else None
    screen = _Screen(ctx, opts, hooks, initial)
    label = initial[0].type_label if initial else res.kind
    while True:
        try:
            for event in watch(
                cluster,
                res,
                ns,
                resource_version=version,
                label_selector=args.selector,
                field_selector=field_selector,
            ):
                version = str(
                    (event.object.get("metadata") or {}).get("resourceVersion") or version
                )
                row = hooks.row(ctx, cluster, target, event.object, label)
                if row is not None:
                    screen.show(row)
                ctx.flush_warnings()
        except WatchExpired:
            version = list_version(
                cluster, res, ns, label_selector=args.selector, field_selector=field_selector
            )
            continue
        return OK
