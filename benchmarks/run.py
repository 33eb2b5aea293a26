"""Runs every benchmark of the project in one process and prints their tables.

Each ``benchmarks/*_bench.py`` module exposes ``run() -> list[dict]``: one row per measurement,
with the alternatives it was compared against measured in the same run (ratios included by the
module). A module whose optional dependency is missing reports that in its rows; a module that
fails is reported and makes the run exit non-zero.

The project's sources are byte-compiled first, as ``pip install`` compiles an installed wheel:
an editable install under ``PYTHONDONTWRITEBYTECODE`` (set in some sandboxes and CI images)
would otherwise parse every module on every start of ``wlmap``, and the start-up rows would
measure the parser (about 0.12 s of CPU for ``describe -f`` here) instead of what users run.
"""

from __future__ import annotations

import compileall
import importlib
import sys
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOURCES = HERE.parent / "src" / "workload_map"
MODULES = [
    "jq_bench",
    "jq_input_bench",
    "engine_bench",
    "cli_bench",
    "live_bench",
    "fleet_bench",
    "clients_bench",
    "reference_bench",
    "operator_bench",
    "gangs_bench",
    "exporter_bench",
    "web_bench",
    "fleet_eval_bench",
    "fleet_memory_bench",
]


def print_table(rows: list[dict[str, object]]) -> None:
    if not rows:
        print("  (no rows)")
        return
    columns: list[str] = []
    for row in rows:
        for key in row:
            if key not in columns:
                columns.append(key)
    cells = [[str(row.get(c, "")) for c in columns] for row in rows]
    widths = [max(len(c), *(len(r[i]) for r in cells)) for i, c in enumerate(columns)]
    print("  " + "  ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True)))
    for r in cells:
        print("  " + "  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)))


def main(argv: list[str]) -> int:
    sys.path.insert(0, str(HERE))
    # writes __pycache__ whatever PYTHONDONTWRITEBYTECODE says; the children then read it
    compileall.compile_dir(SOURCES, quiet=1)
    selected = argv or MODULES
    failed = 0
    for name in selected:
        if not (HERE / f"{name}.py").exists():
            print(f"== {name}: not present, skipped")
            continue
        print(f"== {name}")
        started = time.perf_counter()
        try:
            rows = importlib.import_module(name).run()
        except Exception:
            failed += 1
            traceback.print_exc()
            continue
        print_table(rows)
        print(f"  ({time.perf_counter() - started:.1f} s)")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
