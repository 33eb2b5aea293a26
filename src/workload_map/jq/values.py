"""jq value semantics on plain Python JSON values, as gojq v0.12.18 defines them.

The compiler calls these for every operator, index and iteration, so they sit on the hot path:
each function checks the common case (`dict` with a `str` key, two `int`s, …) first with exact
type tests. Python's `bool` is a subclass of `int`, so every number test excludes it explicitly.

Numbers: `int` (exact, any size), `float`, and `LiteralNumber` (a float that remembers the text
it was read from JSON, printed verbatim until arithmetic turns it into a plain float). Integer and
float mix like gojq: the integer is converted to float64 first. Error texts are gojq's.

Strings are always valid Unicode: bytes that are not UTF-8 (from `@base64d`, `@urid`, input
files) become U+FFFD per byte, and lone surrogates a caller's Python strings may hold are read as
U+FFFD wherever text is encoded (`valid_text`, `utf8_bytes`), so nothing raises UnicodeError.

Memory guards: one step never builds a string over `MAX_STRING_BYTES`, an array over
`MAX_ARRAY_LENGTH` or an integer over `MAX_INT_BITS` (gojq has no such caps, but it also has no
deadline to honour inside one multiplication). The caps are module settings a caller may change.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Iterator
from typing import Any

from workload_map.jq.encode import LiteralNumber, dumps_prefix
from workload_map.jq.errors import JqLimitError, JqRuntimeError

__all__ = [
    "MAX_ARRAY_LENGTH",
    "MAX_INT",
    "MAX_INT_BITS",
    "MAX_STRING_BYTES",
    "MIN_INT",
    "LiteralNumber",
    "add",
    "capped_text",
    "compare",
    "divide",
    "equals",
    "index",
    "int_multiply",
    "is_number",
    "iterate",
    "iterate_items",
    "modulo",
    "multiply",
    "negate",
    "plain_number",
    "preview",
    "slice",
    "subtract",
    "to_float",
    "to_int",
    "to_int_ceil",
    "truthy",
    "type_error",
    "type_error_preview",
    "type_name",
    "utf8_bytes",
    "valid_text",
]

MAX_INT = (1 << 63) - 1
MIN_INT = -(1 << 63)
_MAX_FLOAT = 1.7976931348623157e308

MAX_STRING_BYTES = 1 << 27
"""Largest string (UTF-8 bytes; characters for `+`) one `*` or `+` may build: 128 MiB."""
MAX_ARRAY_LENGTH = 1 << 24
"""Largest array one `+` or `transpose` may build: 16 Mi elements (128 MiB of references)."""
MAX_INT_BITS = 332_200
"""Largest integer one `*` may build: about 100,000 decimal digits (gojq's big ints grow freely,
but a multiplication of two huge integers cannot be interrupted by the deadline)."""


@functools.cache
def _surrogates() -> re.Pattern[str]:
    """Compiled on first use (a non-ASCII text): about 1M instructions of every command's
    imports otherwise (callgrind)."""
    return re.compile("[\ud800-\udfff]")


def valid_text(s: str) -> str:
    """`s` with every lone surrogate (U+D800-U+DFFF) replaced by U+FFFD, as gojq reads them."""
    if s.isascii() or _surrogates().search(s) is None:
        return s
    return _surrogates().sub("\ufffd", s)


def utf8_bytes(s: str) -> bytes:
    """The UTF-8 bytes of `s`, a lone surrogate encoded as U+FFFD."""
    try:
        return s.encode("utf-8")
    except UnicodeEncodeError:
        return valid_text(s).encode("utf-8")


# ---------------------------------------------------------------------------------------------
# types and previews


def type_name(v: Any) -> str:
    """jq's `type`: null, boolean, number, string, array or object."""
    t = type(v)
    if t is str:
        return "string"
    if t is dict:
        return "object"
    if t is list:
        return "array"
    if v is None:
        return "null"
    if t is bool:
        return "boolean"
    if t is int or t is float or t is LiteralNumber:
        return "number"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, (int, float)):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    if isinstance(v, dict):
        return "object"
    raise TypeError(f"not a JSON value: {type(v).__name__}")


def is_number(v: Any) -> bool:
    """True for int/float (and LiteralNumber), false for bool."""
    t = type(v)
    return (
        t is int
        or t is float
        or t is LiteralNumber
        or (isinstance(v, (int, float)) and t is not bool)
    )


def truthy(v: Any) -> bool:
    """Everything except null and false is true."""
    return not (v is None or v is False)


