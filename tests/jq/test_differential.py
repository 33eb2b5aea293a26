"""Differential test: generated programs and inputs, our engine against the gojq binary.

Programs are built from paths, builtins and operators that every input accepts or rejects
with an error (no unbounded recursion), so each example finishes quickly in both engines.
Outputs are compared as gojq-encoded text, and run-time errors by their message.
"""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.jq.gojq_oracle import require_gojq, run_gojq
from workload_map import jq
from workload_map.jq.encode import dumps
from workload_map.jq.values import MAX_ARRAY_LENGTH

pytestmark = pytest.mark.gojq

KEYS = ["a", "b", "c", "é"]

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-1000, max_value=10**20),
    st.floats(allow_nan=False, allow_infinity=False, min_value=-1e6, max_value=1e6),
    st.text(alphabet="ab é,-1", max_size=5),
)
json_values = st.recursive(
    scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(st.sampled_from(KEYS), children, max_size=4),
    ),
    max_leaves=12,
)

ATOMS = [
    ".", ".a", ".b", ".[0]", ".[-1]", '.["c"]', ".[1:]", ".[]?", "..", "keys", "length",
    "type", "tostring", "tojson", "add", "sort", "unique", "reverse", "to_entries", "not",
    "min", "max", "flatten", "paths", "[.[]?]", "first(.[]?)", "values", "scalars", "arrays",
    "1", "-2.5", '"a"', "null", "[]", "{}", "true", "ascii_downcase", "ltrimstr(\"a\")",
    "split(\",\")", "join(\"-\")", "has(\"a\")", "has(0)", "contains(\"a\")", "tonumber",
    "abs", "floor", "explode", "implode", "@base64", "@csv", "@html", "@sh", "test(\"a\")",
    "map(type)", "map_values(length)", "with_entries(.value)", "any", "all", "range(3)",
    "indices(1)", "index(\"a\")", "splits(\"b\")", "ascii", "getpath([\"a\",0])",
    "del(.a)", "to_entries | from_entries", "group_by(type)", "sort_by(length)",
    "min_by(length)", "unique_by(type)", "limit(2; .[]?)", "isempty(.[]?)", "tostream",
    "input_line_number", "significand", "utf8bytelength", "@uri", "fromjson?",
]  # fmt: skip
BINARY = ["|", ",", "+", "-", "*", "/", "%", "==", "!=", "<", ">=", "and", "or", "//"]


def programs() -> st.SearchStrategy[str]:
    atom = st.sampled_from(ATOMS)
    return st.recursive(
        atom,
        lambda sub: st.one_of(
            st.tuples(sub, st.sampled_from(BINARY), sub).map(lambda t: f"({t[0]} {t[1]} {t[2]})"),
            sub.map(lambda p: f"[{p}]"),
            sub.map(lambda p: f"{{a: {p}}}"),
            sub.map(lambda p: f"({p})?"),
            sub.map(lambda p: f"try ({p}) catch ."),
            sub.map(lambda p: f"select({p})"),
            st.tuples(sub, sub, sub).map(lambda t: f"if {t[0]} then {t[1]} else {t[2]} end"),
            sub.map(lambda p: f"reduce .[]? as $x (0; . + ($x | {p} | length? // 0))"),
            sub.map(lambda p: f"[.[]? | {p}]"),
            sub.map(lambda p: f". as $v | {p} | [., $v]"),
        ),
        max_leaves=6,
    )


LIMIT = "<size limit>"


