"""JSON text out, byte for byte as gojq writes it.

`dumps`: object keys sorted, numbers in gojq's format (shortest round-trip floats, plain
decimal between 1e-6 and 1e21, `1e-7` style exponents otherwise, NaN as `null`, infinities
clamped to ±1.7976931348623157e+308, integers with all their digits, input literals verbatim:
`LiteralNumber`), strings escaped like gojq (`\\u007f`, invalid text as `\\ufffd`). The
encoder is iterative so 10000-deep values print without recursion. Reading JSON text is
:mod:`workload_map.jq.decode`.
"""

from __future__ import annotations

import functools
import heapq
import json
import re
from decimal import Context, Decimal
from typing import Any

from workload_map.jq.meter import ELEMENTS_PER_UNIT, SPAN, Meter, sort_metered

__all__ = [
    "LiteralNumber",
    "dumps",
    "dumps_prefix",
    "format_float",
    "format_number",
]

_MAX_FLOAT = 1.7976931348623157e308
_encode_str = json.encoder.encode_basestring
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


def format_float(f: float) -> str:
    """A float as gojq prints it (its shortest round-trip text, in gojq's forms)."""
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
        return format_float(v)
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return _format_int(int(v))
    return format_float(float(v))


# The two patterns are compiled on first use: their character classes over the surrogates and
# the non-ASCII range cost about 2.4M instructions to compile (callgrind), every command that
# loads jq paid that at import, and only non-ASCII text needs them.
@functools.cache
def _special_chars() -> re.Pattern[str]:
    """DEL, which gojq escapes, and lone surrogates, which it writes as U+FFFD."""
    return re.compile("[\x7f\ud800-\udfff]")


@functools.cache
def _non_ascii() -> re.Pattern[str]:
    return re.compile("[^\x00-\x7f]")


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
        return plain if plain.isascii() else _non_ascii().sub(_escape_non_ascii, plain)
    t = type(v)
    if t is str:
        if meter is not None and len(v) > _LONG_TEXT:
            meter.spend(len(v) // _CHARS_PER_UNIT)
        out = _scalar(v)
        if out.isascii() and "\x7f" not in out:
            return out
        return _special_chars().sub(_fix_specials, out)
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
    if "\x7f" in text if text.isascii() else _special_chars().search(text) is not None:
        text = _special_chars().sub(_fix_specials, text)
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
    if "\x7f" in text if text.isascii() else _special_chars().search(text) is not None:
        text = _special_chars().sub(_fix_specials, text)
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
                z = fragment(format_float(y))
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
            piece = _encode_str(item[: limit + 1])
            if not piece.isascii() or "\x7f" in piece:
                piece = _special_chars().sub(_fix_specials, piece)
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
