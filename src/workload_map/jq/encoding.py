"""JSON text in and out, byte for byte as gojq writes and reads it.

Output (`dumps`): object keys sorted, numbers in gojq's format (shortest round-trip floats, plain
decimal between 1e-6 and 1e21, `1e-7` style exponents otherwise, NaN as `null`, infinities
clamped to ±1.7976931348623157e+308, integers with all their digits, input literals verbatim),
strings escaped like gojq (`\\u007f`, invalid text as `\\ufffd`). The encoder is iterative so
10000-deep values print without recursion.

Input (`loads`, `iter_values`): strict RFC 8259 (no NaN/Infinity, no BOM), nesting at most 10000
deep, integers exact, other numbers kept as `LiteralNumber` when their text is not what gojq
would print, lone surrogate escapes replaced by U+FFFD (as Go's decoder does). The C decoder
does the work; a small pure-Python parser takes over for very deep input and to produce Go's
error texts (`unexpected EOF`, `invalid character 'x' after object key`, …).
"""

from __future__ import annotations

import heapq
import json
import re
import sys
from collections.abc import Iterator
from decimal import Context, Decimal
from typing import Any

from workload_map.jq.meter import ELEMENTS_PER_UNIT, SPAN, Meter, sort_metered

__all__ = [
    "MAX_DEPTH",
    "JsonDecodeError",
    "LiteralNumber",
    "decode_at",
    "dumps",
    "dumps_prefix",
    "format_number",
    "iter_values",
    "loads",
    "skip_whitespace",
]

MAX_DEPTH = 10000
_MAX_FLOAT = 1.7976931348623157e308
_encode_str = json.encoder.encode_basestring
_SPECIAL_CHARS = re.compile("[\x7f\ud800-\udfff]")
_C_COMPACT = json.JSONEncoder(
    ensure_ascii=False, sort_keys=True, separators=(",", ":"), check_circular=False
).encode


class LiteralNumber(float):
    """A number read from JSON text that is not in canonical form (`1.0`, `1e3`, `1e1000`).

    It behaves as its float value everywhere; the encoder prints `text` instead of the value, as
    gojq does while a number from the input passes through untouched.
    """

    __slots__ = ("text",)
    text: str

    def __new__(cls, value: float, text: str) -> LiteralNumber:
        obj = float.__new__(cls, value)
        obj.text = text
        return obj

    def __repr__(self) -> str:
        return f"LiteralNumber({self.text})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (LiteralNumber, (float(self), self.text))


class JsonDecodeError(ValueError):
    """Invalid JSON text; `message` is Go's wording, `offset` the character offset of the fault."""

    def __init__(self, message: str, offset: int):
        super().__init__(message)
        self.message = message
        self.offset = offset


# ---------------------------------------------------------------------------------------------
# output


def _format_float(f: float) -> str:
    if f != f:
        return "null"
    if f > _MAX_FLOAT:
        f = _MAX_FLOAT
    elif f < -_MAX_FLOAT:
        f = -_MAX_FLOAT
    r = repr(f)
    a = abs(f)
    if a != 0 and (a < 1e-6 or a >= 1e21):
        # exponent form: Python's repr already is shortest with e±XX; gojq drops the 0 of e-0X
        if "e" not in r:
            r = f"{f:e}"
        mant, _, exp = r.partition("e")
        if mant.endswith(".0"):
            mant = mant[:-2]
        sign = exp[0] if exp[0] in "+-" else "+"
        digits = exp.lstrip("+-").lstrip("0") or "0"
        if sign == "+" and len(digits) < 2:
            digits = digits.rjust(2, "0")
        return f"{mant}e{sign}{digits}"
    if "e" in r or "E" in r:
        return format(Decimal(r), "f")
    if r.endswith(".0"):
        return r[:-2]
    return r


def _format_int(i: int) -> str:
    try:
        return str(i)
    except ValueError:  # beyond sys.get_int_max_str_digits()
        return format(Decimal(i), "f")


