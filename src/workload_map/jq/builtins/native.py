"""Value-level builtins of gojq v0.12.18, and the registry the compiler looks them up in.

`NATIVES[(name, arity)]` is called as `fn(input, *args)` with already-evaluated argument values
(the compiler takes the cartesian product in gojq's order) and returns one value;
`STREAM_NATIVES[(name, arity)]` returns an iterable of zero or more values. Both raise
`JqRuntimeError` with gojq's message texts, `JqHaltError` for `halt`/`halt_error`.

Names follow gojq's internal function table, so builtin.jq can use gojq's definitions as they are:
the helpers behind jq-defined builtins keep gojq's underscore names:

* `_min_by/1`, `_max_by/1`, `_sort_by/1`, `_group_by/1`, `_unique_by/1`: input array plus the
  array of key arrays (`map([f])`), e.g. `def sort_by(f): _sort_by(map([f]));`
* `_match/3` (`$re; $flags; $testing`): the array of match objects, or a boolean when testing;
  `_capture/0`: a match object to its `{name: string}` object (regex.py)
* `_range/3` (stream): `range($from; $upto; $by)`
* `_index/2`, `_slice/3`, `_plus/0`, `_negate/0`, `_add/2`, `_subtract/2`, `_multiply/2`,
  `_divide/2`, `_modulo/2`, `_equal/2`, `_notequal/2`, `_less/2`, … (operators as functions)
* formats: `format/1` (`"csv" → @csv`) and `@text/0 @json/0 @html/0 @uri/0 @urid/0 @csv/0
  @tsv/0 @sh/0 @base64/0 @base64d/0` (also under gojq's `_tohtml`-style names) (formats.py)
* math (math.py), dates (time.py), regex (regex.py) are merged into the same tables here.

For assignments, `setpath(v, path, x, allocator)` and `delpaths(v, paths, allocator)` take an
optional shared `Allocator()` so that one `.[] = 1` over n elements copies each container once
(O(n), as gojq) instead of once per path (O(n²)).

Builtins needing closures or the evaluation context (path, paths, getpath in path mode, limit,
first/last/nth(f), label, recurse, env/$ENV, input, debug, builtins, error with `catch`) are
the compiler's. `error/0,1` here only builds the error (`JqRuntimeError` with `.value`).
"""

from __future__ import annotations

import contextvars
import functools
import math
from collections.abc import Callable, Iterator
from typing import Any

from workload_map.jq import encoding, values
from workload_map.jq.errors import JqHaltError, JqLimitError, JqRuntimeError, JqValueError
from workload_map.jq.values import (
    LiteralNumber,
    compare,
    is_number,
    preview,
    to_float,
    to_int,
    type_error,
    type_error_preview,
    type_name,
)

__all__ = [
    "NATIVES",
    "STREAM_NATIVES",
    "Allocator",
    "Native",
    "delpaths",
    "getpath",
    "setpath",
    "sort_values",
]

Native = Callable[..., Any]


def _wrap_error(name: str, v: Any, cause: str, *args: Any) -> JqRuntimeError:
    """`NAME(ARGS) cannot be applied to PREVIEW: CAUSE` (gojq's func*WrapError)."""
    if args:
        name = f"{name}({'; '.join(preview(a) for a in args)})"
    return JqRuntimeError(f"{name} cannot be applied to {preview(v)}: {cause}")


def _values_of(v: Any) -> list[Any] | None:
    t = type(v)
    if t is list:
        return list(v)
    if t is dict:
        return [v[k] for k in sorted(v)]
    return None


# ---------------------------------------------------------------------------------------------
# basics


def f_length(v: Any) -> Any:
    t = type(v)
    if t is str or t is list or t is dict:
        return len(v)
    if v is None:
        return 0
    if t is int:
        return abs(v)
    if t is LiteralNumber:
        return LiteralNumber(abs(float(v)), v.text.lstrip("-")) if v.text.startswith("-") else v
    if t is float:
        return abs(v)
    raise type_error("length", v)


def f_abs(v: Any) -> Any:
    if is_number(v):
        return f_length(v)
    raise type_error("abs", v)


def f_utf8bytelength(v: Any) -> Any:
    if type(v) is not str:
        raise type_error("utf8bytelength", v)
    return len(values.utf8_bytes(v))


def f_not(v: Any) -> Any:
    return v is None or v is False


