"""The fast output paths (orjson for large values, the stdlib's C encoder for small ones) print
exactly what the pure encoder prints, and what gojq prints: compact and with gojq's indent.
Floats take the orjson path too, the ones orjson writes otherwise than gojq as fragments."""

from __future__ import annotations

import json
import math
import struct
import subprocess
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.jq.gojq_oracle import require_gojq
from workload_map.jq import decode, encode
from workload_map.jq.encode import dumps
from workload_map.jq.values import LiteralNumber

# float-free JSON values; strings include DEL, controls, non-BMP and lone surrogates, integers
# reach past 64 bits: everything the fast paths must either print right or hand back
_text = st.text(
    alphabet=st.characters(min_codepoint=0, max_codepoint=0x10FFFF, blacklist_categories=()),
    max_size=12,
) | st.sampled_from(["\x7f", "a\x7fb", "\ud800", "\u2028", "é", "😀", "\x00\x1f\b\f"])
_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.integers(min_value=-(2**63), max_value=2**64 - 1)
    | _text
)
_values = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=6) | st.dictionaries(_text, inner, max_size=6),
    max_leaves=40,
)


_floats = (
    st.floats(allow_nan=True, allow_infinity=True)
    | st.floats(min_value=1e-7, max_value=1e-4)
    | st.floats(min_value=-1e-5, max_value=-1e-6)
    | st.integers(min_value=-(2**60), max_value=2**60).map(float)
    | st.sampled_from([0.0, -0.0, 1e21, 1e22, 1e20, 1e16, 1e-6, 1e-5, 5e-324, 1.5, 0.1])
    | st.sampled_from(["1.0", "1e3", "-0", "1E+2", "0.10"]).map(
        lambda t: LiteralNumber(float(t), t)
    )
)
_float_values = st.recursive(
    _scalars | _floats,
    lambda inner: st.lists(inner, max_size=6) | st.dictionaries(_text, inner, max_size=6),
    max_leaves=40,
)


@settings(max_examples=300, deadline=None)
@given(_values | _float_values)
def test_orjson_path_prints_what_the_pure_encoder_prints(v: Any) -> None:
    if not isinstance(v, dict | list):
        v = [v]
    for unit in (None, "  "):
        fast = encode._orjson_dumps(v, unit is not None, True)
        if fast is None:  # refused: the caller falls back to the pure encoder
            continue
        fast = encode._special_chars().sub(encode._fix_specials, fast)
        assert fast == encode._special_chars().sub(
            encode._fix_specials, encode._encode_container(v, unit)
        )