def format_number(v: Any) -> str:
    """A number as gojq prints it (`tostring`, output, string interpolation)."""
    t = type(v)
    if t is int:
        return _format_int(v)
    if t is LiteralNumber:
        return str(v.text)
    if t is float:
        return _format_float(v)
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return _format_int(int(v))
    return _format_float(float(v))


_NON_ASCII = re.compile("[^\x00-\x7f]")


def _escape_non_ascii(m: re.Match[str]) -> str:
    o = ord(m.group())
    if o < 0x10000:
        return f"\\u{o:04x}"
    o -= 0x10000
    return f"\\u{0xD800 + (o >> 10):04x}\\u{0xDC00 + (o & 0x3FF):04x}"


def _fix_specials(m: re.Match[str]) -> str:
    return "\\u007f" if m.group() == "\x7f" else "\\ufffd"


def _scalar(v: Any) -> str:
    t = type(v)
    if t is str:
        return str(_encode_str(v))
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    return format_number(v)


def dumps(
    v: Any,
    indent: int | None = 2,
    *,
    tab: bool = False,
    ascii: bool = False,
    meter: Meter | None = None,
) -> str:
    """`v` as gojq prints it: `indent=None` compact, else `indent` spaces (or a tab) per level.

    `ascii=True` escapes every non-ASCII character (`\\u00e9`, pairs above U+FFFF); a lone
    surrogate in a string prints as `\\ufffd` either way. With a `meter` (compact text inside
    an evaluation: `tojson`, `tostring`, interpolation) the work is counted as it goes and no
    single C call encodes more than `_SPLIT` elements.
    """
    if ascii:
        plain = dumps(v, indent, tab=tab)
        return plain if plain.isascii() else _NON_ASCII.sub(_escape_non_ascii, plain)
    t = type(v)
    if t is str:
        if meter is not None and len(v) > _LONG_TEXT:
            meter.spend(len(v) // _CHARS_PER_UNIT)
        out = _scalar(v)
        return _SPECIAL_CHARS.sub(_fix_specials, out)
    if t is not list and t is not dict:
        return _scalar(v)
    unit: str | None
    if tab:
        unit = "\t"
    elif indent is not None:
        unit = " " * indent
    else:
        unit = None
    if meter is not None and unit is None:
        return _dumps_metered(v, meter)
    size, floats = _size_and_floats(v) if unit is None or unit == "  " else (0, True)
    return _encode(v, unit, size, floats, None)


def _encode(v: Any, unit: str | None, size: int, floats: bool, meter: Meter | None) -> str:
    """The text of container `v` given its element count and whether it holds floats."""
    text = None
    # A large value goes to orjson, compact or with gojq's default indent of 2; a small one
    # without floats compact to the stdlib's C encoder (no import to pay). Both print what
    # gojq prints but DEL, fixed below, and the floats orjson writes its own way (orjson gets
    # those as text fragments in gojq's format); what they refuse (an integer beyond 64 bits,
    # a lone surrogate, very deep nesting) falls back to our encoder.
    if size >= _ORJSON_FROM:
        text = _orjson_dumps(v, unit is not None, floats)
    elif not floats and unit is None:
        try:
            text = _C_COMPACT(v)
        except (ValueError, RecursionError):  # huge integers, very deep values
            text = None
    if text is None:
        text = _encode_container(v, unit, meter)
    # an ASCII text (a flag CPython keeps) can only hold DEL of the special characters
    if "\x7f" in text if text.isascii() else _SPECIAL_CHARS.search(text) is not None:
        text = _SPECIAL_CHARS.sub(_fix_specials, text)
    return text


#: elements the metered encoder hands to one C call at most (about 0.1 s of the slowest
#: encoding, floats through orjson's fragments): a larger container is written node by node
_SPLIT = 200_000
#: characters of a string from which writing it is counted as work
_LONG_TEXT = 4096
#: characters the C string escaper writes per unit of work
_CHARS_PER_UNIT = 1024


def _dumps_metered(v: Any, meter: Meter) -> str:
    size, floats = _size_and_floats(v, meter, _SPLIT)
    if size <= _SPLIT:
        if size > SPAN:
            meter.spend(size // ELEMENTS_PER_UNIT)
        return _encode(v, None, size, floats, meter)
    # too large for one C call between two looks at the clock: node by node, each run of
    # scalars at C speed
    text = _encode_container(v, None, meter)
    if "\x7f" in text if text.isascii() else _SPECIAL_CHARS.search(text) is not None:
        text = _SPECIAL_CHARS.sub(_fix_specials, text)
    return text


#: elements from which orjson pays for its import (about 30 ms) and beats the C encoder
_ORJSON_FROM = 20000


def _orjson_dumps(v: Any, indent: bool, floats: bool) -> str | None:
    import orjson

    option = orjson.OPT_SORT_KEYS | (orjson.OPT_INDENT_2 if indent else 0)
    try:
        if floats:
            v = _with_fragments(v, orjson.Fragment)
        return orjson.dumps(v, option=option).decode()
    except (TypeError, RecursionError):
        # orjson.JSONEncodeError: 65-bit integers, surrogates, depth over 254
        return None


_INF = float("inf")
_TINY = 1e-5
_LOOK_INTO = frozenset({dict, list, float, LiteralNumber})
_FLOATS_ONLY = {float}
_CONTAINER_KINDS = frozenset({dict, list})


def _any_differs(floats: Any) -> bool:
    """Whether one of ``floats`` (floats only) is one orjson writes otherwise than gojq (see
    ``_with_fragments``), in C-speed passes (infinite, below 1e-5, integral) with a Python
    pass only to confirm a candidate."""
    magnitudes = list(map(abs, floats))
    if _INF in magnitudes:
        return True
    # (NaN is no concern: both write null; the comparisons below are False for it)
    if any(map(_TINY.__gt__, magnitudes)) and any(1e-6 <= m < 1e-5 for m in magnitudes):
        return True
    if any(map(float.is_integer, floats)):
        return any(m < 1e21 and f.is_integer() for f, m in zip(floats, magnitudes, strict=True))
    return False


def _with_fragments(root: Any, fragment: Any) -> Any:
    """``root`` with each float orjson would write otherwise than gojq replaced by an
    ``orjson.Fragment`` of gojq's text; containers are copied only on the way to such a float,
    the rest is shared (a container without floats or containers is passed whole)."""

    def fix(x: Any, depth: int) -> Any:
        items = x.values() if type(x) is dict else x
        kinds = set(map(type, items))
        if kinds.isdisjoint(_LOOK_INTO):
            return x
        if depth > 254:  # orjson's own limit: the pure encoder takes over
            raise RecursionError
        if kinds.isdisjoint(_CONTAINER_KINDS) and LiteralNumber not in kinds:
            # scalars only: decided in C-speed passes over the floats, most often "as is"
            floats = items if kinds == _FLOATS_ONLY else [y for y in items if type(y) is float]
            if not _any_differs(floats):
                return x
        out = None
        for k, y in x.items() if type(x) is dict else enumerate(x):
            ty = type(y)
            if ty is float:
                # orjson writes a float otherwise than gojq when it is integral below 1e21
                # (`1.0`, `1e+16` for gojq's `1`, `10000000000000000`), when
                # 1e-6 <= |f| < 1e-5 (orjson's exponent form starts at 1e-5, gojq's at 1e-6)
                # and for infinities (orjson: `null`); elsewhere both write the same shortest
                # round-trip digits (tests/jq/test_encoding_fast.py checks this against gojq)
                a = abs(y)
                if not (a < 1e21 and y.is_integer()) and not 1e-6 <= a < 1e-5 and a != _INF:
                    continue
                z = fragment(_format_float(y))
            elif ty is dict or ty is list:
                z = fix(y, depth + 1)
                if z is y:
                    continue
            elif ty is LiteralNumber:
                z = fragment(y.text)
            else:
                continue
            if out is None:
                out = x.copy()
            out[k] = z
        return x if out is None else out

    return fix(root, 1)


def _size_and_floats(
    v: Any, meter: Meter | None = None, stop: int | None = None
) -> tuple[int, bool]:
    """How many elements `v` (a container) holds, and whether a float (which needs gojq's
    number format) occurs anywhere in it: small containers are walked, the element types of
    large ones collected at C speed. Once a float is seen and the count reaches
    _ORJSON_FROM, the walk stops (the count is then a lower bound: all the caller asks);
    with `stop`, it stops once the count passes `stop` (a lower bound again), and the walk is
    counted on `meter`."""
    stack = [v]
    pop, push = stack.pop, stack.append
    size = 0
    floats = False
    pending = 0
    while stack:
        x = pop()
        items = x.values() if type(x) is dict else x
        size += len(items)
        if meter is not None:
            pending += 1 + len(items) // ELEMENTS_PER_UNIT
            if pending >= SPAN:
                meter.spend(pending)
                pending = 0
            if stop is not None and size > stop:
                break
        elif floats and size >= _ORJSON_FROM:
            break
        if len(items) > 16:
            kinds = set(map(type, items))
            if float in kinds or LiteralNumber in kinds:
                floats = True
            if list in kinds or dict in kinds:
                stack.extend([y for y in items if type(y) is list or type(y) is dict])
            continue
        for y in items:
            t = type(y)
            if t is dict or t is list:
                push(y)
            elif t is float or t is LiteralNumber:
                floats = True
    if meter is not None and pending >= 16:  # a small value's walk is part of its step
        meter.spend(pending)
    return size, floats


def _encode_container(root: Any, unit: str | None, meter: Meter | None = None) -> str:
    out: list[str] = []
    written = 0  # values written since the last spend on `meter`
    append = out.append
    key_sep = ": " if unit is not None else ":"
    encode_key = _encode_str
    # frame: [iterator, is_object, count, closing bracket]
    stack: list[list[Any]] = []

    def open_container(c: Any) -> None:
        if meter is not None and len(c) > 64:
            flat = _flat_text(c, meter)
            if flat is not None:
                append(flat)
                return
        if type(c) is dict:
            if not c:
                append("{}")
                return
            append("{")
            if meter is not None and len(c) > 1:
                items = [(k, c[k]) for k in sort_metered(list(c), None, meter)]
            else:
                items = [(k, c[k]) for k in sorted(c)] if len(c) > 1 else list(c.items())
            stack.append([iter(items), True, 0, "}"])
        else:
            if not c:
                append("[]")
                return
            append("[")
            stack.append([iter(c), False, 0, "]"])

    open_container(root)
    while stack:
        frame = stack[-1]
        try:
            item = next(frame[0])
        except StopIteration:
            stack.pop()
            if unit is not None:
                append("\n" + unit * len(stack))
            append(frame[3])
            continue
        if frame[2]:
            append(",")
        frame[2] += 1
        written += 1
        if written >= SPAN and meter is not None:
            meter.spend(written)
            written = 0
        if unit is not None:
            append("\n" + unit * len(stack))
        if frame[1]:
            append(encode_key(item[0]))
            append(key_sep)
            item = item[1]
        t = type(item)
        if t is dict or t is list:
            open_container(item)
        else:
            append(_scalar(item))
    return "".join(out)


_FLAT_KINDS = frozenset({str, int, bool, type(None)})


def _flat_text(c: Any, meter: Meter) -> str | None:
    """The compact text of a container of strings, integers, booleans and nulls only, through
    the C encoder in slices of at most `_SPLIT` elements (a spend before each); None for other
    containers and for integers the C encoder refuses (beyond Python's digit limit)."""
    items = c.values() if type(c) is dict else c
    if not _FLAT_KINDS.issuperset(map(type, items)):
        return None
    n = len(c)
    pieces = []
    try:
        if type(c) is dict:
            keys = sort_metered(list(c), None, meter)
            for i in range(0, n, _SPLIT):
                meter.spend(min(n - i, _SPLIT) // ELEMENTS_PER_UNIT)
                pieces.append(_C_COMPACT({k: c[k] for k in keys[i : i + _SPLIT]})[1:-1])
            return "{" + ",".join(pieces) + "}"
        for i in range(0, n, _SPLIT):
            meter.spend(min(n - i, _SPLIT) // ELEMENTS_PER_UNIT)
            pieces.append(_C_COMPACT(c[i : i + _SPLIT])[1:-1])
    except ValueError:
        return None
    return "[" + ",".join(pieces) + "]"


def _smallest_keys(c: dict[str, Any], n: int) -> list[str]:
    """The ``n`` first keys in sorted order, without sorting a large object whole."""
    if len(c) <= 4 * n:
        return sorted(c)[:n]
    return heapq.nsmallest(n, c)


def _leading_digits(v: int, n: int) -> str:
    """The first ``n`` characters of a huge integer's digits, without printing all of them."""
    ctx = Context(prec=n + 20)
    shift = v.bit_length() - 4 * (n + 20)
    approx = ctx.multiply(Decimal(abs(v) >> shift), ctx.power(Decimal(2), shift))
    digits = "".join(map(str, approx.as_tuple().digits))
    return (("-" if v < 0 else "") + digits)[:n]


def dumps_prefix(root: Any, limit: int) -> str:
    """The first ``limit`` characters (or a few more) of ``dumps(root, indent=None)``.

    The cost is bounded by ``limit``, not by the size of ``root`` (beyond one pass over the keys
    of each object it opens): error previews of a value with millions of elements must not
    print it whole. A value that is not JSON (a marker of an unfinished update) ends the text
    where it occurs, as gojq's limited encoder does.
    """
    out: list[str] = []
    size = 0
    # frame: [iterator, is_object, count, closing bracket]
    stack: list[list[Any]] = []
    item: Any = root
    while True:
        if size >= limit:
            return "".join(out)
        t = type(item)
        if t is dict:
            if not item:
                piece = "{}"
            else:
                keys = _smallest_keys(item, limit // 4 + 1)
                stack.append([iter([(k, item[k]) for k in keys]), True, 0, "}"])
                piece = "{"
        elif t is list:
            if not item:
                piece = "[]"
            else:
                stack.append([iter(item), False, 0, "]"])
                piece = "["
        elif t is str:
            piece = _SPECIAL_CHARS.sub(_fix_specials, _encode_str(item[: limit + 1]))
        elif item is None or t is bool or t is int or t is float or t is LiteralNumber:
            if t is int and item.bit_length() > 4096:
                piece = _leading_digits(item, limit + 1)
            else:
                piece = _scalar(item)
        else:
            return "".join(out)
        out.append(piece)
        size += len(piece)
        while True:
            if not stack:
                return "".join(out)
            if size >= limit:
                return "".join(out)
            frame = stack[-1]
            try:
                item = next(frame[0])
            except StopIteration:
                stack.pop()
                out.append(frame[3])
                size += 1
                continue
            if frame[2]:
                out.append(",")
                size += 1
            frame[2] += 1
            if frame[1]:
                key = _encode_str(item[0][: limit + 1])
                out.append(key + ":")
                size += len(key) + 1
                item = item[1]
            break


# ---------------------------------------------------------------------------------------------
# input


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
        # longer ones when Python's shortest repr agrees. No _format_float on this path:
        # the decoder calls this for every float of the input.
        if f >= 1e-6 or f <= -1e-6:
            if len(text) <= 16 or repr(f) == text:
                return f
    elif "." in text and text[-1] == "0" and "e" not in text and "E" not in text:
        return LiteralNumber(f, text)  # `1.0`, `0.50`: gojq never writes a trailing zero
    if _format_float(f) == text:
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
        if _SPECIAL_CHARS.search(v):
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
                if _SPECIAL_CHARS.search(s):
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