def f_keys(v: Any) -> Any:
    t = type(v)
    if t is dict:
        return sorted(v)
    if t is list:
        return list(range(len(v)))
    raise type_error("keys", v)


def f_has(v: Any, x: Any) -> Any:
    t = type(v)
    if t is dict and type(x) is str:
        return x in v
    if t is list and is_number(x):
        i = to_int(x)
        assert i is not None
        return 0 <= i < len(v)
    if v is None:
        return False
    raise type_error("has", v, x)


def f_to_entries(v: Any) -> Any:
    t = type(v)
    if t is dict:
        return [{"key": k, "value": v[k]} for k in sorted(v)]
    if t is list:
        return [{"key": i, "value": x} for i, x in enumerate(v)]
    raise type_error("to_entries", v)


def f_from_entries(v: Any) -> Any:
    if type(v) is not list:
        raise type_error("from_entries", v)
    out: dict[str, Any] = {}
    for e in v:
        if type(e) is not dict:
            raise type_error("from_entries", e)
        key: Any = None
        for name in ("key", "Key", "name", "Name"):
            k = e.get(name)
            if k is not None and k is not False:
                key = k
                break
        if type(key) is not str:
            raise _wrap_error(
                "from_entries",
                v,
                f"expected a string for object key but got: {type_error_preview(key)}",
            )
        out[key] = e["value"] if "value" in e else e.get("Value")
    return out


def f_add(v: Any) -> Any:
    """`add`: strings joined once, arrays and objects accumulated in one fresh container
    (linear, as gojq), anything else through `+`; nulls are skipped."""
    items = _values_of(v)
    if items is None:
        raise type_error("add", v)
    acc: Any = None
    strings: list[str] | None = None
    fresh = False  # acc is a list/dict built here, safe to extend in place
    for x in items:
        if x is None:
            continue
        tx = type(x)
        if tx is str and (acc is None or strings is not None):
            if strings is None:
                strings = []
            strings.append(x)
            acc = ""
            continue
        if strings is not None:
            acc = "".join(strings)
            strings = None
        ta = type(acc)
        if tx is list and (ta is list or acc is None):
            if not fresh:
                acc = list(acc) if acc is not None else []
                fresh = True
            acc.extend(x)
            continue
        if tx is dict and (ta is dict or acc is None):
            if not fresh:
                acc = dict(acc) if acc is not None else {}
                fresh = True
            acc.update(x)
            continue
        acc = values.add(acc, x)
        fresh = False
    if strings is not None:
        return "".join(strings)
    return acc


def f_toboolean(v: Any) -> Any:
    if type(v) is bool:
        return v
    if type(v) is str:
        if v == "true":
            return True
        if v == "false":
            return False
        raise _wrap_error("toboolean", v, "invalid boolean")
    raise type_error("toboolean", v)


def _valid_number_text(s: str) -> bool:
    i, n = 0, len(s)
    if i < n and s[i] in "+-":
        i += 1
    digits = 0
    while i < n and s[i].isascii() and s[i].isdigit():
        i += 1
        digits += 1
    if i < n and s[i] == ".":
        i += 1
        while i < n and s[i].isascii() and s[i].isdigit():
            i += 1
            digits += 1
    if digits == 0:
        return False
    if i < n and s[i] in "eE":
        i += 1
        if i < n and s[i] in "+-":
            i += 1
        start = i
        while i < n and s[i].isascii() and s[i].isdigit():
            i += 1
        if i == start:
            return False
    return i == n


def number_from_text(s: str) -> Any:
    """gojq's parseNumber: int when the text is an integer, float otherwise (±inf on overflow)."""
    if "." not in s and "e" not in s and "E" not in s:
        try:
            return int(s)
        except ValueError:
            return math.inf if not s.startswith("-") else -math.inf
    return float(s)


def f_tonumber(v: Any) -> Any:
    if is_number(v):
        return v
    if type(v) is str:
        if not _valid_number_text(v):
            raise _wrap_error("tonumber", v, "invalid number")
        return number_from_text(v)
    raise type_error("tonumber", v)


def f_tostring(v: Any) -> Any:
    if type(v) is str:
        return v
    return values.capped_text("tostring", encoding.dumps(v, None))


