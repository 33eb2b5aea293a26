"""Value semantics: ordering, arithmetic, indexing, iteration and gojq's error texts."""

from __future__ import annotations

import functools
import math
from typing import Any

import pytest

from workload_map.jq import values as v
from workload_map.jq.decode import loads
from workload_map.jq.errors import JqRuntimeError


def err(fn: Any, *args: Any) -> str:
    with pytest.raises(JqRuntimeError) as e:
        fn(*args)
    return e.value.message


def test_type_names_and_truthiness() -> None:
    assert [v.type_name(x) for x in (None, True, 1, 1.5, "s", [], {})] == [
        "null",
        "boolean",
        "number",
        "number",
        "string",
        "array",
        "object",
    ]
    assert v.type_name(loads("1.0")) == "number"
    assert [v.truthy(x) for x in (None, False, 0, "", [], {})] == [False, False] + [True] * 4


def test_total_order() -> None:
    ordered = [None, False, True, -1, 0, 0.5, 1, "", "a", "b", "é", [], [0], [0, 1], [1], {}, {"a": 2},
               {"a": 1, "b": 0}, {"b": 0}]  # fmt: skip
    shuffled = list(reversed(ordered))
    assert sorted(shuffled, key=functools.cmp_to_key(v.compare)) == ordered


def test_numbers_compare_exactly_between_ints_and_via_float_otherwise() -> None:
    assert v.compare(13911860366432393, 13911860366432392) == 1
    assert v.equals(1, 1.0)
    assert not v.equals(True, 1)
    assert not v.equals(math.nan, math.nan)
    assert v.compare(math.nan, 0) == -1
    assert v.compare(10**400, 1e308) == 1  # the int becomes +inf as float64


def test_objects_compare_keys_first() -> None:
    assert v.compare({"a": 2}, {"a": 1, "b": 0}) == -1  # ["a"] < ["a","b"]
    assert v.compare({"a": 2}, {"a": 1}) == 1


def test_add() -> None:
    assert v.add(1, 2) == 3 and type(v.add(1, 2)) is int
    assert v.add(10**20, 1) == 10**20 + 1
    assert v.add(1, 0.5) == 1.5
    assert v.add("a", "b") == "ab"
    assert v.add([1], [2]) == [1, 2]
    assert v.add({"a": 1, "b": 1}, {"b": 2}) == {"a": 1, "b": 2}
    assert v.add(None, 3) == 3 and v.add(3, None) == 3 and v.add(None, None) is None
    assert err(v.add, 1, "a") == 'cannot add: number (1) and string ("a")'
    assert err(v.add, {}, [1]) == "cannot add: object ({}) and array ([1])"


def test_literal_numbers_lose_their_text_in_arithmetic() -> None:
    one = loads("1.0")
    assert type(v.add(one, 1)) is float
    assert v.negate(one).text == "-1.0"


def test_subtract_multiply() -> None:
    assert v.subtract([1, 2, 1, 3], [1]) == [2, 3]
    assert v.subtract(5, 7) == -2
    assert err(v.subtract, "a", "b") == 'cannot subtract: string ("a") and string ("b")'
    assert v.multiply(10**20, 10**20) == 10**40
    assert v.multiply("ab", 3) == "ababab" and v.multiply(2, "x") == "xx"
    assert v.multiply("a", 0) == "" and v.multiply("a", 0.5) == "" and v.multiply("a", 1.5) == "a"
    assert v.multiply("a", -1) is None
    assert v.multiply({"a": {"b": 1, "c": 1}}, {"a": {"c": 2}, "d": 3}) == {
        "a": {"b": 1, "c": 2},
        "d": 3,
    }
    assert err(v.multiply, "abc", 1e9).startswith('repeat string result too large: "abc" * ')
    assert err(v.multiply, [], []) == "cannot multiply: array ([]) and array ([])"


