"""Memory and size guards of the value layer, and gojq's integer `-0` from JSON input.

gojq lets `"x" * 1e9` build a 1 GB string and squares big integers without bound; we refuse a
step that would go past the caps in `workload_map.jq.values` (module settings, patched smaller
here so the tests stay cheap), always with a JqError, never MemoryError or an endless multiply.
"""

from __future__ import annotations

import tracemalloc
from typing import Any

import pytest

from workload_map import jq
from workload_map.jq import values as jv
from workload_map.jq.builtins.paths import setpath
from workload_map.jq.builtins.registry import native
from workload_map.jq.decode import loads
from workload_map.jq.encode import dumps
from workload_map.jq.errors import JqLimitError, JqRuntimeError

LIMITS = jq.Limits(max_results=100, timeout=5.0, max_depth=200)


def run(program: str, value: Any = None) -> list[Any]:
    return jq.compile(program).all(value, limits=LIMITS)


def test_string_repeat_over_the_cap_fails_fast_with_gojqs_error() -> None:
    # refused before building: the text is never allocated (counted, not timed)
    tracemalloc.start()
    assert run('try ("x" * 1e9 | length) catch .') == [
        'repeat string result too large: "x" * 1000000000'
    ]
    assert run('try ("xxxxxxxxxx" * 1e8) catch .') == [
        'repeat string result too large: "xxxxxxxxxx" * 100000000'
    ]
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 50_000_000
    assert run('"ab" * 1e6 | length') == [2_000_000]


def test_string_repeat_cap_counts_utf8_bytes_and_is_configurable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(jv, "MAX_STRING_BYTES", 100)
    assert len(jv.multiply("x", 100)) == 100
    with pytest.raises(JqRuntimeError, match="repeat string result too large"):
        jv.multiply("é", 51)  # 102 bytes
    with pytest.raises(JqRuntimeError, match="repeat string result too large"):
        jv.multiply(101, "x")


def test_string_and_array_concatenation_caps(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(jv, "MAX_STRING_BYTES", 1000)
    monkeypatch.setattr(jv, "MAX_ARRAY_LENGTH", 1000)
    with pytest.raises(JqLimitError, match="would exceed 1000 characters"):
        run('try reduce range(20) as $i ("x"; . + .) catch "caught"')
    with pytest.raises(JqLimitError, match="would exceed 1000 elements"):
        run('try reduce range(20) as $i ([1]; . + .) catch "caught"')
    assert len(jv.add("x" * 500, "y" * 500)) == 1000
    assert len(jv.add([0] * 500, [1] * 500)) == 1000


def test_builtins_that_multiply_elements_are_capped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(jv, "MAX_ARRAY_LENGTH", 100)
    with pytest.raises(JqLimitError, match="explode"):
        native("explode", 0)("x" * 101)
    with pytest.raises(JqLimitError, match="divide"):
        jv.divide("x" * 101, "")
    with pytest.raises(JqLimitError, match="transpose"):
        native("transpose", 0)([[1] * 20, [], [], [], [], [2]])
    with pytest.raises(JqLimitError, match="split"):
        native("split", 2)("," * 200, ",", None)
    with pytest.raises(JqRuntimeError, match="array index too large: 100"):
        setpath(None, [100], 1)
    assert len(setpath(None, [99], 1)) == 100


def test_global_match_is_capped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("workload_map.jq.builtins.regex._MAX_MATCHES", 10)
    with pytest.raises(JqLimitError, match="more than 10 matches"):
        run('[match("x"; "g")] | length', "x" * 11)
    assert run('[match("x"; "g")] | length', "x" * 10) == [10]


def test_integer_products_over_the_bit_cap_are_refused_before_computing() -> None:
    huge = 1 << 200_000
    # refused from the bit lengths alone: neither the product nor its digits are made
    tracemalloc.start()
    with pytest.raises(JqLimitError, match=f"would exceed {jv.MAX_INT_BITS} bits"):
        jv.multiply(huge, huge)
    with pytest.raises(JqLimitError, match="bits"):
        jv.int_multiply(huge, huge)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 40_000  # the 400 000-bit product alone would take 50 kB
    assert jv.multiply(1 << 100_000, 1 << 100_000) == 1 << 200_000
    assert jv.int_multiply(-3, 4) == -12


def test_growing_integer_in_a_program_stops_at_the_cap_and_try_cannot_hide_it() -> None:
    program = "try reduce range(5000) as $i (1; . * 340282366920938463463374607431768211456)"
    with pytest.raises(JqLimitError, match="cannot multiply: number"):
        run(program + ' catch "caught"')


def test_huge_integer_preview_shows_leading_digits_quickly() -> None:
    n = 7**100_000
    # from its leading digits: printing all 84 511 of them takes some 200 kB on the way
    tracemalloc.start()
    text = jv.preview(n)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 50_000
    assert text == str(7**100_000 // 10 ** (84_510 - 26))[:26] + " ..."
    assert jv.preview(-n).startswith("-" + text[:25])
    assert jv.preview(10**30) == dumps(10**30)[:26] + " ..."


@pytest.mark.parametrize(
    ("program", "want"),
    [
        (". * 1", "0"),
        (". / 1", "0"),
        (". - 0", "0"),
        (". + 0", "0"),
        (". % 5", "0"),
        ("try (1 / .) catch .", '"cannot divide number (1) by: number (0)"'),
        ("floor", "-0"),
        (".", "-0"),
        ("[.]", "[-0]"),
        ("-.", "0"),
        ("tostring", '"-0"'),
    ],
)
def test_integer_minus_zero_from_input_is_zero_in_arithmetic(program: str, want: str) -> None:
    # gojq v0.12.18: `echo -0 | gojq -c PROGRAM`
    assert [dumps(x, None) for x in run(program, loads("-0"))] == [want]


def test_float_minus_zero_keeps_its_sign() -> None:
    assert [dumps(x, None) for x in run(". * 1", loads("-0.0"))] == ["-0"]
    assert [dumps(x, None) for x in run("-0.0 | . * 1")] == ["-0"]


@pytest.mark.parametrize(
    "program",
    [
        'reduce range(10) as $i ("xxxxxxxxxxxxxxxx"; @base64)',
        "[range(60)] | tojson",
        "[range(60)] | tostring",
        '[range(60) | tostring] | join(",")',
        '"<" * 30 | @html',
        '@json "\\([range(60)])"',
    ],
)
def test_text_builtins_cap_their_results(monkeypatch: pytest.MonkeyPatch, program: str) -> None:
    monkeypatch.setattr(jv, "MAX_STRING_BYTES", 100)
    with pytest.raises(JqLimitError, match="would exceed 100 characters"):
        run(program)
    monkeypatch.setattr(jv, "MAX_STRING_BYTES", 1000)
    assert len(run(program)) == 1


def test_a_join_too_long_to_build_is_a_limit_error_not_a_memory_error() -> None:
    # `make fuzz` (seed 1): a separator of 17 MB between 2000 parts asked for 35 GB at once
    with pytest.raises(JqLimitError, match="join: the result would exceed"):
        run("join(join(@text))", list(range(2000)))
    assert run('join(", ")', ["a", "b"]) == ["a, b"]
