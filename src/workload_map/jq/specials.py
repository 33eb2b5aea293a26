"""Builtins that need closures rather than values, the stream combinators: path, getpath, select,
map, first/last/nth, isempty, limit, skip, any/all, empty, not and sub.

Each is registered as a builtin of kind ``"special"`` (``@builtin(name, arity, kind="special")``,
``workload_map.jq.builtins.registry``): the compiler calls it with its argument codes and the call
node. The other special forms are grouped by concern: ``builtins.recursion`` (recurse, repeat,
while/until, walk, tostream) and ``builtins.process`` (env, ``$ENV``, input, debug, stderr,
builtins, modulemeta).
"""

from __future__ import annotations

import itertools
import math
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from workload_map.jq import ast
from workload_map.jq import values as jv
from workload_map.jq.builtins.marks import builtin
from workload_map.jq.builtins.paths import getpath as value_getpath
from workload_map.jq.calls import native_call
from workload_map.jq.closures import (
    EMPTY,
    NOTHING,
    Code,
    Env,
    Path,
    annotate,
    collect_each,
    from_one,
    invalid_path,
    paced,
    tick,
)
from workload_map.jq.dispatch import CompilerCore
from workload_map.jq.errors import JqError, JqRuntimeError


@builtin("empty", 0, kind="special", needs_ctx=False)
def _sp_empty(c: CompilerCore, args: list[Code], node: ast.Call) -> Code:
    return EMPTY


@builtin("not", 0, kind="special", needs_ctx=False)
def _sp_not(c: CompilerCore, args: list[Code], node: ast.Call) -> Code:
    def one(v: Any, env: Env) -> Any:
        return v is None or v is False

    return from_one(one)


@builtin("path", 1, kind="special", needs_ctx=False)
def _sp_path(c: CompilerCore, args: list[Code], node: ast.Call) -> Code:
    f_paths = args[0].paths

    def run(v: Any, env: Env) -> Iterator[Any]:
        for x, p in f_paths(v, (), env):
            if p is None:
                raise invalid_path(x)
            yield list(p)

    return Code(run)


@builtin("getpath", 1, kind="special", needs_ctx=False)
def _sp_getpath(c: CompilerCore, args: list[Code], node: ast.Call) -> Code:
    getpath = value_getpath
    base = native_call(getpath, args, node.offset, False)
    arg = args[0]
    offset = node.offset

    def paths(v: Any, p: Path | None, env: Env) -> Iterator[tuple[Any, Path | None]]:
        for path in arg.run(v, env):
            try:
                w = getpath(v, path)
            except JqError as e:
                annotate(e, offset)
                raise
            if p is None:
                raise invalid_path(v)
            yield w, (*p, *path)

    return Code(base.run, base.one, paths)


@builtin("select", 1, kind="special", needs_ctx=False)
def _sp_select(c: CompilerCore, args: list[Code], node: ast.Call) -> Code:
    cond = args[0]
    if cond.one is not None:
        c1 = cond.one

        def run1(v: Any, env: Env) -> tuple[Any, ...]:
            x = c1(v, env)
            if x is None or x is False:
                return ()
            return (v,)

        def paths1(v: Any, p: Path | None, env: Env) -> tuple[tuple[Any, Path | None], ...]:
            x = c1(v, env)
            if x is None or x is False:
                return ()
            return ((v, p),)

        return Code(run1, None, paths1)
    c_run = cond.run

    def run(v: Any, env: Env) -> Iterator[Any]:
        for x in c_run(v, env):
            if not (x is None or x is False):
                yield v

    def paths(v: Any, p: Path | None, env: Env) -> Iterator[tuple[Any, Path | None]]:
        for x in c_run(v, env):
            if not (x is None or x is False):
                yield v, p

    return Code(run, None, paths)


@builtin("map", 1, kind="special", needs_ctx=False)
def _sp_map(c: CompilerCore, args: list[Code], node: ast.Call) -> Code:
    f = args[0]
    iterate = jv.iterate
    offset = node.offset
    if f.one is not None:
        f1 = f.one

        def one1(v: Any, env: Env) -> Any:
            try:
                items = iterate(v)
            except JqError as e:
                annotate(e, offset)
                raise
            return [f1(x, env) for x in paced(items, len(v), env[0])]

        return from_one(one1)
    f_run = f.run

    def one(v: Any, env: Env) -> Any:
        try:
            items = iterate(v)
        except JqError as e:
            annotate(e, offset)
            raise
        return collect_each(f_run, items, env, len(v))

    return from_one(one)


