"""The engine, the model and the catalog: no import circle, and imports at the top of files.

Imports are counted as tests/test_rooms.py counts them (module level, inside functions, under
``TYPE_CHECKING``, and string constants naming a module). A function-local import of the
package is allowed only where it is a start-up boundary, listed here with its reason.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from tests.test_rooms import SRC, all_modules, package_imports, room_of

ROOMS = frozenset({"engine", "model", "catalog"})

#: (module, imported module) -> why it is imported inside a function
LAZY: dict[tuple[str, str], str] = {
    ("workload_map.engine.structure", "workload_map.model"): (
        "model.validation loads only when a definition is prepared with validate=True"
    ),
    ("workload_map.catalog.definitions", "workload_map.model"): (
        "model.validation loads only when the cluster holds Kartas"
    ),
    ("workload_map.model.validation", "workload_map.model.schema_check"): (
        "the CRD schema checks (and difflib) load only when a CRD is given"
    ),
}


def _ours(module: str) -> bool:
    return room_of(module) in ROOMS


def circles() -> list[list[str]]:
    """The strongly connected components (more than one module) of our rooms' imports."""
    edges: dict[str, set[str]] = {}
    for imp in package_imports():
        if _ours(imp.importer) and _ours(imp.target) and imp.importer != imp.target:
            edges.setdefault(imp.importer, set()).add(imp.target)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:  # Tarjan; the graph is a few dozen modules deep at most
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def local_imports(source: str) -> Iterator[tuple[int, str]]:
    """(line, module) of every import of the package inside a function body."""

    def walk(node: ast.AST, in_function: bool) -> Iterator[tuple[int, str]]:
        for child in ast.iter_child_nodes(node):
            inside = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef))
            if in_function and isinstance(child, ast.ImportFrom) and not child.level:
                if (child.module or "").startswith("workload_map"):
                    yield child.lineno, str(child.module)
            elif in_function and isinstance(child, ast.Import):
                for alias in child.names:
                    if alias.name.startswith("workload_map"):
                        yield child.lineno, alias.name
            yield from walk(child, inside)

    yield from walk(ast.parse(source), False)


def test_no_import_circle_in_the_engine_model_and_catalog() -> None:
    assert len(package_imports()) > 200  # the scan sees the package
    assert circles() == []


def test_imports_sit_at_the_top_of_files_but_at_start_up_boundaries() -> None:
    found: set[tuple[str, str]] = set()
    stray: list[str] = []
    for module, path in all_modules().items():
        if not _ours(module):
            continue
        for line, target in local_imports(path.read_text()):
            if (module, target) in LAZY:
                found.add((module, target))
            else:
                stray.append(f"{path.relative_to(SRC.parent)}:{line} imports {target}")
    assert not stray, "\n".join(stray)
    assert found == set(LAZY), f"no longer lazy, drop from LAZY: {sorted(set(LAZY) - found)}"
