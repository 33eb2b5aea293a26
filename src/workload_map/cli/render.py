"""Output primitives shared by the commands: JSON/YAML documents, aligned tables, colour.

Machine formats are stable (key order as built, 2-space indent, trailing newline). Colour is used
only on a terminal and never when ``NO_COLOR`` is set, so piped output is plain text.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from workload_map.cli.style import Styler, wants_color
from workload_map.yaml_import import import_yaml

# Styler and wants_color live in cli.style (what every start-up needs: cli.main's error lines),
# and are here too for the commands' one import of their output primitives
__all__ = ["Styler", "dump_document", "format_table", "visible_len", "wants_color"]


def dump_document(value: Any, fmt: str) -> str:
    """``value`` as a JSON (2-space indent) or YAML document, newline-terminated."""
    if fmt == "json":
        return json.dumps(value, indent=2, ensure_ascii=False, default=_json_default) + "\n"

    yaml = import_yaml()

    return str(
        yaml.safe_dump(
            _plain(value), sort_keys=False, default_flow_style=False, allow_unicode=True, width=100
        )
    )


def _json_default(value: Any) -> Any:
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    raise TypeError(f"cannot encode {type(value).__name__} as JSON")


def _plain(value: Any) -> Any:
    """YAML's safe dumper refuses float/str subclasses and tuples; give it plain types."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, str):
        return str(value)
    return value


def visible_len(text: str) -> int:
    if "\x1b" not in text:  # no colour: every cell of a plain table (no regex call per cell)
        return len(text)
    import re

    return len(re.sub(r"\x1b\[[0-9;]*m", "", text))


def format_table(
    headers: Sequence[str],
    rows: Sequence[Sequence[str]],
    *,
    gap: int = 3,
    right: Sequence[int] = (),
) -> list[str]:
    """kubectl-style columns: left-aligned (``right`` = indexes aligned right), 3 spaces apart."""
    widths = [len(h) for h in headers]
    for row in rows:
        for i, cell in enumerate(row):
            widths[i] = max(widths[i], visible_len(cell))
    lines = []
    for row in [list(headers), *[list(r) for r in rows]]:
        cells = []
        for i, cell in enumerate(row):
            pad = widths[i] - visible_len(cell)
            last = i == len(row) - 1
            if i in right:
                cells.append(" " * pad + cell)
            else:
                cells.append(cell if last else cell + " " * pad)
        lines.append((" " * gap).join(cells).rstrip())
    return lines