def f_tojson(v: Any) -> Any:
    if type(v) is str and 2 * len(v) > values.MAX_STRING_BYTES:
        # refuse before building: the text of a string is at least its length plus escapes
        values.capped_text(
            "tojson",
            v if len(v) + v.count('"') + v.count("\\") + 2 > values.MAX_STRING_BYTES else "",
        )
    return values.capped_text("tojson", encoding.dumps(v, None))


def f_fromjson(v: Any) -> Any:
    if type(v) is not str:
        raise type_error("fromjson", v)
    pos = encoding.skip_whitespace(v, 0)
    try:
        if pos == len(v):
            raise encoding.JsonDecodeError("EOF", pos)  # Go's decoder on empty input
        value, end = encoding.decode_at(v, pos)
    except encoding.JsonDecodeError as e:
        raise _wrap_error("fromjson", v, e.message) from None
    if encoding.skip_whitespace(v, end) != len(v):
        raise type_error("fromjson", v)
    return value


def f_type(v: Any) -> Any:
    return type_name(v)


def f_reverse(v: Any) -> Any:
    if type(v) is list:
        return v[::-1]
    raise type_error("reverse", v)


def _contains(a: Any, b: Any) -> bool:
    ta, tb = type(a), type(b)
    if ta is str and tb is str:
        return b in a
    if ta is list and tb is list:
        for y in b:
            for x in a:
                try:
                    if _contains(x, y):
                        break
                except JqRuntimeError:  # inside containers a type mismatch just does not match
                    pass
            else:
                return False
        return True
    if ta is dict and tb is dict:
        if len(a) < len(b):
            return False
        for k, y in b.items():
            if k not in a:
                return False
            try:
                if not _contains(a[k], y):
                    return False
            except JqRuntimeError:
                return False
        return True
    if is_number(a) and is_number(b):
        return compare(a, b) == 0 and not (a != a or b != b)
    if (a is None and b is None) or (ta is bool and tb is bool and a == b):
        return True
    raise type_error("contains", a, b)


def f_contains(v: Any, x: Any) -> Any:
    return _contains(v, x)


def _explode(s: str) -> list[Any]:
    if len(s) > values.MAX_ARRAY_LENGTH:
        raise JqLimitError(
            f"explode cannot be applied to: {type_error_preview(s)}: the result would exceed "
            f"{values.MAX_ARRAY_LENGTH} elements"
        )
    return [ord(c) for c in values.valid_text(s)]


def _index_func(name: str, v: Any, x: Any, fn: Callable[[list[Any], list[Any]], Any]) -> Any:
    if v is None:
        return None
    if type(v) is list:
        return fn(v, x if type(x) is list else [x])
    if type(v) is str and type(x) is str:
        if name == "indices" and len(x) == 1:
            out: list[Any] = []
            i = v.find(x)
            while i >= 0:
                out.append(i)
                i = v.find(x, i + 1)
            return out
        return fn(_explode(v), _explode(x))
    raise type_error(name, v, x)


def _all_indices(vs: list[Any], xs: list[Any]) -> Any:
    n = len(xs)
    if n == 0:
        return []
    return [i for i in range(len(vs) - n + 1) if compare(vs[i : i + n], xs) == 0]


def _first_index(vs: list[Any], xs: list[Any]) -> Any:
    n = len(xs)
    if n == 0:
        return None
    for i in range(len(vs) - n + 1):
        if compare(vs[i : i + n], xs) == 0:
            return i
    return None


def _last_index(vs: list[Any], xs: list[Any]) -> Any:
    n = len(xs)
    if n == 0:
        return None
    for i in range(len(vs) - n, -1, -1):
        if compare(vs[i : i + n], xs) == 0:
            return i
    return None


def f_indices(v: Any, x: Any) -> Any:
    return _index_func("indices", v, x, _all_indices)


def f_index(v: Any, x: Any) -> Any:
    return _index_func("index", v, x, _first_index)


def f_rindex(v: Any, x: Any) -> Any:
    return _index_func("rindex", v, x, _last_index)


def _strings(name: str, v: Any, x: Any) -> tuple[str, str]:
    if type(v) is not str or type(x) is not str:
        raise type_error(name, v, x)
    return v, x


def f_startswith(v: Any, x: Any) -> Any:
    s, t = _strings("startswith", v, x)
    return s.startswith(t)


def f_endswith(v: Any, x: Any) -> Any:
    s, t = _strings("endswith", v, x)
    return s.endswith(t)


