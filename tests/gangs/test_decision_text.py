"""The decision annotation's text is exactly ``json.dumps(decision, sort_keys=True)``: the
reconciler compares it with what the cluster holds, so a byte that differs would patch every
object of ours on the first resync after an upgrade."""

from __future__ import annotations

import json
import math
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from workload_map.gangs.objects import decision_text

_scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text()
)
_values = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(st.text(), _values, max_size=8))
def test_a_decision_reads_as_dumps_with_sorted_keys(decision: dict[str, Any]) -> None:
    assert decision_text(decision) == json.dumps(decision, sort_keys=True)


@settings(max_examples=100, deadline=None)
@given(_values)
def test_any_json_value_reads_as_dumps(value: Any) -> None:
    assert decision_text(value) == json.dumps(value, sort_keys=True)


def test_the_texts_the_planner_writes() -> None:
    cases: list[Any] = [
        {"backend": "native", "minCount": 10, "keys": [], "optIn": "label x=enabled on ns"},
        {"templates": {"jobset": 10}, "optIn": 'ünïcode ☃ \u2028 "quoted" \\ tab\t'},
        {"kept": True, "members": 3, "reason": "pods still reference this group"},
        {"b": 1.5, "a": [math.inf, -math.inf, 1e300, -0.0], "c": {"z": None, "y": False}},
        {},
        "a top-level string",
        [3, 1, 2],
    ]
    for value in cases:
        assert decision_text(value) == json.dumps(value, sort_keys=True)


def test_keys_of_mixed_types_fail_as_dumps_does() -> None:
    mixed = {"a": 1, 2: "b"}
    for encode in (decision_text, lambda v: json.dumps(v, sort_keys=True)):
        try:
            encode(mixed)
        except TypeError:
            continue
        raise AssertionError("sorting str and int keys must fail")