def preview(v: Any) -> str:
    """gojq's Preview: compact JSON cut to 30 bytes with a type-specific ` ...` tail."""
    if type(v) is int and v.bit_length() > 4096:
        return _big_int_preview(v)
    # only what can show: the cost of a preview is bounded by its size, not the value's
    text = dumps_prefix(v, 32)
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= 30:
        return text
    t = type(v)
    if t is str:
        tail = ' ..."'
    elif t is list:
        tail = " ...]"
    elif t is dict:
        tail = " ...}"
    else:
        tail = " ..."
    return data[: 30 - len(tail)].decode("utf-8", "ignore") + tail


def _big_int_preview(v: int) -> str:
    """The preview of a huge integer from its leading digits, without printing all of them."""
    from decimal import Context, Decimal

    ctx = Context(prec=40)
    shift = v.bit_length() - 128
    approx = ctx.multiply(Decimal(abs(v) >> shift), ctx.power(Decimal(2), shift))
    digits = "".join(map(str, approx.as_tuple().digits))
    return (("-" if v < 0 else "") + digits)[:26] + " ..."


def type_error_preview(v: Any) -> str:
    """`null`, or `TYPE (PREVIEW)` as gojq writes values in error messages."""
    if v is None:
        return "null"
    return f"{type_name(v)} ({preview(v)})"


def type_error(name: str, v: Any, *args: Any) -> JqRuntimeError:
    """`NAME cannot be applied to: TYPE (PREVIEW)`, with `NAME(A; B)` when arguments are given."""
    if args:
        name = f"{name}({'; '.join(preview(a) for a in args)})"
    return JqRuntimeError(f"{name} cannot be applied to: {type_error_preview(v)}")


# ---------------------------------------------------------------------------------------------
# numbers


def plain_number(v: Any) -> Any:
    """A LiteralNumber as plain float (arithmetic results never keep the literal text)."""
    if type(v) is LiteralNumber:
        return float(v)
    return v


def to_float(v: Any) -> float:
    """A number as float64; ints beyond float range become ±inf (gojq's bigToFloat)."""
    if type(v) is int:
        try:
            return float(v)
        except OverflowError:
            return math.inf if v > 0 else -math.inf
    return float(v)


def _float_to_int(x: float) -> int:
    """Go's int(x) clamped to int64 as gojq's floatToInt; NaN becomes MIN_INT."""
    if x != x:
        return MIN_INT
    if MIN_INT <= x <= MAX_INT:
        return int(x)
    return MAX_INT if x > 0 else MIN_INT


def to_int(v: Any) -> int | None:
    """gojq's toInt: numbers truncated toward zero and clamped to int64; None for non-numbers."""
    t = type(v)
    if t is int:
        if MIN_INT <= v <= MAX_INT:
            return int(v)
        return MAX_INT if v > 0 else MIN_INT
    if t is float or t is LiteralNumber:
        return _float_to_int(v)
    if t is bool or not isinstance(v, (int, float)):
        return None
    return to_int(int(v)) if isinstance(v, int) else _float_to_int(float(v))


def to_int_ceil(v: Any) -> int | None:
    """gojq's toIntCeil: floats rounded up first (slice ends)."""
    if type(v) is float or type(v) is LiteralNumber:
        f = float(v)
        if math.isinf(f) or f != f:
            return _float_to_int(f)
        return _float_to_int(float(math.ceil(f)))
    return to_int(v)


def _num_kind(v: Any) -> int:
    """0 = not a number, 1 = int, 2 = float."""
    t = type(v)
    if t is int:
        return 1
    if t is float or t is LiteralNumber:
        return 2
    if t is bool:
        return 0
    if isinstance(v, int):
        return 1
    if isinstance(v, float):
        return 2
    return 0


# ---------------------------------------------------------------------------------------------
# ordering and equality


def _type_order(v: Any) -> int:
    if v is None:
        return 0
    t = type(v)
    if t is bool:
        return 2 if v else 1
    if t is int or t is float or t is LiteralNumber:
        return 3
    if t is str:
        return 4
    if t is list:
        return 5
    if t is dict:
        return 6
    if isinstance(v, bool):
        return 2 if v else 1
    if isinstance(v, (int, float)):
        return 3
    if isinstance(v, str):
        return 4
    if isinstance(v, list):
        return 5
    if isinstance(v, dict):
        return 6
    raise TypeError(f"not a JSON value: {type(v).__name__}")


def _compare_floats(a: float, b: float) -> int:
    if a < b or a != a:
        return -1
    if a == b:
        return 0
    return 1