def ours(program: str, value: Any) -> tuple[str, str | None] | None:
    """(stdout gojq-style, error message) or None when we reject the program."""
    try:
        prog = jq.compile(program)
    except (jq.JqParseError, jq.JqCompileError):
        return None
    lines = []
    error = None
    try:
        for out in prog.iter(value, limits=jq.Limits(max_results=None, timeout=10.0)):
            lines.append(dumps(out, None) + "\n")
    except jq.JqLimitError:
        return "", LIMIT
    except jq.JqRuntimeError as e:
        error = e.message
    return "".join(lines), error


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(program=programs(), value=json_values)
def test_same_outputs_as_gojq(program: str, value: Any) -> None:
    gojq = require_gojq()
    proc = run_gojq(gojq, ["-c", program], dumps(value, None))
    result = ours(program, value)
    if proc.returncode == 3:
        assert result is None, f"gojq rejects {program!r}: {proc.stderr}"
        return
    assert result is not None, f"we reject {program!r}; gojq runs it"
    out, error = result
    if error is LIMIT:
        return  # our size caps (DIVERGENCES.md) refuse what gojq would build in memory
    assert out == proc.stdout, f"{program!r} on {dumps(value, None)}"
    gojq_error = proc.stderr.removeprefix("gojq: ").rstrip("\n") or None
    assert error == gojq_error, f"{program!r} on {dumps(value, None)}"


OPERATIONS = [
    "$x0 + $x1", "$x0 - $x1", "$x0 * $x1", "$x0 / $x1", "$x0 % $x1", "$x0 == $x1",
    "$x0 < $x1", "$x0 >= $x1", "[$x0, $x1] | sort", "[$x0, $x1] | unique", "$x0 | tostring",
    "$x0 | tojson", "$x0 | length", "$x0 | keys", "[$x0 | .[]?]", "$x0 | contains($x1)",
    "$x0 | has($x1)", "$x0 | .[$x1]", "$x0 | add", "$x0 | to_entries", "$x0 | flatten",
    "$x0 | tojson | fromjson", "[$x0, $x1] | min", "$x0 | indices($x1)", "$x0 | -.",
    "$x0 | floor", "$x0 | @text", "$x0 | @csv", "$x0 | join(\",\")", "$x0 | getpath([$x1])",
    "$x0 | setpath([$x1]; 1)", "$x0 | delpaths([[$x1]])", "[paths] | length",
]  # fmt: skip


def _negative_zero(value: Any) -> bool:
    """Whether a float -0.0 is anywhere in ``value``. The oracle's JSON cannot hand gojq one:
    it reads the text ``-0`` as the integer 0 and keeps ``-0.0`` as text (``tostring``)."""
    if type(value) is float:
        return value == 0 and math.copysign(1.0, value) < 0
    if isinstance(value, list):
        return any(_negative_zero(v) for v in value)
    if isinstance(value, dict):
        return any(_negative_zero(v) for v in value.values())
    return False


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pairs=st.lists(st.tuples(json_values, json_values), min_size=1, max_size=5))
def test_operators_and_builtins_match_gojq(pairs: list[tuple[Any, Any]]) -> None:
    """Every operation on random value pairs: the value layer against gojq's."""
    from tests.jq.gojq_oracle import gojq_calls

    gojq = require_gojq()
    cases = [(op, None, [a, b]) for a, b in pairs for op in OPERATIONS]
    expected = gojq_calls(gojq, cases)
    for (op, _inp, args), want in zip(cases, expected, strict=True):
        if _negative_zero(args):
            continue  # gojq got the integer 0 for it (see _negative_zero)
        if op == "$x0 | -." and args[0] == 0 and type(args[0]) is int:
            continue  # gojq negates the input text "0" to "-0"; integers carry no text here
        if (
            op == "$x0 | setpath([$x1]; 1)"
            and isinstance(args[1], int | float)
            and not isinstance(args[1], bool)
            and args[1] >= MAX_ARRAY_LENGTH
        ):
            continue  # our array size cap (DIVERGENCES.md); gojq builds the huge array
        prog = jq.compile(op, variables=["x0", "x1"])
        try:
            got: dict[str, Any] = {"ok": prog.all(None, variables={"x0": args[0], "x1": args[1]})}
        except jq.JqLimitError:
            continue  # our size caps (DIVERGENCES.md) refuse what gojq would build in memory
        except jq.JqRuntimeError as e:
            got = {"error": e.value}
        assert dumps(got, None) == dumps(want, None), f"{op} with {dumps(args, None)}"
