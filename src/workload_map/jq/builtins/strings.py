"""String builtins: lengths, explode/implode, searching (indices/index/rindex, also on arrays),
prefixes and suffixes, trimming, split/1 and ASCII case."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from workload_map.jq import values
from workload_map.jq.builtins.marks import builtin
from workload_map.jq.errors import JqLimitError
from workload_map.jq.values import (
    compare,
    is_number,
    to_int,
    type_error,
    type_error_preview,
)

__all__ = []


@builtin("utf8bytelength", 0)
def f_utf8bytelength(v: Any) -> Any:
    if type(v) is not str:
        raise type_error("utf8bytelength", v)
    return len(values.utf8_bytes(v))


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


@builtin("indices", 1)
def f_indices(v: Any, x: Any) -> Any:
    return _index_func("indices", v, x, _all_indices)


@builtin("index", 1)
def f_index(v: Any, x: Any) -> Any:
    return _index_func("index", v, x, _first_index)


@builtin("rindex", 1)
def f_rindex(v: Any, x: Any) -> Any:
    return _index_func("rindex", v, x, _last_index)


def _strings(name: str, v: Any, x: Any) -> tuple[str, str]:
    if type(v) is not str or type(x) is not str:
        raise type_error(name, v, x)
    return v, x


@builtin("startswith", 1)
def f_startswith(v: Any, x: Any) -> Any:
    s, t = _strings("startswith", v, x)
    return s.startswith(t)


@builtin("endswith", 1)
def f_endswith(v: Any, x: Any) -> Any:
    s, t = _strings("endswith", v, x)
    return s.endswith(t)


@builtin("ltrimstr", 1)
def f_ltrimstr(v: Any, x: Any) -> Any:
    s, t = _strings("ltrimstr", v, x)
    return s[len(t) :] if s.startswith(t) else s


@builtin("rtrimstr", 1)
def f_rtrimstr(v: Any, x: Any) -> Any:
    s, t = _strings("rtrimstr", v, x)
    return s[: len(s) - len(t)] if t and s.endswith(t) else s


@builtin("trimstr", 1)
def f_trimstr(v: Any, x: Any) -> Any:
    s, t = _strings("trimstr", v, x)
    if s.startswith(t):
        s = s[len(t) :]
    if t and s.endswith(t):
        s = s[: len(s) - len(t)]
    return s


# Go's unicode.IsSpace
_SPACES = "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"


def _text(name: str, v: Any) -> str:
    """``v`` when it is a string, else ``NAME cannot be applied to: …``."""
    if type(v) is not str:
        raise type_error(name, v)
    return v


@builtin("trim", 0)
def f_trim(v: Any) -> Any:
    return _text("trim", v).strip(_SPACES)


@builtin("ltrim", 0)
def f_ltrim(v: Any) -> Any:
    return _text("ltrim", v).lstrip(_SPACES)


@builtin("rtrim", 0)
def f_rtrim(v: Any) -> Any:
    return _text("rtrim", v).rstrip(_SPACES)


@builtin("explode", 0)
def f_explode(v: Any) -> Any:
    return _explode(_text("explode", v))


@builtin("implode", 0)
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


@builtin("split", 1)
def f_split1(v: Any, sep: Any) -> Any:
    if type(v) is not str:
        raise type_error("split", v)
    if type(sep) is not str:
        raise type_error("split", "")
    if sep == "":
        return list(v)
    return v.split(sep)


@builtin("ascii_downcase", 0)
def f_ascii_downcase(v: Any) -> Any:
    return _text("ascii_downcase", v).translate(_DOWN)


@builtin("ascii_upcase", 0)
def f_ascii_upcase(v: Any) -> Any:
    return _text("ascii_upcase", v).translate(_UP)


_DOWN = {c: c + 32 for c in range(ord("A"), ord("Z") + 1)}
_UP = {c: c - 32 for c in range(ord("a"), ord("z") + 1)}
