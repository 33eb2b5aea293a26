"""Path-mode helpers: assignment/update through paths and ``..``'s paths.

Kept apart from value mode because they share gojq's path and allocator rules.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from workload_map.jq import values as jv
from workload_map.jq.builtins.paths import Allocator, delpaths, getpath, setpath
from workload_map.jq.closures import (
    Env,
    Path,
    Run,
    annotate,
    depth_first,
    invalid_iter_path,
    paced,
    tick,
)
from workload_map.jq.errors import JqError

# JSON nesting is bounded upstream (the decoders' depth limits): this bound is a backstop
_MAX_VALUE_DEPTH = 1_000_000


def setpath_at(v: Any, path: list[Any], x: Any, offset: int, allocator: Allocator) -> Any:
    """setpath sharing one allocator across an assignment: each container is copied once."""
    try:
        return setpath(v, path, x, allocator)
    except JqError as e:
        annotate(e, offset)
        raise


def modify_paths(
    v: Any,
    env: Env,
    all_paths: Callable[[Any, Env], Iterator[list[Any]]],
    update: Run,
    offset: int,
) -> Any:
    acc = v
    allocator = Allocator()
    deletions: list[list[Any]] = []
    for p in all_paths(v, env):
        try:
            old = getpath(acc, p)
        except JqError as e:
            annotate(e, offset)
            raise
        for new in update(old, env):
            acc = setpath_at(acc, p, new, offset, allocator)
            break
        else:
            deletions.append(p)
    if deletions:
        try:
            acc = delpaths(acc, deletions, allocator)
        except JqError as e:
            annotate(e, offset)
            raise
    return acc


def recurse_children_run(v: Any, env: Env) -> Iterator[Any]:
    """``..``: pre-order, objects in key order; iterative so deep values cannot overflow."""
    ctx = env[0]
    iterate = jv.iterate

    def expand(x: Any) -> Iterator[Any] | None:
        tx = type(x)
        if tx is list or tx is dict:
            tick(ctx)
            return iter(paced(iterate(x), len(x), ctx))  # each child a step, scalars included
        return None

    return depth_first(v, expand, _MAX_VALUE_DEPTH, "value too deep")


def recurse_children_paths(v: Any, p: Path | None, env: Env) -> Iterator[tuple[Any, Path | None]]:
    ctx = env[0]

    def expand(item: tuple[Any, Path | None]) -> Iterator[tuple[Any, Path]] | None:
        x, xp = item
        tx = type(x)
        if tx is list or tx is dict:
            tick(ctx)
            if xp is None:
                raise invalid_iter_path(x)
            return iter(paced(_child_paths(x, xp), len(x), ctx))
        return None

    return depth_first((v, p), expand, _MAX_VALUE_DEPTH, "value too deep")


def _child_paths(x: Any, xp: Path) -> Iterator[tuple[Any, Path]]:
    for k, w in jv.iterate_items(x):
        yield w, (*xp, k)
