"""JSON text in, as gojq reads it.

`loads`, `iter_values`, `decode_at`: strict RFC 8259 (no NaN/Infinity, no BOM), nesting at
most 10000 deep, integers exact, other numbers kept as `LiteralNumber` when their text is not
what gojq would print (:func:`workload_map.jq.encode.format_float`), lone surrogate escapes
replaced by U+FFFD (as Go's decoder does). The C decoder does the work; a small pure-Python
parser takes over for very deep input and to produce Go's error texts (`unexpected EOF`,
`invalid character 'x' after object key`, …). Writing JSON text is :mod:`workload_map.jq.encode`.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

from workload_map.jq.encode import LiteralNumber, format_float

__all__ = [
    "MAX_DEPTH",
    "JsonDecodeError",
    "decode_at",
    "iter_values",
    "loads",
    "skip_whitespace",
]

MAX_DEPTH = 10000
#: lone surrogates (from `\\ud800` escapes) in a decoded string, which become U+FFFD
_SURROGATES = re.compile("[\ud800-\udfff]")


class JsonDecodeError(ValueError):
    """Invalid JSON text; `message` is Go's wording, `offset` the character offset of the fault."""

    def __init__(self, message: str, offset: int):
        super().__init__(message)
        self.message = message
        self.offset = offset


def _parse_int(text: str) -> Any:
    if text == "-0":
        return LiteralNumber(-0.0, text)
    try:
        return int(text)
    except ValueError:  # beyond sys.get_int_max_str_digits()
        return int(Decimal(text))


def _parse_float(text: str) -> Any:
    f = float(text)
    if text[-1] != "0" and "e" not in text and "E" not in text:
        # A plain decimal without a trailing zero is gojq's own text when it has at most 15
        # significant digits (at most 16 characters: any such decimal is the shortest that
        # reads back as its double) and |f| >= 1e-6 (where gojq's exponent form starts);
        # longer ones when Python's shortest repr agrees. No format_float on this path:
        # the decoder calls this for every float of the input.
        if f >= 1e-6 or f <= -1e-6:
            if len(text) <= 16 or repr(f) == text:
                return f
    elif "." in text and text[-1] == "0" and "e" not in text and "E" not in text:
        return LiteralNumber(f, text)  # `1.0`, `0.50`: gojq never writes a trailing zero
    if format_float(f) == text:
        return f
    return LiteralNumber(f, text)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"invalid constant {name}")


_DECODER = json.JSONDecoder(
    parse_float=_parse_float, parse_int=_parse_int, parse_constant=_reject_constant
)
# integers parsed in C: only `-0` needs the hook (it must print as `-0`), see _negative_zero
_FAST_DECODER = json.JSONDecoder(parse_float=_parse_float, parse_constant=_reject_constant)
_BEFORE_NUMBER = frozenset(":[, \t\n\r")
_AFTER_ZERO = frozenset("0123456789.eE")


def _negative_zero(text: str, pos: int, end: int) -> bool:
    """Whether text[pos:end] may hold the number `-0` (`worker-0` in a string does not)."""
    i = text.find("-0", pos, end)
    while i != -1:
        before = text[i - 1] if i > pos else ":"
        after = text[i + 2] if i + 2 < end else ","
        if before in _BEFORE_NUMBER and after not in _AFTER_ZERO:
            return True
        i = text.find("-0", i + 2, end)
    return False


_WS = re.compile(r"[ \t\n\r]*")


def skip_whitespace(text: str, pos: int) -> int:
    """The offset of the first non-whitespace character at or after `pos` (JSON whitespace)."""
    return _WS.match(text, pos).end()  # type: ignore[union-attr]


# a `\ud800`-style escape, or a raw surrogate in a caller's Python string
_LONE_SURROGATE_ESCAPE = re.compile("\\\\u[dD][89abcdefABCDEF]|[\ud800-\udfff]")


def _fix_surrogates(v: Any) -> Any:
    """Lone surrogates (from `\\ud800` escapes) become U+FFFD, as in Go's decoder."""
    t = type(v)
    if t is str:
        if _SURROGATES.search(v):
            return v.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
        return v
    if t is list:
        return [_fix_surrogates(x) for x in v]
    if t is dict:
        return {_fix_surrogates(k): _fix_surrogates(x) for k, x in v.items()}
    return v


_DEPTH_TOKENS = re.compile(r'[\[\]{}]|"(?:[^"\\]|\\.)*"')


