"""The public surface of workload_map.jq."""

from __future__ import annotations

import threading

import pytest

from workload_map import jq
from workload_map.jq import errors


def test_exported_names() -> None:
    # pinned: a change to the public surface of workload_map.jq is a deliberate edit here
    assert sorted(jq.__all__) == [
        "DEFAULT_LIMITS",
        "DEFINITION_LIMITS",
        "JqBreak",
        "JqCompileError",
        "JqDeadlineError",
        "JqError",
        "JqHaltError",
        "JqLimitError",
        "JqParseError",
        "JqRuntimeError",
        "Limits",
        "Path",
        "PathKey",
        "Program",
        "SafetyRule",
        "SlowEvaluation",
        "Violation",
        "compile",
        "constant_path",
        "defaulted_path",
        "delpaths",
        "getpath",
        "is_writable",
        "karta_violations",
        "parse",
        "setpath",
        "unwritable",
        "writability",
    ]
    assert set(errors.__all__) <= set(jq.__all__)
    for name in jq.__all__:
        assert getattr(jq, name) is not None


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
