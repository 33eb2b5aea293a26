"""What the grammar fuzzer found (issue 12 item 8), each case checked against gojq v0.12.18.

Counts beyond machine integers, semantic differences (object keys checked after values,
`combinations(-1)`, `fromstream` of a non-array, dates past Go's range, `input_filename`), and
single steps that used to be expensive enough to overrun a deadline.
"""

from __future__ import annotations

import io
import json
from typing import Any

import pytest

from tests.jq.gojq_oracle import require_gojq, run_gojq
from tests.jq.workclock import WorkClock
from workload_map import jq
from workload_map.cli.jq_cli import main

CASES = [
    "limit(100000000000000000000; 1)",
    "[limit(infinite; 1, 2)]",
    "[limit(1e300; 1, 2)]",
    "[limit(nan; 1, 2)]",
    "[skip(100000000000000000000; 1)]",
    "[skip(infinite; 1, 2)]",
    "[nth(100000000000000000000; 1)]",
    "[nth(infinite; 1, 2)]",
    "{(.): empty}",
    "{(1, null): empty}",
    '{(1): 2, a: error("y")}',
    '{(1): error("x")}',
    "{(1): 2}",
    '{("a", "b"): (1, 2), c: 3}',
    "[1, 2] | [combinations(-1)]",
    "[1, 2] | [combinations(1.5)]",
    '[1, 2] | [combinations("a")]',
    '"x" | fromstream(.)',
    "true | fromstream(.)",
    "[1, 2] | fromstream(.)",
    '[fromstream(([[0], 1], [[0]]), "x")]',
    "fromstream([[0], 1], [[0]])",
    "1e20 | todate",
    "-1e20 | todate",
    "1e300 | gmtime",
    "9223372036854775807 | todate",
    "-9223372036854775808 | todate",
    "infinite | todate",
    "nan | gmtime",
    "-1.5 | gmtime",
    "-0.25 | gmtime",
    '1e20 | strftime("%Y %j %A")',
    "1e20 | gmtime | mktime",
    '-62135596801 | strftime("%y %C %g %G %-Y %5Y %1Y %2Y")',
    "[jn(9223372036854775807; 1), jn(nan; 1), jn(infinite; 1), jn(-infinite; -2)]",
    "[jn(200000; 3), jn(-200001; 3), jn(200001; -3), jn(0; 0), jn(3; 0)]",
    "[yn(9223372036854775807; 1), yn(4e9; 1), yn(nan; 1)]",
]


def _ours(args: list[str], stdin: str) -> tuple[int, str, str]:
    raw = io.BytesIO()
    out = io.TextIOWrapper(raw, encoding="utf-8", newline="")
    err = io.StringIO()
    code = main(args, io.BytesIO(stdin.encode()), out, err)
    out.flush()
    return code, raw.getvalue().decode("utf-8"), err.getvalue().replace("wlmap:", "gojq:")


@pytest.mark.gojq
@pytest.mark.parametrize("program", CASES)
def test_agrees_with_gojq(program: str) -> None:
    gojq = require_gojq()
    expected = run_gojq(gojq, ["-c", program], "null")
    assert _ours(["-c", program], "null") == (
        expected.returncode,
        expected.stdout,
        expected.stderr,
    )


@pytest.mark.gojq
@pytest.mark.parametrize(
    "args", [["input_filename"], ["-s", "input_filename"], ["-R", "input_filename"]]
)
def test_input_filename_of_stdin_agrees_with_gojq(args: list[str]) -> None:
    gojq = require_gojq()
    expected = run_gojq(gojq, ["-c", *args], "1 2")
    assert _ours(["-c", *args], "1 2")[1] == expected.stdout


@pytest.mark.parametrize(
    ("program", "value"),
    [
        ("[.. | .a?] | length", "deep"),
        ("[range(300000)] as $b | [range(2000) | $b | .a?] | length", None),
        ("jn(9223372036854775807; 1)", None),
        ("try (.[0] | .a) catch length", "wide"),
        ("try error(.) catch length", "wide"),
    ],
)
def test_single_steps_are_cheap(program: str, value: Any, work_clock: WorkClock) -> None:
    if value == "deep":
        value = 0
        for _ in range(3000):
            value = {"a": [value]}
    elif value == "wide":
        value = [list(range(3_000_000))]
    # these took 5 s to 3 min before previews were bounded (gojq: under 0.2 s): counted in
    # profile events (workclock), the work is bounded, whatever the machine
    with work_clock.measure() as run:
        jq.compile(program).all(value, limits=jq.Limits(timeout=None))
    assert run.events < 10_000_000  # building [range(300000)] alone is about 5 million