def test_large_values_take_the_orjson_path(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[bool] = []
    real = encode._orjson_dumps

    def spy(v: Any, indent: bool, floats: bool) -> str | None:
        calls.append((indent, floats))
        return real(v, indent, floats)

    monkeypatch.setattr(encode, "_orjson_dumps", spy)
    big = {"items": [{"a": "\x7f", "b": [1, None, True]}] * encode._ORJSON_FROM}
    with_floats = {"items": [{"f": [1.0, 0.5, 2e-6], "g": 1e100}] * encode._ORJSON_FROM}
    small = {"items": [1, 2, 3, 1.5]}
    for indent, unit in ((None, None), (2, "  ")):
        for v in (big, with_floats):
            assert dumps(v, indent) == encode._special_chars().sub(
                encode._fix_specials, encode._encode_container(v, unit)
            )
        dumps(small, indent)
    assert calls == [(False, False), (False, True), (True, False), (True, True)]


@settings(max_examples=300, deadline=None)
@given(_values)
def test_small_values_print_the_same_either_way(v: Any) -> None:
    if not isinstance(v, dict | list):
        v = [v]
    for indent, unit in ((None, None), (2, "  "), (4, "    ")):
        assert dumps(v, indent) == encode._special_chars().sub(
            encode._fix_specials, encode._encode_container(v, unit)
        )


def test_what_orjson_refuses_falls_back() -> None:
    for v in ({"n": 2**64, "pad": list(range(30000))}, {"s": "\ud800", "pad": list(range(30000))}):
        assert encode._orjson_dumps(v, True, False) is None
        assert dumps(v) == encode._special_chars().sub(
            encode._fix_specials, encode._encode_container(v, "  ")
        )
    deep: Any = list(range(30000))
    for _ in range(400):  # deeper than orjson's limit of 254
        deep = [deep]
    assert encode._orjson_dumps(deep, False, False) is None
    deep = [deep, 1.0]  # floats: the fragment copy stops at orjson's depth limit too
    assert encode._orjson_dumps(deep, False, True) is None
    assert dumps(deep, None).startswith("[" * 401)


def test_floats_take_the_orjson_path_in_gojq_format() -> None:
    v = {"pad": list(range(30000)), "f": [1.0, 1e100, 0.1, 1e-7, 2e-6, -0.0, math.inf, math.nan]}
    assert encode._size_and_floats(v) >= (encode._ORJSON_FROM, True)
    assert encode._size_and_floats({"f": [1.5] * 100, "i": list(range(30))}) == (132, True)
    out = dumps(v, None)
    # gojq's number format (integral floats without ".0", plain decimals down to 1e-6,
    # infinities clamped), not orjson's or Python's
    assert out.startswith(
        '{"f":[1,1e+100,0.1,1e-7,0.000002,-0,1.7976931348623157e+308,null],"pad":[0,1,2,'
    )
    assert encode._with_fragments(v["pad"], object) is v["pad"]  # float-free: shared


def _random_floats(n: int, seed: int) -> list[float]:
    import random

    rng = random.Random(seed)
    out: list[float] = []
    while len(out) < n:
        r = rng.random()
        if r < 0.4:  # any bit pattern
            f = struct.unpack("<d", struct.pack("<Q", rng.getrandbits(64)))[0]
        elif r < 0.7:  # every decade around gojq's and orjson's exponent switches
            f = rng.random() * 10 ** rng.randint(-25, 25)
        elif r < 0.85:
            f = float(rng.randint(-(2**62), 2**62) >> rng.randint(0, 62))
        else:
            f = round(rng.uniform(-1e4, 1e4), rng.randint(0, 8))
        if math.isfinite(f):
            out.append(f)
    return out


def test_floats_byte_for_byte_with_gojq() -> None:
    gojq = require_gojq()
    floats = [*_random_floats(30000, 7), 1e-6, 1e-5, 9.99e-6, 1e21, 1e20, 5e-324, -0.0, 3.0]
    # gojq prints input literals verbatim: `. * 1` makes it format each float itself
    text = "[" + ",".join(repr(f) for f in floats) + "]"
    value = [f * 1 for f in floats]
    assert encode._size_and_floats(value)[0] >= encode._ORJSON_FROM
    for args, indent in ((["-c", "map(. * 1)"], None), (["map(. * 1)"], 2)):
        want = subprocess.run(
            [str(gojq), *args], input=text, capture_output=True, text=True, timeout=60, check=True
        ).stdout
        got = dumps(value, indent) + "\n"
        if got != want:
            bad = [
                (f, a, b)
                for f, a, b in zip(floats, got.split(","), want.split(","), strict=False)
                if a != b
            ]
            raise AssertionError(f"{len(bad)} floats differ from gojq, first {bad[:5]}")


def test_large_value_byte_for_byte_with_gojq() -> None:
    gojq = require_gojq()
    pods = [
        {
            "metadata": {"name": f"p-{i}", "labels": {"app": "é😀\x7f", "i": str(i)}},
            "spec": {"containers": [{"name": "c", "args": ["--x", "\u2028", "\x01"]}]},
            "status": {"phase": "Running", "ready": i % 2 == 0, "n": i * 2**40, "none": None},
        }
        for i in range(3000)
    ]
    value = {"kind": "List", "items": pods}
    size, floats = encode._size_and_floats(value)
    assert size >= encode._ORJSON_FROM and not floats
    text = json.dumps(value, ensure_ascii=False)
    for args, indent in ((["-c", "."], None), (["."], 2)):
        want = subprocess.run(
            [str(gojq), *args], input=text, capture_output=True, text=True, timeout=60, check=True
        ).stdout
        assert dumps(value, indent) + "\n" == want, args


@pytest.mark.parametrize("indent", [None, 2])
def test_ascii_output_over_the_fast_path(indent: int | None) -> None:
    v = {"pad": list(range(30000)), "s": "é😀\x7f"}
    out = dumps(v, indent, ascii=True)
    assert out.isascii() and "\\u00e9\\ud83d\\ude00\\u007f" in out


@settings(max_examples=500, deadline=None)
@given(
    st.floats(allow_nan=False, allow_infinity=False).map(repr)
    | st.decimals(allow_nan=False, allow_infinity=False, places=8).map(str)
    | st.decimals(allow_nan=False, allow_infinity=False, places=17).map(str)
    | st.from_regex(r"-?(0|[1-9][0-9]{0,22})\.[0-9]{1,20}([eE][-+]?[0-9]{1,3})?", fullmatch=True)
)
def test_parse_float_shortcut_keeps_exactly_the_non_canonical_texts(text: str) -> None:
    try:
        f = float(text)
    except ValueError:
        return
    if not math.isfinite(f) or ("." not in text and "e" not in text.lower()):
        return
    got = decode._parse_float(text)
    canonical = encode.format_float(f) == text
    assert (type(got) is float) == canonical, text
    assert float(got) == f
    if not canonical:
        assert got.text == text