def _first_of(it: Iterable[Any]) -> Any:
    for x in it:
        return x
    return NOTHING


@builtin("first", 1, kind="special", needs_ctx=False)
def _sp_first(c: CompilerCore, args: list[Code], node: ast.Call) -> Code:
    f = args[0]

    def run(v: Any, env: Env) -> tuple[Any, ...]:
        x = _first_of(f.run(v, env))
        return () if x is NOTHING else (x,)

    def paths(v: Any, p: Path | None, env: Env) -> tuple[tuple[Any, Path | None], ...]:
        x = _first_of(f.paths(v, p, env))
        return () if x is NOTHING else (x,)

    return Code(run, None, paths)


@builtin("last", 1, kind="special")
def _sp_last(c: CompilerCore, args: list[Code], node: ast.Call) -> Code:
    f = args[0]

    def run(v: Any, env: Env) -> tuple[Any, ...]:
        ctx = env[0]
        last = NOTHING
        for x in f.run(v, env):
            last = x
            tick(ctx)
        return () if last is NOTHING else (last,)

    return Code(run)


@builtin("isempty", 1, kind="special", needs_ctx=False)
def _sp_isempty(c: CompilerCore, args: list[Code], node: ast.Call) -> Code:
    f = args[0]

    def one(v: Any, env: Env) -> Any:
        return _first_of(f.run(v, env)) is NOTHING

    return from_one(one)


_BAD_COUNT = -1  # a count greater than every number (a string, array or object)


def _count(n: Any, negative: str, rounding: Callable[[float], int]) -> int:
    """gojq's counting for limit/skip/nth: ``$n > 0`` counts down with ``. - 1``."""
    if jv.is_number(n):
        if n != n:
            raise _user_error(negative)
        if n > 0:
            # a count beyond sys.maxsize (1e20, infinite) is one no stream reaches: the same
            if n >= sys.maxsize:
                return sys.maxsize
            return n if type(n) is int else rounding(n)
        if n == 0:
            return 0
        raise _user_error(negative)
    if jv.compare(n, 0) > 0:
        return _BAD_COUNT
    raise _user_error(negative)


def _user_error(text: str) -> JqRuntimeError:
    """An error as jq's ``error(text)`` raises it (gojq defines these builtins in jq)."""
    return JqRuntimeError(f"error: {text}", value=text)


def _counted(
    items: Iterable[Any], n: Any, count: int, start: int, stop: int | None
) -> Iterator[Any]:
    if count == _BAD_COUNT:
        for _x in items:
            raise JqRuntimeError(f"cannot subtract: {jv.type_error_preview(n)} and number (1)")
        return
    yield from itertools.islice(items, start, stop)


@builtin("limit", 2, kind="special")
def _sp_limit(c: CompilerCore, args: list[Code], node: ast.Call) -> Code:
    n_code, f = args
    message = "limit doesn't support negative count"

    def run(v: Any, env: Env) -> Iterator[Any]:
        for n in n_code.run(v, env):
            count = _count(n, message, math.ceil)
            if count:
                yield from _counted(f.run(v, env), n, count, 0, count)

    def paths(v: Any, p: Path | None, env: Env) -> Iterator[tuple[Any, Path | None]]:
        for n in n_code.run(v, env):
            count = _count(n, message, math.ceil)
            if count:
                yield from _counted(f.paths(v, p, env), n, count, 0, count)

    return Code(run, None, paths)


@builtin("skip", 2, kind="special")
def _sp_skip(c: CompilerCore, args: list[Code], node: ast.Call) -> Code:
    n_code, f = args
    message = "skip doesn't support negative count"

    def run(v: Any, env: Env) -> Iterator[Any]:
        for n in n_code.run(v, env):
            count = _count(n, message, math.floor)
            yield from _counted(f.run(v, env), n, count, max(count, 0), None)

    def paths(v: Any, p: Path | None, env: Env) -> Iterator[tuple[Any, Path | None]]:
        for n in n_code.run(v, env):
            count = _count(n, message, math.floor)
            yield from _counted(f.paths(v, p, env), n, count, max(count, 0), None)

    return Code(run, None, paths)


