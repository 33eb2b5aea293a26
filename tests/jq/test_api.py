"""The public surface of workload_map.jq."""

from __future__ import annotations

import ast
import threading
from pathlib import Path

import pytest

import workload_map.cli
from workload_map import jq
from workload_map.jq import errors


def test_exported_names() -> None:
    # pinned: a change to the public surface of workload_map.jq is a deliberate edit here
    assert sorted(jq.__all__) == [
        "DEFAULT_LIMITS",
        "DEFINITION_LIMITS",
        "INPUT_FILENAME",
        "JqBreak",
        "JqCompileError",
        "JqDeadlineError",
        "JqError",
        "JqHaltError",
        "JqLimitError",
        "JqParseError",
        "JqRuntimeError",
        "JsonDecodeError",
        "Limits",
        "Path",
        "PathKey",
        "Program",
        "SafetyRule",
        "SlowEvaluation",
        "Violation",
        "compile",
        "constant_path",
        "decode_bytes",
        "defaulted_path",
        "delpaths",
        "dumps",
        "fresh_trees",
        "getpath",
        "is_writable",
        "iter_values",
        "karta_violations",
        "keep_trees",
        "loads",
        "parse",
        "setpath",
        "unwritable",
        "valid_text",
        "writability",
    ]
    assert set(errors.__all__) <= set(jq.__all__)
    for name in jq.__all__:
        assert getattr(jq, name) is not None


def test_the_cli_imports_only_the_packages_public_names() -> None:
    """``wlmap jq`` (cli/jq_cli.py) reaches the engine through ``workload_map.jq`` alone: every
    import of the engine names the package and only names in its ``__all__`` (issue 20)."""
    source = Path(workload_map.cli.__file__).with_name("jq_cli.py").read_text(encoding="utf-8")
    seen = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("workload_map.jq"):
            assert node.module == "workload_map.jq", f"line {node.lineno}: {node.module}"
            seen.extend(a.name for a in node.names)
        elif isinstance(node, ast.Import):
            assert not any(a.name.startswith("workload_map.jq") for a in node.names), node.lineno
    assert seen  # the scan sees the imports (a broken scan would pass vacuously)
    assert set(seen) <= set(jq.__all__), sorted(set(seen) - set(jq.__all__))


def test_program_methods() -> None:
    prog = jq.compile(".a[]")
    assert isinstance(prog, jq.Program)
    value = {"a": [1, 2, 3]}
    assert prog.all(value) == [1, 2, 3]
    assert prog.first(value) == 1
    assert list(prog.iter(value)) == [1, 2, 3]
    assert prog.paths(value) == [["a", 0], ["a", 1], ["a", 2]]
    assert prog.first({"a": []}) is None
    assert jq.compile(".missing").all({}) == [None]
    assert jq.compile("select(false)").all({}) == []


def test_any_source_value_is_evaluable() -> None:
    assert jq.compile(". | length").all("abc") == [3]
    assert jq.compile(". + 8").all(2) == [10]
    assert jq.compile(".").all(None) == [None]
    assert jq.compile("length").all([1, 2]) == [2]


def test_parse_returns_the_tree() -> None:
    tree = jq.parse(".a | .b")
    assert jq.parse(".a|.b") == tree


def test_error_hierarchy() -> None:
    for cls in (jq.JqParseError, jq.JqCompileError, jq.JqRuntimeError, jq.JqLimitError):
        assert issubclass(cls, jq.JqError)
    with pytest.raises(jq.JqParseError):
        jq.compile(".[")
    with pytest.raises(jq.JqCompileError):
        jq.compile("nope")
    with pytest.raises(jq.JqRuntimeError) as info:
        jq.compile(".a").all(1)
    assert info.value.program == ".a"


def test_programs_are_safe_to_share_between_threads() -> None:
    prog = jq.compile("def f: if . < 50 then . + 1 | f else . end; [.[] | f] | add")
    results: list[int] = []

    def work() -> None:
        for _ in range(20):
            results.append(prog.first(list(range(10))))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [500] * 80
