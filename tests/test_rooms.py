"""The rooms' boundaries, read from every module's imports.

The core (``jq``, ``model``, ``engine``, ``catalog``, with the package root and
``workload_map.errors``) is pure and imports no room; ``kube`` (the Kubernetes I/O layer:
configuration, requests, paging, watches, watch caches) imports nothing of the package but
the leaves ``workload_map.errors`` and ``workload_map.yaml_import``; ``cluster`` (the services over it shared by the rooms: definitions
from the cluster, ownership, inventory, feed, catalog install) imports the core and ``kube``;
each room (``cli``, ``operator``, ``gangs``, ``exporter``, ``web``) imports the core, ``kube``,
``cluster`` and itself, and of another room only the public plug-in modules in
:data:`ALLOWED`, each with its reason. Every import counts: at module level, inside
functions, under ``TYPE_CHECKING``, relative ones, and a string constant that names a module of
the package (how a module would be loaded with ``importlib``). The operator names no room: it
finds the rooms' controllers through entry points (``operator/plugins.py``). Of the core and the
two layers, other rooms import only the package roots and the modules in :data:`PUBLIC`; every
other module is private to its room. No import circle anywhere, and imports of the package sit
at the top of files but the start-up boundaries in :data:`LAZY`.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "workload_map"
PACKAGE = "workload_map"
CORE = frozenset({"jq", "model", "engine", "catalog"})
# workload_map/__init__.py, errors.py, and yaml_import.py (a leaf: imports nothing of ours)
ROOT = frozenset({"", "errors", "yaml_import"})
KUBE = "kube"
CLUSTER = "cluster"
LAYERS = frozenset({KUBE, CLUSTER})  # below the rooms, above (kube: beside) the core
ROOMS = frozenset({"cli", "operator", "gangs", "exporter", "web"})

#: (importing room, imported module) -> why the room may import it
ALLOWED: dict[tuple[str, str], str] = {
    ("gangs", "workload_map.operator.controllers"): (
        "the operator's plug-in API: the gang controller and webhooks register there and get "
        "their OperatorContext from it"
    ),
    ("exporter", "workload_map.operator.controllers"): (
        "the operator's plug-in API: the metrics controller registers there"
    ),
    ("cli", "workload_map.operator.main"): "the `wlmap operator` entry point",
    ("cli", "workload_map.exporter.main"): "the `wlmap exporter` entry point",
    ("cli", "workload_map.web.main"): "the `wlmap serve` entry point",
    ("cli", "workload_map.gangs"): (
        "the gang room's public API (its package __all__): `describe --explain` shows what the "
        "gang webhook would decide (pod_decisions)"
    ),
}


@dataclass(frozen=True)
class Import:
    importer: str  # dotted module name
    target: str  # dotted module name
    line: int


def module_name(path: Path) -> str:
    parts = path.relative_to(SRC.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def all_modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(SRC.rglob("*.py"))}


def room_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def imports_in(
    source: str, importer: str, *, is_package: bool, known: set[str]
) -> Iterator[Import]:
    """Every module of the package that ``source`` (the text of module ``importer``) imports."""
    here = importer.split(".") if is_package else importer.split(".")[:-1]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield Import(importer, alias.name, node.lineno)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here[: len(here) - (node.level - 1)]
                module = ".".join([*base, *([node.module] if node.module else [])])
            else:
                module = node.module or ""
            # `from pkg import mod` imports the module pkg.mod; `from pkg import name`, pkg
            subs = [f"{module}.{a.name}" for a in node.names if f"{module}.{a.name}" in known]
            if len(subs) < len(node.names):
                yield Import(importer, module, node.lineno)
            for sub in subs:
                yield Import(importer, sub, node.lineno)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if node.value in known and node.value.startswith(f"{PACKAGE}."):
                yield Import(importer, node.value, node.lineno)


@cache  # one scan for the module's tests (~150 files)
def package_imports() -> tuple[Import, ...]:
    modules = all_modules()
    known = set(modules)
    out: list[Import] = []
    for name, path in modules.items():
        found = imports_in(
            path.read_text(), name, is_package=path.name == "__init__.py", known=known
        )
        out.extend(i for i in found if i.target == PACKAGE or i.target.startswith(f"{PACKAGE}."))
    return tuple(out)


def allowed(importer_room: str, target: str) -> bool:
    target_room = room_of(target)
    if importer_room == KUBE:  # the leaves only: the package root imports everything
        return target_room == KUBE or target in (f"{PACKAGE}.errors", f"{PACKAGE}.yaml_import")
    if target_room in CORE | ROOT:
        return True
    if importer_room in CORE | ROOT:
        return False
    if importer_room == CLUSTER:
        return target_room in LAYERS
    return target_room in (*LAYERS, importer_room) or (importer_room, target) in ALLOWED


def where(imp: Import) -> str:
    path = all_modules()[imp.importer].relative_to(SRC.parent)
    return f"{path}:{imp.line} imports {imp.target}"


def test_every_package_is_classified() -> None:
    tops = {room_of(m) for m in all_modules()}
    known = CORE | ROOT | ROOMS | LAYERS
    assert tops <= known, sorted(tops - known)


def test_imports_respect_the_rooms() -> None:
    imports = package_imports()
    assert len(imports) > 200  # the scan sees the package (a broken scan would pass vacuously)
    bad = [where(i) for i in imports if not allowed(room_of(i.importer), i.target)]
    assert not bad, "\n".join(bad)


#: client packages the project reaches Kubernetes without (docs/kube.md): no module imports them
FOREIGN_CLIENTS = ("kubernetes", "urllib3", "kr8s", "lightkube", "httpx", "requests")


def test_no_module_imports_a_kubernetes_client_package() -> None:
    found = []
    for name, path in all_modules().items():
        for node in ast.walk(ast.parse(path.read_text())):
            targets = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom) and not node.level
                else []
            )
            found += [
                f"{name}:{node.lineno} imports {t}"
                for t in targets
                if t.split(".")[0] in FOREIGN_CLIENTS
            ]
    assert not found, "\n".join(found)


def test_every_allowed_entry_is_used() -> None:
    used = {(room_of(i.importer), i.target) for i in package_imports()}
    stale = sorted(set(ALLOWED) - used)
    assert not stale, f"allow-list entries no module needs any more: {stale}"


def test_the_allowed_targets_are_public() -> None:
    modules = all_modules()
    for (_, target), reason in ALLOWED.items():
        assert reason, target
        path = modules[target]
        tree = ast.parse(path.read_text())
        names = {
            t.id
            for node in tree.body
            if isinstance(node, ast.Assign | ast.AnnAssign)
            for t in (node.targets if isinstance(node, ast.Assign) else [node.target])
            if isinstance(t, ast.Name)
        }
        assert "__all__" in names, f"{target} is allowed to other rooms but has no __all__"


#: the modules of the core and of the two layers that another room may import, with the
#: package itself (its ``__init__``, the public API): the rest of each is private to its room
PUBLIC: dict[str, frozenset[str]] = {
    "catalog": frozenset({"definitions", "registry", "resolution", "stamps"}),
    "engine": frozenset(
        {
            "describe",
            # one evaluation per workload shared by a process's consumers (issue 21 item 4):
            # the inventory and the gang planner, handed the operator's by operator/main.py
            "evaluations",
            # the describe view's events section: its types and its order (cluster/events
            # reads the events, the CLI prints them)
            "events",
            "gangs",
            "objects",
            # the owner rule in three: the chain, the operators' owner labels (the cluster
            # layer's label queries and inventory), who holds a pod (ownership's claims)
            "owner_labels",
            "owners",
            "partition",
            "pods",
            # the pod-condition readers every view shares (get's rows read why a pod is
            # Pending as describe does, without building describe)
            "pod_status",
            "quantities",
            "references",  # resolving a definition's references: every consumer's resolver
            "resources",
            "schemas",
            "structure",
            # the shared evaluation (issue 21 item 4): the exporter, the web view and the
            # gang controller read one workload summary instead of each building describe
            "summary",
        }
    ),
    "jq": frozenset({"ast"}),
    # references: the rules of a definition's references (names, order, kinds never read)
    "model": frozenset({"crd", "extensions", "findings", "load", "references", "views"}),
    "kube": frozenset(
        {
            "api",
            "cache",
            "client",
            "connect_api",
            "discovery",
            "errors",
            "flags",
            "kubeconfig",
            "leader",
            "options",
            "paths",  # pathlib's answers as strings (the CLI's settings and cache files)
            "pager",
            "shortnames",
            "transport",
            "trim",
            "watch",
            "workqueue",
        }
    ),
    # references: the live resolver of a definition's references (CLI, web view)
    "cluster": frozenset(
        {
            "catalog_install",
            "connection",
            "definitions",
            # the events of one live workload, for describe
            "events",
            "feed",
            "inventory",
            "ownership",
            "references",
        }
    ),
}


def public(target: str) -> bool:
    """Whether another room may import ``target`` (a package root, or a listed module)."""
    parts = target.split(".")
    room = room_of(target)
    if room not in PUBLIC or len(parts) <= 2:
        return True
    return parts[2] in PUBLIC[room]


def test_other_rooms_import_only_public_modules() -> None:
    bad = [
        where(i)
        for i in package_imports()
        if room_of(i.importer) not in (room_of(i.target), "") and not public(i.target)
    ]
    assert not bad, "\n".join(bad)
    assert not public("workload_map.kube.wire") and not public("workload_map.jq.errors")
    assert public("workload_map.kube.api") and public("workload_map.jq")
    modules = {m.split(".")[2] for m in all_modules() if m.count(".") >= 2}
    for room, names in PUBLIC.items():
        assert names <= modules, f"{room}: PUBLIC names modules that do not exist"


KNOWN = {
    "workload_map.cluster",
    "workload_map.kube",
    "workload_map.kube.api",
    "workload_map.operator",
    "workload_map.operator.controllers",
    "workload_map.gangs",
    "workload_map.gangs.operator",
}


@pytest.mark.parametrize(
    ("source", "importer", "is_package", "expected"),
    [
        # inside a function and under TYPE_CHECKING
        (
            "def f():\n    from workload_map.kube.api import Api\n"
            "if TYPE_CHECKING:\n    import workload_map.gangs\n",
            "workload_map.web.source",
            False,
            ["workload_map.kube.api", "workload_map.gangs"],
        ),
        # `from package import module` is the module; `from package import name` the package
        (
            "from workload_map.operator import controllers\nfrom workload_map.gangs import plan\n",
            "workload_map.exporter.operator",
            False,
            ["workload_map.operator.controllers", "workload_map.gangs"],
        ),
        # relative, from a module and from a package's __init__
        (
            "from ..operator import controllers\n",
            "workload_map.gangs.operator",
            False,
            ["workload_map.operator.controllers"],
        ),
        ("from .api import Api\n", "workload_map.kube", True, ["workload_map.kube.api"]),
        # a module named in a string constant (importlib); other strings are not imports
        (
            'for m in ("workload_map.gangs.operator", "workload_map.nothing"):\n'
            "    importlib.import_module(m)\n",
            "workload_map.operator.main",
            False,
            ["workload_map.gangs.operator"],
        ),
    ],
)
def test_the_scan_sees_every_import_form(
    source: str, importer: str, is_package: bool, expected: list[str]
) -> None:
    found = [i.target for i in imports_in(source, importer, is_package=is_package, known=KNOWN)]
    assert sorted(found) == sorted(expected)


def test_the_rules_refuse_what_they_should() -> None:
    assert not allowed("engine", "workload_map.kube.api")  # core -> kube
    assert not allowed("catalog", "workload_map.cluster.lookup")  # core -> cluster
    assert not allowed("kube", "workload_map.model.load")  # kube -> core
    assert allowed("kube", "workload_map.yaml_import")  # a leaf, as the error root
    assert not allowed("kube", "workload_map.cluster.feed")  # kube -> the services over it
    assert not allowed("kube", "workload_map")  # the package root imports the core
    assert allowed("kube", "workload_map.errors")
    assert allowed("cluster", "workload_map.kube.cache")
    assert not allowed("cluster", "workload_map.web.source")  # cluster -> room
    assert not allowed("catalog", "workload_map.operator.controllers")  # core -> room
    assert not allowed("cluster", "workload_map.operator.karta_status")  # cluster -> room
    assert not allowed("web", "workload_map.cli.render")  # nobody imports cli
    assert not allowed("gangs", "workload_map.operator.karta_status")  # a room's internals
    assert not allowed("exporter", "workload_map.gangs.operator")  # another room's plug-in
    assert not allowed("operator", "workload_map.gangs.operator")  # found by entry point only
    assert allowed("gangs", "workload_map.operator.controllers")
    assert allowed("web", "workload_map.kube.api")
    assert allowed("web", "workload_map.cluster.inventory")
    assert allowed("cluster", "workload_map.catalog.stamps")


# -- circles and lazy imports, over the whole package ----------------------------------------


def circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(edges):
        if root in index:
            continue
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        work = [(root, iter(sorted(edges.get(root, ()))))]
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
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
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
    return sorted(found)


def import_graph() -> dict[str, set[str]]:
    """Module -> the package's modules it imports, every import counted as above."""
    graph: dict[str, set[str]] = {}
    for imp in package_imports():
        if imp.importer != imp.target:
            graph.setdefault(imp.importer, set()).add(imp.target)
    return graph