@builtin("nth", 2, kind="special")
def _sp_nth(c: CompilerCore, args: list[Code], node: ast.Call) -> Code:
    n_code, f = args
    message = "nth doesn't support negative index"

    def run(v: Any, env: Env) -> Iterator[Any]:
        for n in n_code.run(v, env):
            count = _count(n, message, math.floor)
            x = _first_of(_counted(f.run(v, env), n, count, max(count, 0), None))
            if x is not NOTHING:
                yield x

    def paths(v: Any, p: Path | None, env: Env) -> Iterator[tuple[Any, Path | None]]:
        for n in n_code.run(v, env):
            count = _count(n, message, math.floor)
            x = _first_of(_counted(f.paths(v, p, env), n, count, max(count, 0), None))
            if x is not NOTHING:
                yield x

    return Code(run, None, paths)


def _any_all(is_any: bool, gen: Code | None, cond: Code | None) -> Code:
    iterate = jv.iterate

    c1 = cond.one if cond is not None else None

    def one(v: Any, env: Env) -> Any:
        if gen is not None:
            items = gen.run(v, env)
        else:
            items = paced(iterate(v), len(v), env[0])
        if c1 is not None:
            for x in items:
                y = c1(x, env)
                if (not (y is None or y is False)) is is_any:
                    return is_any
            return not is_any
        for x in items:
            if cond is None:
                if (not (x is None or x is False)) is is_any:
                    return is_any
                continue
            for y in cond.run(x, env):
                if (not (y is None or y is False)) is is_any:
                    return is_any
        return not is_any

    return from_one(one)


@builtin("any", 0, kind="special", needs_ctx=False)
def _sp_any0(c: CompilerCore, args: list[Code], node: ast.Call) -> Code:
    return _any_all(True, None, None)


@builtin("any", 1, kind="special", needs_ctx=False)
def _sp_any1(c: CompilerCore, args: list[Code], node: ast.Call) -> Code:
    return _any_all(True, None, args[0])


@builtin("any", 2, kind="special", needs_ctx=False)
def _sp_any2(c: CompilerCore, args: list[Code], node: ast.Call) -> Code:
    return _any_all(True, args[0], args[1])


@builtin("all", 0, kind="special", needs_ctx=False)
def _sp_all0(c: CompilerCore, args: list[Code], node: ast.Call) -> Code:
    return _any_all(False, None, None)


@builtin("all", 1, kind="special", needs_ctx=False)
def _sp_all1(c: CompilerCore, args: list[Code], node: ast.Call) -> Code:
    return _any_all(False, None, args[0])


@builtin("all", 2, kind="special", needs_ctx=False)
def _sp_all2(c: CompilerCore, args: list[Code], node: ast.Call) -> Code:
    return _any_all(False, args[0], args[1])


@builtin("sub", 3, kind="special")
def _sp_sub(c: CompilerCore, args: list[Code], node: ast.Call) -> Code:
    """``sub($re; replacement; $flags)``; one output per combination of replacement outputs,
    the last match's replacement varying slowest (gojq's order)."""
    re_code, replacement, flags_code = args
    match = c.native("_match", 3)  # the regex group loads with the first sub
    capture = c.native("_capture", 0)
    add = jv.add
    offset = node.offset

    def run(v: Any, env: Env) -> Iterator[Any]:
        try:
            for regex in re_code.run(v, env):
                for flags in flags_code.run(v, env):
                    matches = match(v, regex, flags, False)
                    reps = [list(replacement.run(capture(m), env)) for m in matches]
                    for combo in itertools.product(*reversed(reps)):
                        acc = ""
                        end: int | None = None
                        for m, rep in zip(reversed(matches), combo, strict=True):
                            start = m["offset"]
                            acc = add(add(rep, v[start + m["length"] : end]), acc)
                            end = start
                        yield add(v[:end], acc)
        except JqError as e:
            annotate(e, offset)
            raise

    return Code(run)
