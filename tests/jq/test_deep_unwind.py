"""An error raised many jq calls deep unwinds in time linear in the depth (issue 12 item 8).

CPython 3.11 finalises each suspended generator an unwinding frame drops by raising
GeneratorExit in it, and each raise walks the running generators up to the nearest one inside
an ``except`` block: with none on the way, a deadline error 20 000 calls deep took 24 s of CPU
to reach the caller past a 0.3 s deadline. Calls from ``SHIELD_DEPTH`` on run inside a handler
(``_Shield`` in ``workload_map.jq.calls``); these tests count the walk, and bound the overrun
on the work-counting deadline clock (``workclock``), never in seconds.
"""

from __future__ import annotations

import inspect
import sys
from types import FrameType
from typing import Any

import pytest

from tests.jq.workclock import WorkClock
from workload_map import jq
from workload_map.jq import calls

# the recursion shapes of the finding, each with something left suspended per level: a call's
# environments, the source of an `as`, value parameters, and the same as a path expression
SHAPES = {
    "non-tail": "def f: if . < {n} then (.+1 | f) + 0 else {leaf} end; 0 | f",
    "as-source": "def f: if . < {n} then (range(1) as $i | .+1 | f) + 0 else {leaf} end; 0 | f",
    "value-param": "def f($x): if . < {n} then (.+1 | f($x)) + 0 else {leaf} end; 0 | f(1)",
    "pipe-leaf": "def f: if . < {n} then (.+1 | f) + 0 else (.+0 | {leaf}) end; 0 | f",
}
# path mode: the walk down a nested array, an alternative left open per level
PATH_SHAPE = 'def f: if type == "array" then (.[0] | f) // null else {leaf} end; path(f) | length'
PATH_LEAF_SPINS = "(first(range(100000000) | select(. < 0)) // .)"

DEADLINE = 0.3
FACTOR = 2.0  # the overrun factor of `make fuzz` (tests/jq/fuzz.py --factor)
LEAF_SPINS = "[range(100000000)] | length"


def _walk_length(frame: FrameType | None) -> int:
    """Running generator frames above ``frame`` up to the nearest one handling an exception:
    what a GeneratorExit raised at ``frame`` walks (``except ... as mark`` binds ``mark``)."""
    walked = 0
    while frame is not None:
        if frame.f_code.co_flags & inspect.CO_GENERATOR:
            if isinstance(frame.f_locals.get("mark"), BaseException):
                return walked
            walked += 1
        frame = frame.f_back
    return walked


def _longest_walk(shape: str, depth: int) -> int:
    walks: list[int] = []

    def hook(_text: str) -> None:  # runs at the deepest call, on its stack
        walks.append(_walk_length(sys._getframe(1)))

    program = jq.compile(shape.format(n=depth, leaf="stderr"))
    limits = jq.Limits(timeout=60.0, max_depth=100_000)
    assert program.all(None, limits=limits, stderr=hook) == [depth]
    assert len(walks) == 1
    return walks[0]


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_the_walk_from_the_deepest_call_does_not_grow_with_the_depth(name: str) -> None:
    shape = SHAPES[name]
    shallow = _longest_walk(shape, 4 * calls.SHIELD_DEPTH)
    deep = _longest_walk(shape, 3000)
    # without the handlers the walk crosses every running generator: thousands at 3000 deep
    assert deep == shallow
    assert deep < 40


def _nested(depth: int) -> Any:
    v: Any = 0
    for _ in range(depth):
        v = [v]
    return v


#: the deadline of the overrun tests, in profile events (``workclock``): room for thousands
#: of nested calls before it hits (as-source cannot reach 20 000: recursion too deep)
DEADLINE_EVENTS = 500_000


def _overrun(program: str, value: Any, clock: WorkClock) -> int:
    """The work ``program`` does under a deadline of DEADLINE_EVENTS, in profile events."""
    limits = jq.Limits(timeout=clock.seconds(DEADLINE_EVENTS), max_depth=100_000)
    with clock.measure() as run, pytest.raises(jq.JqDeadlineError):
        jq.compile(program).all(value, limits=limits)
    return run.events


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_a_deadline_error_20000_calls_deep_stays_within_the_fuzzers_overrun_factor(
    name: str, work_clock: WorkClock
) -> None:
    # before: 24 s of CPU for the non-tail shape (80x the deadline), 8 s for as-source; the
    # error is raised thousands of calls deep, and unwinding them must cost about what
    # entering them cost (the walk itself: the test above)
    program = SHAPES[name].format(n=20_000, leaf=LEAF_SPINS)
    assert _overrun(program, None, work_clock) < DEADLINE_EVENTS * FACTOR


def test_a_deadline_error_deep_in_a_path_expression_stays_within_the_factor(
    work_clock: WorkClock,
) -> None:
    # before: 1.6 s at 6000 deep, growing with the square of the depth
    program = PATH_SHAPE.format(leaf=PATH_LEAF_SPINS)
    assert _overrun(program, _nested(20_000), work_clock) < DEADLINE_EVENTS * FACTOR


def test_deep_errors_keep_their_jq_semantics() -> None:
    limits = jq.Limits(timeout=5.0, max_depth=100_000)
    deep = SHAPES["as-source"]
    # an ordinary error raised deep is caught by try, with its message as the value
    raises = deep.format(n=3000, leaf='error("bottom")')
    caught = jq.compile(f"try ({raises}) catch .")
    assert caught.all(None, limits=limits) == ["bottom"]
    # `?` and alternatives see it too
    assert jq.compile(f"[({raises})?]").all(None, limits=limits) == [[]]
    # a deadline error is not caught by try
    spins = f"try ({deep.format(n=3000, leaf=LEAF_SPINS)}) catch 1"
    short = jq.Limits(timeout=DEADLINE, max_depth=100_000)
    with pytest.raises(jq.JqDeadlineError) as info:
        jq.compile(spins).all(None, limits=short)
    assert info.value.program is not None
    # the depth limit still applies at the same depth
    with pytest.raises(jq.JqLimitError, match="maximum depth of 2000 nested calls exceeded"):
        jq.compile(deep.format(n=5000, leaf=".")).all(None, limits=jq.Limits(max_depth=2000))
    # and results are unchanged by the handlers
    assert jq.compile(SHAPES["non-tail"].format(n=3000, leaf=".")).all(None, limits=limits) == [
        3000
    ]
