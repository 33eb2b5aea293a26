"""The gang room's place: it imports the core, ``cluster`` and the operator's public modules;
nothing in the core imports it."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "workload_map"
CORE = ("jq", "model", "engine", "catalog")
ALLOWED_OPERATOR = {
    "workload_map.operator",
    "workload_map.operator.controllers",
}


def imports_of(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            out.add(node.module)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
    return out


def test_gangs_imports_only_core_cluster_and_the_operator_api() -> None:
    for path in sorted((SRC / "gangs").glob("*.py")):
        for name in imports_of(path):
            if not name.startswith("workload_map."):
                continue
            room = name.split(".")[1]
            assert room in (*CORE, "gangs", "cluster", "errors") or name in ALLOWED_OPERATOR, (
                f"{path.name} imports {name}"
            )


def test_the_core_never_imports_gangs() -> None:
    for room in CORE:
        for path in sorted((SRC / room).rglob("*.py")):
            assert not any(n.startswith("workload_map.gangs") for n in imports_of(path)), path
