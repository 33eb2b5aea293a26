"""Text is always valid Unicode: decoded bytes that are not UTF-8 become U+FFFD (one per byte, as
gojq's `explode` sees them), and a lone surrogate in a caller's Python string is read as U+FFFD
wherever text is encoded — no builtin raises UnicodeError, none returns a surrogate it made."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from workload_map import jq
from workload_map.jq.builtins.formats import decode_bytes
from workload_map.jq.decode import loads
from workload_map.jq.encode import dumps

LIMITS = jq.Limits(max_results=100, timeout=5.0, max_depth=200)


def run(program: str, value: Any = None) -> list[Any]:
    return jq.compile(program).all(value, limits=LIMITS)


def has_surrogate(v: Any) -> bool:
    text = v if isinstance(v, str) else repr(v)
    return any(0xD800 <= ord(c) <= 0xDFFF for c in text)


def test_base64d_of_invalid_utf8_is_replacement_characters() -> None:
    # QA #1: `"/w==" | @base64d | test("a")` raised UnicodeEncodeError
    assert run("@base64d | explode", "/w==") == [[0xFFFD]]
    assert run('@base64d | test("a"), test("\\ufffd"), test(".")', "/w==") == [False, True, True]
    assert run('@base64d | [match("."; "g").string]', "/w==") == [["\ufffd"]]
    assert run("@base64d | tojson", "/w==") == ['"\ufffd"']
    # gojq: [65533,65533,65533] — one per byte of a cut 4-byte sequence, then valid text
    cut = base64.b64encode(b"\xf0\x9f\x98A\xc3\xa9").decode()
    assert run("@base64d | explode", cut) == [[0xFFFD, 0xFFFD, 0xFFFD, 0x41, 0xE9]]


def test_urid_and_implode_never_make_surrogates() -> None:
    assert run("@urid | explode", "%FF%41%ED%A0%80") == [[0xFFFD, 0x41, 0xFFFD, 0xFFFD, 0xFFFD]]
    assert run("implode | explode", [55296, 57343, 1114112, -1, 97]) == [
        [0xFFFD, 0xFFFD, 0xFFFD, 0xFFFD, 97]
    ]


def test_decode_bytes_replaces_each_invalid_byte() -> None:
    assert decode_bytes(b"a\xffb\xe0\x80") == "a\ufffdb\ufffd\ufffd"
    assert decode_bytes("é😀".encode()) == "é😀"


def test_fromjson_of_text_with_raw_lone_surrogates() -> None:
    assert run("fromjson", '"a\udcffb"') == ["a\ufffdb"]
    assert loads('{"k\ud800": ["\udfff"]}') == {"k\ufffd": ["\ufffd"]}


@pytest.mark.parametrize("text", ["a\udcffb", "\ud800x", "\ud83d\ude00"])
@pytest.mark.parametrize(
    "program",
    [
        'test("a")',
        '[match("."; "g") | .string]',
        'split("x"; null)',
        '[scan(".")]',
        'sub("a"; "b")',
        "explode",
        "utf8bytelength",
        "@uri",
        "@base64",
        "@base64 | @base64d",
        "tojson",
        "tojson | fromjson",
        "[.] | @csv",
        "{(.): 1} | tojson",
    ],
)
def test_caller_strings_with_lone_surrogates_never_crash(text: str, program: str) -> None:
    out = run(program, text)
    assert len(out) == 1
    if program in ("explode", "utf8bytelength", "@uri", "tojson", "@base64 | @base64d"):
        assert not has_surrogate(out[0])


def test_lone_surrogates_read_as_replacement_characters() -> None:
    assert run("explode", "a\udcff") == [[97, 0xFFFD]]
    assert run("utf8bytelength", "a\ud800") == [4]
    assert run("@uri", "\udcff") == ["%EF%BF%BD"]
    assert run("@base64", "\ud800") == [base64.b64encode("\ufffd".encode()).decode()]
    assert run("tojson", "\ud800") == ['"\\ufffd"']
    assert run('test("\\ufffd")', "\udcff") == [True]


def test_ascii_output_escapes_lone_surrogates_as_replacement() -> None:
    value = ["😀é\x7f\udcff", {"ké": 1}]
    assert dumps(value, None, ascii=True) == (
        '["\\ud83d\\ude00\\u00e9\\u007f\\ufffd",{"k\\u00e9":1}]'
    )
    assert dumps(value, None) == '["😀é\\u007f\\ufffd",{"ké":1}]'
