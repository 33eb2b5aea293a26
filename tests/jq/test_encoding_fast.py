"""The fast output paths (orjson for large values, the stdlib's C encoder for small ones) print
exactly what the pure encoder prints, and what gojq prints: compact and with gojq's indent."""

from __future__ import annotations

import json
import subprocess
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.jq.gojq_oracle import require_gojq
from workload_map.jq import encoding
from workload_map.jq.encoding import dumps

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


@settings(max_examples=300, deadline=None)
@given(_values)
def test_orjson_path_prints_what_the_pure_encoder_prints(v: Any) -> None:
    if not isinstance(v, dict | list):
        v = [v]
    for unit in (None, "  "):
        fast = encoding._orjson_dumps(v, unit is not None)
        if fast is None:  # refused: the caller falls back to the pure encoder
            continue
        fast = encoding._SPECIAL_CHARS.sub(encoding._fix_specials, fast)
        assert fast == encoding._SPECIAL_CHARS.sub(
            encoding._fix_specials, encoding._encode_container(v, unit)
        )


def test_large_values_take_the_orjson_path(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[bool] = []
    real = encoding._orjson_dumps

    def spy(v: Any, indent: bool) -> str | None:
        calls.append(indent)
        return real(v, indent)

    monkeypatch.setattr(encoding, "_orjson_dumps", spy)
    big = {"items": [{"a": "\x7f", "b": [1, None, True]}] * encoding._ORJSON_FROM}
    small = {"items": [1, 2, 3]}
    for indent, unit in ((None, None), (2, "  ")):
        assert dumps(big, indent) == encoding._SPECIAL_CHARS.sub(
            encoding._fix_specials, encoding._encode_container(big, unit)
        )
        dumps(small, indent)
    assert calls == [False, True]


@settings(max_examples=300, deadline=None)
@given(_values)
def test_small_values_print_the_same_either_way(v: Any) -> None:
    if not isinstance(v, dict | list):
        v = [v]
    for indent, unit in ((None, None), (2, "  "), (4, "    ")):
        assert dumps(v, indent) == encoding._SPECIAL_CHARS.sub(
            encoding._fix_specials, encoding._encode_container(v, unit)
        )


def test_what_orjson_refuses_falls_back() -> None:
    for v in ({"n": 2**64, "pad": list(range(30000))}, {"s": "\ud800", "pad": list(range(30000))}):
        assert encoding._orjson_dumps(v, True) is None
        assert dumps(v) == encoding._SPECIAL_CHARS.sub(
            encoding._fix_specials, encoding._encode_container(v, "  ")
        )
    deep: Any = list(range(30000))
    for _ in range(400):  # deeper than orjson's limit of 254
        deep = [deep]
    assert encoding._orjson_dumps(deep, False) is None
    assert dumps(deep, None).startswith("[" * 401)


def test_floats_never_take_the_fast_paths() -> None:
    v = {"pad": list(range(30000)), "f": [1.0, 1e100, 0.1, 1e-7]}
    assert encoding._float_free_size(v) is None
    out = dumps(v, None)
    # gojq's number format (exponent without its leading zero), not orjson's or Python's
    assert out.startswith('{"f":[1,1e+100,0.1,1e-7],"pad":[0,1,2,')


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
    assert (encoding._float_free_size(value) or 0) >= encoding._ORJSON_FROM
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
