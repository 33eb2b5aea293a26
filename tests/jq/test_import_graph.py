"""The jq engine's import graph has no circle, and its imports sit at the top of files (issue 20).

Imports are counted as ``tests/test_rooms.py`` counts them: at module level, inside functions,
under ``TYPE_CHECKING``, and module names in string constants (``importlib``). The engine had
two circles: ``encoding`` -> ``values`` -> ``errors`` -> ``encoding``, and the builtin registry,
which names its group modules, imported back by every group (and the compiler through the
special forms). The one import left inside a function is the registry's generated index, read
on the first lookup (``registry._build``), so that importing the engine builds nothing.
"""

from __future__ import annotations

import ast

from tests.test_rooms import all_modules, package_imports

PACKAGE = "workload_map.jq"
#: (module, imported module) -> why the import is inside a function
LAZY = {
    ("workload_map.jq.builtins.registry", "workload_map.jq.builtins.index"): (
        "the registry is built on the first lookup, not at import"
    ),
}


def _graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for imp in package_imports():
        if imp.importer.startswith(PACKAGE) and imp.target.startswith(f"{PACKAGE}."):
            if imp.importer != imp.target:
                graph.setdefault(imp.importer, set()).add(imp.target)
    return graph


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.get(root, ()))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    top = stack.pop()
                    on_stack.discard(top)
                    component.append(top)
                    if top == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_engine_has_no_import_circle() -> None:
    graph = _graph()
    assert len(graph) > 30  # the scan sees the engine (a broken scan would pass vacuously)
    assert _circles(graph) == []


def test_the_circle_finder_finds_circles() -> None:
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _circles({"a": {"b"}, "b": set()}) == []


def test_imports_of_the_engine_sit_at_the_top_of_files() -> None:
    local: set[tuple[str, str]] = set()
    for name, path in all_modules().items():
        if not name.startswith(PACKAGE):
            continue
        for fn in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for node in ast.walk(fn):
                if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(PACKAGE):
                    local.add((name, node.module or ""))
                elif isinstance(node, ast.Import):
                    local.update((name, a.name) for a in node.names if a.name.startswith(PACKAGE))
    assert local == set(LAZY)
