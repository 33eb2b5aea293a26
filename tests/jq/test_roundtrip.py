"""Property tests: the formatter round-trips through the parser, and arbitrary short programs
raise nothing but JqError (parse, compile and a deadline-bounded run)."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from workload_map import jq
from workload_map.jq import ast

IDENTS = st.sampled_from(["a", "b", "foo", "if", "and", "x_1", "$__loc__"[1:]])
FUNCS = st.sampled_from(["length", "keys", "not", "empty", "tostring", "f", "g"])
VARS = st.sampled_from(["$x", "$y", "$__loc__"])
STRINGS = st.text(alphabet='ab "\\\n\té(', max_size=4)


def quoted(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def atoms() -> st.SearchStrategy[str]:
    return st.one_of(
        st.sampled_from([".", "..", "null", "true", "false", "$x", "@base64", "@json", "empty"]),
        st.integers(min_value=0, max_value=10**25).map(str),
        st.floats(min_value=0, max_value=1e300, allow_nan=False).map(repr),
        IDENTS.map(lambda n: "." + n),
        STRINGS.map(quoted),
        FUNCS,
        VARS,
    )


def extend(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    binops = st.sampled_from(
        ["|", ",", "//", "=", "|=", "+=", "//=", "or", "and", "==", "<", "+", "-", "*", "/", "%"]
    )
    return st.one_of(
        st.tuples(inner, binops, inner).map(lambda t: f"({t[0]} {t[1]} {t[2]})"),
        st.tuples(inner, binops, inner).map(lambda t: f"{t[0]} {t[1]} {t[2]}"),
        inner.map(lambda a: f"[{a}]"),
        inner.map(lambda a: f"-{a}"),
        inner.map(lambda a: f"({a})?"),
        inner.map(lambda a: f"({a})[]"),
        st.tuples(inner, inner).map(lambda t: f"({t[0]})[{t[1]}]"),
        st.tuples(inner, inner).map(lambda t: f"({t[0]})[{t[1]}:]"),
        st.tuples(IDENTS, inner).map(lambda t: f"{{{t[0]}: {t[1]}}}"),
        st.tuples(IDENTS, inner).map(lambda t: f"{{{t[0]}, ({t[1]}): 1, $x}}"),
        st.tuples(inner, inner).map(lambda t: f'"a\\({t[0]})b\\({t[1]})"'),
        inner.map(lambda a: f'@base64 "x\\({a})"'),
        st.tuples(inner, inner).map(lambda t: f"{t[0]} as $x | {t[1]}"),
        st.tuples(inner, inner).map(lambda t: f"{t[0]} as [$x, {{a: $y}}] ?// $x | {t[1]}"),
        st.tuples(inner, inner, inner).map(lambda t: f"reduce {t[0]} as $x ({t[1]}; {t[2]})"),
        st.tuples(inner, inner, inner).map(
            lambda t: f"foreach {t[0]} as $x ({t[1]}; {t[2]}; {t[0]})"
        ),
        st.tuples(inner, inner, inner).map(lambda t: f"if {t[0]} then {t[1]} else {t[2]} end"),
        st.tuples(inner, inner).map(lambda t: f"if {t[0]} then {t[1]} end"),
        st.tuples(inner, inner).map(lambda t: f"try {t[0]} catch {t[1]}"),
        inner.map(lambda a: f"label $out | {a}, break $out"),
        st.tuples(inner, inner).map(lambda t: f"def f(g; $y): {t[0]}; {t[1]}"),
        st.tuples(FUNCS, inner, inner).map(lambda t: f"{t[0]}({t[1]}; {t[2]})"),
    )


PROGRAMS = st.recursive(atoms(), extend, max_leaves=12)


def parses(program: str) -> Any | None:
    try:
        return jq.parse(program)
    except (jq.JqParseError, jq.JqCompileError):
        return None


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(PROGRAMS)
def test_format_round_trips(program: str) -> None:
    tree = parses(program)
    if tree is None:
        return
    text = ast.format(tree)
    assert jq.parse(text) == tree, text
    assert ast.format(jq.parse(text)) == text


JQ_ALPHABET = st.sampled_from(
    [
        *'.[]{}()|,:;$@"\\?+-*/%=<>!#\n 0123456789abefinorstuxl',
        *["..", "//", "?//", "|=", "if", "then", "else", "end", "as", "def", "reduce", "foreach"],
        *["try", "catch", "label", "break", "$x", "length", "range", "path", "limit", "recurse"],
    ]
)
INPUTS = [None, 0, "s", [1, [2]], {"a": {"b": [1, "x"]}}]
LIMITS = jq.Limits(max_results=100, timeout=0.1, max_depth=50)


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(JQ_ALPHABET, max_size=12).map("".join))
def test_random_programs_raise_only_jq_errors(program: str) -> None:
    try:
        prog = jq.compile(program)
    except jq.JqError:
        return
    for value in INPUTS:
        try:
            prog.all(value, limits=LIMITS)
        except jq.JqError:
            pass
        try:
            prog.first(value, limits=LIMITS)
            prog.paths(value, limits=LIMITS)
        except jq.JqError:
            pass
    jq.karta_violations(program)
    jq.writability(program)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(PROGRAMS)
def test_generated_programs_raise_only_jq_errors(program: str) -> None:
    try:
        prog = jq.compile(program, variables=["$x"])
    except jq.JqError:
        return
    for value in INPUTS:
        try:
            prog.all(value, variables={"x": 1}, limits=LIMITS)
        except jq.JqError:
            pass
