"""Builtins that need closures rather than values: path, select, limit, first, any/all,
recurse, while/until, walk, debug, env, tostream, sub and the rest of the special forms.

Each is registered as a builtin of kind ``"special"`` (``@builtin(name, arity, kind="special")``,
``workload_map.jq.builtins.registry``): the compiler calls it with its argument codes and the call
node. ``$ENV`` is one too, as the builtin variable it is in gojq.
"""

from __future__ import annotations

import itertools
import math
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any

from workload_map.jq import ast
from workload_map.jq import values as jv
from workload_map.jq.builtins import registry
from workload_map.jq.builtins.paths import getpath as value_getpath
from workload_map.jq.builtins.registry import builtin
from workload_map.jq.calls import native_call
from workload_map.jq.closures import (
    EMPTY,
    MAX_STACK,
    NOTHING,
    Code,
    Env,
    Path,
    annotate,
    collect_each,
    depth_first,
    from_one,
    invalid_path,
    spend,
    tick,
)
from workload_map.jq.errors import JqError, JqLimitError, JqRuntimeError
from workload_map.jq.pathmode import recurse_children_paths, recurse_children_run

if TYPE_CHECKING:
    from workload_map.jq.compiler import Compiler


@builtin("empty", 0, kind="special", needs_ctx=False)
def _sp_empty(c: Compiler, args: list[Code], node: ast.Call) -> Code:
    return EMPTY


@builtin("not", 0, kind="special", needs_ctx=False)
def _sp_not(c: Compiler, args: list[Code], node: ast.Call) -> Code:
    def one(v: Any, env: Env) -> Any:
        return v is None or v is False

    return from_one(one)


@builtin("path", 1, kind="special", needs_ctx=False)
def _sp_path(c: Compiler, args: list[Code], node: ast.Call) -> Code:
    f_paths = args[0].paths

    def run(v: Any, env: Env) -> Iterator[Any]:
        for x, p in f_paths(v, (), env):
            if p is None:
                raise invalid_path(x)
            yield list(p)

    return Code(run)


@builtin("getpath", 1, kind="special", needs_ctx=False)
def _sp_getpath(c: Compiler, args: list[Code], node: ast.Call) -> Code:
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
def _sp_select(c: Compiler, args: list[Code], node: ast.Call) -> Code:
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
def _sp_map(c: Compiler, args: list[Code], node: ast.Call) -> Code:
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
            spend(env[0], len(v))
            return [f1(x, env) for x in items]

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
def _sp_first(c: Compiler, args: list[Code], node: ast.Call) -> Code:
    f = args[0]

    def run(v: Any, env: Env) -> tuple[Any, ...]:
        x = _first_of(f.run(v, env))
        return () if x is NOTHING else (x,)

    def paths(v: Any, p: Path | None, env: Env) -> tuple[tuple[Any, Path | None], ...]:
        x = _first_of(f.paths(v, p, env))
        return () if x is NOTHING else (x,)

    return Code(run, None, paths)


@builtin("last", 1, kind="special")
def _sp_last(c: Compiler, args: list[Code], node: ast.Call) -> Code:
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
def _sp_isempty(c: Compiler, args: list[Code], node: ast.Call) -> Code:
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
def _sp_limit(c: Compiler, args: list[Code], node: ast.Call) -> Code:
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
def _sp_skip(c: Compiler, args: list[Code], node: ast.Call) -> Code:
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
def _sp_nth(c: Compiler, args: list[Code], node: ast.Call) -> Code:
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
            items = iterate(v)
            spend(env[0], len(v))
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
def _sp_any0(c: Compiler, args: list[Code], node: ast.Call) -> Code:
    return _any_all(True, None, None)


@builtin("any", 1, kind="special", needs_ctx=False)
def _sp_any1(c: Compiler, args: list[Code], node: ast.Call) -> Code:
    return _any_all(True, None, args[0])


@builtin("any", 2, kind="special", needs_ctx=False)
def _sp_any2(c: Compiler, args: list[Code], node: ast.Call) -> Code:
    return _any_all(True, args[0], args[1])


@builtin("all", 0, kind="special", needs_ctx=False)
def _sp_all0(c: Compiler, args: list[Code], node: ast.Call) -> Code:
    return _any_all(False, None, None)


@builtin("all", 1, kind="special", needs_ctx=False)
def _sp_all1(c: Compiler, args: list[Code], node: ast.Call) -> Code:
    return _any_all(False, None, args[0])


