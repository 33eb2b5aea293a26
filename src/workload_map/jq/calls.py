"""Calls: jq-defined functions (with tail calls), filter parameters and value natives."""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterable, Iterator
from typing import Any

from workload_map.jq.closures import (
    BIG_CONTAINER,
    BIG_TEXT,
    NOTHING,
    Code,
    Env,
    FuncInfo,
    Path,
    TailCall,
    annotate,
    charge,
    costly,
    from_one,
    run_tail,
    tick,
)
from workload_map.jq.errors import JqError, JqLimitError


def param_call(slot: int) -> Code:
    def run(v: Any, env: Env) -> Iterable[Any]:
        code, cenv = env[slot]
        return code.run(v, cenv)  # type: ignore[no-any-return]

    def paths(v: Any, p: Path | None, env: Env) -> Iterable[tuple[Any, Path | None]]:
        code, cenv = env[slot]
        return code.paths(v, p, cenv)  # type: ignore[no-any-return]

    return Code(run, None, paths)


class _Shield(Exception):
    """The exception a deep call's frame handles while the call runs (``func_call``).

    CPython 3.11 finalises a suspended generator that an unwinding frame drops (a call's
    ``make_env``, the source of an ``as`` or of a pipe) by raising GeneratorExit in it, and
    raising looks for the exception being handled by walking the thread's stack of running
    generators up to the nearest one inside an ``except`` block. Through N nested jq calls none
    was, so an error raised N calls deep cost O(N^2) to propagate (a deadline error 20 000 calls
    deep: 24 s past a 0.3 s deadline). With every call from SHIELD_DEPTH on running inside a
    handler, each walk stops at the nearest enclosing call. The depth alone cannot pick only
    every k-th call: suspended sibling calls (``range(1) as $i | f``) hold depths off the
    running chain. The marker keeps no traceback (it would keep the frame alive in a cycle)
    and no chain of earlier markers, so an error raised inside links to one marker at most.
    Raised fresh by each call: one shared instance would carry other threads' tracebacks."""


#: calls nested this deep or deeper run inside a handler (shallower stacks unwind cheaply)
SHIELD_DEPTH = 64


def func_call(info: FuncInfo, args: list[Code], offset: int) -> Code:
    n_def = info.n_def
    params = info.params
    value_params = [i for i, prm in enumerate(params) if prm.startswith("$")]

    def make_env(v: Any, env: Env) -> Iterator[Env]:
        base = env[:n_def] + tuple((a, env) for a in args)
        if not value_params:
            yield base
            return

        def rec(i: int, acc: Env) -> Iterator[Env]:
            if i == len(value_params):
                yield acc
                return
            for x in args[value_params[i]].run(v, env):
                yield from rec(i + 1, (*acc, x))

        yield from rec(0, base)

    def run(v: Any, env: Env) -> Iterator[Any]:
        ctx = env[0]
        ctx.depth += 1
        try:
            if ctx.depth > ctx.max_depth:
                raise JqLimitError(f"maximum depth of {ctx.max_depth} nested calls exceeded")
            ctx.ticks -= 1
            if ctx.ticks <= 0:
                ctx.check()
            body = info.body
            assert body is not None
            call: TailCall | None
            if ctx.depth >= SHIELD_DEPTH:
                # the loops below, inside a handler (see _Shield); not a helper generator:
                # each frame per nested call costs jq depth on the deep stack
                try:
                    raise _Shield
                except _Shield as mark:
                    mark.__traceback__ = mark.__context__ = None
                    if value_params or body.tail is None:
                        for new_env in make_env(v, env):
                            yield from body.run(v, new_env)
                        return
                    call = (info, v, env[:n_def] + tuple((a, env) for a in args))
                    while call is not None:
                        callee, cv, cenv = call
                        cbody = callee.body
                        assert cbody is not None
                        call = yield from run_tail(cbody, cv, cenv)
                        ctx.ticks -= 1
                        if ctx.ticks <= 0:
                            ctx.check()
                    return
            if value_params or body.tail is None:
                for new_env in make_env(v, env):
                    yield from body.run(v, new_env)
                return
            call = (info, v, env[:n_def] + tuple((a, env) for a in args))
            while call is not None:
                callee, cv, cenv = call
                cbody = callee.body
                assert cbody is not None
                call = yield from run_tail(cbody, cv, cenv)
                ctx.ticks -= 1
                if ctx.ticks <= 0:
                    ctx.check()
        finally:
            ctx.depth -= 1

    def tail(v: Any, env: Env) -> Generator[Any, None, TailCall | None]:
        if value_params:
            yield from run(v, env)
            return None
        return (info, v, env[:n_def] + tuple((a, env) for a in args))

    def paths(v: Any, p: Path | None, env: Env) -> Iterator[tuple[Any, Path | None]]:
        ctx = env[0]
        ctx.depth += 1
        try:
            if ctx.depth > ctx.max_depth:
                raise JqLimitError(f"maximum depth of {ctx.max_depth} nested calls exceeded")
            tick(ctx)
            body = info.body
            assert body is not None
            if ctx.depth < SHIELD_DEPTH:
                for new_env in make_env(v, env):
                    yield from body.paths(v, p, new_env)
                return
            try:
                raise _Shield
            except _Shield as mark:
                mark.__traceback__ = mark.__context__ = None
                for new_env in make_env(v, env):
                    yield from body.paths(v, p, new_env)
        finally:
            ctx.depth -= 1

    return Code(run, None, paths, tail=tail)