def test_divide_modulo() -> None:
    assert v.divide(6, 3) == 2 and type(v.divide(6, 3)) is int
    assert v.divide(7, 2) == 3.5
    assert v.divide(10**30, 10**10) == 10**20
    assert v.divide("a,b", ",") == ["a", "b"]
    assert v.divide("", ",") == []
    assert err(v.divide, 1, 0) == "cannot divide number (1) by: number (0)"
    assert err(v.divide, 1.5, 0.0) == "cannot divide number (1.5) by: number (0)"
    assert v.modulo(-7, 2) == -1 and v.modulo(7, -2) == 1 and v.modulo(5.9, 2.1) == 1
    assert err(v.modulo, 1, 0) == "cannot modulo number (1) by: number (0)"
    assert err(v.modulo, 1, 0.4) == "cannot modulo number (1) by: number (0.4)"
    assert math.isnan(v.modulo(math.nan, 2))


def test_negate() -> None:
    assert v.negate(10**20) == -(10**20)
    assert err(v.negate, "a") == 'cannot negate: string ("a")'
    assert err(v.negate, None) == "cannot negate: null"


def test_index() -> None:
    assert v.index({"a": 1}, "a") == 1 and v.index({"a": 1}, "b") is None
    assert v.index(None, "a") is None and v.index(None, 0) is None
    assert v.index([1, 2, 3], -1) == 3 and v.index([1, 2, 3], 1.7) == 2
    assert v.index([1, 2, 3], 3) is None and v.index([1], -2) is None
    assert v.index("aöc", 1) == "ö" and v.index("abc", -1) == "c" and v.index("a", 5) is None
    assert v.index([1, 2, 1, 2], [1, 2]) == [0, 2]
    assert v.index([0, 1, 2], {"start": 1, "end": None}) == [1, 2]
    assert err(v.index, [1], "a") == "expected an object but got: array ([1])"
    assert err(v.index, {"a": 1}, 0) == 'expected an array but got: object ({"a":1})'
    assert err(v.index, {}, None) == "expected a string for object key but got: null"
    assert err(v.index, [], True) == (
        "expected a number for indexing an array but got: boolean (true)"
    )
    assert err(v.index, "x", True) == (
        "expected a number for indexing a string but got: boolean (true)"
    )


def test_slice() -> None:
    assert v.slice([0, 1, 2, 3], 1, 3) == [1, 2]
    assert v.slice([0, 1, 2], -0.5, None) == [0, 1, 2]
    assert v.slice([0, 1, 2, 3], 0.5, 1.2) == [0, 1]
    assert v.slice("日本語", 1, None) == "本語"
    assert v.slice(None, 1, 2) is None
    assert v.slice([0, 1, 2], 2, 1) == []
    assert err(v.slice, {}, 0, 1) == "expected an array but got: object ({})"
    assert err(v.slice, [], "a", 1) == (
        'expected a number for indexing an array but got: string ("a")'
    )


def test_iterate_sorted() -> None:
    assert list(v.iterate({"b": 1, "a": 2})) == [2, 1]
    assert list(v.iterate_items({"b": 1, "a": 2})) == [("a", 2), ("b", 1)]
    assert list(v.iterate_items(["x"])) == [(0, "x")]
    assert err(v.iterate, 1) == "cannot iterate over: number (1)"
    assert err(v.iterate, None) == "cannot iterate over: null"


def test_preview_cuts_at_30_bytes() -> None:
    assert v.preview("very-long-long-long-long-long-string") == '"very-long-long-long-long ..."'
    assert v.preview(list(range(30))) == "[0,1,2,3,4,5,6,7,8,9,10,1 ...]"
    assert v.preview({"a" * 40: 1}) == '{"aaaaaaaaaaaaaaaaaaaaaaa ...}'
    assert v.preview(10**40) == "10000000000000000000000000 ..."
    assert v.preview("日本語日本語日本語日本語") == '"日本語日本語日本 ..."'
    assert v.preview("x" * 28) == '"' + "x" * 28 + '"'
    assert v.type_error_preview(None) == "null"


def test_type_error_texts() -> None:
    assert v.type_error("keys", None).message == "keys cannot be applied to: null"
    assert v.type_error("has", {"a": 1}, 0).message == (
        'has(0) cannot be applied to: object ({"a":1})'
    )
