"""Value-level paths: getpath, setpath, delpaths (never mutating the input).

`setpath(v, path, x, allocator)` and `delpaths(v, paths, allocator)` take an optional shared
`Allocator()` so that one `.[] = 1` over n elements copies each container once (O(n), as gojq)
instead of once per path (O(n²))."""

from __future__ import annotations

from typing import Any

from workload_map.jq import values
from workload_map.jq.builtins.conversions import wrap_error
from workload_map.jq.builtins.marks import builtin
from workload_map.jq.errors import JqRuntimeError
from workload_map.jq.values import (
    is_number,
    preview,
    to_int,
    type_error,
    type_error_preview,
)

__all__ = ["Allocator", "delpaths", "getpath", "setpath"]

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


@builtin("setpath", 2)
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


@builtin("delpaths", 1)
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
            raise wrap_error(
                "delpaths", v, f"expected an array but got: {type_error_preview(p)}", paths
            )
        try:
            u = _update(u, p, _DELETE, owned)
        except JqRuntimeError as e:
            raise wrap_error("delpaths", v, e.message, paths) from None
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
                raise wrap_error("getpath", v, e.message, path) from None
            continue
        raise type_error("getpath", v, path)
    return u