def f_ltrimstr(v: Any, x: Any) -> Any:
    s, t = _strings("ltrimstr", v, x)
    return s[len(t) :] if s.startswith(t) else s


def f_rtrimstr(v: Any, x: Any) -> Any:
    s, t = _strings("rtrimstr", v, x)
    return s[: len(s) - len(t)] if t and s.endswith(t) else s


def f_trimstr(v: Any, x: Any) -> Any:
    s, t = _strings("trimstr", v, x)
    if s.startswith(t):
        s = s[len(t) :]
    if t and s.endswith(t):
        s = s[: len(s) - len(t)]
    return s


# Go's unicode.IsSpace
_SPACES = "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"


def f_trim(v: Any) -> Any:
    if type(v) is not str:
        raise type_error("trim", v)
    return v.strip(_SPACES)


def f_ltrim(v: Any) -> Any:
    if type(v) is not str:
        raise type_error("ltrim", v)
    return v.lstrip(_SPACES)


def f_rtrim(v: Any) -> Any:
    if type(v) is not str:
        raise type_error("rtrim", v)
    return v.rstrip(_SPACES)


def f_explode(v: Any) -> Any:
    if type(v) is not str:
        raise type_error("explode", v)
    return _explode(v)


def f_implode(v: Any) -> Any:
    if type(v) is not list:
        raise type_error("implode", v)
    chars: list[str] = []
    for x in v:
        if not is_number(x):
            raise type_error("implode", v)
        r = to_int(x)
        assert r is not None
        if 0 <= r <= 0x10FFFF and not 0xD800 <= r <= 0xDFFF:
            chars.append(chr(r))
        else:
            chars.append("\ufffd")
    return "".join(chars)


def f_split1(v: Any, sep: Any) -> Any:
    if type(v) is not str:
        raise type_error("split", v)
    if type(sep) is not str:
        raise type_error("split", "")
    if sep == "":
        return list(v)
    return v.split(sep)


def f_ascii_downcase(v: Any) -> Any:
    if type(v) is not str:
        raise type_error("ascii_downcase", v)
    return v.translate(_DOWN)


def f_ascii_upcase(v: Any) -> Any:
    if type(v) is not str:
        raise type_error("ascii_upcase", v)
    return v.translate(_UP)


_DOWN = {c: c + 32 for c in range(ord("A"), ord("Z") + 1)}
_UP = {c: c - 32 for c in range(ord("a"), ord("z") + 1)}


# ---------------------------------------------------------------------------------------------
# arrays


def f_flatten(v: Any, *args: Any) -> Any:
    items = _values_of(v)
    if items is None:
        raise type_error("flatten", v)
    depth = -1.0
    if args:
        if not is_number(args[0]):
            raise type_error("flatten", args[0])
        depth = to_float(args[0])
        if depth < 0:
            raise JqRuntimeError(f"flatten depth should not be negative: {preview(depth)}")
    out: list[Any] = []
    # iterative: (items, index, depth)
    stack: list[tuple[list[Any], int, float]] = [(items, 0, depth)]
    while stack:
        xs, i, d = stack.pop()
        while i < len(xs):
            x = xs[i]
            i += 1
            if type(x) is list and d != 0:
                stack.append((xs, i, d))
                stack.append((x, 0, d - 1))
                break
            out.append(x)
    return out


def sort_values(xs: list[Any]) -> list[Any]:
    """Stable sort in jq order."""
    return sorted(xs, key=functools.cmp_to_key(compare))


def _sort_items(name: str, v: Any, keys: Any) -> list[tuple[Any, Any]]:
    if type(v) is not list:
        if name.endswith("_by"):
            raise type_error(name, v, keys)
        raise type_error(name, v)
    if type(keys) is not list:
        raise type_error(name, v, keys)
    if len(v) != len(keys):
        raise _wrap_error(name, v, "length mismatch", keys)
    pairs = list(zip(v, keys, strict=True))
    cmp = functools.cmp_to_key(compare)
    pairs.sort(key=lambda p: cmp(p[1]))
    return pairs


def f_sort(v: Any) -> Any:
    if type(v) is not list:
        raise type_error("sort", v)
    return sort_values(v)


def f_sort_by(v: Any, keys: Any) -> Any:
    return [p[0] for p in _sort_items("sort_by", v, keys)]


