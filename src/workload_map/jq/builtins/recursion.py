"""Special forms that recurse or loop: recurse, repeat, while/until, walk and tostream, each on an
explicit stack so that no value or loop is deep enough to overflow Python's (kind ``"special"``:
the compiler calls each with its argument codes and the call node)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from workload_map.jq import ast
from workload_map.jq import values as jv
from workload_map.jq.builtins.marks import builtin
from workload_map.jq.closures import (
    MAX_STACK,
    NOTHING,
    Code,
    Env,
    Path,
    depth_first,
    tick,
)
from workload_map.jq.dispatch import CompilerCore
from workload_map.jq.errors import JqLimitError
from workload_map.jq.pathmode import recurse_children_paths, recurse_children_run

__all__: list[str] = []


def _recurse(f: Code, cond: Code | None) -> Code:
    """``recurse(f)``/``recurse(f; cond)``: depth-first, iterative."""
    too_deep = f"recursion deeper than {MAX_STACK} levels"

    def run(v: Any, env: Env) -> Iterator[Any]:
        ctx = env[0]

        def expand(x: Any) -> Iterator[Any]:
            tick(ctx)
            children: Iterator[Any] = iter(f.run(x, env))
            if cond is not None:
                children = _select_iter(children, cond, env)
            return children

        return depth_first(v, expand, MAX_STACK, too_deep)

    def paths(v: Any, p: Path | None, env: Env) -> Iterator[tuple[Any, Path | None]]:
        ctx = env[0]

        def expand(item: tuple[Any, Path | None]) -> Iterator[tuple[Any, Path | None]]:
            tick(ctx)
            children = iter(f.paths(item[0], item[1], env))
            if cond is not None:
                children = (
                    (x, xp)
                    for x, xp in children
                    for y in cond.run(x, env)
                    if not (y is None or y is False)
                )
            return children

        return depth_first((v, p), expand, MAX_STACK, too_deep)

    return Code(run, None, paths)


def _select_iter(it: Iterator[Any], cond: Code, env: Env) -> Iterator[Any]:
    for x in it:
        for y in cond.run(x, env):
            if not (y is None or y is False):
                yield x


@builtin("recurse", 0, kind="special")
def _sp_recurse0(c: CompilerCore, args: list[Code], node: ast.Call) -> Code:
    return Code(recurse_children_run, None, recurse_children_paths)


@builtin("recurse", 1, kind="special")
def _sp_recurse1(c: CompilerCore, args: list[Code], node: ast.Call) -> Code:
    return _recurse(args[0], None)


@builtin("recurse", 2, kind="special")
def _sp_recurse2(c: CompilerCore, args: list[Code], node: ast.Call) -> Code:
    return _recurse(args[0], args[1])


@builtin("repeat", 1, kind="special")
def _sp_repeat(c: CompilerCore, args: list[Code], node: ast.Call) -> Code:
    f = args[0]

    def run(v: Any, env: Env) -> Iterator[Any]:
        ctx = env[0]
        while True:
            ctx.check()
            yield from f.run(v, env)

    def paths(v: Any, p: Path | None, env: Env) -> Iterator[tuple[Any, Path | None]]:
        ctx = env[0]
        while True:
            ctx.check()
            yield from f.paths(v, p, env)

    return Code(run, None, paths)


def _cond_loop(cond: Code, update: Code, is_while: bool) -> Code:
    """``while``/``until`` on an explicit stack (gojq's recursive definitions, without the
    recursion): ``def _while: if cond then ., (update | _while) else empty end`` and
    ``def _until: if cond then . else update | _until end``; a true ``cond`` yields the value,
    and ``while`` goes on from it when true, ``until`` when false."""

    def run(v: Any, env: Env) -> Iterator[Any]:
        ctx = env[0]
        stack: list[Iterator[Any]] = [iter((v,))]
        while stack:
            x = next(stack[-1], NOTHING)
            if x is NOTHING:
                stack.pop()
                continue
            tick(ctx)
            for ok in cond.run(x, env):
                truthy = not (ok is None or ok is False)
                if truthy:
                    yield x
                if truthy is is_while:
                    stack.append(iter(update.run(x, env)))
                    if len(stack) > MAX_STACK:
                        raise JqLimitError(f"recursion deeper than {MAX_STACK} levels")
                    if is_while:
                        break

    return Code(run)


@builtin("while", 2, kind="special", effect="unbounded-loop")
def _sp_while(c: CompilerCore, args: list[Code], node: ast.Call) -> Code:
    return _cond_loop(args[0], args[1], True)


@builtin("until", 2, kind="special", effect="unbounded-loop")
def _sp_until(c: CompilerCore, args: list[Code], node: ast.Call) -> Code:
    return _cond_loop(args[0], args[1], False)


@builtin("walk", 1, kind="special")
def _sp_walk(c: CompilerCore, args: list[Code], node: ast.Call) -> Code:
    """``walk(f)`` as gojq defines it (``def _walk: if type == "array" then map(_walk) elif
    type == "object" then map_values(_walk) end | f``), on an explicit stack so that a value
    of any depth is walked: an array keeps every output of ``f`` on each element, an object the
    first (none deletes the key)."""
    f_run = args[0].run

    def run(v: Any, env: Env) -> Iterator[Any]:
        ctx = env[0]

        def outputs(x: Any, every: bool) -> list[Any]:
            if every:
                return list(f_run(x, env))
            for y in f_run(x, env):
                return [y]
            return []

        # frames: [children iterator, rebuilt container, key of the child being walked]
        stack: list[list[Any]] = []

        def enter(x: Any) -> bool:
            tx = type(x)
            if tx is list:
                stack.append([iter(x), [], None])
                return True
            if tx is dict:
                stack.append([iter(sorted(x.items())), dict(x), None])
                return True
            return False

        def deliver(frame: list[Any], results: list[Any]) -> None:
            acc = frame[1]
            if type(acc) is list:
                acc.extend(results)
            elif results:
                acc[frame[2]] = results[0]
            else:
                del acc[frame[2]]

        if not enter(v):
            yield from f_run(v, env)
            return
        while True:
            frame = stack[-1]
            item = next(frame[0], NOTHING)
            if item is NOTHING:
                stack.pop()
                if not stack:
                    yield from f_run(frame[1], env)
                    return
                parent = stack[-1]
                deliver(parent, outputs(frame[1], type(parent[1]) is list))
                continue
            tick(ctx)
            if type(frame[1]) is dict:
                frame[2], item = item
            if not enter(item):
                deliver(frame, outputs(item, type(frame[1]) is list))

    return Code(run)


@builtin("tostream", 0, kind="special")
def _sp_tostream(c: CompilerCore, args: list[Code], node: ast.Call) -> Code:
    """``tostream``: [path, leaf] events in pre-order and a closing [path] after each non-empty
    container; iterative, so deep values cannot overflow."""

    def run(v: Any, env: Env) -> Iterator[Any]:
        ctx = env[0]
        # frames: (items iterator, path of the container, path of its last child)
        stack: list[tuple[Iterator[tuple[Any, Any]], list[Any], list[Any]]] = []

        def enter(x: Any, path: list[Any]) -> list[Any] | None:
            tx = type(x)
            if (tx is list or tx is dict) and x:
                items = list(jv.iterate_items(x))
                stack.append((iter(items), path, [*path, items[-1][0]]))
                return None
            return [path, x]

        leaf = enter(v, [])
        if leaf is not None:
            yield leaf
        while stack:
            items, path, last = stack[-1]
            item = next(items, None)
            if item is None:
                stack.pop()
                yield [last]
                continue
            tick(ctx)
            leaf = enter(item[1], [*path, item[0]])
            if leaf is not None:
                yield leaf

    return Code(run)
