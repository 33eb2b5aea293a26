"""The expression runner: the direct path walk must agree with the jq engine everywhere."""

from __future__ import annotations

from typing import Any

import pytest

from workload_map import jq
from workload_map.engine import ExtractionError
from workload_map.engine.runner import Expression, lookup

VALUES: list[Any] = [
    None,
    {},
    {"a": None},
    {"a": {"b": 1}},
    {"a": {"b": False}},
    {"a": {"b": [1, 2]}},
    {"a": "str"},
    {"a": [{"b": 3}]},
    [1, 2],
    "x",
    3,
    {"metadata": {"labels": {"k/x": "v", "n": "0"}}},
    {"a": {"b": {"c": ""}}},
]
EXPRESSIONS = [
    ".",
    ".a",
    ".a.b",
    '.a["b"]',
    '.["a"].b',
    '."a".b',
    ".a.b[1]",
    ".a[0].b",
    ".[0]",
    '.metadata.labels["k/x"]',
    '.metadata.labels["k/x"] // "d"',
    ".a.b // 1",
    ".a.b // null",
    '.a.b.c // "z"',
    ".a // false",
    '.metadata.labels.n // "0"',
    ".a | .b",
    ".a.b[-1]",
    ".[-1]",
    ".[-9]",
    ".a.b[-3] // 7",
]


@pytest.mark.parametrize("expr", EXPRESSIONS)
def test_fast_paths_agree_with_jq(expr: str) -> None:
    assert Expression(expr).located is not None, expr  # the direct walk is taken
    program = jq.compile(expr)
    for value in VALUES:
        try:
            expected: Any = program.all(value)
        except jq.JqError:
            expected = "error"
        try:
            got: Any = Expression(expr).all(value)
        except ExtractionError:
            got = "error"
        assert got == expected, (expr, value)


@pytest.mark.parametrize(
    "expr",
    [
        ".a[]",
        ".a.b // .c",
        ".a?",
        ".a[1:]",
        "[.a]",
        "1",
        '.a["b\\(1)"]',
        ".a // 1 // 2",
    ],
)
def test_other_expressions_take_the_engine(expr: str) -> None:
    assert Expression(expr).located is None


def test_constant_paths_come_from_the_jq_package() -> None:
    assert Expression('.metadata.labels["k/x"]').path == ("metadata", "labels", "k/x")
    assert Expression(".a.b // 1").path is None
    assert Expression(".a.b // 1").located == ("a", "b")
    assert Expression(".a |").path is None  # a parse error is reported when evaluated
    # a value of another type on the way reads as absent
    assert lookup({"a": "s"}, ("a", "b")) is None
    assert lookup({"a": [1, 2]}, ("a", -1)) == 2


def test_errors_name_the_expression() -> None:
    with pytest.raises(ExtractionError, match=r"failed to parse JQ expression '\.a \|'"):
        Expression(".a |").all({})
    with pytest.raises(ExtractionError, match=r"JQ execution error for expression '\.a\[\]'"):
        Expression(".a[]").all({"a": 1})


def test_result_limit_is_the_reference_one() -> None:
    with pytest.raises(ExtractionError, match="query results exceed the allowed number 1000"):
        Expression(".[]").all(list(range(1000)))
    assert len(Expression(".[]").all(list(range(999)))) == 999


def test_paths_of_computed_values_raise() -> None:
    with pytest.raises(ExtractionError, match="does not address writable locations"):
        Expression("{a: .b}").paths({"b": 1})
    assert Expression(".a.b").paths({}) == [["a", "b"]]


def test_runner_facts_of_the_reference() -> None:
    # missing path -> [null]; a select that matches nothing -> []
    assert Expression(".a.b.c").all({}) == [None]
    assert Expression(".items[] | select(.id == 9)").all({"items": [{"id": 1}]}) == []
    # any source type is evaluable
    assert Expression(". | length").all("abc") == [3]
    assert Expression(". + 8").all(2) == [10]
    assert Expression(". | length").all(None) == [0]
    # // defaults for missing intermediates, numbers, booleans, objects, arrays; chains
    assert Expression(".a.b // 5").all({}) == [5]
    assert Expression(".a // true").all({"a": False}) == [True]
    assert Expression(".a // {}").all({}) == [{}]
    assert Expression(".a // []").all({"a": None}) == [[]]
    assert Expression('.a // .b // "c"').all({}) == ["c"]


@pytest.mark.parametrize(
    "expr",
    [".a.b + 1", "(.a // 0) > 0 and .a != true", ".a | length", "[.a.b]", ".a[0] == 3"],
)
def test_computed_expressions_evaluate_the_same_before_and_after_the_shortcut(expr: str) -> None:
    program = jq.compile(expr)
    first = Expression(expr)
    assert first.located is None
    before = first.evaluate
    for value in VALUES:
        try:
            expected: Any = program.all(value)
        except jq.JqError as err:
            expected = f"JQ execution error for expression '{expr}': {err}"
        for e in (Expression(expr), first):  # a first evaluation, and a later one
            try:
                got: Any = e.all(value)
            except ExtractionError as err:
                got = str(err)
            assert got == expected, (expr, value)
    # after compiling, the program is called straight rather than through _slow
    assert before != first.evaluate
