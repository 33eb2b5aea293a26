"""Conversions between jq's types: toboolean, tonumber, tostring, tojson, type; and gojq's
wrapped error text the builtins share (``fromjson`` is in ``jsontext``)."""

from __future__ import annotations

import math
from typing import Any

from workload_map.jq import encode, values
from workload_map.jq.builtins.marks import builtin
from workload_map.jq.errors import JqRuntimeError
from workload_map.jq.meter import Meter
from workload_map.jq.values import (
    is_number,
    preview,
    type_error,
    type_name,
)

__all__ = ["number_from_text", "wrap_error"]


def wrap_error(name: str, v: Any, cause: str, *args: Any) -> JqRuntimeError:
    """`NAME(ARGS) cannot be applied to PREVIEW: CAUSE` (gojq's func*WrapError)."""
    if args:
        name = f"{name}({'; '.join(preview(a) for a in args)})"
    return JqRuntimeError(f"{name} cannot be applied to {preview(v)}: {cause}")


@builtin("toboolean", 0)
def f_toboolean(v: Any) -> Any:
    if type(v) is bool:
        return v
    if type(v) is str:
        if v == "true":
            return True
        if v == "false":
            return False
        raise wrap_error("toboolean", v, "invalid boolean")
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


@builtin("tonumber", 0)
def f_tonumber(v: Any) -> Any:
    if is_number(v):
        return v
    if type(v) is str:
        if not _valid_number_text(v):
            raise wrap_error("tonumber", v, "invalid number")
        return number_from_text(v)
    raise type_error("tonumber", v)


@builtin("tostring", 0)
def f_tostring(v: Any, *, meter: Meter | None = None) -> Any:
    if type(v) is str:
        return v
    return values.capped_text("tostring", encode.dumps(v, None, meter=meter))


@builtin("tojson", 0)
def f_tojson(v: Any, *, meter: Meter | None = None) -> Any:
    if type(v) is str and 2 * len(v) > values.MAX_STRING_BYTES:
        # refuse before building: the text of a string is at least its length plus escapes
        values.capped_text(
            "tojson",
            v if len(v) + v.count('"') + v.count("\\") + 2 > values.MAX_STRING_BYTES else "",
        )
    return values.capped_text("tojson", encode.dumps(v, None, meter=meter))


@builtin("type", 0)
def f_type(v: Any) -> Any:
    return type_name(v)
