"""The `@format` filters (`@text @json @html @uri @urid @csv @tsv @sh @base64 @base64d`).

Registered both as `@name/0` and under gojq's internal names (`_tohtml`, …), plus `format/1`.
Non-string inputs are first turned into text with `tostring` (except the row formats, which
take an array). Invalid UTF-8 produced by decoding becomes U+FFFD per byte, as gojq's `explode`
sees it (gojq keeps the raw bytes, so its `@uri`/`utf8bytelength` of such text differ: see
tests/jq/DIVERGENCES.md).
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Callable
from typing import Any

from workload_map.jq import encode
from workload_map.jq.builtins.marks import builtin
from workload_map.jq.errors import JqRuntimeError
from workload_map.jq.meter import CHARS_PER_UNIT, SPAN, Meter, text_slices
from workload_map.jq.values import (
    capped_text,
    preview,
    type_error,
    type_error_preview,
    utf8_bytes,
    valid_text,
)

__all__ = ["decode_bytes", "format_value", "utf8"]


def decode_bytes(data: bytes) -> str:
    """UTF-8 to text, each byte that is not part of valid UTF-8 as one U+FFFD (as gojq's
    `explode`, `test` and output see it). The result never holds a lone surrogate."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return valid_text(data.decode("utf-8", "surrogateescape"))


def utf8(s: str) -> bytes:
    """The UTF-8 bytes of `s`; a lone surrogate (from a caller's string) counts as U+FFFD."""
    return utf8_bytes(s)


def _text(v: Any, meter: Meter | None) -> str:
    return v if type(v) is str else encode.dumps(v, None, meter=meter)


def f_text(v: Any, meter: Meter | None) -> Any:
    return _text(v, meter)


def f_json(v: Any, meter: Meter | None) -> Any:
    return encode.dumps(v, None, meter=meter)


_HTML = str.maketrans({"<": "&lt;", ">": "&gt;", "&": "&amp;", "'": "&apos;", '"': "&quot;"})


def f_html(v: Any, meter: Meter | None) -> Any:
    return "".join(p.translate(_HTML) for p in text_slices(_text(v, meter), meter))


def f_uri(v: Any, meter: Meter | None) -> Any:
    quote = urllib.parse.quote
    return "".join(quote(utf8(p), safe="-_.~") for p in text_slices(_text(v, meter), meter))


def _is_hex(c: str) -> bool:
    return c in "0123456789abcdefABCDEF"


def f_urid(v: Any, meter: Meter | None) -> Any:
    s = _text(v, meter)
    out = bytearray()
    i, n = 0, len(s)
    while i < n:
        if meter is not None and i and not i & _CHARS_PER_SPEND - 1:
            meter.spend(SPAN)
        c = s[i]
        if c == "%":
            if i + 2 >= n or not (_is_hex(s[i + 1]) and _is_hex(s[i + 2])):
                bad = s[i : i + 3]
                raise JqRuntimeError(
                    f"@urid cannot be applied to {preview(v)}: "
                    f"invalid URL escape {encode.dumps(bad, None)}"
                )
            out.append(int(s[i + 1 : i + 3], 16))
            i += 3
            continue
        out.extend(utf8(c))
        i += 1
    return decode_bytes(bytes(out))