def _too_deep_at(text: str, pos: int, end: int) -> int | None:
    """Offset of the bracket opening level MAX_DEPTH+1 in text[pos:end], if any.

    Only texts with more than MAX_DEPTH opening brackets can be that deep, so the scan is
    skipped (two C-speed counts) for every ordinary document; and when the C decoder (which
    nests no deeper than the recursion limit) decoded it under a limit of at most MAX_DEPTH.
    """
    if (
        sys.getrecursionlimit() <= MAX_DEPTH
        or end - pos <= 2 * MAX_DEPTH
        or text.count("[", pos, end) + text.count("{", pos, end) <= MAX_DEPTH
    ):
        return None
    depth = 0
    for m in _DEPTH_TOKENS.finditer(text, pos, end):
        c = m.group()
        if c == "[" or c == "{":
            depth += 1
            if depth > MAX_DEPTH:
                return m.start()
        elif c == "]" or c == "}":
            depth -= 1
    return None


def decode_at(text: str, pos: int) -> tuple[Any, int]:
    """One value starting at `pos` (no leading whitespace); returns (value, end)."""
    try:
        value, end = _FAST_DECODER.raw_decode(text, pos)
        if _negative_zero(text, pos, end):
            value, end = _DECODER.raw_decode(text, pos)
    except (ValueError, RecursionError):
        return _Parser(text, pos).parse_value_at()
    deep = _too_deep_at(text, pos, end)
    if deep is not None:
        raise JsonDecodeError(
            f"invalid character {_quote_char(text[deep])} exceeded max depth", deep
        )
    # lone surrogates come from `\ud800` escapes or a caller's raw surrogates (never in an
    # ASCII text): two C-speed checks before the regular expression
    if (text.find("\\u", pos, end) != -1 or not text.isascii()) and _LONE_SURROGATE_ESCAPE.search(
        text, pos, end
    ):
        value = _fix_surrogates(value)
    return value, end


def loads(text: str) -> Any:
    """Exactly one JSON value (surrounding whitespace allowed); JsonDecodeError otherwise."""
    pos = _WS.match(text, 0).end()  # type: ignore[union-attr]
    if pos == len(text):
        raise JsonDecodeError("unexpected EOF", pos)
    value, end = decode_at(text, pos)
    end = _WS.match(text, end).end()  # type: ignore[union-attr]
    if end != len(text):
        raise JsonDecodeError(
            f"invalid character {_quote_char(text[end])} after top-level value", end
        )
    return value


def iter_values(text: str) -> Iterator[Any]:
    """Every JSON value of a whitespace-separated stream; raises JsonDecodeError at the fault."""
    n = len(text)
    pos = _WS.match(text, 0).end()  # type: ignore[union-attr]
    while pos < n:
        value, pos = decode_at(text, pos)
        yield value
        pos = _WS.match(text, pos).end()  # type: ignore[union-attr]


def _quote_char(c: str) -> str:
    """Go's quoteChar: `'x'`, with escapes for quotes and control characters."""
    if c == "'":
        return "'\\''"
    if c == '"':
        return "'\"'"
    q = json.dumps(c)[1:-1] if (ord(c) < 0x20 or c == "\\") else c
    if c == "\\":
        q = "\\\\"
    return f"'{q}'"


_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?")
_STRING_CHUNK = re.compile(r'[^"\\\x00-\x1f]*')
_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


