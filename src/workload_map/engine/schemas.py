"""The JSON Schemas of the machine outputs, generated from their typed views.

``python -m workload_map.cli.schemas`` writes them under ``schemas/`` (``make schemas``):
these of the engine's views and the CLI's own (:mod:`workload_map.cli.schemas`); ``--check``
exits 1 when a committed file differs from what the types give (the drift tests run the same
comparison). The schemas are the project's contract for the machine outputs.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from workload_map.engine.describe import DescribeView
from workload_map.engine.resource_view import WorkloadResources
from workload_map.model.views import View, json_schema

__all__ = ["SCHEMAS", "Schema", "main", "render"]

BASE_ID = "https://run.ai/workload-map/schemas/"


class Schema(View):
    """One committed schema: its file name, the view it describes and its title."""

    file: str
    root: Any  # a view type, or a union of them (an output that is one of several shapes)
    title: str

    def document(self) -> dict[str, Any]:
        return json_schema(self.root, title=self.title, schema_id=BASE_ID + self.file)


SCHEMAS: tuple[Schema, ...] = (
    Schema("describe.schema.json", DescribeView, "wlmap describe -o json (Workload.describe())"),
    Schema("resources.schema.json", WorkloadResources, "Workload.resources()"),
)


def render(schema: Schema) -> str:
    """The file's text: indented JSON with a final newline (stable for diffs)."""
    return json.dumps(schema.document(), indent=2, ensure_ascii=False) + "\n"


def main(argv: Sequence[str] | None = None, schemas: Sequence[Schema] = SCHEMAS) -> int:
    """Write ``schemas`` under ``--out`` (or, with ``--check``, report the stale ones)."""
    parser = argparse.ArgumentParser(prog="python -m workload_map.cli.schemas")
    parser.add_argument("--out", default="schemas", help="directory of the schema files")
    parser.add_argument("--check", action="store_true", help="exit 1 when a file is stale")
    args = parser.parse_args(argv)
    out = Path(args.out)
    stale = []
    for schema in schemas:
        path = out / schema.file
        text = render(schema)
        if args.check:
            if not path.is_file() or path.read_text(encoding="utf-8") != text:
                stale.append(str(path))
            continue
        out.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    for name in stale:
        sys.stderr.write(f"{name} is stale: run `make schemas`\n")
    return 1 if stale else 0


if __name__ == "__main__":
    raise SystemExit(main())