def function_local_imports() -> list[Import]:
    """Every import of the package inside a function body (relative ones resolved)."""
    modules = all_modules()
    out: list[Import] = []
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        is_package = path.name == "__init__.py"
        for func in ast.walk(tree):
            if not isinstance(func, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for node in func.body:
                for inner in ast.walk(node):
                    if not isinstance(inner, ast.Import | ast.ImportFrom):
                        continue
                    text = ast.unparse(inner)
                    out.extend(
                        Import(i.importer, i.target, inner.lineno)
                        for i in imports_in(text, name, is_package=is_package, known=set(modules))
                        if i.target == PACKAGE or i.target.startswith(f"{PACKAGE}.")
                    )
    # a nested function's imports are found once per enclosing function: count each line once
    return sorted({(i.importer, i.target, i.line): i for i in out}.values(), key=str)


#: (module, imported module) -> why it is imported inside a function: each a start-up
#: boundary (a command or process loads it only when it needs it), measured with -X importtime
LAZY: dict[tuple[str, str], str] = {
    ("workload_map.cli.context", "workload_map.cluster.connection"): (
        "the connection boundary: the cluster client and its services load when a command "
        "first talks to a cluster (offline commands enter no cluster code)"
    ),
    ("workload_map.cli.context", "workload_map.cluster.definitions"): (
        "the same boundary, the same function"
    ),
    ("workload_map.cli.context", "workload_map.cli.workload_view"): (
        "the engine's boundary for a command's closing report of expressions past their "
        "deadline: only after a definition was used (the engine is loaded by then), so crd, "
        "validate, definitions and completion load no engine (~150M instructions, docs/cli.md)"
    ),
    ("workload_map.cli.describe_cmd", "workload_map.gangs"): (
        "the gang room (~25 ms of imports), describe --explain only"
    ),
    ("workload_map.cli.get_cmd", "workload_map.cli.get_watch"): (
        "the watch loop (with kube.watch and queue, ~3 ms), get -w/--watch-only only"
    ),
    ("workload_map.cli.get_cmd", "workload_map.cli.get_clusters"): (
        "the fan-out over several clusters, --context A --context B/--all-contexts only"
    ),
    ("workload_map.cli.get_cmd", "workload_map.kube.watch"): (
        "the same boundary: the resource version a watch starts from"
    ),
    ("workload_map.cli.get_cmd", "workload_map.cli.jsonpath"): (
        "JSONPath (~8 ms), -o jsonpath/custom-columns and --sort-by only"
    ),
    ("workload_map.cli.printers", "workload_map.cli.jsonpath"): (
        "JSONPath (~8 ms), templates only"
    ),
    ("workload_map.engine.structure", "workload_map.model"): (
        "model.validation loads only when a definition is prepared with validate=True"
    ),
    ("workload_map.catalog.definitions", "workload_map.model"): (
        "model.validation loads only when the cluster holds Kartas"
    ),
    ("workload_map.model.validation", "workload_map.model.schema_check"): (
        "the CRD schema checks (and difflib) load only when a CRD is given"
    ),
    ("workload_map.jq.trees", "workload_map.jq.parser"): "only a program not kept is parsed",
    ("workload_map.engine.workload", "workload_map.engine.describe"): "a workload viewed",
    ("workload_map.engine.workload", "workload_map.engine.resource_view"): "the same, resources",
    ("workload_map.engine.workload", "workload_map.engine.tree"): "the same, its tree",
    ("workload_map.engine.workload", "workload_map.engine.writeback"): "a workload written",
    ("workload_map.engine.workload", "workload_map.engine.equal_inputs"): "a watch cache's",
    ("workload_map.jq.builtins.registry", "workload_map.jq.builtins.index"): (
        "the registry is built on the first lookup, not at import"
    ),
    ("workload_map.model.load", "workload_map.model.findings"): (
        "FindingCode (a StrEnum of 62 members, ~6M instructions to build) loads when a "
        "problem is reported: a definition that loads cleanly (a live get's) needs none"
    ),
    ("workload_map.model.references", "workload_map.model.findings"): (
        "the same boundary: the reference checks that report findings"
    ),
    ("workload_map.model.labels", "workload_map.model.findings"): (
        "the same boundary: the label checks that report findings"
    ),
    ("workload_map.model.extensions", "workload_map.model.findings"): (
        "the same boundary: the gang extensions' checks that report findings"
    ),
}


def test_no_import_circle_anywhere() -> None:
    graph = import_graph()
    assert len(graph) > 100  # the scan sees the package
    assert circles(graph) == []


def test_the_circle_finder_finds_circles() -> None:
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": {"a"}, "c": {"d"}, "d": {"c"}}) == [["a", "b"], ["c", "d"]]
    assert circles({"a": {"b"}, "b": set()}) == []


def test_imports_sit_at_the_top_of_files_but_at_documented_boundaries() -> None:
    found = function_local_imports()
    stray = [where(i) for i in found if (i.importer, i.target) not in LAZY]
    assert not stray, "\n".join(stray)
    stale = sorted(set(LAZY) - {(i.importer, i.target) for i in found})
    assert not stale, f"no longer lazy, drop from LAZY: {stale}"
