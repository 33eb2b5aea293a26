"""kubectl's template outputs: ``-o jsonpath=…``, ``-o custom-columns=…`` (and their ``-file=``
forms), parsed once and applied to the documents ``-o json`` would print.

Columns are laid out as kubectl's tabwriter does (each column at least 6 wide, 3 spaces of
padding, the last column unpadded), so scripts that cut kubectl's columns cut ours the same way.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import msgspec

from workload_map.cli.exits import JsonPathError, UsageError
from workload_map.kube import paths

if TYPE_CHECKING:  # the template engine loads only when a template is used (fast start-up)
    from workload_map.cli.jsonpath import Template

__all__ = [
    "TEMPLATE_KINDS",
    "OutputSpec",
    "is_template_output",
    "parse_output",
    "tab_layout",
]

TEMPLATE_KINDS = ("jsonpath", "jsonpath-file", "custom-columns", "custom-columns-file")


def is_template_output(value: str) -> bool:
    """Whether an ``-o`` value is one of the template forms (``jsonpath=…`` and friends)."""
    kind, eq, _ = value.partition("=")
    return bool(eq) and kind in TEMPLATE_KINDS


class OutputSpec(msgspec.Struct):
    """What ``-o`` asked for: a plain format, or a template (jsonpath / custom columns)."""

    kind: str  # table, wide, json, yaml, name, jsonpath, custom-columns
    template: Template | None = None
    columns: list[tuple[str, Template]] = msgspec.field(default_factory=list)

    @property
    def is_template(self) -> bool:
        return self.kind in ("jsonpath", "custom-columns")

    def render_object(self, obj: Any) -> str:
        """One object as jsonpath text (no newline added, as kubectl)."""
        assert self.template is not None
        return self.template.render(obj)

    def column_cells(self, obj: Any) -> list[str]:
        """kubectl's custom-columns cells: every result joined by commas, ``<none>`` if none."""
        # lazy: JSONPath only where a template is printed (~8 ms of imports)
        from workload_map.cli.jsonpath import go_sprint

        cells = []
        for _, template in self.columns:
            results = template.find(obj)
            values = [v for group in results for v in group]
            if not results or not results[0]:
                cells.append("<none>")
            else:
                cells.append(",".join(go_sprint(v) for v in values))
        return cells

    def column_headers(self) -> list[str]:
        return [header for header, _ in self.columns]


def _read_file(path: str, flag: str) -> str:
    try:
        with open(paths.expand(path), encoding="utf-8") as file:  # Path(path).expanduser()
            return file.read()
    except OSError as exc:
        raise UsageError(f"-o {flag}={path}: {exc.strerror or exc}") from exc


def parse_output(value: str) -> OutputSpec:
    """Parse an ``-o`` value; template errors are usage errors naming the template."""
    # lazy: JSONPath only where a template is printed (~8 ms of imports)
    from workload_map.cli.jsonpath import compile_template

    kind, eq, rest = value.partition("=")
    if not eq or kind not in TEMPLATE_KINDS:
        return OutputSpec(value)
    try:
        if kind in ("jsonpath", "jsonpath-file"):
            text = _read_file(rest, kind) if kind == "jsonpath-file" else rest
            if not text:
                raise UsageError("template format specified but no template given")
            return OutputSpec("jsonpath", template=compile_template(text))
        text = _read_file(rest, kind) if kind == "custom-columns-file" else rest
        return OutputSpec("custom-columns", columns=_columns(text, from_file=kind.endswith("file")))
    except JsonPathError as exc:
        raise UsageError(str(exc)) from exc


def _columns(text: str, *, from_file: bool) -> list[tuple[str, Template]]:
    # lazy: JSONPath only where a template is printed (~8 ms of imports)
    from workload_map.cli.jsonpath import compile_template, relaxed_expression

    if from_file:
        # a file: a line of headers, then a line of expressions, separated by blanks
        lines = [line for line in text.splitlines() if line.strip()]
        if len(lines) != 2:
            raise UsageError(
                "custom-columns-file: expected two lines (headers, then expressions), "
                f"got {len(lines)}"
            )
        headers, exprs = lines[0].split(), lines[1].split()
        if len(headers) != len(exprs):
            raise UsageError(
                f"custom-columns-file: {len(headers)} headers but {len(exprs)} expressions"
            )
        pairs = list(zip(headers, exprs, strict=True))
    else:
        if not text:
            raise UsageError("custom-columns format specified but no custom columns given")
        pairs = []
        for part in text.split(","):
            header, colon, expr = part.partition(":")
            if not colon:
                raise UsageError(
                    f"unexpected custom-columns spec: {part}, expected <header>:<json-path-expr>"
                )
            pairs.append((header, expr))
    return [(h, compile_template(relaxed_expression(e))) for h, e in pairs]


def tab_layout(rows: Sequence[Sequence[str]], *, min_width: int = 6, padding: int = 3) -> list[str]:
    """Go's tabwriter as kubectl configures it: every cell but a line's last is padded to its
    column's width (the longest cell plus ``padding``, at least ``min_width``)."""
    widths: list[int] = []
    for row in rows:
        for i, cell in enumerate(row[:-1]):
            width = max(len(cell) + padding, min_width)
            if i >= len(widths):
                widths.append(width)
            else:
                widths[i] = max(widths[i], width)
    out = []
    for row in rows:
        cells = [cell.ljust(widths[i]) for i, cell in enumerate(row[:-1])]
        out.append("".join(cells) + (row[-1] if row else ""))
    return out
