"""Builtins on arrays and objects: length, keys, has, entries, add, contains, flatten, sorting and
grouping (the `_sort_by`-style helpers behind builtin.jq's `sort_by(f)`), min/max, join,
transpose, bsearch and `_range`."""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import Any

from workload_map.jq import encode, values
from workload_map.jq.builtins.conversions import wrap_error
from workload_map.jq.builtins.marks import builtin
from workload_map.jq.errors import JqLimitError, JqRuntimeError
from workload_map.jq.meter import ELEMENTS_PER_UNIT, SPAN, Meter, sort_metered
from workload_map.jq.values import (
    LiteralNumber,
    compare,
    is_number,
    preview,
    to_float,
    to_int,
    type_error,
    type_error_preview,
)

__all__: list[str] = []


def _values_of(v: Any) -> list[Any] | None:
    t = type(v)
    if t is list:
        return list(v)
    if t is dict:
        return [v[k] for k in sorted(v)]
    return None


@builtin("length", 0)
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


@builtin("abs", 0)
def f_abs(v: Any) -> Any:
    if is_number(v):
        return f_length(v)
    raise type_error("abs", v)


@builtin("keys", 0)
def f_keys(v: Any, *, meter: Meter | None = None) -> Any:
    t = type(v)
    if t is dict:
        return sort_metered(list(v), None, meter)
    if t is list:
        return list(range(len(v)))
    raise type_error("keys", v)


@builtin("has", 1)
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


@builtin("to_entries", 0)
def f_to_entries(v: Any) -> Any:
    t = type(v)
    if t is dict:
        return [{"key": k, "value": v[k]} for k in sorted(v)]
    if t is list:
        return [{"key": i, "value": x} for i, x in enumerate(v)]
    raise type_error("to_entries", v)


@builtin("from_entries", 0)
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
            raise wrap_error(
                "from_entries",
                v,
                f"expected a string for object key but got: {type_error_preview(key)}",
            )
        out[key] = e["value"] if "value" in e else e.get("Value")
    return out


@builtin("add", 0)
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


@builtin("reverse", 0)
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


@builtin("contains", 1)
def f_contains(v: Any, x: Any) -> Any:
    return _contains(v, x)


@builtin("flatten", 0)
@builtin("flatten", 1)
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


def _counting_compare(meter: Meter | None) -> Any:
    """jq's ``compare``, counting each comparison (and the top-level size of a container
    operand) on ``meter`` as it goes: a sort by ``compare`` is one C call of n log n of them."""
    if meter is None:
        return compare
    pending = 0

    def counted(a: Any, b: Any) -> int:
        nonlocal pending
        pending += 1
        ta = type(a)
        if ta is list or ta is dict:
            pending += len(a) // ELEMENTS_PER_UNIT
        if pending >= SPAN:
            meter.spend(pending)
            pending = 0
        return compare(a, b)

    return counted


_NATIVE = ({int}, {str})


def _native_keys(keys: list[Any]) -> list[Any] | None:
    """Keys Python orders as jq does, to sort at C speed: all integers (not booleans) or all
    strings, bare or each alone in an array (``sort_by(f)``'s ``[f]``); else None."""
    kinds = set(map(type, keys))
    if kinds in _NATIVE:
        return keys
    if kinds == {list} and set(map(len, keys)) == {1}:
        firsts = [k[0] for k in keys]
        if set(map(type, firsts)) in _NATIVE:
            return firsts
    return None


def _sorted_order(keys: list[Any], meter: Meter | None) -> list[int]:
    """The indexes of ``keys`` in jq's order of the keys (stable)."""
    native = _native_keys(keys)
    if native is not None:
        return sort_metered(list(range(len(keys))), native.__getitem__, meter)
    cmp = functools.cmp_to_key(_counting_compare(meter))
    return sorted(range(len(keys)), key=lambda i: cmp(keys[i]))


def _equal_runs(keys: list[Any], order: list[int], meter: Meter | None) -> Iterator[list[int]]:
    """The indexes of ``order`` grouped by equal keys (``group_by``, ``unique_by``)."""
    native = _native_keys(keys)
    same = _counting_compare(meter)
    run: list[int] = []
    last: Any = None
    seen = 0
    for i in order:
        if native is not None:
            key = native[i]
            differs = key != last
            seen += 1
            if seen >= SPAN and meter is not None:
                meter.spend(seen)
                seen = 0
        else:
            key = keys[i]
            differs = bool(run) and same(last, key) != 0
        if run and differs:
            yield run
            run = []
        if not run:
            last = key
        run.append(i)
    if run:
        yield run