def f_group_by(v: Any, keys: Any) -> Any:
    out: list[Any] = []
    last: Any = None
    for i, (value, key) in enumerate(_sort_items("group_by", v, keys)):
        if i == 0 or compare(last, key) != 0:
            out.append([value])
            last = key
        else:
            out[-1].append(value)
    return out


def _unique_by(name: str, v: Any, keys: Any) -> Any:
    out: list[Any] = []
    last: Any = None
    for i, (value, key) in enumerate(_sort_items(name, v, keys)):
        if i == 0 or compare(last, key) != 0:
            out.append(value)
            last = key
    return out


def f_unique(v: Any) -> Any:
    return _unique_by("unique", v, v)


def f_unique_by(v: Any, keys: Any) -> Any:
    return _unique_by("unique_by", v, keys)


def _min_max(vs: list[Any], xs: list[Any], is_min: bool) -> Any:
    if not vs:
        return None
    j, x = 0, xs[0]
    for i in range(1, len(xs)):
        if (compare(x, xs[i]) > 0) == is_min:
            j, x = i, xs[i]
    return vs[j]


def f_min(v: Any) -> Any:
    if type(v) is not list:
        raise type_error("min", v)
    return _min_max(v, v, True)


def f_max(v: Any) -> Any:
    if type(v) is not list:
        raise type_error("max", v)
    return _min_max(v, v, False)


def _min_max_by(name: str, v: Any, keys: Any, is_min: bool) -> Any:
    if type(v) is not list or type(keys) is not list:
        raise type_error(name, v, keys)
    if len(v) != len(keys):
        raise _wrap_error(name, v, "length mismatch", keys)
    return _min_max(v, keys, is_min)


def f_min_by(v: Any, keys: Any) -> Any:
    return _min_max_by("min_by", v, keys, True)


def f_max_by(v: Any, keys: Any) -> Any:
    return _min_max_by("max_by", v, keys, False)


def f_join(v: Any, sep: Any) -> Any:
    items = _values_of(v)
    if items is None:
        raise type_error("join", v, sep)
    if not items:
        return ""
    if type(sep) is not str and len(items) > 1:
        raise type_error("join", v, sep)
    parts: list[str] = []
    for x in items:
        tx = type(x)
        if x is None:
            parts.append("")
        elif tx is str:
            parts.append(x)
        elif tx is bool:
            parts.append("true" if x else "false")
        elif is_number(x):
            parts.append(encoding.format_number(x))
        else:
            raise JqRuntimeError(
                f"join cannot be applied to an array including: {type_error_preview(x)}"
            )
    return values.capped_text("join", (sep if type(sep) is str else "").join(parts))


def f_transpose(v: Any) -> Any:
    if type(v) is not list:
        raise type_error("transpose", v)
    if not v:
        return []
    width = 0
    for row in v:
        if type(row) is not list:
            raise type_error("transpose", v)
        width = max(width, len(row))
    if width * len(v) > values.MAX_ARRAY_LENGTH:
        raise JqLimitError(
            f"transpose cannot be applied to: {type_error_preview(v)}: the result would exceed "
            f"{values.MAX_ARRAY_LENGTH} elements"
        )
    return [[row[i] if i < len(row) else None for row in v] for i in range(width)]


def f_bsearch(v: Any, target: Any) -> Any:
    if type(v) is not list:
        raise type_error("bsearch", v, target)
    lo, hi = 0, len(v)
    while lo < hi:
        mid = (lo + hi) // 2
        if compare(v[mid], target) >= 0:
            hi = mid
        else:
            lo = mid + 1
    if lo < len(v) and compare(v[lo], target) == 0:
        return lo
    return -lo - 1


def s_range(_v: Any, start: Any, end: Any, step: Any) -> Iterator[Any]:
    for x in (start, end, step):
        if not is_number(x):
            raise type_error("range", x)
    return _range_iter(start, end, step)


def _range_iter(value: Any, end: Any, step: Any) -> Iterator[Any]:
    direction = compare(step, 0)
    while direction * compare(value, end) < 0:
        yield value
        value = values.add(value, step)


# ---------------------------------------------------------------------------------------------
# paths (value level; never mutate the input)

_DELETE = object()