def compare(a: Any, b: Any) -> int:
    """jq's total order: null < false < true < numbers < strings < arrays < objects.

    Arrays compare element-wise then by length; objects by their sorted key lists, then by the
    values in key order. NaN sorts below every number (and below itself, as in gojq).
    """
    ta = type(a)
    tb = type(b)
    if ta is str and tb is str:
        return -1 if a < b else (1 if a > b else 0)
    if ta is int and tb is int:
        return -1 if a < b else (1 if a > b else 0)
    ka = _num_kind(a)
    kb = _num_kind(b)
    if ka and kb:
        if ka == 1 and kb == 1:
            return -1 if a < b else (1 if a > b else 0)
        return _compare_floats(to_float(a), to_float(b))
    oa = _type_order(a)
    ob = _type_order(b)
    if oa != ob:
        return -1 if oa < ob else 1
    if oa == 4:
        return -1 if a < b else (1 if a > b else 0)
    if oa == 5:
        for x, y in zip(a, b, strict=False):
            c = compare(x, y)
            if c:
                return c
        la, lb = len(a), len(b)
        return -1 if la < lb else (1 if la > lb else 0)
    if oa == 6:
        keys_a = sorted(a)
        keys_b = sorted(b)
        if keys_a != keys_b:
            return -1 if keys_a < keys_b else 1
        for k in keys_a:
            c = compare(a[k], b[k])
            if c:
                return c
        return 0
    return 0


def equals(a: Any, b: Any) -> bool:
    """`a == b` in jq: compare(a, b) == 0 (1 == 1.0, true != 1, NaN != NaN)."""
    ta = type(a)
    if ta is type(b) and (ta is str or ta is int or a is None or ta is bool):
        return bool(a == b)
    return compare(a, b) == 0


# ---------------------------------------------------------------------------------------------
# arithmetic


def _binop_error(name: str, a: Any, b: Any) -> JqRuntimeError:
    return JqRuntimeError(f"cannot {name}: {type_error_preview(a)} and {type_error_preview(b)}")


def _too_large(name: str, a: Any, b: Any, what: str, cap: int) -> JqLimitError:
    return JqLimitError(
        f"cannot {name}: {type_error_preview(a)} and {type_error_preview(b)}: "
        f"the result would exceed {cap} {what}"
    )


def _arith_operand(v: Any, kind: int) -> tuple[Any, int]:
    """An input `-0` is gojq's integer 0 in arithmetic (its literal text only prints as is)."""
    if kind == 2 and type(v) is LiteralNumber and v.text == "-0":
        return 0, 1
    return v, kind


def capped_text(name: str, s: str) -> str:
    """`s`, or JqLimitError when a builtin made a string longer than MAX_STRING_BYTES (so that
    no loop can grow text by a constant factor per step without bound)."""
    if len(s) > MAX_STRING_BYTES:
        raise JqLimitError(f"{name}: the result would exceed {MAX_STRING_BYTES} characters")
    return s


def int_multiply(a: int, b: int) -> int:
    """`a * b` on two ints, refusing a product over MAX_INT_BITS before computing it."""
    if a.bit_length() + b.bit_length() > MAX_INT_BITS:
        raise _too_large("multiply", a, b, "bits", MAX_INT_BITS)
    return a * b


def add(a: Any, b: Any) -> Any:
    """`a + b`: numbers, string/array concatenation, shallow object merge, null identity."""
    ta = type(a)
    tb = type(b)
    if ta is int and tb is int:
        return a + b
    if ta is str and tb is str:
        if len(a) + len(b) > MAX_STRING_BYTES:
            raise _too_large("add", a, b, "characters", MAX_STRING_BYTES)
        return a + b
    ka = _num_kind(a)
    kb = _num_kind(b)
    if ka and kb:
        a, ka = _arith_operand(a, ka)
        b, kb = _arith_operand(b, kb)
        if ka == 1 and kb == 1:
            return int(a) + int(b)
        return to_float(a) + to_float(b)
    if ta is list and tb is list:
        if not a:
            return b
        if not b:
            return a
        if len(a) + len(b) > MAX_ARRAY_LENGTH:
            raise _too_large("add", a, b, "elements", MAX_ARRAY_LENGTH)
        return a + b
    if ta is dict and tb is dict:
        if not a:
            return b
        if not b:
            return a
        merged = dict(a)
        merged.update(b)
        return merged
    if a is None:
        return b
    if b is None:
        return a
    raise _binop_error("add", a, b)