def _checked(name: str, v: Any, keys: Any) -> None:
    if type(v) is not list:
        if name.endswith("_by"):
            raise type_error(name, v, keys)
        raise type_error(name, v)
    if type(keys) is not list:
        raise type_error(name, v, keys)
    if len(v) != len(keys):
        raise wrap_error(name, v, "length mismatch", keys)


@builtin("sort", 0)
def f_sort(v: Any, *, meter: Meter | None = None) -> Any:
    if type(v) is not list:
        raise type_error("sort", v)
    return [v[i] for i in _sorted_order(v, meter)]


@builtin("_sort_by", 1)
def f_sort_by(v: Any, keys: Any, *, meter: Meter | None = None) -> Any:
    _checked("sort_by", v, keys)
    return [v[i] for i in _sorted_order(keys, meter)]


@builtin("_group_by", 1)
def f_group_by(v: Any, keys: Any, *, meter: Meter | None = None) -> Any:
    _checked("group_by", v, keys)
    order = _sorted_order(keys, meter)
    return [[v[i] for i in run] for run in _equal_runs(keys, order, meter)]


def _unique_by(name: str, v: Any, keys: Any, meter: Meter | None) -> Any:
    _checked(name, v, keys)
    order = _sorted_order(keys, meter)
    return [v[run[0]] for run in _equal_runs(keys, order, meter)]


@builtin("unique", 0)
def f_unique(v: Any, *, meter: Meter | None = None) -> Any:
    return _unique_by("unique", v, v, meter)


@builtin("_unique_by", 1)
def f_unique_by(v: Any, keys: Any, *, meter: Meter | None = None) -> Any:
    return _unique_by("unique_by", v, keys, meter)


def _min_max(vs: list[Any], xs: list[Any], is_min: bool, meter: Meter | None = None) -> Any:
    if not vs:
        return None
    cmp = _counting_compare(meter)
    j, x = 0, xs[0]
    for i in range(1, len(xs)):
        if (cmp(x, xs[i]) > 0) == is_min:
            j, x = i, xs[i]
    return vs[j]


@builtin("min", 0)
def f_min(v: Any, *, meter: Meter | None = None) -> Any:
    if type(v) is not list:
        raise type_error("min", v)
    return _min_max(v, v, True, meter)


@builtin("max", 0)
def f_max(v: Any, *, meter: Meter | None = None) -> Any:
    if type(v) is not list:
        raise type_error("max", v)
    return _min_max(v, v, False, meter)


def _min_max_by(name: str, v: Any, keys: Any, is_min: bool, meter: Meter | None) -> Any:
    if type(v) is not list or type(keys) is not list:
        raise type_error(name, v, keys)
    if len(v) != len(keys):
        raise wrap_error(name, v, "length mismatch", keys)
    return _min_max(v, keys, is_min, meter)


@builtin("_min_by", 1)
def f_min_by(v: Any, keys: Any, *, meter: Meter | None = None) -> Any:
    return _min_max_by("min_by", v, keys, True, meter)


@builtin("_max_by", 1)
def f_max_by(v: Any, keys: Any, *, meter: Meter | None = None) -> Any:
    return _min_max_by("max_by", v, keys, False, meter)


@builtin("join", 1)
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
            parts.append(encode.format_number(x))
        else:
            raise JqRuntimeError(
                f"join cannot be applied to an array including: {type_error_preview(x)}"
            )
    glue = sep if type(sep) is str else ""
    if len(glue) * (len(parts) - 1) + sum(map(len, parts)) > values.MAX_STRING_BYTES:
        # refused before building: a long separator between many parts (`join(join(@text))`)
        # asked Python for tens of gigabytes, a MemoryError
        raise JqLimitError(f"join: the result would exceed {values.MAX_STRING_BYTES} characters")
    return values.capped_text("join", glue.join(parts))


@builtin("transpose", 0)
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


@builtin("bsearch", 1)
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


@builtin("_range", 3, kind="stream")
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