class _Owned:
    """Containers created during one setpath/delpaths, safe to modify in place."""

    __slots__ = ("ids", "keep")

    def __init__(self) -> None:
        self.ids: set[int] = set()
        self.keep: list[Any] = []

    def own(self, c: Any) -> Any:
        self.ids.add(id(c))
        self.keep.append(c)
        return c

    def owns(self, c: Any) -> bool:
        return id(c) in self.ids


def _update(v: Any, path: list[Any], n: Any, owned: _Owned) -> Any:
    """gojq's update(): `n` (or the delete marker) at `path`, copying each container on the way
    once. Iterative: down the path collecting one frame per step, then back up rebuilding."""
    frames: list[tuple[int, Any, Any, int]] = []  # (kind 0 obj / 1 index / 2 slice, c, key, end)
    cur: Any = v
    result: Any = n
    for p in path:
        if cur is _DELETE:
            result = cur
            break
        tp = type(p)
        if tp is str:
            if cur is not None and type(cur) is not dict:
                raise JqRuntimeError(f"expected an object but got: {type_error_preview(cur)}")
            if (cur is None or p not in cur) and n is _DELETE:
                result = {} if cur is None else cur  # gojq: a nil map, printed as {}
                break
            frames.append((0, cur, p, 0))
            cur = cur.get(p) if cur is not None else None
        elif is_number(p):
            if cur is not None and type(cur) is not list:
                raise JqRuntimeError(f"expected an array but got: {type_error_preview(cur)}")
            i = to_int(p)
            assert i is not None
            length = len(cur) if cur is not None else 0
            j = i + length if i < 0 else i
            if j < 0:
                if n is _DELETE:
                    result = [] if cur is None else cur  # gojq: a nil slice, printed as []
                    break
                raise JqRuntimeError(f"array index should not be negative: {preview(i)}")
            if j >= length:
                if n is _DELETE:
                    result = [] if cur is None else cur
                    break
                if i >= 0x20000000 or i >= values.MAX_ARRAY_LENGTH:  # gojq's cap, or ours
                    raise JqRuntimeError(f"array index too large: {preview(i)}")
                frames.append((1, cur, i, 0))
                cur = None
            else:
                assert cur is not None
                frames.append((1, cur, j, 0))
                cur = cur[j]
        elif tp is dict:
            if cur is not None and type(cur) is not list:
                raise JqRuntimeError(f"expected an array but got: {type_error_preview(cur)}")
            if "start" not in p or "end" not in p:
                raise JqRuntimeError(
                    f'expected "start" and "end" for slicing but got: {type_error_preview(p)}'
                )
            base = cur if cur is not None else []
            length = len(base)
            si = to_int(p["start"])
            start = _clamp(si, 0, length) if si is not None else 0
            ei = to_int(p["end"])
            end = _clamp(ei, start, length) if ei is not None else length
            if start == end and n is _DELETE:
                result = [] if cur is None else cur
                break
            frames.append((2, cur, start, end))
            cur = base[start:end]
        else:
            if type(cur) is list:
                raise JqRuntimeError(
                    f"expected a number for indexing an array but got: {type_error_preview(p)}"
                )
            raise JqRuntimeError(
                f"expected a string for object key but got: {type_error_preview(p)}"
            )
    for kind, c, key, end in reversed(frames):
        in_place = c is not None and owned.owns(c)
        if kind == 0:
            if in_place:
                c[key] = result
                result = c
            else:
                obj: dict[str, Any] = dict(c) if c is not None else {}
                obj[key] = result
                result = owned.own(obj)
        elif kind == 1:
            w = c if in_place else owned.own(list(c) if c is not None else [])
            if key >= len(w):
                w.extend([None] * (key + 1 - len(w)))
            w[key] = result
            result = w
        else:
            base = c if c is not None else []
            if type(result) is list:
                if in_place and len(result) == end - key:
                    base[key:end] = result
                    result = base
                else:
                    result = owned.own(base[:key] + result + base[end:])
            elif result is _DELETE:
                w = base if in_place else owned.own(list(base))
                for k in range(key, end):
                    w[k] = _DELETE
                result = w
            else:
                raise JqRuntimeError(f"expected an array but got: {type_error_preview(result)}")
    return result


def _clamp(i: int, minimum: int, maximum: int) -> int:
    if i < 0:
        i += maximum
    return minimum if i < minimum else (i if i < maximum else maximum)


