"""Limits: result cap, cooperative deadline, depth; pathological programs and inputs never hang,
never exhaust memory and never leak a Python RecursionError."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import pytest

from tests.jq.workclock import WorkClock
from workload_map import jq
from workload_map.jq import decode

TINY = jq.Limits(max_results=1000, timeout=0.2, max_depth=200)


def fails_with_limit(program: str, value: Any = None, limits: jq.Limits = TINY) -> jq.JqLimitError:
    with pytest.raises(jq.JqLimitError) as info:
        jq.compile(program).all(value, limits=limits)
    return info.value


def test_result_cap_is_reached_by_the_capth_result() -> None:
    items = {"items": [{"id": i} for i in range(100)]}
    err = fails_with_limit(".items[].id", items, jq.Limits(5, 5, 100))
    assert err.message == "query results exceed the allowed number 5"
    assert jq.compile(".items[].id").all(
        {"items": [{"id": 1}] * 3}, limits=jq.Limits(5, 5, 100)
    ) == [
        1,
        1,
        1,
    ]
    fails_with_limit(".items[:5][].id", items, jq.Limits(5, 5, 100))
    assert len(jq.compile(".items[:4][].id").all(items, limits=jq.Limits(5, 5, 100))) == 4
    assert len(jq.compile(".items[].id").all(items, limits=jq.Limits(None, 5, 100))) == 100


def test_default_limits_are_the_reference_runner_defaults() -> None:
    assert jq.DEFAULT_LIMITS == jq.Limits(1000, 10.0, jq.DEFAULT_LIMITS.max_depth)
    with pytest.raises(jq.JqLimitError, match="allowed number 1000"):
        jq.compile("range(5000)").all(None)
    assert len(jq.compile("range(999)").all(None)) == 999


def test_iter_applies_the_cap_lazily() -> None:
    out = []
    with pytest.raises(jq.JqLimitError):
        for x in jq.compile("repeat(1)").iter(None, limits=jq.Limits(10, 5, 100)):
            out.append(x)
    assert out == [1] * 9


@pytest.mark.timeout(60)
@pytest.mark.parametrize(
    "program",
    [
        "[repeat(.)]",
        "[range(1e9)]",
        "[range(1e9)] | length",
        "reduce range(1e9) as $x (0; . + $x)",
        "last(range(1e9))",
        "until(false; .)",
        "[while(true; .)]",
        "[foreach range(1e9) as $x (0; . + 1)] | length",
        "isempty(repeat(empty))",
        "[limit(1e9; repeat(1))] | length",
        "any(repeat(1); . == 2)",
        "def f: 1 + f; [f]",
        "def f: ., f; [f] | length",
        "[recurse(.)] | length",
        "[.[]?, repeat(empty)]",
        "label $l | repeat(empty)",
        "first(repeat(empty))",
        "[range(1e9) | select(. < 0)]",
        "path(repeat(empty))",
        "[1] | map(range(1e9)) | length",
        "[range(1e9)] | sort",
    ],
)
def test_runaway_programs_stop(program: str) -> None:
    fails_with_limit(program)


@pytest.mark.timeout(60)
@pytest.mark.parametrize(
    "program",
    [
        "def f: f; f",
        "def f: [f]; f",
        "def f(g): f(g); f(.)",
        "def f: . as $x | $x | f; f",
        "def f: try f catch .; f",
        "[recurse([.])] | length",
        "def f: reduce f as $x (0; .); f",
    ],
)
def test_runaway_recursion_hits_the_depth_or_deadline_limit(program: str) -> None:
    fails_with_limit(program)


def test_depth_limit_message() -> None:
    err = fails_with_limit("def f: [f]; f", None, jq.Limits(10, 5, 50))
    assert "depth" in err.message


def test_limit_errors_are_not_caught_by_try() -> None:
    fails_with_limit("try [range(1e9)] catch 0")
    fails_with_limit("[.[]?] | try (def f: f; f) catch 0")
    fails_with_limit("[range(1e9)]? // 1")


def deep(n: int) -> Any:
    value: Any = 1
    for _ in range(n):
        value = [value]
    return value


# a hang guard only: the jq deadline below ends each run, and --jq-clock-scale=10 (the loaded
# runs) stretches that deadline tenfold, so the guard leaves room for it on a busy machine
@pytest.mark.timeout(300)
@pytest.mark.parametrize(
    "program",
    [
        "[..] | length",
        "[paths] | length",
        "[getpath(paths)] | length",
        "[tostream] | length",
        "[.. | numbers]",
        "[recurse] | length",
        'first(.. | select(type == "number"))',
    ],
)
def test_deep_inputs_raise_nothing_but_jq_errors(program: str) -> None:
    value = deep(10000)
    try:
        # a 1 s deadline: what is checked is that the run ends in a jq error or a value, which
        # a short deadline shows as well as a long one, at a fifth of the CPU
        jq.compile(program).all(value, limits=jq.Limits(1000, 1, 1000))
    except jq.JqError:
        pass


def test_deep_input_recursive_descent_is_exact() -> None:
    value = deep(10000)
    # the default limits but no wall-clock deadline: 10000 paths of up to 10000 keys are 2.4 s
    # of CPU, and the default 10 s deadline fired on a loaded 2-core machine (7 s wall at load
    # 10); this checks exactness, the deadline has tests of its own
    exact = dataclasses.replace(jq.DEFAULT_LIMITS, timeout=None)
    assert jq.compile("[..] | length").first(value, limits=exact) == 10001
    assert jq.compile("[.. | numbers]").first(value, limits=exact) == [1]
    assert jq.compile("[paths] | length").first(value, limits=exact) == 10000


def test_deep_input_from_json_text() -> None:
    text = "[" * 5000 + "]" * 5000
    value = decode.loads(text)
    assert jq.compile("[..] | length").first(value) == 5000


def test_deadline_message() -> None:
    err = fails_with_limit("[range(1e9)]", None, jq.Limits(10, 0.05, 100))
    assert "deadline" in err.message


def test_huge_string_repetition_is_refused() -> None:
    with pytest.raises(jq.JqRuntimeError, match="repeat string result too large"):
        jq.compile('"abc" * 1e300').all(None)


def test_a_cap_is_only_reached_by_outputs() -> None:
    assert jq.compile("empty").all(None, limits=jq.Limits(0, 5, 10)) == []
    fails_with_limit(".", None, jq.Limits(1, 5, 10))
    fails_with_limit(".[]", [1], jq.Limits(1, 5, 10))


def test_many_paths_in_one_assignment() -> None:
    n = 20000
    prog = jq.compile("[range(.)] | .[range(length) | {start: ., end: (. + 1)}] = [1] | add")
    assert prog.all(n, limits=jq.Limits(10, 60, 100)) == [n]
    prog = jq.compile("[range(.)] | (.[] | select(. % 2 == 0)) |= empty | length")
    assert prog.all(n, limits=jq.Limits(10, 60, 100)) == [n // 2]


DEEP_RECURSION = "def f: if . < 900 then [. + 1 | f] else . end; 0 | f | flatten"


def test_non_tail_recursion_up_to_max_depth_runs() -> None:
    # deeper than Python's default recursion limit allows: re-run on a deep stack
    assert jq.compile(DEEP_RECURSION).all(None) == [[900]]
    assert jq.compile(DEEP_RECURSION).first(None) == [900]
    fact = "def fact($n): if $n < 1 then 1 else $n * fact($n - 1) end; fact(900)"
    assert jq.compile(fact).first(None) == math.factorial(900)


def test_iter_resumes_after_a_deep_rerun_without_repeating_outputs() -> None:
    messages: list[str] = []
    program = f'(1 | debug("one")), ({DEEP_RECURSION}), (3 | debug("three"))'
    out = list(jq.compile(program).iter(None, stderr=messages.append))
    assert out == [1, [900], 3]
    assert messages == ['["DEBUG:","one"]\n', '["DEBUG:","three"]\n']


def test_definition_limits_deadline_and_slow_warning() -> None:
    import dataclasses

    slow: list[jq.SlowEvaluation] = []
    limits = dataclasses.replace(
        jq.DEFINITION_LIMITS, warn_after=0.0, on_slow=slow.append, max_results=None
    )
    assert jq.DEFINITION_LIMITS.timeout == 0.05
    prog = jq.compile("[limit(5; .[])]")
    assert prog.all([1, 2, 3], limits=limits) == [[1, 2, 3]]
    assert prog.first([1], limits=limits) == [1]
    assert list(prog.iter([1], limits=limits)) == [[1]]
    assert jq.compile(".[0]").paths([1], limits=limits) == [[0]]
    assert [s.program for s in slow] == ["[limit(5; .[])]"] * 3 + [".[0]"]
    assert all(s.timeout == 0.05 and s.elapsed >= 0 for s in slow)
    # fast evaluations under the default threshold do not warn
    quiet: list[jq.SlowEvaluation] = []
    prog.all([1], limits=dataclasses.replace(jq.DEFINITION_LIMITS, on_slow=quiet.append))
    assert quiet == []


def test_deadline_error_is_data(work_clock: WorkClock) -> None:
    limits = jq.Limits(timeout=0.05)
    with work_clock.measure() as run, pytest.raises(jq.JqDeadlineError) as info:
        jq.compile("[range(1e9)] | length").all(None, limits=limits)
    assert run.events < 2 * 50_000  # 0.05 s on the work clock: 50 000 profile events
    assert info.value.timeout == 0.05
    assert isinstance(info.value, jq.JqLimitError)
    assert str(info.value) == "evaluation exceeded the deadline of 0.05 s"


def test_deadline_applies_to_programs_without_loops(work_clock: WorkClock) -> None:
    # a program with no loop or recursion still iterates a large input: the given deadline holds
    value = {"spec": {"big": list(range(300_000))}}
    with work_clock.measure() as run, pytest.raises(jq.JqDeadlineError):
        jq.compile("[.spec.big[] | tostring | length] | add").all(
            value, limits=jq.Limits(timeout=0.05)
        )
    assert run.events < 2 * 50_000
