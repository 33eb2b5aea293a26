"""``make bench`` runs every benchmark module: a new ``*_bench.py`` cannot be left out by mistake."""

from __future__ import annotations

import ast
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def _modules_listed() -> list[str]:
    tree = ast.parse((BENCHMARKS / "run.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "MODULES" for t in node.targets
        ):
            value = ast.literal_eval(node.value)
            assert isinstance(value, list)
            return [str(v) for v in value]
    raise AssertionError("benchmarks/run.py defines no MODULES list")


def test_every_benchmark_module_is_run() -> None:
    present = sorted(p.stem for p in BENCHMARKS.glob("*_bench.py"))
    listed = _modules_listed()
    assert present, "no benchmark modules found"
    assert sorted(listed) == present
    assert len(set(listed)) == len(listed)


def test_every_benchmark_module_has_run() -> None:
    for name in _modules_listed():
        tree = ast.parse((BENCHMARKS / f"{name}.py").read_text())
        assert any(isinstance(n, ast.FunctionDef) and n.name == "run" for n in tree.body), name


def test_every_project_name_a_benchmark_imports_exists() -> None:
    """Benchmarks import inside functions (their dependencies are optional), so a moved name
    only breaks ``make bench``; here every ``from workload_map… import name`` must resolve."""
    import importlib

    missing: list[str] = []
    for path in sorted(BENCHMARKS.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.split(".")[0] == "workload_map":
                        importlib.import_module(alias.name)
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith(
                "workload_map"
            ):
                assert node.module is not None
                module = importlib.import_module(node.module)
                for alias in node.names:
                    if hasattr(module, alias.name):
                        continue
                    try:
                        importlib.import_module(f"{node.module}.{alias.name}")
                    except ImportError:
                        missing.append(f"{path.name}:{node.lineno}: {node.module}.{alias.name}")
    assert not missing, missing


def test_the_jq_matcher_inputs_load_from_the_examples_as_they_are() -> None:
    """A multi-document example (the demo cluster's) once broke ``make bench``'s jq module."""
    import sys

    sys.path.insert(0, str(BENCHMARKS))
    try:
        import jq_bench

        objs = jq_bench.matcher_inputs()
    finally:
        sys.path.remove(str(BENCHMARKS))
    assert objs and all(isinstance(o, dict) and o.get("kind") for o in objs)


def test_the_web_benchmarks_source_has_every_method_the_pages_read() -> None:
    """The web benchmark feeds the app a small source class of its own: when the pages read a
    new method of ``Source`` (``clusters`` for many clusters), the benchmark must have it too."""
    from workload_map.web import source

    text = (BENCHMARKS / "web_bench.py").read_text()
    wanted = [
        name
        for name, value in vars(source.Source).items()
        if callable(value) and not name.startswith("_")
    ]
    assert wanted
    missing = [name for name in wanted if f"def {name}(" not in text]
    assert not missing, f"benchmarks/web_bench.py's Source lacks {missing}"