class Allocator(_Owned):
    """Shared by the setpath/delpaths calls of one assignment (`.[] = 1`, `|=`, `del`): each
    container is copied once, then updated in place, so updating n paths costs O(n) (gojq's
    allocator). Values built inside the assignment must not escape it before it finishes."""


def setpath(v: Any, path: Any, x: Any, allocator: Allocator | None = None) -> Any:
    """`setpath(path; x)`: a new value with `x` at `path` (the input is not modified)."""
    if type(path) is not list:
        raise type_error("setpath", v, path)
    try:
        return _update(v, path, x, allocator if allocator is not None else _Owned())
    except JqRuntimeError as e:
        raise JqRuntimeError(
            f"setpath({preview(path)}; {preview(x)}) cannot be applied to {preview(v)}: {e.message}"
        ) from None


def _delete_marked(v: Any, owned: _Owned) -> Any:
    """Drop the delete markers from the containers this delpaths built (iteratively)."""
    if v is _DELETE:
        return None
    stack = [v]
    while stack:
        c = stack.pop()
        if not owned.owns(c):
            continue
        if type(c) is dict:
            for k in [k for k, w in c.items() if w is _DELETE]:
                del c[k]
            stack.extend(w for w in c.values() if owned.owns(w))
        elif type(c) is list:
            c[:] = [w for w in c if w is not _DELETE]
            stack.extend(w for w in c if owned.owns(w))
    return v


def delpaths(v: Any, paths: Any, allocator: Allocator | None = None) -> Any:
    """`delpaths(paths)`: a new value without those paths (the input is not modified)."""
    if type(paths) is not list:
        raise type_error("delpaths", v, paths)
    if not paths:
        return v
    owned = allocator if allocator is not None else _Owned()
    u = v
    for p in paths:
        if type(p) is not list:
            raise _wrap_error(
                "delpaths", v, f"expected an array but got: {type_error_preview(p)}", paths
            )
        try:
            u = _update(u, p, _DELETE, owned)
        except JqRuntimeError as e:
            raise _wrap_error("delpaths", v, e.message, paths) from None
    return _delete_marked(u, owned)


def getpath(v: Any, path: Any) -> Any:
    """`getpath(path)`: null where the path runs through null, an error on a scalar."""
    if type(path) is not list:
        raise type_error("getpath", v, path)
    u = v
    for x in path:
        tu = type(u)
        if tu is dict and type(x) is str:
            u = u.get(x)
            continue
        if tu is dict or tu is list or u is None:
            try:
                u = values.index(u, x)
            except JqRuntimeError as e:
                raise _wrap_error("getpath", v, e.message, path) from None
            continue
        raise type_error("getpath", v, path)
    return u


# ---------------------------------------------------------------------------------------------
# errors and control


def _stream_event(v: Any) -> Any:
    """A `fromstream` event as it is (an array, or null that adds nothing), else gojq's error."""
    if v is None or type(v) is list:
        return v
    raise JqRuntimeError(f"expected an array but got: {type_error_preview(v)}")


def f_error0(v: Any) -> Any:
    raise _error_value(v)


def f_error1(_v: Any, x: Any) -> Any:
    raise _error_value(x)


def _error_value(x: Any) -> JqRuntimeError:
    return JqValueError(x)


def f_halt(_v: Any) -> Any:
    err = JqHaltError("halt", value=None, exit_code=0)
    err.value = None
    raise err


def f_halt_error0(v: Any) -> Any:
    raise _halt_error(v, 5)


def f_halt_error1(v: Any, code: Any) -> Any:
    c = to_int(code) if is_number(code) else None
    if c is None:
        raise type_error("halt_error", code)
    raise _halt_error(v, c)


def _halt_error(v: Any, code: int) -> JqHaltError:
    msg = v if type(v) is str else encoding.dumps(v, None)
    err = JqHaltError(f"halt error: {msg}", value=v, exit_code=code)
    err.value = v
    return err


INPUT_FILENAME: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "jq_input_filename", default=None
)
"""What `input_filename` yields: the file the current input came from (`wlmap jq` sets it)."""


def f_input_filename(_v: Any) -> Any:
    return INPUT_FILENAME.get()


# ---------------------------------------------------------------------------------------------
# operators as functions


def _op(fn: Callable[[Any, Any], Any]) -> Native:
    return lambda _v, a, b: fn(a, b)


def _plus(v: Any) -> Any:
    if is_number(v):
        return v
    raise JqRuntimeError(f"cannot plus: {type_error_preview(v)}")


