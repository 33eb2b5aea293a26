"""gojq's JSON output format and the strict, literal-preserving JSON reader."""

from __future__ import annotations

import math

import pytest

from workload_map.jq.decode import JsonDecodeError, iter_values, loads
from workload_map.jq.encode import dumps, format_number
from workload_map.jq.values import LiteralNumber


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (3.0, "3"),
        (1e17, "100000000000000000"),
        (1e20, "100000000000000000000"),
        (1e21, "1e+21"),
        (1.5e300, "1.5e+300"),
        (1e-6, "0.000001"),
        (1e-7, "1e-7"),
        (2.5e-5, "0.000025"),
        (5e-324, "5e-324"),
        (0.1, "0.1"),
        (-0.0, "-0"),
        (math.nan, "null"),
        (math.inf, "1.7976931348623157e+308"),
        (-math.inf, "-1.7976931348623157e+308"),
        (10**30, "1000000000000000000000000000000"),
        (-5, "-5"),
        (True, "true"),
    ],
)
def test_number_format(value: float, text: str) -> None:
    assert format_number(value) == text
    assert dumps(value) == text


def test_strings_escape_like_gojq() -> None:
    assert dumps('a\x7fb\x01"\\\n\t/é<') == '"a\\u007fb\\u0001\\"\\\\\\n\\t/é<"'
    assert dumps("\ud800x") == '"\\ufffdx"'
    assert dumps({"k\x7f": ["\x7f"]}, None) == '{"k\\u007f":["\\u007f"]}'
    assert dumps("é", ascii=True) == '"\\u00e9"'


def test_containers_sorted_and_indented() -> None:
    value = {"b": 1, "a": [1, {"y": None, "x": []}], "c": {}}
    assert dumps(value, None) == '{"a":[1,{"x":[],"y":null}],"b":1,"c":{}}'
    assert dumps(value) == (
        '{\n  "a": [\n    1,\n    {\n      "x": [],\n      "y": null\n    }\n  ],\n'
        '  "b": 1,\n  "c": {}\n}'
    )
    assert dumps([1], tab=True) == "[\n\t1\n]"
    assert dumps([1], indent=4) == "[\n    1\n]"


def test_deep_values_print_without_recursion() -> None:
    deep: list[object] = []
    cur = deep
    for _ in range(5000):
        nxt: list[object] = []
        cur.append(nxt)
        cur = nxt
    assert dumps(deep, None) == "[" * 5001 + "]" * 5001


def test_literal_numbers_round_trip() -> None:
    value = loads("[1.0, 1.10, 100e-2, 1e1000, 0.1e1, 1.5, 100000000000000000001, -0]")
    assert dumps(value, None) == "[1.0,1.10,100e-2,1e1000,0.1e1,1.5,100000000000000000001,-0]"
    assert type(value[5]) is float  # canonical text: plain float
    assert type(value[6]) is int
    assert isinstance(value[0], LiteralNumber) and value[0] == 1.0


def test_strict_input() -> None:
    for bad, message in [
        ("NaN", "invalid character 'N' looking for beginning of value"),
        ("[1,]", "invalid character ']' looking for beginning of value"),
        ("\ufeff1", "invalid character '\ufeff' looking for beginning of value"),
        ("[1,2", "unexpected EOF"),
        ('{"a" 1}', "invalid character '1' after object key"),
        ('{"a":1 "b"}', "invalid character '\"' after object key:value pair"),
        ("tru", "unexpected EOF"),
        ("nul!", "invalid character '!' in literal null (expecting 'l')"),
        ("01", "invalid character '1' after top-level value"),
        ("1 2", "invalid character '2' after top-level value"),
        ("", "unexpected EOF"),
        ('"a\nb"', "invalid character '\\n' in string literal"),
    ]:
        with pytest.raises(JsonDecodeError) as e:
            loads(bad)
        assert e.value.message == message, bad


def test_depth_limit() -> None:
    assert loads("[" * 10000 + "]" * 10000) is not None
    with pytest.raises(JsonDecodeError, match="exceeded max depth"):
        loads("[" * 10001 + "]" * 10001)


def test_lone_surrogate_escapes_become_replacement_characters() -> None:
    assert loads('"\\ud800x\\ud83d\\ude00"') == "\ufffdx\U0001f600"


def test_stream() -> None:
    assert list(iter_values(' 1 [2]{"a":3}"x"\n null ')) == [1, [2], {"a": 3}, "x", None]
    assert list(iter_values("  ")) == []
    with pytest.raises(JsonDecodeError):
        list(iter_values("1 {"))
