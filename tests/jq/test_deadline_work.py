"""Long steps look at the deadline as they go (issue 26 item 3), measured by counting work.

Serialising a large or deep value (``tojson``, ``tostring``, interpolation, the ``@`` formats),
``paths``, sorting and grouping each did all their work between two looks at the clock: 512
such steps ran before the deadline was seen (``(@base64 "x\\(recurse)y")?`` over a 3000-deep
array: 0.9 to 2.2 s of CPU past a 0.5 s deadline). On the work-counting clock (``workclock``:
time is the number of profile events), every program here must stop within twice its deadline,
and no more than ``GAP`` events may run between two looks at the clock, on any machine.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from tests.jq.workclock import WorkClock
from workload_map import jq
from workload_map.jq import encode
from workload_map.jq.builtins import collections
from workload_map.jq.meter import SPAN

#: the most profile events allowed between two looks at the clock (the evaluation's own tick
#: interval, 512 steps of a few dozen to a few hundred events each, reaches 100 000)
GAP = 200_000
DEADLINE = 500_000  # events
FACTOR = 2  # `make fuzz`'s overrun factor


def _nested(depth: int) -> Any:
    v: Any = 0
    for _ in range(depth):
        v = [v]
    return v


DEEP = _nested(3000)
WIDE = list(range(30_000))
OBJECTS = [{"a": i % 97, "b": str(i)} for i in range(30_000)]

LONG_STEPS = [
    ('(@base64 "x\\(recurse)y")?', DEEP),  # the reported case
    ("[recurse | tojson] | length", DEEP),
    ("[recurse | tostring] | length", DEEP),
    ('[recurse | "\\(.)"] | length', DEEP),
    ("[recurse | @text, @json, @html, @uri, (@sh)?] | length", DEEP),
    ("[recurse | [.] | @csv?] | length", DEEP),
    ("[.[] as $x | [paths] | length]", [DEEP] * 50),
    ('[.[] as $x | [paths(type == "number")] | length]', [DEEP] * 50),
    ("[.[] | sort | length]", [OBJECTS] * 50),
    ("[.[] | group_by(.a) | length]", [OBJECTS] * 50),
    ("[.[] | unique_by({a}) | length]", [OBJECTS] * 50),
    ("[.[] | min_by(.b), max_by(.b)]", [OBJECTS] * 50),
    ("[.[] as $x | .[] | select(false)]", WIDE),
    ("[.[] as $x | map(tostring) | empty]", WIDE),
    ("[.[] | tojson | length]", [OBJECTS] * 50),
]


@pytest.mark.parametrize(("program", "value"), LONG_STEPS, ids=[p for p, _ in LONG_STEPS])
def test_a_long_step_stops_within_twice_its_deadline(
    program: str, value: Any, work_clock: WorkClock
) -> None:
    limits = jq.Limits(timeout=work_clock.seconds(DEADLINE), max_results=None, max_depth=10_000)
    prog = jq.compile(program)
    with work_clock.measure() as run, pytest.raises(jq.JqDeadlineError):
        prog.all(value, limits=limits)
    assert run.events < FACTOR * DEADLINE
    assert run.longest_gap < GAP


class _Recorder:
    """A meter that records what it is told."""

    def __init__(self) -> None:
        self.spends: list[int] = []

    def spend(self, units: int) -> None:
        self.spends.append(units)


def _values(rng: random.Random, depth: int = 0) -> Any:
    r = rng.random()
    if depth > 1 or r < 0.4:
        return rng.choice(
            [
                None,
                True,
                False,
                0,
                -7,
                1 << 70,
                10**5000,
                1.5,
                1e-7,
                1e300,
                float("inf"),
                float("nan"),
                encode.LiteralNumber(1.0, "1.0"),
                "",
                "a\x7fb",
                "\ud800",
                "é",
                "q\"\\'",
            ]
        )
    if r < 0.7:
        return [_values(rng, depth + 1) for _ in range(rng.choice([0, 1, 3, 70]))]
    return {
        f"k{rng.randrange(1000)}": _values(rng, depth + 1) for _ in range(rng.choice([0, 2, 80]))
    }


def test_the_metered_encoder_writes_what_the_plain_one_writes() -> None:
    rng = random.Random(26)
    for _ in range(200):
        v = _values(rng)
        assert encode.dumps(v, None, meter=_Recorder()) == encode.dumps(v, None)
    for v in (list(range(500_000)), {str(i): [i, "x"] for i in range(210_000)}, _nested(5000)):
        assert encode.dumps(v, None, meter=_Recorder()) == encode.dumps(v, None)


def test_the_encoder_counts_a_large_value_in_bounded_pieces() -> None:
    # a 3000-deep value: the Python encoder, at most SPAN values between two spends
    meter = _Recorder()
    encode.dumps(DEEP, None, meter=meter)
    assert sum(meter.spends) >= 3000 and len(meter.spends) >= 3000 // SPAN
    # a million elements: no single C call encodes more than the split size
    meter = _Recorder()
    text = encode.dumps(list(range(1_000_000)), None, meter=meter)
    assert text.startswith("[0,1,2,") and len(meter.spends) >= 1_000_000 // encode._SPLIT


def test_a_sort_by_jq_order_counts_every_comparison() -> None:
    items = [{"a": i % 13, "b": -i} for i in range(5000)]
    meter = _Recorder()
    by_meter = collections.f_sort(items, meter=meter)
    assert by_meter == collections.f_sort(items)
    # n log n comparisons, each counted (spent in pieces of SPAN or so)
    assert sum(meter.spends) >= 5000 * 6 and max(meter.spends) <= 2 * SPAN


def test_sorts_by_native_keys_keep_jq_order_and_stability() -> None:
    rng = random.Random(3)
    ints = [rng.randrange(-50, 50) for _ in range(3000)]
    strs = [str(x) for x in ints]
    for keys in (ints, strs, [[x] for x in ints], [[s] for s in strs]):
        values = list(range(len(keys)))
        expected = sorted(values, key=lambda i: (_jq_key(keys[i]), i))
        assert collections.f_sort_by(values, keys, meter=_Recorder()) == expected
        groups = collections.f_group_by(values, keys, meter=_Recorder())
        assert [i for g in groups for i in g] == expected
        assert len(groups) == len({repr(k) for k in keys})
    mixed = [1, "a", 1.5, None, [0], {"a": 1}, True, 2]
    assert collections.f_sort(mixed, meter=_Recorder()) == [
        None,
        True,
        1,
        1.5,
        2,
        "a",
        [0],
        {"a": 1},
    ]


def _jq_key(k: Any) -> Any:
    return k[0] if type(k) is list else k