class _Parser:
    """Iterative strict JSON parser with Go's error wording (slow path only)."""

    def __init__(self, text: str, pos: int):
        self.text = text
        self.pos = pos

    def fail(self, what: str) -> JsonDecodeError:
        if self.pos >= len(self.text):
            return JsonDecodeError("unexpected EOF", self.pos)
        return JsonDecodeError(
            f"invalid character {_quote_char(self.text[self.pos])} {what}", self.pos
        )

    def skip_ws(self) -> None:
        self.pos = _WS.match(self.text, self.pos).end()  # type: ignore[union-attr]

    def parse_value_at(self) -> tuple[Any, int]:
        text = self.text
        # stack frames: [container, pending key or None]
        stack: list[list[Any]] = []
        while True:
            self.skip_ws()
            if self.pos >= len(text):
                raise self.fail("")
            c = text[self.pos]
            value: Any
            if c == "{" or c == "[":
                if len(stack) >= MAX_DEPTH:
                    raise self.fail("exceeded max depth")
                self.pos += 1
                self.skip_ws()
                if c == "[":
                    if self.pos < len(text) and text[self.pos] == "]":
                        self.pos += 1
                        value = []
                    else:
                        stack.append([[], None])
                        continue
                else:
                    if self.pos < len(text) and text[self.pos] == "}":
                        self.pos += 1
                        value = {}
                    else:
                        key = self.parse_key("looking for beginning of object key string")
                        stack.append([{}, key])
                        continue
            else:
                value = self.parse_scalar()
            # attach the finished value to its parents, closing as many as end here
            while True:
                if not stack:
                    return value, self.pos
                frame = stack[-1]
                container = frame[0]
                if type(container) is list:
                    container.append(value)
                    self.skip_ws()
                    if self.pos < len(text) and text[self.pos] == ",":
                        self.pos += 1
                        break
                    if self.pos < len(text) and text[self.pos] == "]":
                        self.pos += 1
                        value = stack.pop()[0]
                        continue
                    raise self.fail("after array element")
                container[frame[1]] = value
                self.skip_ws()
                if self.pos < len(text) and text[self.pos] == ",":
                    self.pos += 1
                    self.skip_ws()
                    frame[1] = self.parse_key("looking for beginning of object key string")
                    break
                if self.pos < len(text) and text[self.pos] == "}":
                    self.pos += 1
                    value = stack.pop()[0]
                    continue
                raise self.fail("after object key:value pair")

    def parse_key(self, context: str) -> str:
        if self.pos >= len(self.text) or self.text[self.pos] != '"':
            raise self.fail(context)
        key = self.parse_string()
        self.skip_ws()
        if self.pos >= len(self.text) or self.text[self.pos] != ":":
            raise self.fail("after object key")
        self.pos += 1
        return key

    def parse_scalar(self) -> Any:
        text = self.text
        c = text[self.pos]
        if c == '"':
            return self.parse_string()
        if c == "-" or "0" <= c <= "9":
            return self.parse_number()
        for word, value in (("true", True), ("false", False), ("null", None)):
            if c == word[0]:
                for expected in word:
                    if self.pos >= len(text):
                        raise self.fail("")
                    if text[self.pos] != expected:
                        raise self.fail(f"in literal {word} (expecting {_quote_char(expected)})")
                    self.pos += 1
                return value
        raise self.fail("looking for beginning of value")

    def parse_number(self) -> Any:
        text = self.text
        m = _NUMBER.match(text, self.pos)
        start = self.pos
        if m is None or m.end() == start or text[m.end() - 1] == "-":
            self.pos = start + 1
            raise self.fail("in numeric literal")
        end = m.end()
        # Go reports the first bad character after a partial number
        if end < len(text) and text[end] in ".eE":
            self.pos = end + 1
            if text[end] == ".":
                raise self.fail("after decimal point in numeric literal")
            if self.pos < len(text) and text[self.pos] in "+-":
                self.pos += 1
            raise self.fail("in exponent of numeric literal")
        self.pos = end
        num = text[start:end]
        if "." in num or "e" in num or "E" in num:
            return _parse_float(num)
        return _parse_int(num)

    def parse_string(self) -> str:
        text = self.text
        self.pos += 1
        parts: list[str] = []
        while True:
            m = _STRING_CHUNK.match(text, self.pos)
            assert m is not None
            parts.append(m.group())
            self.pos = m.end()
            if self.pos >= len(text):
                raise self.fail("")
            c = text[self.pos]
            if c == '"':
                self.pos += 1
                s = "".join(parts)
                if _SURROGATES.search(s):
                    s = s.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
                return s
            if c == "\\":
                self.pos += 1
                if self.pos >= len(text):
                    raise self.fail("")
                e = text[self.pos]
                if e in _ESCAPES:
                    parts.append(_ESCAPES[e])
                    self.pos += 1
                    continue
                if e == "u":
                    self.pos += 1
                    for _ in range(4):
                        if self.pos >= len(text):
                            raise self.fail("")
                        if text[self.pos] not in "0123456789abcdefABCDEF":
                            raise self.fail("in \\u hexadecimal character escape")
                        self.pos += 1
                    parts.append(chr(int(text[self.pos - 4 : self.pos], 16)))
                    continue
                raise self.fail("in string escape code")
            raise self.fail("in string literal")