def subtract(a: Any, b: Any) -> Any:
    """`a - b`: numbers, or the elements of array `a` not equal to any element of `b`."""
    ta = type(a)
    tb = type(b)
    if ta is int and tb is int:
        return a - b
    ka = _num_kind(a)
    kb = _num_kind(b)
    if ka and kb:
        a, ka = _arith_operand(a, ka)
        b, kb = _arith_operand(b, kb)
        if ka == 1 and kb == 1:
            return int(a) - int(b)
        return to_float(a) - to_float(b)
    if ta is list and tb is list:
        return [x for x in a if not any(compare(x, y) == 0 for y in b)]
    raise _binop_error("subtract", a, b)


_MAX_INT32 = (1 << 31) - 1


def _repeat_string(s: str, n: float) -> Any:
    if n < 0.0 or n != n:
        return None
    if s == "":
        return ""
    size = len(utf8_bytes(s))
    # gojq refuses a result of 2 GiB; we refuse one over MAX_STRING_BYTES the same way
    if n >= float(_MAX_INT32 // size) or size * int(n) > MAX_STRING_BYTES:
        raise JqRuntimeError(f"repeat string result too large: {preview(s)} * {preview(float(n))}")
    return s * int(n)


def deep_merge(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    """`a * b` on objects: b's keys win, nested objects merged recursively."""
    merged = dict(a)
    for k, v in b.items():
        old = merged.get(k)
        if type(old) is dict and type(v) is dict:
            v = deep_merge(old, v)
        merged[k] = v
    return merged


def multiply(a: Any, b: Any) -> Any:
    """`a * b`: numbers, string repetition (either side), deep object merge."""
    ta = type(a)
    tb = type(b)
    if ta is int and tb is int:
        if a.bit_length() + b.bit_length() > MAX_INT_BITS:
            raise _too_large("multiply", a, b, "bits", MAX_INT_BITS)
        return a * b
    ka = _num_kind(a)
    kb = _num_kind(b)
    if ka and kb:
        a, ka = _arith_operand(a, ka)
        b, kb = _arith_operand(b, kb)
        if ka == 1 and kb == 1:
            return int_multiply(int(a), int(b))
        return to_float(a) * to_float(b)
    if ta is dict and tb is dict:
        return deep_merge(a, b)
    if ta is str and kb:
        return _repeat_string(a, to_float(b))
    if tb is str and ka:
        return _repeat_string(b, to_float(a))
    raise _binop_error("multiply", a, b)


def _zero_error(verb: str, a: Any, b: Any) -> JqRuntimeError:
    return JqRuntimeError(f"cannot {verb} {type_error_preview(a)} by: {type_error_preview(b)}")


def divide(a: Any, b: Any) -> Any:
    """`a / b`: exact integer when it divides evenly, float otherwise; strings split."""
    ka = _num_kind(a)
    kb = _num_kind(b)
    if ka and kb:
        a, ka = _arith_operand(a, ka)
        b, kb = _arith_operand(b, kb)
        if ka == 1 and kb == 1:
            x, y = int(a), int(b)
            if y == 0:
                raise _zero_error("divide", a, b)
            q, r = divmod(x, y)
            if r == 0:
                return q
            return to_float(x) / to_float(y)
        fx, fy = to_float(a), to_float(b)
        if fy == 0.0:
            raise _zero_error("divide", a, b)
        return fx / fy
    if type(a) is str and type(b) is str:
        if a == "":
            return []
        if b == "":
            if len(a) > MAX_ARRAY_LENGTH:
                raise _too_large("divide", a, b, "elements", MAX_ARRAY_LENGTH)
            return list(a)
        return a.split(b)
    raise _binop_error("divide", a, b)


def _trunc_mod(x: int, y: int) -> int:
    r = abs(x) % abs(y)
    return -r if x < 0 else r


def modulo(a: Any, b: Any) -> Any:
    """`a % b`: operands truncated to integers, result takes the dividend's sign."""
    ka = _num_kind(a)
    kb = _num_kind(b)
    if ka and kb:
        a, ka = _arith_operand(a, ka)
        b, kb = _arith_operand(b, kb)
        if ka == 1 and kb == 1:
            x, y = int(a), int(b)
            if y == 0:
                raise _zero_error("modulo", a, b)
            return _trunc_mod(x, y)
        fx, fy = to_float(a), to_float(b)
        ri = _float_to_int(fy)
        if ri == 0:
            raise _zero_error("modulo", a, b)
        if fx != fx or fy != fy:
            return math.nan
        return _trunc_mod(_float_to_int(fx), ri)
    raise _binop_error("modulo", a, b)


def negate(v: Any) -> Any:
    """Unary minus (a LiteralNumber keeps its text with the sign flipped, as gojq does)."""
    t = type(v)
    if t is int or t is float:
        return -v
    if t is LiteralNumber:
        text = v.text[1:] if v.text.startswith("-") else "-" + v.text
        return LiteralNumber(-float(v), text)
    if _num_kind(v):
        return -v
    raise JqRuntimeError(f"cannot negate: {type_error_preview(v)}")


# ---------------------------------------------------------------------------------------------
# indexing, slicing, iteration


def _clamp_index(i: int, minimum: int, maximum: int) -> int:
    if i < 0:
        i += maximum
    if i < minimum:
        return minimum
    if i < maximum:
        return i
    return maximum


def _num_to_int(v: Any) -> int:
    i = to_int(v)
    return 0 if i is None else i


def _index_array(v: list[Any], i: int) -> Any:
    i = _clamp_index(i, -1, len(v))
    if 0 <= i < len(v):
        return v[i]
    return None


def _index_string(s: str, i: int) -> Any:
    i = _clamp_index(i, -1, len(s))
    if 0 <= i < len(s):
        return s[i]
    return None


def index(v: Any, key: Any) -> Any:
    """`.[key]` / `.key`: objects by string, arrays and strings by number, null gives null.

    An array key yields `indices` of that sub-array; an object `{"start", "end"}` key slices.
    """
    tk = type(key)
    tv = type(v)
    if tk is str:
        if tv is dict:
            return v.get(key)
        if v is None:
            return None
        raise JqRuntimeError(f"expected an object but got: {type_error_preview(v)}")
    if _num_kind(key):
        if tv is list:
            if tk is int and 0 <= key < len(v):
                return v[key]
            return _index_array(v, _num_to_int(key))
        if v is None:
            return None
        if tv is str:
            return _index_string(v, _num_to_int(key))
        raise JqRuntimeError(f"expected an array but got: {type_error_preview(v)}")
    if tk is list:
        if v is None:
            return None
        if tv is list:
            return _indices(v, key)
        raise JqRuntimeError(f"expected an array but got: {type_error_preview(v)}")
    if tk is dict:
        if v is None:
            return None
        if "start" not in key or "end" not in key:
            raise JqRuntimeError(
                f'expected "start" and "end" for slicing but got: {type_error_preview(key)}'
            )
        return slice(v, key["start"], key["end"])
    if tv is list:
        raise JqRuntimeError(
            f"expected a number for indexing an array but got: {type_error_preview(key)}"
        )
    if tv is str:
        raise JqRuntimeError(
            f"expected a number for indexing a string but got: {type_error_preview(key)}"
        )
    raise JqRuntimeError(f"expected a string for object key but got: {type_error_preview(key)}")


def _indices(vs: list[Any], xs: list[Any]) -> list[Any]:
    out: list[Any] = []
    n = len(xs)
    if n == 0:
        return out
    for i in range(len(vs) - n + 1):
        if compare(vs[i : i + n], xs) == 0:
            out.append(i)
    return out


def slice(v: Any, start: Any, end: Any) -> Any:
    """`.[start:end]` on arrays and strings (code points); null gives null; None bound = open."""
    tv = type(v)
    if v is None:
        return None
    if tv is list or tv is str:
        n = len(v)
        what = "an array" if tv is list else "a string"
        s = 0
        if start is not None:
            i = to_int(start)
            if i is None:
                raise JqRuntimeError(
                    f"expected a number for indexing {what} but got: {type_error_preview(start)}"
                )
            s = _clamp_index(i, 0, n)
        if end is not None:
            j = to_int_ceil(end)
            if j is None:
                raise JqRuntimeError(
                    f"expected a number for indexing {what} but got: {type_error_preview(end)}"
                )
            e = _clamp_index(j, s, n)
        else:
            e = n
        return v[s:e]
    raise JqRuntimeError(f"expected an array but got: {type_error_preview(v)}")


def iterate(v: Any) -> Iterator[Any]:
    """`.[]`: array elements, or object values in sorted key order."""
    tv = type(v)
    if tv is list:
        return iter(v)
    if tv is dict:
        if len(v) <= 1:
            return iter(v.values())
        return iter([v[k] for k in sorted(v)])
    raise JqRuntimeError(f"cannot iterate over: {type_error_preview(v)}")


def iterate_items(v: Any) -> Iterator[tuple[Any, Any]]:
    """`.[]` with paths: (index, element) or (key, value) in sorted key order."""
    tv = type(v)
    if tv is list:
        return enumerate(v)
    if tv is dict:
        return iter([(k, v[k]) for k in sorted(v)])
    raise JqRuntimeError(f"cannot iterate over: {type_error_preview(v)}")