def _row(name: str, v: Any, sep: str, escape: Callable[[str], str], meter: Meter | None) -> str:
    if type(v) is not list:
        raise type_error("@" + name, v)
    parts: list[str] = []
    for x in v:
        if meter is not None and parts and not len(parts) % SPAN:
            meter.spend(SPAN)
        tx = type(x)
        if tx is list or tx is dict:
            raise JqRuntimeError(
                f"@{name} cannot format an array including: {type_error_preview(x)}"
            )
        if tx is str:
            if meter is not None and len(x) > SPAN:
                meter.spend(len(x) // CHARS_PER_UNIT)
            parts.append(escape(x))
            continue
        s = encode.dumps(x, None)
        parts.append(s if (s != "null" or name == "sh") else "")
    return sep.join(parts)


_CSV = str.maketrans({'"': '""', "\x00": "\\0"})
_TSV = str.maketrans({"\t": "\\t", "\r": "\\r", "\n": "\\n", "\\": "\\\\", "\x00": "\\0"})
_SH = str.maketrans({"'": "'\\''", "\x00": "\\0"})


def f_csv(v: Any, meter: Meter | None) -> Any:
    return _row("csv", v, ",", lambda s: '"' + s.translate(_CSV) + '"', meter)


def f_tsv(v: Any, meter: Meter | None) -> Any:
    return _row("tsv", v, "\t", lambda s: s.translate(_TSV), meter)


def f_sh(v: Any, meter: Meter | None) -> Any:
    if type(v) is not list:
        v = [v]
    return _row("sh", v, " ", lambda s: "'" + s.translate(_SH) + "'", meter)


#: characters a per-character Python loop handles between two spends of SPAN units
_CHARS_PER_SPEND = 1024

_B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
_B64_INDEX = {c: i for i, c in enumerate(_B64)}


def f_base64(v: Any, meter: Meter | None) -> Any:
    import base64

    data = utf8(_text(v, meter))
    step = 3 * SPAN * CHARS_PER_UNIT  # whole 3-byte groups: the slices' texts join up
    if meter is None or len(data) <= step:
        return base64.b64encode(data).decode("ascii")
    out = []
    for i in range(0, len(data), step):
        meter.spend(3 * SPAN)
        out.append(base64.b64encode(data[i : i + step]).decode("ascii"))
    return "".join(out)


def f_base64d(v: Any, meter: Meter | None) -> Any:
    s = _text(v, meter)
    pad = s.find("=")
    if pad >= 0:
        s = s[:pad]
    out = bytearray()
    acc = 0
    count = 0
    quantum_start = 0
    for i, c in enumerate(s):
        if meter is not None and i and not i & _CHARS_PER_SPEND - 1:
            meter.spend(SPAN)
        if c in "\r\n":
            continue
        d = _B64_INDEX.get(c)
        if d is None:
            raise JqRuntimeError(
                f"@base64d cannot be applied to {preview(v)}: illegal base64 data at input byte {i}"
            )
        if count == 0:
            quantum_start = i
        acc = (acc << 6) | d
        count += 1
        if count == 4:
            out.extend(acc.to_bytes(3, "big"))
            acc = 0
            count = 0
    if count == 1:
        raise JqRuntimeError(
            f"@base64d cannot be applied to {preview(v)}: "
            f"illegal base64 data at input byte {quantum_start}"
        )
    if count == 2:
        out.append((acc >> 4) & 0xFF)
    elif count == 3:
        out.extend(((acc >> 2) & 0xFFFF).to_bytes(2, "big"))
    return decode_bytes(bytes(out))


#: every format by its name (`@csv`): `format/1` finds them here, not in the registry (which
#: names this module, so importing it back would close a circle)
_BY_NAME: dict[str, Callable[..., Any]] = {}


def _capped(name: str, fn: Callable[[Any, Meter | None], Any]) -> Callable[..., Any]:
    """`fn` refusing a result over MAX_STRING_BYTES: escaping grows text by a constant factor,
    so a loop of formats must not grow it without bound. A format is called with the
    evaluation's meter (its text and escaping count their work as they go)."""

    def capped(v: Any, *, meter: Meter | None = None) -> Any:
        return capped_text(name, fn(v, meter))

    capped.__name__ = fn.__name__
    _BY_NAME[name] = capped
    if name not in ("@text", "@json"):  # gojq's internal names of the others: `@html` `_tohtml`
        capped = builtin("_to" + name[1:], 0)(capped)
    return builtin(name, 0)(capped)


# the formats' builtins (`@csv/0`, …), found by the registry one level into this tuple
_FORMATS = (
    _capped("@text", f_text),
    _capped("@json", f_json),
    _capped("@html", f_html),
    _capped("@uri", f_uri),
    _capped("@urid", f_urid),
    _capped("@csv", f_csv),
    _capped("@tsv", f_tsv),
    _capped("@sh", f_sh),
    _capped("@base64", f_base64),
    _capped("@base64d", f_base64d),
)


def format_value(name: str, v: Any, meter: Meter | None = None) -> Any:
    """Apply `@name` (with the `@`) to `v`; `format not defined: @name` for unknown names."""
    fn = _BY_NAME.get(name)
    if fn is None:
        raise JqRuntimeError(f"format not defined: {name}")
    return fn(v, meter=meter)


@builtin("format", 1)
def f_format(v: Any, name: Any, *, meter: Meter | None = None) -> Any:
    if type(name) is not str:
        raise type_error("format", name)
    return format_value("@" + name, v, meter)