def at_call_site(code: Code, offset: int) -> Code:
    """Errors raised inside a builtin.jq function point at the call in the user's program."""
    c_run, c_paths = code.run, code.paths

    def run(v: Any, env: Env) -> Iterator[Any]:
        try:
            yield from c_run(v, env)
        except JqError as e:
            annotate(e, offset)
            raise

    def paths(v: Any, p: Path | None, env: Env) -> Iterator[tuple[Any, Path | None]]:
        try:
            yield from c_paths(v, p, env)
        except JqError as e:
            annotate(e, offset)
            raise

    return Code(run, None, paths)


def takes_meter(fn: Callable[..., Any]) -> bool:
    """Whether a native counts its own work as it goes: it takes the evaluation's context as
    its keyword argument ``meter`` (``meter.Meter``: serialisers, sorts, formats)."""
    kw = getattr(fn, "__kwdefaults__", None)
    return isinstance(kw, dict) and "meter" in kw


def native_call(fn: Callable[..., Any], args: list[Code], offset: int, stream: bool) -> Code:
    if takes_meter(fn):
        return _metered_call(fn, args, offset, stream)
    n = len(args)
    if n == 0:
        if stream:

            def run0s(v: Any, env: Env) -> Iterator[Any]:
                ctx = env[0]
                try:
                    for x in fn(v):
                        tick(ctx)
                        yield x
                except JqError as e:
                    annotate(e, offset)
                    raise

            return Code(run0s)

        def one0(v: Any, env: Env) -> Any:
            try:
                out = fn(v)
            except JqError as e:
                annotate(e, offset)
                raise
            # costly() inlined: `length`, `type`, `keys` of small values are the common case
            tv = type(v)
            to = type(out)
            if (
                ((tv is list or tv is dict) and len(v) > BIG_CONTAINER)
                or (to is str and len(out) > BIG_TEXT)
                or ((to is list or to is dict) and len(out) > BIG_CONTAINER)
            ):
                charge(env[0], v, out)
            return out

        return from_one(one0)
    if not stream and all(a.one is not None for a in args):
        ones = [a.one for a in args]
        if n == 1:
            a1 = ones[0]
            assert a1 is not None
            if args[0].const is not NOTHING:
                c = args[0].const

                def one_c(v: Any, env: Env) -> Any:
                    try:
                        out = fn(v, c)
                    except JqError as e:
                        annotate(e, offset)
                        raise
                    if costly(v, out):
                        charge(env[0], v, out)
                    return out

                return from_one(one_c)

            def one1(v: Any, env: Env) -> Any:
                try:
                    out = fn(v, a1(v, env))
                except JqError as e:
                    annotate(e, offset)
                    raise
                if costly(v, out):
                    charge(env[0], v, out)
                return out

            return from_one(one1)

        def one_n(v: Any, env: Env) -> Any:
            try:
                vals = [o(v, env) for o in reversed(ones)]  # type: ignore[misc]
                vals.reverse()
                out = fn(v, *vals)
            except JqError as e:
                annotate(e, offset)
                raise
            if costly(v, out):
                charge(env[0], v, out)
            return out

        return from_one(one_n)

    def combos(v: Any, env: Env) -> Iterator[list[Any]]:
        # gojq evaluates the last argument in the outermost loop
        def rec(i: int) -> Iterator[list[Any]]:
            if i < 0:
                yield []
                return
            for x in args[i].run(v, env):
                for rest in rec(i - 1):
                    yield [*rest, x]

        return rec(n - 1)

    def run(v: Any, env: Env) -> Iterator[Any]:
        ctx = env[0]
        try:
            for vals in combos(v, env):
                if stream:
                    for x in fn(v, *vals):
                        tick(ctx)
                        yield x
                else:
                    out = fn(v, *vals)
                    if costly(v, out):
                        charge(ctx, v, out)
                    else:
                        tick(ctx)
                    yield out
        except JqError as e:
            annotate(e, offset)
            raise

    return Code(run)


def _metered_call(fn: Callable[..., Any], args: list[Code], offset: int, stream: bool) -> Code:
    """``native_call`` of a native that counts its own work on the evaluation's context."""
    if not stream and not args:

        def one0(v: Any, env: Env) -> Any:
            try:
                return fn(v, meter=env[0])
            except JqError as e:
                annotate(e, offset)
                raise

        return from_one(one0)
    if not stream and all(a.one is not None for a in args):
        ones = [a.one for a in args]

        def one_n(v: Any, env: Env) -> Any:
            try:
                vals = [o(v, env) for o in reversed(ones)]  # type: ignore[misc]
                vals.reverse()
                return fn(v, *vals, meter=env[0])
            except JqError as e:
                annotate(e, offset)
                raise

        return from_one(one_n)

    def combos(v: Any, env: Env) -> Iterator[list[Any]]:
        # gojq evaluates the last argument in the outermost loop
        def rec(i: int) -> Iterator[list[Any]]:
            if i < 0:
                yield []
                return
            for x in args[i].run(v, env):
                for rest in rec(i - 1):
                    yield [*rest, x]

        return rec(len(args) - 1)

    def run(v: Any, env: Env) -> Iterator[Any]:
        ctx = env[0]
        try:
            for vals in combos(v, env):
                if stream:
                    for x in fn(v, *vals, meter=ctx):
                        tick(ctx)
                        yield x
                else:
                    tick(ctx)
                    yield fn(v, *vals, meter=ctx)
        except JqError as e:
            annotate(e, offset)
            raise

    return Code(run)
