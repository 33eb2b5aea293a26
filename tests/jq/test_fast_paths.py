"""The compiler's fast paths for the status matchers' staples answer as the general forms do.

Comparisons with a scalar constant or of two single-valued operands, ``and``/``or`` chains and
``T[]?`` have specialised closures (Python's own comparison where the types agree); each is
checked here against the general operator (a variable defeats the specialisation) or jq's
total order in ``values`` on values whose types agree, differ, and sort specially (NaN, bools
against numbers, big ints against floats).
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from workload_map import jq
from workload_map.jq import deep
from workload_map.jq import program as program_module
from workload_map.jq import values as jv

VALUES: list[Any] = [
    None,
    True,
    False,
    0,
    1,
    -1,
    1.0,
    0.5,
    -0.0,
    float("nan"),
    float("inf"),
    2**53 + 1,
    "",
    "a",
    "b",
    [],
    [1],
    {},
    {"a": 1},
]
CONSTANTS = ["0", "1", "-1", "1.0", "0.5", "-0", "nan", "infinite", "9007199254740993"]
CONSTANTS += ["true", "false", "null", '""', '"a"', "[]", "{}"]
OPS = ["==", "!=", "<", "<=", ">", ">="]


def _expected(op: str, a: Any, b: Any) -> bool:
    if op == "==":
        return jv.equals(a, b)
    if op == "!=":
        return not jv.equals(a, b)
    c = jv.compare(a, b)
    return {"<": c < 0, "<=": c <= 0, ">": c > 0, ">=": c >= 0}[op]


@pytest.mark.parametrize("op", OPS)
def test_comparison_with_a_constant_is_the_general_comparison(op: str) -> None:
    for const in CONSTANTS:
        fast = jq.compile(f". {op} {const}")
        general = jq.compile(f"{const} as $c | . {op} $c")
        for v in VALUES:
            assert fast.all(v) == general.all(v), (op, const, v)


@pytest.mark.parametrize("op", OPS)
def test_comparison_of_two_operands_follows_jq_order(op: str) -> None:
    prog = jq.compile(f".[0] {op} .[1]")
    for a, b in itertools.product(VALUES, repeat=2):
        assert prog.all([a, b]) == [_expected(op, a, b)], (op, a, b)


def test_logic_chains_short_circuit_and_answer_booleans() -> None:
    truthy = ["null", "false", "true", "0", '""']
    for ops in itertools.product(["and", "or"], repeat=1):
        op = ops[0]
        for operands in itertools.product(truthy, repeat=3):
            chain = jq.compile(f" {op} ".join(operands))
            nested = jq.compile(f"({operands[0]} {op} {operands[1]}) as $x | $x {op} {operands[2]}")
            assert chain.all(None) == nested.all(None), (op, operands)
    # the operand after a deciding one is never evaluated
    assert jq.compile('false and error("x") and error("y")').all(None) == [False]
    assert jq.compile('1 or error("x") or error("y")').all(None) == [True]


@pytest.mark.parametrize(
    "value",
    [None, 3, "s", [], [1, [2]], {"b": 1, "a": 2}, {"a": {"z": 1, "y": 2}}, {"a": [3, 4]}],
)
def test_optional_iterate_is_try_of_iterate(value: Any) -> None:
    for text, general in [
        (".a[]?", ".a | try .[]"),
        ("[.a[]?]", "[.a | try .[]]"),
        ("[.[]?]", "[try .[]]"),
        ("[path(.a[]?)]", "[path(.a | try .[])]"),
    ]:
        try:
            want: Any = jq.compile(general).all(value)
        except jq.JqError as e:
            want = type(e)
        try:
            got: Any = jq.compile(text).all(value)
        except jq.JqError as e:
            got = type(e)
        assert got == want, (text, value)


def test_optional_iterate_still_meets_the_deadline() -> None:
    # `.[]?` counts each container's length: a body that yields nothing still looks at the clock
    limits = jq.Limits(timeout=0.05)
    prog = jq.compile("[.[]? as $x | .[]? | .[]? | .b?]")
    with pytest.raises(jq.JqDeadlineError):
        prog.all([list(range(3000))] * 3000, limits=limits)


QUICK_PROGRAMS = [
    ".a + 1",
    ".a[0]",
    '(.a // 0) > 0 and (.b // "") == ""',
    '.a != true and any(.c[]?; .type == "S" and .status == "True")',
    "(.a // 1) as $d | (.b // 0) as $r | $r > 0 and $r < $d",
    ".a | length",
    "{x: .a, y: [.b]}",
    ".a | not",
]
QUICK_VALUES: list[Any] = [
    None,
    {},
    {"a": 1, "b": 2},
    {"a": "s", "b": ""},
    {"a": [3], "b": 0, "c": [{"type": "S", "status": "True"}]},
    {"a": {"k": 1}, "c": "x"},
    [1],
    "text",
    7,
]


def _outcome(run: Any, value: Any) -> Any:
    try:
        return ("ok", run(value))
    except jq.JqError as err:
        return ("error", type(err), str(err), err.program)


@pytest.mark.parametrize("text", QUICK_PROGRAMS)
def test_quick_evaluation_is_all(text: str) -> None:
    program = jq.compile(text)
    handed: list[Any] = []

    def general(value: Any) -> list[Any]:
        handed.append(value)
        return program.all(value)

    quick = program.quick(general)
    assert quick is not None, text
    for value in QUICK_VALUES:
        handed.clear()
        expected = _outcome(program.all, value)
        assert _outcome(quick, value) == expected, (text, value)
        # outputs come from the shortcut itself; any error is the general path's own
        assert handed == ([] if expected[0] == "ok" else [value]), (text, value)


def test_quick_evaluation_hands_a_raised_recursion_limit_to_the_general_path(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    program = jq.compile(".a + 1")
    handed: list[Any] = []

    def general(value: Any) -> list[Any]:
        handed.append(value)
        return program.all(value)

    quick = program.quick(general)
    assert quick is not None
    monkeypatch.setattr(program_module, "getrecursionlimit", lambda: deep.BOUND_ABOVE + 1)
    assert quick({"a": 1}) == [2]
    assert handed == [{"a": 1}]


@pytest.mark.parametrize(
    "text",
    [
        ".[]",
        ".a[]?",
        "empty",
        "debug",
        "[range(.)]",
        "def f: if . > 0 then . - 1 | f else . end; f",
    ],
)
def test_programs_with_other_outputs_or_a_context_have_no_quick_evaluation(text: str) -> None:
    assert jq.compile(text).quick(lambda v: []) is None
    assert jq.compile(". + $x", variables=["x"]).quick(lambda v: []) is None