@builtin("all", 2, kind="special", needs_ctx=False)
def _sp_all2(c: Compiler, args: list[Code], node: ast.Call) -> Code:
    return _any_all(False, args[0], args[1])


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
def _sp_recurse0(c: Compiler, args: list[Code], node: ast.Call) -> Code:
    return Code(recurse_children_run, None, recurse_children_paths)


@builtin("recurse", 1, kind="special")
def _sp_recurse1(c: Compiler, args: list[Code], node: ast.Call) -> Code:
    return _recurse(args[0], None)


@builtin("recurse", 2, kind="special")
def _sp_recurse2(c: Compiler, args: list[Code], node: ast.Call) -> Code:
    return _recurse(args[0], args[1])


@builtin("repeat", 1, kind="special")
def _sp_repeat(c: Compiler, args: list[Code], node: ast.Call) -> Code:
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
def _sp_while(c: Compiler, args: list[Code], node: ast.Call) -> Code:
    return _cond_loop(args[0], args[1], True)


@builtin("until", 2, kind="special", effect="unbounded-loop")
def _sp_until(c: Compiler, args: list[Code], node: ast.Call) -> Code:
    return _cond_loop(args[0], args[1], False)


@builtin("walk", 1, kind="special")
def _sp_walk(c: Compiler, args: list[Code], node: ast.Call) -> Code:
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


@builtin("env", 0, kind="special", effect="environment")
@builtin("$ENV", 0, kind="special", effect="environment")
def _sp_env(c: Compiler, args: list[Code], node: Any) -> Code:
    c.needs_ctx = True

    def one(v: Any, env: Env) -> Any:
        return dict(env[0].environ())

    return from_one(one)


@builtin("input", 0, kind="special", effect="input", listed=False)
@builtin("inputs", 0, kind="special", effect="input", listed=False)
def _sp_input(c: Compiler, args: list[Code], node: ast.Call) -> Code:
    """No further inputs inside a program: gojq's error without an input iterator."""
    raise c.error("input(s)/0 is not allowed", node)


@builtin("builtins", 0, kind="special")
def _sp_builtins(c: Compiler, args: list[Code], node: ast.Call) -> Code:
    def one(v: Any, env: Env) -> Any:
        return registry.names()

    return from_one(one)


@builtin("modulemeta", 0, kind="special")
def _sp_modulemeta(c: Compiler, args: list[Code], node: ast.Call) -> Code:
    """No module loader here: gojq's library error for every module name."""
    from workload_map.jq import encoding

    def one(v: Any, env: Env) -> Any:
        if type(v) is not str:
            raise JqRuntimeError(f"modulemeta cannot be applied to: {jv.type_error_preview(v)}")
        raise JqRuntimeError(f"cannot load module: {encoding.dumps(v, None)}")

    return from_one(one)


def _stderr_write(env: Env, text: str) -> None:
    hook = env[0].stderr
    if hook is not None:
        hook(text)
    else:
        sys.stderr.write(text)


@builtin("debug", 0, kind="special", effect="logging")
def _sp_debug0(c: Compiler, args: list[Code], node: ast.Call) -> Code:
    from workload_map.jq import encoding

    def one(v: Any, env: Env) -> Any:
        _stderr_write(env, encoding.dumps(["DEBUG:", v], None) + "\n")
        return v

    return from_one(one)


@builtin("debug", 1, kind="special", effect="logging")
def _sp_debug1(c: Compiler, args: list[Code], node: ast.Call) -> Code:
    from workload_map.jq import encoding

    msg = args[0]

    def run(v: Any, env: Env) -> Iterator[Any]:
        for m in msg.run(v, env):
            _stderr_write(env, encoding.dumps(["DEBUG:", m], None) + "\n")
        yield v

    return Code(run)


@builtin("stderr", 0, kind="special", effect="logging")
def _sp_stderr(c: Compiler, args: list[Code], node: ast.Call) -> Code:
    from workload_map.jq import encoding

    def one(v: Any, env: Env) -> Any:
        # gojq: strings raw, other values as compact JSON, no newline
        _stderr_write(env, v if type(v) is str else encoding.dumps(v, None))
        return v

    return from_one(one)


@builtin("tostream", 0, kind="special")
def _sp_tostream(c: Compiler, args: list[Code], node: ast.Call) -> Code:
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


@builtin("sub", 3, kind="special")
def _sp_sub(c: Compiler, args: list[Code], node: ast.Call) -> Code:
    """``sub($re; replacement; $flags)``; one output per combination of replacement outputs,
    the last match's replacement varying slowest (gojq's order)."""
    re_code, replacement, flags_code = args
    match = registry.native("_match", 3)  # the regex group loads with the first sub
    capture = registry.native("_capture", 0)
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
