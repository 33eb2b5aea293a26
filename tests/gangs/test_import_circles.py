"""No import circle through the rooms of the in-cluster half (gangs, operator, exporter, web),
counting every import as ``tests/test_rooms.py`` does (inside functions, under
``TYPE_CHECKING``, string constants naming a module): the gang controller once imported the
gang plug-in module, which imported it back behind a function-local import."""

from __future__ import annotations

from collections import defaultdict

from tests.test_rooms import package_imports, room_of

ROOMS = frozenset({"gangs", "operator", "exporter", "web"})


def circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges.get(root, ()))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, targets = work[-1]
            step = next(targets, None)
            if step is not None:
                if step not in index:
                    index[step] = low[step] = len(index)
                    stack.append(step)
                    on_stack.add(step)
                    work.append((step, iter(sorted(edges.get(step, ())))))
                elif step in on_stack:
                    low[node] = min(low[node], index[step])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_scan_finds_a_circle() -> None:
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []


def test_no_circle_through_the_in_cluster_rooms() -> None:
    edges: dict[str, set[str]] = defaultdict(set)
    for imp in package_imports():
        if imp.importer != imp.target:
            edges[imp.importer].add(imp.target)
    ours = [c for c in circles(edges) if any(room_of(m) in ROOMS for m in c)]
    assert not ours, ours
