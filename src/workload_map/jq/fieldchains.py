"""Fast paths for field chains: ``.a.b[0]``, ``.a[]?.b`` and other constant-key suffixes.

Long suffix chains compile to one loop over the keys instead of one closure per link.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from workload_map.jq import ast
from workload_map.jq import values as jv
from workload_map.jq.closures import (
    IDENTITY,
    Code,
    Env,
    Path,
    annotate,
    from_one,
    invalid_iter_path,
    invalid_path,
)
from workload_map.jq.errors import JqError


def chain_constant_path(node: Any) -> list[Any] | None:
    """The path of ``.a[0][1:2]``-style terms with constant keys (gojq's toIndices)."""
    out: list[Any] = []
    while not isinstance(node, ast.Identity):
        if isinstance(node, ast.Index) and isinstance(node.key, ast.Literal):
            if node.key.kind not in ("string", "number"):
                return None
            out.append(node.key.value)
        elif isinstance(node, ast.Slice) and all(
            b is None or (isinstance(b, ast.Literal) and b.kind in ("number", "null"))
            for b in (node.start, node.end)
        ):
            start = node.start.value if isinstance(node.start, ast.Literal) else None
            end = node.end.value if isinstance(node.end, ast.Literal) else None
            out.append({"start": start, "end": end})
        else:
            return None
        node = node.target
    out.reverse()
    return out


def suffix_step(node: Any) -> tuple[str, Any] | None:
    """How ``_suffix_chain`` peels the top suffix off ``node``: its kind and what is below."""
    if isinstance(node, ast.Index):
        n: Any = node
        while isinstance(n, ast.Index) and isinstance(n.key, ast.Literal):
            k = n.key.value
            if not (n.key.kind == "string" or (type(k) is int and k >= 0)):
                break
            n = n.target
        return ("keys", n) if n is not node else None
    if isinstance(node, ast.Iterate) and not isinstance(node.target, ast.Identity):
        return "iterate", node.target
    if (
        isinstance(node, ast.Optional)
        and not node.guards_all
        and isinstance(node.target, (ast.Index, ast.Slice, ast.Iterate))
        and not isinstance(node.target.target, ast.Identity)
    ):
        return "optional", node.target.target
    return None


SUFFIX_NODES = frozenset({ast.Index, ast.Iterate, ast.Optional})


def long_suffix_chain(node: Any, limit: int = 16) -> bool:
    """Whether ``node`` is a chain of more than ``limit`` suffixes (compiled iteratively)."""
    for _ in range(limit):
        step = suffix_step(node)
        if step is None:
            return False
        node = step[1]
    return suffix_step(node) is not None


def with_identity_target(node: Any) -> Any:
    ident = ast.Identity(offset=node.offset)
    if isinstance(node, ast.Index):
        return ast.Index(ident, node.key, offset=node.offset)
    if isinstance(node, ast.Slice):
        return ast.Slice(ident, node.start, node.end, offset=node.offset)
    return ast.Iterate(ident, offset=node.offset)


def index_path(t: Any, tp: Path | None, k: Any, offset: int) -> tuple[Any, Path | None]:
    try:
        w = jv.index(t, k)
    except JqError as e:
        annotate(e, offset)
        raise
    if tp is None:
        raise invalid_path(t)
    return w, (*tp, k)


def iterate_paths(t: Any, tp: Path | None, offset: int) -> Iterator[tuple[Any, Path | None]]:
    tt = type(t)
    if tt is not list and tt is not dict:
        try:
            jv.iterate(t)
        except JqError as e:
            annotate(e, offset)
            raise
    if tp is None:
        raise invalid_iter_path(t)
    for k, x in jv.iterate_items(t):
        yield x, (*tp, k)


def index_chain(base: Code, keys: list[Any], offsets: list[int]) -> Code:
    index = jv.index

    def slow(v: Any, i: int) -> Any:
        n = len(keys)
        while i < n:
            try:
                v = index(v, keys[i])
            except JqError as e:
                annotate(e, offsets[i])
                raise
            i += 1
        return v

    if len(keys) == 1 and type(keys[0]) is str:
        k0 = keys[0]

        def walk(v: Any, env: Env = ()) -> Any:
            if type(v) is dict:
                return v.get(k0)
            return slow(v, 0)

    elif len(keys) == 2 and type(keys[0]) is str and type(keys[1]) is str:
        k0, k1 = keys

        def walk(v: Any, env: Env = ()) -> Any:
            if type(v) is dict:
                v = v.get(k0)
                if type(v) is dict:
                    return v.get(k1)
                return slow(v, 1)
            return slow(v, 0)

    elif len(keys) == 3 and all(type(k) is str for k in keys):
        k0, k1, k2 = keys

        def walk(v: Any, env: Env = ()) -> Any:
            if type(v) is dict:
                v = v.get(k0)
                if type(v) is dict:
                    v = v.get(k1)
                    if type(v) is dict:
                        return v.get(k2)
                    return slow(v, 2)
                return slow(v, 1)
            return slow(v, 0)

    else:
        indexed = list(enumerate(keys))

        def walk(v: Any, env: Env = ()) -> Any:
            for i, k in indexed:
                if type(v) is dict and type(k) is str:
                    v = v.get(k)
                else:
                    return slow(v, i)
            return v

    base_paths = base.paths

    keyed = list(zip(keys, offsets, strict=True))

    def paths(v: Any, p: Path | None, env: Env) -> Iterator[tuple[Any, Path | None]]:
        for t, tp in base_paths(v, p, env):
            for k, off in keyed:
                t, tp = index_path(t, tp, k, off)
            yield t, tp

    if base is IDENTITY:

        def run(v: Any, env: Env) -> tuple[Any]:
            return (walk(v),)

        return Code(run, walk, paths)
    if base.one is not None:
        b1 = base.one

        def one_b(v: Any, env: Env) -> Any:
            return walk(b1(v, env))

        return from_one(one_b, paths)
    b_run = base.run

    def run_b(v: Any, env: Env) -> Iterator[Any]:
        for x in b_run(v, env):
            yield walk(x)

    return Code(run_b, None, paths)