def test_type_error_on_a_huge_value_is_fast_and_small(work_clock: WorkClock) -> None:
    big = list(range(3_000_000))
    with work_clock.measure() as run, pytest.raises(jq.JqRuntimeError) as info:
        jq.compile(".a").all(big)
    assert run.events < 10_000  # the preview reads what it shows, not the 3 million
    assert str(info.value) == "expected an object but got: array ([0,1,2,3,4,5,6,7,8,9,10,1 ...])"


def test_deadline_stops_doubling_text(work_clock: WorkClock) -> None:
    # each tojson doubles the text: the string cap (or the deadline) ends it long before 40
    with work_clock.measure() as run, pytest.raises(jq.JqLimitError):
        jq.compile('[limit(40; "x" | recurse(tojson))] | length').all(
            None, limits=jq.Limits(timeout=0.3)
        )
    assert run.events < 2 * 300_000


def test_orders_too_large_to_evaluate_are_a_limit_error() -> None:
    with pytest.raises(jq.JqLimitError, match="jn: order 1000000000 is too large"):
        jq.compile("jn(1e9; 1e9)").all(None)


def _fuzz_deep(n: int) -> Any:
    v: Any = 0
    for _ in range(n):
        v = {"a": [v]}
    return v


# the long round's overruns (seed 1), and siblings of each class: a loop whose body yields
# nothing never reached the tick of a collector, a native called with generated arguments
# skipped the cost check, an operation on containers (deep equality) never looked at the clock
OVERRUNS: list[tuple[str, str]] = [
    ("((.[]) and (.[-1])) and (recurse).b?", "wide"),
    ("[flatten(.[]?)[-1:]]", "wide"),
    ("flatten(range(-1, .[] as $v0 | 0.1))", "wide"),
    ("(if .[]? then .a? else {a: sqrt} end) != (..)", "deep"),
    ("[.[] as $x | .[] | .b?]", "wide"),
    ("[.[] as $x | .[] | select(false)]", "wide"),
    ("first(.[] as $x | .[] | .b?)", "wide"),
    ("[.[] as $x | .. | .b?]", "wide"),
    ("[.[] as $x | map(tostring) | empty]", "wide"),
    ("[.[] as $x | any(.[]; . < 0) | select(.)]", "wide"),
    ("[.[] as $x | . == . | empty]", "wide"),
    ("[.. as $x | (..) == $x | empty]", "deep"),
]


@pytest.mark.parametrize(("program", "shape"), OVERRUNS)
def test_deadline_is_looked_at_inside_every_expensive_step(
    program: str, shape: str, work_clock: WorkClock
) -> None:
    # before, under a 0.05 s deadline: 0.3 s to 114 s of CPU (`.[] as $x | .[] | .b?` ran
    # to its end). Each program takes far longer in full, so the deadline hits; on the work
    # clock (0.05 s: 50 000 profile events) it stops within twice its deadline
    value = list(range(3000)) if shape == "wide" else _fuzz_deep(300)
    prog = jq.compile(program)
    with work_clock.measure() as run, pytest.raises(jq.JqDeadlineError):
        prog.all(value, limits=jq.Limits(max_results=None, timeout=0.05))
    assert run.events < 2 * 50_000


@pytest.mark.gojq
@pytest.mark.parametrize(("program", "shape"), OVERRUNS)
def test_overrun_programs_agree_with_gojq_on_small_inputs(program: str, shape: str) -> None:
    gojq = require_gojq()
    text = json.dumps(list(range(12)) if shape == "wide" else _fuzz_deep(6))
    expected = run_gojq(gojq, ["-c", program], text)
    assert _ours(["-c", program], text) == (
        expected.returncode,
        expected.stdout,
        expected.stderr,
    )