def _alternative(_v: Any, a: Any, b: Any) -> Any:
    return b if a is None or a is False else a


# ---------------------------------------------------------------------------------------------
# registry


def _register() -> tuple[dict[tuple[str, int], Native], dict[tuple[str, int], Native]]:
    from workload_map.jq.builtins import formats, regex
    from workload_map.jq.builtins import math as jq_math
    from workload_map.jq.builtins import time as jq_time

    natives: dict[tuple[str, int], Native] = {
        ("length", 0): f_length,
        ("abs", 0): f_abs,
        ("utf8bytelength", 0): f_utf8bytelength,
        ("not", 0): f_not,
        ("keys", 0): f_keys,
        ("has", 1): f_has,
        ("to_entries", 0): f_to_entries,
        ("from_entries", 0): f_from_entries,
        ("add", 0): f_add,
        ("toboolean", 0): f_toboolean,
        ("tonumber", 0): f_tonumber,
        ("tostring", 0): f_tostring,
        ("type", 0): f_type,
        ("reverse", 0): f_reverse,
        ("contains", 1): f_contains,
        ("indices", 1): f_indices,
        ("index", 1): f_index,
        ("rindex", 1): f_rindex,
        ("startswith", 1): f_startswith,
        ("endswith", 1): f_endswith,
        ("ltrimstr", 1): f_ltrimstr,
        ("rtrimstr", 1): f_rtrimstr,
        ("trimstr", 1): f_trimstr,
        ("ltrim", 0): f_ltrim,
        ("rtrim", 0): f_rtrim,
        ("trim", 0): f_trim,
        ("explode", 0): f_explode,
        ("implode", 0): f_implode,
        ("split", 1): f_split1,
        ("ascii_downcase", 0): f_ascii_downcase,
        ("ascii_upcase", 0): f_ascii_upcase,
        ("tojson", 0): f_tojson,
        ("fromjson", 0): f_fromjson,
        ("flatten", 0): f_flatten,
        ("flatten", 1): f_flatten,
        ("min", 0): f_min,
        ("max", 0): f_max,
        ("_min_by", 1): f_min_by,
        ("_max_by", 1): f_max_by,
        ("sort", 0): f_sort,
        ("_sort_by", 1): f_sort_by,
        ("_group_by", 1): f_group_by,
        ("unique", 0): f_unique,
        ("_unique_by", 1): f_unique_by,
        ("join", 1): f_join,
        ("transpose", 0): f_transpose,
        ("bsearch", 1): f_bsearch,
        ("getpath", 1): getpath,
        ("setpath", 2): setpath,
        ("delpaths", 1): delpaths,
        ("error", 0): f_error0,
        ("error", 1): f_error1,
        ("halt", 0): f_halt,
        ("halt_error", 0): f_halt_error0,
        ("halt_error", 1): f_halt_error1,
        ("input_filename", 0): f_input_filename,
        ("_index", 2): lambda _v, a, k: values.index(a, k),
        ("_slice", 3): lambda _v, a, end, start: values.slice(a, start, end),
        ("_plus", 0): _plus,
        ("_stream_event", 0): _stream_event,
        ("_negate", 0): values.negate,
        ("_add", 2): _op(values.add),
        ("_subtract", 2): _op(values.subtract),
        ("_multiply", 2): _op(values.multiply),
        ("_divide", 2): _op(values.divide),
        ("_modulo", 2): _op(values.modulo),
        ("_alternative", 2): _alternative,
        ("_equal", 2): _op(lambda a, b: compare(a, b) == 0),
        ("_notequal", 2): _op(lambda a, b: compare(a, b) != 0),
        ("_greater", 2): _op(lambda a, b: compare(a, b) > 0),
        ("_less", 2): _op(lambda a, b: compare(a, b) < 0),
        ("_greatereq", 2): _op(lambda a, b: compare(a, b) >= 0),
        ("_lesseq", 2): _op(lambda a, b: compare(a, b) <= 0),
    }
    streams: dict[tuple[str, int], Native] = {("_range", 3): s_range}
    for module in (formats, jq_math, regex, jq_time):
        natives.update(module.NATIVES)
        streams.update(getattr(module, "STREAM_NATIVES", {}))
    return natives, streams


NATIVES, STREAM_NATIVES = _register()
