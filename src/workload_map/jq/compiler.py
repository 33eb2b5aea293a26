"""Compile a jq tree into Python closures: no tree walking while a program runs.

Every node becomes a ``Code`` with three entry points:

* ``run(v, env)`` — an iterable of the node's outputs for input ``v``;
* ``one(v, env)`` — set only for nodes that always produce exactly one output (field chains,
  arithmetic on such nodes, literals, single-valued natives): the hot path, no generator;
* ``paths(v, p, env)`` — path mode: pairs ``(value, path)`` where ``path`` is a tuple, or
  ``None`` when the value was computed rather than found (gojq's "intact" check).

``env`` is a tuple: slot 0 is the run's ``Ctx`` (deadline, depth, hooks), the other slots hold
variables and closures, laid out at compile time. Functions are resolved as gojq does: local
definitions, then the compiler's own closure builtins and ``builtin.jq`` (compiled lazily, once
per process), then value natives.

Chains (``a | b | …``, ``a, b, …``, ``1 + 2 + …``, ``a and b and …``, ``a // b // …``, long suffix
chains) are compiled from flat lists, never by recursion along the chain, and run without one
Python frame per link: comma and operator chains loop, pipes and ``//`` fold into balanced trees.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import os
import sys
import threading
import time
from collections.abc import Callable, Generator, Iterable, Iterator
from typing import Any

from workload_map.jq import ast
from workload_map.jq import values as jv
from workload_map.jq.builtins.native import (
    NATIVES,
    STREAM_NATIVES,
    Allocator,
    delpaths,
    setpath,
)
from workload_map.jq.errors import (
    JqBreak,
    JqCompileError,
    JqError,
    JqHaltError,
    JqLimitError,
    JqRuntimeError,
)

__all__ = ["Code", "Ctx", "compile_program", "compile_tree"]

Env = tuple[Any, ...]
Path = tuple[Any, ...]
Run = Callable[[Any, Env], Iterable[Any]]
One = Callable[[Any, Env], Any]
PathRun = Callable[[Any, "Path | None", Env], Iterable[tuple[Any, "Path | None"]]]

MAX_ARRAY_LENGTH = 4_000_000  # memory guard for collected arrays (`[range(1e9)]`)
# recurse/while/until run on explicit stacks: one entry per level of the jq recursion
_MAX_STACK = 200_000
_TICKS = 512
_label_ids = itertools.count(1)
_NOTHING: Any = object()


class Ctx:
    """Per-evaluation state: deadline, call depth, hooks."""

    __slots__ = ("deadline", "depth", "env", "max_depth", "stderr", "ticks", "timeout")

    def __init__(
        self,
        timeout: float | None,
        max_depth: int,
        stderr: Callable[[str], None] | None = None,
    ) -> None:
        self.timeout = timeout
        self.deadline = (time.monotonic() + timeout) if timeout is not None else None
        self.depth = 0
        self.max_depth = max_depth
        self.ticks = _TICKS
        self.stderr = stderr
        self.env: dict[str, str] | None = None

    def check(self) -> None:
        self.ticks = _TICKS
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise JqLimitError(f"evaluation exceeded the deadline of {self.timeout:g} s")

    def environ(self) -> dict[str, str]:
        if self.env is None:
            self.env = dict(os.environ)
        return self.env


def _tick(ctx: Ctx) -> None:
    ctx.ticks -= 1
    if ctx.ticks <= 0:
        ctx.check()


def _catchable(e: JqRuntimeError) -> bool:
    return not isinstance(e, (JqLimitError, JqHaltError))


def _annotate(e: JqError, offset: int) -> None:
    # builtin.jq nodes carry offset -1: their errors take the offset of the user's call
    if e.offset is None and offset >= 0:
        e.offset = offset


def _intact(out: Any, v: Any) -> bool:
    to = type(out)
    if to is list or to is dict:
        return out is v
    if to is not type(v):
        return False
    if to is float and out != out:
        return bool(v != v)
    return bool(out == v)


def _invalid_path(v: Any) -> JqRuntimeError:
    return JqRuntimeError(f"invalid path against: {jv.type_error_preview(v)}")


def _invalid_iter_path(v: Any) -> JqRuntimeError:
    return JqRuntimeError(f"invalid path on iterating against: {jv.type_error_preview(v)}")


class Code:
    """A compiled node (see the module docstring)."""

    __slots__ = ("const", "one", "paths", "run", "tail")

    def __init__(
        self,
        run: Run,
        one: One | None = None,
        paths: PathRun | None = None,
        const: Any = _NOTHING,
        tail: Tail | None = None,
    ) -> None:
        self.run = run
        self.one = one
        self.paths: PathRun = paths if paths is not None else _value_paths(run)
        self.const = const
        # Tail-call form: yields the outputs before the node's tail position and returns the
        # pending call (function, input, env) instead of running it, so that a recursive jq
        # function loops instead of nesting generators (gojq's tail-call optimisation).
        self.tail = tail


TailCall = tuple["FuncInfo", Any, Env]
Tail = Callable[[Any, Env], Generator[Any, None, "TailCall | None"]]


def _run_tail(code: Code, v: Any, env: Env) -> Generator[Any, None, TailCall | None]:
    """Run ``code`` in tail position: its tail form when it has one."""
    if code.tail is not None:
        return (yield from code.tail(v, env))
    yield from code.run(v, env)
    return None


def _value_paths(run: Run) -> PathRun:
    """Path mode for a computing node: its outputs are paths only when they are the input."""

    def paths(v: Any, p: Path | None, env: Env) -> Iterator[tuple[Any, Path | None]]:
        for out in run(v, env):
            yield out, (p if p is not None and _intact(out, v) else None)

    return paths


def _from_one(one: One, paths: PathRun | None = None, const: Any = _NOTHING) -> Code:
    def run(v: Any, env: Env) -> tuple[Any]:
        return (one(v, env),)

    return Code(run, one, paths, const)


def _const(value: Any) -> Code:
    def one(v: Any, env: Env) -> Any:
        return value

    def run(v: Any, env: Env) -> tuple[Any]:
        return (value,)

    return Code(run, one, None, value)


_KEYED = Code(lambda v, env: (v,))  # marker: object shorthand value `.[key]`

_IDENTITY_ONE: One = lambda v, env: v  # noqa: E731


def _identity_paths(v: Any, p: Path | None, env: Env) -> tuple[tuple[Any, Path | None]]:
    return ((v, p),)


IDENTITY = Code(lambda v, env: (v,), _IDENTITY_ONE, _identity_paths)


def _empty_run(v: Any, env: Env) -> tuple[()]:
    return ()


def _empty_paths(v: Any, p: Path | None, env: Env) -> tuple[()]:
    return ()


EMPTY = Code(_empty_run, None, _empty_paths)


# --- compile-time scopes -------------------------------------------------------------------------


class FuncInfo:
    """A jq-defined function: its parameters, the env length at its definition, its body."""

    __slots__ = ("body", "builtin", "n_def", "name", "params")

    def __init__(
        self, name: str, params: tuple[str, ...], n_def: int, builtin: bool = False
    ) -> None:
        self.name = name
        self.params = params
        self.n_def = n_def
        self.builtin = builtin  # defined in builtin.jq: errors point at the call site
        self.body: Code | None = None


class Scope:
    """Persistent chain of bindings: variables (slot), functions, filter params, labels."""

    __slots__ = ("key", "kind", "parent", "size", "value")

    def __init__(self, parent: Scope | None, kind: str, key: Any, value: Any, size: int) -> None:
        self.parent = parent
        self.kind = kind  # "var" | "func" | "param" | "label" | "root"
        self.key = key
        self.value = value
        self.size = size

    def bind_var(self, name: str) -> Scope:
        return Scope(self, "var", name, self.size, self.size + 1)

    def bind_label(self, name: str) -> Scope:
        return Scope(self, "label", name, self.size, self.size + 1)

    def bind_param(self, name: str) -> Scope:
        return Scope(self, "param", name, self.size, self.size + 1)

    def bind_func(self, info: FuncInfo) -> Scope:
        return Scope(self, "func", (info.name, len(info.params)), info, self.size)

    def lookup(self, kind: str, key: Any) -> Any:
        s: Scope | None = self
        while s is not None:
            if s.kind == kind and s.key == key:
                return s.value
            s = s.parent
        return None

    def lookup_callable(self, name: str, arity: int) -> tuple[str, Any] | None:
        s: Scope | None = self
        while s is not None:
            if s.kind == "func" and s.key == (name, arity):
                return "func", s.value
            if arity == 0 and s.kind == "param" and s.key == name:
                return "param", s.value
            s = s.parent
        return None


def _root_scope(variables: tuple[str, ...]) -> Scope:
    scope = Scope(None, "root", None, None, 1)
    for name in variables:
        scope = scope.bind_var(name.lstrip("$"))
    return scope


# --- the compiler --------------------------------------------------------------------------------


# Calls that cannot loop, recurse or read the run's context (besides their arguments).
_CTX_FREE_CALLS = frozenset(
    {("empty", 0), ("not", 0), ("select", 1), ("map", 1), ("path", 1), ("getpath", 1)}
    | {("any", n) for n in range(3)}
    | {("all", n) for n in range(3)}
    | {("first", 1), ("isempty", 1)}
)


class Compiler:
    def __init__(self, source: str | None) -> None:
        self.source = source
        # whether evaluation can loop, recurse or read the environment (needs its own Ctx)
        self.needs_ctx = False

    def error(self, message: str, node: Any) -> JqCompileError:
        return JqCompileError(message, offset=getattr(node, "offset", None), program=self.source)

    def compile(self, node: Any, scope: Scope) -> Code:
        method = _DISPATCH.get(type(node))
        if method is None:  # pragma: no cover - every parser node is dispatched
            raise self.error(f"cannot compile {type(node).__name__}", node)
        code: Code = method(self, node, scope)
        return code

    # --- simple terms ------------------------------------------------------------------------
    def c_identity(self, node: ast.Identity, scope: Scope) -> Code:
        return IDENTITY

    def c_literal(self, node: ast.Literal, scope: Scope) -> Code:
        return _const(node.value)

    def c_var(self, node: ast.Var, scope: Scope) -> Code:
        name = node.name
        slot = scope.lookup("var", name)
        if slot is None:
            if name == "ENV":
                self.needs_ctx = True

                def env_one(v: Any, env: Env) -> Any:
                    return dict(env[0].environ())

                return _from_one(env_one)
            raise self.error(f"variable not defined: ${name}", node)

        def one(v: Any, env: Env) -> Any:
            return env[slot]

        return _from_one(one)

    def c_format(self, node: ast.Format, scope: Scope) -> Code:
        fn = NATIVES.get((node.name, 0)) or _missing_format(node.name)
        offset = node.offset

        def one(v: Any, env: Env) -> Any:
            try:
                return fn(v)
            except JqError as e:
                _annotate(e, offset)
                raise

        return _from_one(one)

    def c_str(self, node: ast.Str, scope: Scope) -> Code:
        if node.fmt is not None:
            fmt = NATIVES.get((node.fmt, 0)) or _missing_format(node.fmt)
        else:
            fmt = NATIVES[("tostring", 0)]
        parts: list[Any] = []
        for part in node.parts:
            parts.append(part if isinstance(part, str) else self.compile(part, scope))
        if all(isinstance(p, str) or p.one is not None for p in parts):
            ones = [p if isinstance(p, str) else p.one for p in parts]

            def one(v: Any, env: Env) -> Any:
                vals = [x if isinstance(x, str) else fmt(x(v, env)) for x in reversed(ones)]
                vals.reverse()
                return "".join(vals)

            return _from_one(one)

        def run(v: Any, env: Env) -> Iterator[Any]:
            def rec(i: int) -> Iterator[list[str]]:
                # last interpolation varies slowest (gojq folds left with "+")
                if i < 0:
                    yield []
                    return
                part = parts[i]
                if isinstance(part, str):
                    for rest in rec(i - 1):
                        rest.append(part)
                        yield rest
                    return
                for x in part.run(v, env):
                    s = fmt(x)
                    for rest in rec(i - 1):
                        rest.append(s)
                        yield rest

            for pieces in rec(len(parts) - 1):
                yield "".join(pieces)

        return Code(run)

    def c_recurse_all(self, node: ast.RecurseAll, scope: Scope) -> Code:
        self.needs_ctx = True
        return Code(_recurse_children_run, None, _recurse_children_paths)

    # --- suffixes ----------------------------------------------------------------------------
    def _const_key_chain(self, node: Any) -> tuple[Any, list[Any], list[int]] | None:
        """``.a.b[0]``: the base node, the constant keys (strings and ints) on top of it and
        the offset of each key's term."""
        keys: list[Any] = []
        offsets: list[int] = []
        while isinstance(node, ast.Index) and isinstance(node.key, ast.Literal):
            k = node.key.value
            if node.key.kind == "string" or (type(k) is int and k >= 0):
                keys.append(k)
                offsets.append(node.offset)
                node = node.target
            else:
                break
        if not keys:
            return None
        keys.reverse()
        offsets.reverse()
        return node, keys, offsets

    def c_index(self, node: ast.Index, scope: Scope) -> Code:
        chain = self._const_key_chain(node)
        offset = node.offset
        if chain is not None:
            base_node, keys, offsets = chain
            if type(base_node) in _SUFFIX_NODES and _long_suffix_chain(base_node):
                base = self._suffix_chain(base_node, scope)
            else:
                base = self.compile(base_node, scope)
            return _index_chain(base, keys, offsets)
        target = self.compile(node.target, scope)
        key = self.compile(node.key, scope)
        t_one, k_one = target.one, key.one
        t_run, k_run = target.run, key.run
        t_paths = target.paths
        index = jv.index

        if t_one is not None and k_one is not None:

            def one(v: Any, env: Env) -> Any:
                try:
                    k = k_one(v, env)  # gojq evaluates the key first
                    return index(t_one(v, env), k)
                except JqError as e:
                    _annotate(e, offset)
                    raise

            def paths1(v: Any, p: Path | None, env: Env) -> Iterator[tuple[Any, Path | None]]:
                k = k_one(v, env)
                for t, tp in t_paths(v, p, env):
                    yield _index_path(t, tp, k, offset)

            return _from_one(one, paths1)

        def run(v: Any, env: Env) -> Iterator[Any]:
            try:
                for k in k_run(v, env):
                    for t in t_run(v, env):
                        yield index(t, k)
            except JqError as e:
                _annotate(e, offset)
                raise

        def paths(v: Any, p: Path | None, env: Env) -> Iterator[tuple[Any, Path | None]]:
            for k in k_run(v, env):
                for t, tp in t_paths(v, p, env):
                    yield _index_path(t, tp, k, offset)

        return Code(run, None, paths)

    def _suffix_chain(self, node: Any, scope: Scope) -> Code:
        """A long chain of suffixes (``.[]?.a[0][]…``) as a pipe of one-suffix stages, compiled
        in a loop and folded balanced (see ``_pipe_all``)."""
        stages: list[Code] = []
        while True:
            step = _suffix_step(node)
            if step is None:
                break
            kind, below = step
            if kind == "keys":
                _base, keys, offsets = self._const_key_chain(node)  # type: ignore[misc]
                stages.append(_index_chain(IDENTITY, keys, offsets))
            elif kind == "iterate":
                stages.append(
                    self.c_iterate(ast.Iterate(ast.Identity(), offset=node.offset), scope)
                )
            else:  # a suffix guarded by `?`
                last = self.compile(_with_identity_target(node.target), scope)
                stages.append(_try(last, None))
            node = below
        stages.append(self.compile(node, scope))
        stages.reverse()
        return _pipe_all(stages)

    def c_slice(self, node: ast.Slice, scope: Scope) -> Code:
        target = self.compile(node.target, scope)
        start = self.compile(node.start, scope) if node.start is not None else _const(None)
        end = self.compile(node.end, scope) if node.end is not None else _const(None)
        offset = node.offset
        slice_ = jv.slice

        def run(v: Any, env: Env) -> Iterator[Any]:
            try:
                for s in start.run(v, env):
                    for e in end.run(v, env):
                        for t in target.run(v, env):
                            yield slice_(t, s, e)
            except JqError as err:
                _annotate(err, offset)
                raise

        def paths(v: Any, p: Path | None, env: Env) -> Iterator[tuple[Any, Path | None]]:
            for s in start.run(v, env):
                for e in end.run(v, env):
                    for t, tp in target.paths(v, p, env):
                        try:
                            w = slice_(t, s, e)
                        except JqError as err:
                            _annotate(err, offset)
                            raise
                        if tp is None:
                            raise _invalid_path(t)
                        yield w, (*tp, {"start": s, "end": e})

        if target.one is not None and start.one is not None and end.one is not None:
            t1, s1, e1 = target.one, start.one, end.one

            def one(v: Any, env: Env) -> Any:
                try:
                    s = s1(v, env)
                    e = e1(v, env)
                    return slice_(t1(v, env), s, e)
                except JqError as err:
                    _annotate(err, offset)
                    raise

            return _from_one(one, paths)
        return Code(run, None, paths)

    def c_iterate(self, node: ast.Iterate, scope: Scope) -> Code:
        if type(node.target) in _SUFFIX_NODES and _long_suffix_chain(node):
            return self._suffix_chain(node, scope)
        target = self.compile(node.target, scope)
        offset = node.offset
        iterate = jv.iterate

        if target.one is not None:
            t1 = target.one

            def run1(v: Any, env: Env) -> Iterable[Any]:
                try:
                    return iterate(t1(v, env))
                except JqError as e:
                    _annotate(e, offset)
                    raise

            run: Run = run1
        else:
            t_run = target.run

            def run_many(v: Any, env: Env) -> Iterator[Any]:
                for t in t_run(v, env):
                    try:
                        it = iterate(t)
                    except JqError as e:
                        _annotate(e, offset)
                        raise
                    yield from it

            run = run_many

        def paths(v: Any, p: Path | None, env: Env) -> Iterator[tuple[Any, Path | None]]:
            for t, tp in target.paths(v, p, env):
                yield from _iterate_paths(t, tp, offset)

        return Code(run, None, paths)

    def c_optional(self, node: ast.Optional, scope: Scope) -> Code:
        # gojq: `T.key?` / `T[]?` guards only the last suffix, applied to T's outputs.
        if type(node.target) in _SUFFIX_NODES and _long_suffix_chain(node):
            return self._suffix_chain(node, scope)
        target = node.target
        if (
            not node.guards_all
            and isinstance(target, (ast.Index, ast.Slice, ast.Iterate))
            and not isinstance(target.target, ast.Identity)
        ):
            base = self.compile(target.target, scope)
            last = self.compile(_with_identity_target(target), scope)
            return _pipe(base, _try(last, None))
        return _try(self.compile(target, scope), None)

    def c_try(self, node: ast.Try, scope: Scope) -> Code:
        body = self.compile(node.body, scope)
        handler = self.compile(node.catch, scope) if node.catch is not None else None
        return _try(body, handler)

    # --- constructors ------------------------------------------------------------------------
    def c_array(self, node: ast.Array, scope: Scope) -> Code:
        if node.body is None:

            def empty_one(v: Any, env: Env) -> Any:
                return []

            return _from_one(empty_one)
        items = _flatten_comma(node.body)
        if len(items) > 1:
            codes = [self.compile(x, scope) for x in items]
            if all(c.one is not None for c in codes):
                ones = [c.one for c in codes]

                def one_n(v: Any, env: Env) -> Any:
                    return [o(v, env) for o in ones]  # type: ignore[misc]

                return _from_one(one_n)
            body = _comma(codes)
        else:
            body = self.compile(node.body, scope)
        b_run = body.run
        if body.one is not None:
            b1 = body.one

            def one1(v: Any, env: Env) -> Any:
                return [b1(v, env)]

            return _from_one(one1)

        def one(v: Any, env: Env) -> Any:
            out: list[Any] = []
            append = out.append
            ctx = env[0]
            n = 0
            for x in b_run(v, env):
                append(x)
                n += 1
                if n & 1023 == 0:
                    ctx.check()
                    if n > MAX_ARRAY_LENGTH:
                        raise JqLimitError(
                            f"array too large: more than {MAX_ARRAY_LENGTH} elements"
                        )
            return out

        return _from_one(one)

    def c_object(self, node: ast.Object, scope: Scope) -> Code:
        entries: list[tuple[Code, Code]] = []
        for e in node.entries:
            key_node = e.key
            if e.computed:
                key = self.compile(key_node, scope)
            elif isinstance(key_node, ast.Var):
                if e.value is None:
                    key = _const(key_node.name)
                else:
                    key = self.compile(key_node, scope)
            else:
                key = self.compile(key_node, scope)
            if e.value is not None:
                val = self.compile(e.value, scope)
            elif isinstance(key_node, ast.Var):
                val = self.compile(key_node, scope)
            elif isinstance(key_node, ast.Literal):
                val = _index_chain(IDENTITY, [key_node.value], [key_node.offset])
            else:
                # {"\(x)"}: the value is .[key] of each key
                val = _KEYED
            entries.append((key, val))
        offset = node.offset

        def check_key(k: Any) -> str:
            if type(k) is not str:
                raise JqRuntimeError(
                    f"expected a string for object key but got: {jv.type_error_preview(k)}",
                    offset=offset,
                )
            return k

        if all(k.one is not None and v.one is not None and v is not _KEYED for k, v in entries):
            const_keys = [k.const for k, _ in entries]
            if all(type(k) is str for k in const_keys):
                pairs = [(k, v.one) for k, (_, v) in zip(const_keys, entries, strict=True)]

                def one_const(v: Any, env: Env) -> Any:
                    return {k: f(v, env) for k, f in pairs}  # type: ignore[misc]

                return _from_one(one_const)
            ones = [(k.one, v.one) for k, v in entries]

            def one(v: Any, env: Env) -> Any:
                out: dict[str, Any] = {}
                for kf, vf in ones:
                    k = check_key(kf(v, env))  # type: ignore[misc]
                    out[k] = vf(v, env)  # type: ignore[misc]
                return out

            return _from_one(one)

        def run(v: Any, env: Env) -> Iterator[Any]:
            def rec(i: int, acc: dict[str, Any]) -> Iterator[dict[str, Any]]:
                if i == len(entries):
                    yield dict(acc)
                    return
                kc, vc = entries[i]
                for k in kc.run(v, env):
                    k = check_key(k)
                    for x in (jv.index(v, k),) if vc is _KEYED else vc.run(v, env):
                        acc2 = dict(acc)
                        acc2[k] = x
                        yield from rec(i + 1, acc2)

            return rec(0, {})

        return Code(run)

    # --- operators ---------------------------------------------------------------------------
    def c_unary(self, node: ast.Unary, scope: Scope) -> Code:
        operand = self.compile(node.operand, scope)
        fn = jv.negate if node.op == "-" else NATIVES[("_plus", 0)]
        if node.op == "-" and operand.const is not _NOTHING and jv.is_number(operand.const):
            return _const(jv.negate(operand.const))
        return _map_code(operand, fn, node.offset)

    def c_pipe(self, node: ast.Pipe, scope: Scope) -> Code:
        # a pipe chain is compiled as a list (no recursion along the chain)
        items = _flatten(node, ast.Pipe)
        codes: list[Code] = []
        i, n = 0, len(items)
        while i < n:
            if i + 1 < n:
                entries = self._entries_field(items[i], items[i + 1], scope)
                if entries is not None:
                    codes.append(entries)
                    i += 2
                    continue
            codes.append(self.compile(items[i], scope))
            i += 1
        return _pipe_all(codes)

    def _entries_field(self, left: Any, right: Any, scope: Scope) -> Code | None:
        """``to_entries[] | .key`` (or ``.value``) without building the entry objects."""
        if not (
            isinstance(left, ast.Iterate)
            and isinstance(left.target, ast.Call)
            and left.target.name == "to_entries"
            and not left.target.args
            and isinstance(right, ast.Index)
            and isinstance(right.target, ast.Identity)
            and isinstance(right.key, ast.Literal)
            and right.key.value in ("key", "value")
            and scope.lookup_callable("to_entries", 0) is None
        ):
            return None
        to_entries = NATIVES[("to_entries", 0)]
        want_key = right.key.value == "key"
        offset = left.target.offset

        def run(v: Any, env: Env) -> Iterable[Any]:
            if type(v) is dict:
                keys = sorted(v)
                return keys if want_key else [v[k] for k in keys]
            try:
                items = to_entries(v)
            except JqError as e:
                _annotate(e, offset)
                raise
            field = "key" if want_key else "value"
            return [item[field] for item in items]

        generic = _pipe(self.compile(left, scope), self.compile(right, scope))
        return Code(run, None, generic.paths)

    def c_comma(self, node: ast.Comma, scope: Scope) -> Code:
        return _comma([self.compile(x, scope) for x in _flatten(node, ast.Comma)])

    def c_alt(self, node: ast.Alt, scope: Scope) -> Code:
        # `a // b // c` nests to the right; `//` is associative, so long chains fold balanced
        items: list[Any] = []
        n: Any = node
        while isinstance(n, ast.Alt):
            items.append(n.left)
            n = n.right
        items.append(n)
        return _alt_all([self.compile(x, scope) for x in items])

    def c_binary(self, node: ast.Binary, scope: Scope) -> Code:
        # `1 + 2 - 3 …` and `a and b and …` nest to the left: walk the spine in a loop
        group = _OP_GROUP[node.op]
        operands: list[Any] = []
        ops: list[tuple[str, int]] = []
        n: Any = node
        while isinstance(n, ast.Binary) and _OP_GROUP[n.op] == group:
            operands.append(n.right)
            ops.append((n.op, n.offset))
            n = n.left
        operands.append(n)
        operands.reverse()
        ops.reverse()
        codes = [self.compile(x, scope) for x in operands]
        if len(codes) == 2:
            return _binary(node.op, codes[0], codes[1], node.offset)
        if group == "and" or group == "or":
            return _logic_chain(group == "and", codes)
        return _arith_chain(codes, ops)

    def c_update(self, node: ast.Update, scope: Scope) -> Code:
        lhs = self.compile(node.left, scope)
        rhs = self.compile(node.right, scope)
        op = node.op
        offset = node.offset
        lhs_paths = lhs.paths

        def all_paths(v: Any, env: Env) -> Iterator[list[Any]]:
            for x, p in lhs_paths(v, (), env):
                if p is None:
                    raise _invalid_path(x)
                yield list(p)

        if op == "=":
            const_path = _constant_path(node.left)
            if const_path is not None:
                # gojq turns `.a[0] = x` into `setpath(["a", 0]; x)` (and its error texts)
                fixed = const_path

                def run_const(v: Any, env: Env) -> Iterator[Any]:
                    for x in rhs.run(v, env):
                        yield _setpath(v, fixed, x, offset, Allocator())

                return Code(run_const)

            def run_assign(v: Any, env: Env) -> Iterator[Any]:
                for x in rhs.run(v, env):
                    acc = v
                    allocator = Allocator()
                    for p in all_paths(v, env):
                        acc = _setpath(acc, p, x, offset, allocator)
                    yield acc

            return Code(run_assign)
        if op == "|=":

            def run_modify(v: Any, env: Env) -> Iterator[Any]:
                yield _modify(v, env, all_paths, rhs.run, offset)

            return Code(run_modify)
        fn = _BINOPS.get(op[:-1])

        def run_arith(v: Any, env: Env) -> Iterator[Any]:
            for x in rhs.run(v, env):
                if fn is None:  # "//="

                    def upd(old: Any, env: Env, x: Any = x) -> tuple[Any]:
                        return (x if old is None or old is False else old,)

                else:

                    def upd(old: Any, env: Env, x: Any = x) -> tuple[Any]:
                        try:
                            return (fn(old, x),)
                        except JqError as e:
                            _annotate(e, offset)
                            raise

                yield _modify(v, env, all_paths, upd, offset)

        return Code(run_arith)

    # --- control -----------------------------------------------------------------------------
    def c_if(self, node: ast.If, scope: Scope) -> Code:
        branches = [(node.cond, node.then), *node.elifs]
        otherwise = self.compile(node.otherwise, scope) if node.otherwise is not None else IDENTITY
        code = otherwise
        for cond_node, then_node in reversed(branches):
            code = _if(self.compile(cond_node, scope), self.compile(then_node, scope), code)
        return code

    def c_reduce(self, node: ast.Reduce, scope: Scope) -> Code:
        self.needs_ctx = True
        source = self.compile(node.source, scope)
        binder, inner = self.pattern_binder([node.pattern], scope, node)
        init = self.compile(node.init, scope)
        update = self.compile(node.update, inner)
        u_run = update.run

        def run(v: Any, env: Env) -> Iterator[Any]:
            ctx = env[0]
            for acc in init.run(v, env):
                for x in source.run(v, env):
                    for env2 in binder(x, env):
                        ctx.ticks -= 1
                        if ctx.ticks <= 0:
                            ctx.check()
                        last = _NOTHING
                        for y in u_run(acc, env2):
                            last = y
                        if last is not _NOTHING:
                            acc = last
                yield acc

        return Code(run)

    def c_foreach(self, node: ast.Foreach, scope: Scope) -> Code:
        self.needs_ctx = True
        source = self.compile(node.source, scope)
        binder, inner = self.pattern_binder([node.pattern], scope, node)
        init = self.compile(node.init, scope)
        update = self.compile(node.update, inner)
        extract = self.compile(node.extract, inner) if node.extract is not None else None

        def run(v: Any, env: Env) -> Iterator[Any]:
            ctx = env[0]
            for acc in init.run(v, env):
                for x in source.run(v, env):
                    for env2 in binder(x, env):
                        _tick(ctx)
                        for y in update.run(acc, env2):
                            acc = y
                            if extract is None:
                                yield y
                            else:
                                yield from extract.run(y, env2)

        return Code(run)

    def c_bind(self, node: ast.Bind, scope: Scope) -> Code:
        source = self.compile(node.source, scope)
        binder, inner = self.pattern_binder(list(node.patterns), scope, node)
        body = self.compile(node.body, inner)
        b_run, b_paths = body.run, body.paths
        if len(node.patterns) == 1:
            if source.one is not None and isinstance(node.patterns[0], ast.PVar):
                s1 = source.one

                def run1(v: Any, env: Env) -> Iterable[Any]:
                    return b_run(v, (*env, s1(v, env)))

                def paths1(v: Any, p: Path | None, env: Env) -> Iterable[tuple[Any, Path | None]]:
                    return b_paths(v, p, (*env, s1(v, env)))

                if body.tail is not None:
                    b_tail = body.tail

                    def tail1(v: Any, env: Env) -> Generator[Any, None, TailCall | None]:
                        return (yield from b_tail(v, (*env, s1(v, env))))

                    return Code(run1, body.one and _bind_one(body.one, s1), paths1, tail=tail1)
                if body.one is not None:
                    bo = body.one

                    def one1(v: Any, env: Env) -> Any:
                        return bo(v, (*env, s1(v, env)))

                    return _from_one(one1, paths1)
                return Code(run1, None, paths1)

            def run(v: Any, env: Env) -> Iterator[Any]:
                for x in source.run(v, env):
                    for env2 in binder(x, env):
                        yield from b_run(v, env2)

            def paths(v: Any, p: Path | None, env: Env) -> Iterator[tuple[Any, Path | None]]:
                for x in source.run(v, env):
                    for env2 in binder(x, env):
                        yield from b_paths(v, p, env2)

            return Code(run, None, paths)
        alternatives = self.alternative_binders(list(node.patterns), scope, node)

        def run_alt(v: Any, env: Env) -> Iterator[Any]:
            for x in source.run(v, env):
                last = len(alternatives) - 1
                for i, bind in enumerate(alternatives):
                    try:
                        for env2 in bind(x, env):
                            yield from b_run(v, env2)
                        break
                    except JqRuntimeError as e:
                        if not _catchable(e) or i == last:
                            raise

        return Code(run_alt)

    def c_label(self, node: ast.Label, scope: Scope) -> Code:
        inner = scope.bind_label(node.name)
        body = self.compile(node.body, inner)

        def run(v: Any, env: Env) -> Iterator[Any]:
            token = next(_label_ids)
            try:
                yield from body.run(v, (*env, token))
            except JqBreak as b:
                if b.label_id != token:
                    raise

        def paths(v: Any, p: Path | None, env: Env) -> Iterator[tuple[Any, Path | None]]:
            token = next(_label_ids)
            try:
                yield from body.paths(v, p, (*env, token))
            except JqBreak as b:
                if b.label_id != token:
                    raise

        return Code(run, None, paths)

    def c_break(self, node: ast.Break, scope: Scope) -> Code:
        slot = scope.lookup("label", node.name)
        if slot is None:
            raise self.error(f"label not defined: ${node.name}", node)

        def run(v: Any, env: Env) -> Iterator[Any]:
            raise JqBreak(env[slot])
            yield  # pragma: no cover

        def paths(v: Any, p: Path | None, env: Env) -> Iterator[tuple[Any, Path | None]]:
            raise JqBreak(env[slot])
            yield  # pragma: no cover

        return Code(run, None, paths)

    # --- functions ---------------------------------------------------------------------------
    def c_withdefs(self, node: ast.WithDefs, scope: Scope) -> Code:
        self.needs_ctx = True
        for d in node.defs:
            scope = self.define(d, scope)
        return self.compile(node.body, scope)

    def define(self, d: ast.FuncDef, scope: Scope) -> Scope:
        info = FuncInfo(d.name, d.params, scope.size)
        outer = scope.bind_func(info)
        inner = outer
        for param in d.params:
            inner = inner.bind_param(param.lstrip("$"))
        for param in d.params:
            if param.startswith("$"):
                inner = inner.bind_var(param[1:])
        info.body = self.compile(d.body, inner)
        return outer

    def c_call(self, node: ast.Call, scope: Scope) -> Code:
        name, arity = node.name, len(node.args)
        found = scope.lookup_callable(name, arity)
        if found is not None:
            kind, value = found
            if kind == "param":
                return _param_call(value)
            return self.call_func(value, node, scope)
        return self.call_global(node, scope)

    def call_global(self, node: ast.Call, scope: Scope) -> Code:
        name, arity = node.name, len(node.args)
        key = (name, arity)
        if key not in _CTX_FREE_CALLS and key not in NATIVES:
            self.needs_ctx = True
        special = SPECIALS.get(key)
        if special is not None:
            args = [self.compile(a, scope) for a in node.args]
            code: Code = special(self, args, node)
            return code
        info = _builtin_func(key)
        if info is not None:
            return self.call_func(info, node, scope)
        fn = NATIVES.get(key)
        if fn is not None:
            args = [self.compile(a, scope) for a in node.args]
            return _native_call(fn, args, node.offset, False)
        sfn = STREAM_NATIVES.get(key)
        if sfn is not None:
            args = [self.compile(a, scope) for a in node.args]
            return _native_call(sfn, args, node.offset, True)
        if key in (("input", 0), ("inputs", 0)):
            raise self.error("input(s)/0 is not allowed", node)
        raise self.error(f"function not defined: {name}/{arity}", node)

    def call_func(self, info: FuncInfo, node: ast.Call, scope: Scope) -> Code:
        args = [self.compile(a, scope) for a in node.args]
        code = _func_call(info, args, node.offset)
        if info.builtin:
            return _at_call_site(code, node.offset)
        return code

    # --- patterns ----------------------------------------------------------------------------
    def pattern_vars(self, pattern: Any, out: list[str]) -> None:
        if isinstance(pattern, ast.PVar):
            if pattern.name not in out:
                out.append(pattern.name)
        elif isinstance(pattern, ast.PArray):
            for e in pattern.elements:
                self.pattern_vars(e, out)
        else:
            for key, sub, _computed in pattern.entries:
                if isinstance(key, ast.Var) and not _computed:
                    if key.name not in out:
                        out.append(key.name)
                if sub is not None:
                    self.pattern_vars(sub, out)

    def pattern_binder(
        self, patterns: list[Any], scope: Scope, node: Any
    ) -> tuple[Callable[[Any, Env], Iterable[Env]], Scope]:
        names: list[str] = []
        for p in patterns:
            self.pattern_vars(p, names)
        inner = scope
        slots: dict[str, int] = {}
        for n in names:
            slots[n] = inner.size
            inner = inner.bind_var(n)
        if len(patterns) == 1 and isinstance(patterns[0], ast.PVar):

            def bind_simple(x: Any, env: Env) -> tuple[Env]:
                return ((*env, x),)

            return bind_simple, inner
        matcher = self.pattern_matcher(patterns[0], scope, slots)
        base = scope.size
        count = len(names)

        def bind(x: Any, env: Env) -> Iterator[Env]:
            for assigned in matcher(x, env, {}):
                values = [None] * count
                for slot, val in assigned.items():
                    values[slot - base] = val
                yield (*env, *values)

        return bind, inner

    def alternative_binders(
        self, patterns: list[Any], scope: Scope, node: Any
    ) -> list[Callable[[Any, Env], Iterable[Env]]]:
        names: list[str] = []
        for p in patterns:
            self.pattern_vars(p, names)
        slots = {n: scope.size + i for i, n in enumerate(names)}
        base = scope.size
        count = len(names)
        out: list[Callable[[Any, Env], Iterable[Env]]] = []
        for p in patterns:
            matcher = self.pattern_matcher(p, scope, slots)

            def bind(
                x: Any, env: Env, matcher: Callable[..., Iterator[dict[int, Any]]] = matcher
            ) -> Iterator[Env]:
                for assigned in matcher(x, env, {}):
                    values = [None] * count
                    for slot, val in assigned.items():
                        values[slot - base] = val
                    yield (*env, *values)

            out.append(bind)
        return out

    def pattern_matcher(
        self, pattern: Any, scope: Scope, slots: dict[str, int]
    ) -> Callable[[Any, Env, dict[int, Any]], Iterator[dict[int, Any]]]:
        """A generator of slot assignments; key queries see the variables bound so far."""
        if isinstance(pattern, ast.PVar):
            slot = slots[pattern.name]

            def m_var(x: Any, env: Env, acc: dict[int, Any]) -> Iterator[dict[int, Any]]:
                out = dict(acc)
                out[slot] = x
                yield out

            return m_var
        if isinstance(pattern, ast.PArray):
            subs = [self.pattern_matcher(e, scope, slots) for e in pattern.elements]

            def m_array(x: Any, env: Env, acc: dict[int, Any]) -> Iterator[dict[int, Any]]:
                if x is not None and type(x) is not list:
                    raise JqRuntimeError(
                        f"expected an array but got: {jv.type_error_preview(x)}",
                        offset=pattern.offset,
                    )

                def rec(i: int, acc: dict[int, Any]) -> Iterator[dict[int, Any]]:
                    if i == len(subs):
                        yield acc
                        return
                    for a in subs[i](jv.index(x, i), env, acc):
                        yield from rec(i + 1, a)

                yield from rec(0, acc)

            return m_array
        # object pattern: key queries are evaluated with the variables bound so far in scope
        entries: list[tuple[Any, Any, int | None]] = []
        for key, sub, computed in pattern.entries:
            var_slot: int | None = None
            if isinstance(key, ast.Var) and not computed:
                var_slot = slots[key.name]
                key_code = _const(key.name)
            else:
                key_code = self.compile(key, _scope_with_slots(scope, slots))
            sub_m = self.pattern_matcher(sub, scope, slots) if sub is not None else None
            entries.append((key_code, sub_m, var_slot))
        offset = pattern.offset

        def m_object(x: Any, env: Env, acc: dict[int, Any]) -> Iterator[dict[int, Any]]:
            if x is not None and type(x) is not dict:
                raise JqRuntimeError(
                    f"expected an object but got: {jv.type_error_preview(x)}", offset=offset
                )

            def rec(i: int, acc: dict[int, Any]) -> Iterator[dict[int, Any]]:
                if i == len(entries):
                    yield acc
                    return
                key_code, sub_m, var_slot = entries[i]
                full = _env_with(env, acc, scope.size, len(slots))
                for k in key_code.run(x, full):
                    if type(k) is not str:
                        raise JqRuntimeError(
                            f"expected a string for object key but got: {jv.type_error_preview(k)}",
                            offset=offset,
                        )
                    val = x.get(k) if x is not None else None
                    acc2 = acc
                    if var_slot is not None:
                        acc2 = dict(acc)
                        acc2[var_slot] = val
                    if sub_m is None:
                        yield from rec(i + 1, acc2)
                    else:
                        for a in sub_m(val, env, acc2):
                            yield from rec(i + 1, a)

            yield from rec(0, acc)

        return m_object


def _constant_path(node: Any) -> list[Any] | None:
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


def _suffix_step(node: Any) -> tuple[str, Any] | None:
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


_SUFFIX_NODES = frozenset({ast.Index, ast.Iterate, ast.Optional})


def _long_suffix_chain(node: Any, limit: int = 16) -> bool:
    """Whether ``node`` is a chain of more than ``limit`` suffixes (compiled iteratively)."""
    for _ in range(limit):
        step = _suffix_step(node)
        if step is None:
            return False
        node = step[1]
    return _suffix_step(node) is not None


def _with_identity_target(node: Any) -> Any:
    ident = ast.Identity(offset=node.offset)
    if isinstance(node, ast.Index):
        return ast.Index(ident, node.key, offset=node.offset)
    if isinstance(node, ast.Slice):
        return ast.Slice(ident, node.start, node.end, offset=node.offset)
    return ast.Iterate(ident, offset=node.offset)


def _missing_format(name: str) -> Callable[[Any], Any]:
    def fail(v: Any) -> Any:
        raise JqRuntimeError(f"format not defined: {name}")

    return fail


def _bind_one(bo: One, s1: One) -> One:
    def one(v: Any, env: Env) -> Any:
        return bo(v, (*env, s1(v, env)))

    return one


def _scope_with_slots(scope: Scope, slots: dict[str, int]) -> Scope:
    inner = scope
    for name in sorted(slots, key=slots.__getitem__):
        inner = inner.bind_var(name)
    return inner


def _env_with(env: Env, acc: dict[int, Any], base: int, count: int) -> Env:
    values = [None] * count
    for slot, val in acc.items():
        values[slot - base] = val
    return (*env, *values)


def _flatten(node: Any, kind: Any) -> list[Any]:
    """The operands of a chain of ``kind`` nodes (``Pipe``, ``Comma``), in order, iteratively."""
    items: list[Any] = []
    stack: list[Any] = [node]
    while stack:
        n: Any = stack.pop()
        if type(n) is kind:
            stack.append(n.right)
            stack.append(n.left)
        else:
            items.append(n)
    return items


def _flatten_comma(node: Any) -> list[Any]:
    return _flatten(node, ast.Comma)


def _comma(codes: list[Code]) -> Code:
    """Outputs of each code in turn (a flat loop, however long the comma chain)."""
    runs = [c.run for c in codes]
    pathss = [c.paths for c in codes]

    def run(v: Any, env: Env) -> Iterator[Any]:
        for r in runs:
            yield from r(v, env)

    def paths(v: Any, p: Path | None, env: Env) -> Iterator[tuple[Any, Path | None]]:
        for f in pathss:
            yield from f(v, p, env)

    last = codes[-1]
    if last.tail is None:
        return Code(run, None, paths)
    first_runs, last_tail = runs[:-1], last.tail

    def tail(v: Any, env: Env) -> Generator[Any, None, TailCall | None]:
        for r in first_runs:
            yield from r(v, env)
        return (yield from last_tail(v, env))

    return Code(run, None, paths, tail=tail)


def _pipe_all(codes: list[Code]) -> Code:
    """``c0 | c1 | …``. Short chains nest to the right like the tree; long ones are folded as a
    balanced tree so that running them nests only log2(n) closures or generators."""
    n = len(codes)
    if n <= 8:
        code = codes[-1]
        for c in reversed(codes[:-1]):
            code = _pipe(c, code)
        return code
    mid = n // 2
    return _pipe(_pipe_all(codes[:mid]), _pipe_all(codes[mid:]))


def _alt_all(codes: list[Code]) -> Code:
    if len(codes) == 1:
        return codes[0]
    if len(codes) == 2:
        return _alt(codes[0], codes[1])
    mid = len(codes) // 2
    return _alt(_alt_all(codes[:mid]), _alt_all(codes[mid:]))


def _alt(left: Code, right: Code) -> Code:
    l_run, r_run = left.run, right.run

    # gojq: errors on the left propagate (they are not treated as "no value")
    def run(v: Any, env: Env) -> Iterator[Any]:
        found = False
        for x in l_run(v, env):
            if x is not None and x is not False:
                found = True
                yield x
        if not found:
            yield from r_run(v, env)

    def paths(v: Any, p: Path | None, env: Env) -> Iterator[tuple[Any, Path | None]]:
        found = False
        for x, xp in left.paths(v, p, env):
            if x is not None and x is not False:
                found = True
                yield x, xp
        if not found:
            yield from right.paths(v, p, env)

    if left.one is not None and right.one is not None:
        l1, r1 = left.one, right.one

        def one(v: Any, env: Env) -> Any:
            x = l1(v, env)
            if x is None or x is False:
                return r1(v, env)
            return x

        return _from_one(one, paths)
    return Code(run, None, paths)


# --- building blocks -------------------------------------------------------------------------------


def _index_path(t: Any, tp: Path | None, k: Any, offset: int) -> tuple[Any, Path | None]:
    try:
        w = jv.index(t, k)
    except JqError as e:
        _annotate(e, offset)
        raise
    if tp is None:
        raise _invalid_path(t)
    return w, (*tp, k)


def _iterate_paths(t: Any, tp: Path | None, offset: int) -> Iterator[tuple[Any, Path | None]]:
    tt = type(t)
    if tt is not list and tt is not dict:
        try:
            jv.iterate(t)
        except JqError as e:
            _annotate(e, offset)
            raise
    if tp is None:
        raise _invalid_iter_path(t)
    for k, x in jv.iterate_items(t):
        yield x, (*tp, k)


def _index_chain(base: Code, keys: list[Any], offsets: list[int]) -> Code:
    index = jv.index

    def slow(v: Any, i: int) -> Any:
        n = len(keys)
        while i < n:
            try:
                v = index(v, keys[i])
            except JqError as e:
                _annotate(e, offsets[i])
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
                t, tp = _index_path(t, tp, k, off)
            yield t, tp

    if base is IDENTITY:

        def run(v: Any, env: Env) -> tuple[Any]:
            return (walk(v),)

        return Code(run, walk, paths)
    if base.one is not None:
        b1 = base.one

        def one_b(v: Any, env: Env) -> Any:
            return walk(b1(v, env))

        return _from_one(one_b, paths)
    b_run = base.run

    def run_b(v: Any, env: Env) -> Iterator[Any]:
        for x in b_run(v, env):
            yield walk(x)

    return Code(run_b, None, paths)


def _map_code(operand: Code, fn: Callable[[Any], Any], offset: int) -> Code:
    if operand.one is not None:
        o1 = operand.one

        def one(v: Any, env: Env) -> Any:
            try:
                return fn(o1(v, env))
            except JqError as e:
                _annotate(e, offset)
                raise

        return _from_one(one)
    o_run = operand.run

    def run(v: Any, env: Env) -> Iterator[Any]:
        try:
            for x in o_run(v, env):
                yield fn(x)
        except JqError as e:
            _annotate(e, offset)
            raise

    return Code(run)


def _pipe(left: Code, right: Code) -> Code:
    if left is IDENTITY:
        return right
    if right is IDENTITY:
        return left
    l_run, r_run = left.run, right.run
    l_paths, r_paths = left.paths, right.paths

    def paths(v: Any, p: Path | None, env: Env) -> Iterator[tuple[Any, Path | None]]:
        for x, xp in l_paths(v, p, env):
            yield from r_paths(x, xp, env)

    if left.one is not None and right.one is not None:
        l1, r1 = left.one, right.one

        def one(v: Any, env: Env) -> Any:
            return r1(l1(v, env), env)

        return _from_one(one, paths)
    if left.one is not None:
        l1 = left.one

        def run_l1(v: Any, env: Env) -> Iterable[Any]:
            return r_run(l1(v, env), env)

        tail_l1: Tail | None = None
        if right.tail is not None:
            r_tail = right.tail

            def tail_l1(v: Any, env: Env) -> Generator[Any, None, TailCall | None]:
                return (yield from r_tail(l1(v, env), env))

        return Code(run_l1, None, paths, tail=tail_l1)
    if right.one is not None:
        r1 = right.one

        def run_r1(v: Any, env: Env) -> Iterable[Any]:
            return map(r1, l_run(v, env), itertools.repeat(env))

        return Code(run_r1, None, paths)

    def run(v: Any, env: Env) -> Iterator[Any]:
        for x in l_run(v, env):
            yield from r_run(x, env)

    return Code(run, None, paths)


def _try(body: Code, handler: Code | None) -> Code:
    b_run, b_paths = body.run, body.paths

    def run(v: Any, env: Env) -> Iterator[Any]:
        try:
            yield from b_run(v, env)
        except JqRuntimeError as e:
            if not _catchable(e):
                raise
            if handler is not None:
                yield from handler.run(e.value, env)

    def paths(v: Any, p: Path | None, env: Env) -> Iterator[tuple[Any, Path | None]]:
        try:
            yield from b_paths(v, p, env)
        except JqRuntimeError as e:
            if not _catchable(e):
                raise
            if handler is not None:
                yield from handler.paths(e.value, None, env)

    return Code(run, None, paths)


def _if(cond: Code, then: Code, otherwise: Code) -> Code:
    truthy = jv.truthy
    if cond.one is not None:
        c1 = cond.one
        if then.one is not None and otherwise.one is not None:
            t1, o1 = then.one, otherwise.one

            def one(v: Any, env: Env) -> Any:
                c = c1(v, env)
                if c is None or c is False:
                    return o1(v, env)
                return t1(v, env)

            def paths1(v: Any, p: Path | None, env: Env) -> Iterable[tuple[Any, Path | None]]:
                c = c1(v, env)
                if c is None or c is False:
                    return otherwise.paths(v, p, env)
                return then.paths(v, p, env)

            return _from_one(one, paths1)

        def run1(v: Any, env: Env) -> Iterable[Any]:
            c = c1(v, env)
            if c is None or c is False:
                return otherwise.run(v, env)
            return then.run(v, env)

        def paths_1(v: Any, p: Path | None, env: Env) -> Iterable[tuple[Any, Path | None]]:
            c = c1(v, env)
            if c is None or c is False:
                return otherwise.paths(v, p, env)
            return then.paths(v, p, env)

        tail_1: Tail | None = None
        if then.tail is not None or otherwise.tail is not None:

            def tail_1(v: Any, env: Env) -> Generator[Any, None, TailCall | None]:
                c = c1(v, env)
                if c is None or c is False:
                    return (yield from _run_tail(otherwise, v, env))
                return (yield from _run_tail(then, v, env))

        return Code(run1, None, paths_1, tail=tail_1)

    def run(v: Any, env: Env) -> Iterator[Any]:
        for c in cond.run(v, env):
            if truthy(c):
                yield from then.run(v, env)
            else:
                yield from otherwise.run(v, env)

    def paths(v: Any, p: Path | None, env: Env) -> Iterator[tuple[Any, Path | None]]:
        for c in cond.run(v, env):
            if truthy(c):
                yield from then.paths(v, p, env)
            else:
                yield from otherwise.paths(v, p, env)

    return Code(run, None, paths)


def _binary(op: str, left: Code, right: Code, offset: int) -> Code:
    if op in ("and", "or"):
        return _logic(op, left, right)
    fn = _BINOPS[op]
    if left.one is not None and right.one is not None:
        l1, r1 = left.one, right.one
        if op in ("==", "!=") and (type(right.const) is str or right.const is None):
            # equality with a string or null constant is plain Python equality
            rc = right.const
            if op == "==":

                def one_eq(v: Any, env: Env) -> Any:
                    return l1(v, env) == rc

                return _from_one(one_eq)

            def one_ne(v: Any, env: Env) -> Any:
                return l1(v, env) != rc

            return _from_one(one_ne)
        if right.const is not _NOTHING:
            rc = right.const

            def one_c(v: Any, env: Env) -> Any:
                try:
                    return fn(l1(v, env), rc)
                except JqError as e:
                    _annotate(e, offset)
                    raise

            return _from_one(one_c)

        fast = _INT_OPS.get(op)
        if fast is not None:
            int_op = fast

            def one_int(v: Any, env: Env) -> Any:
                try:
                    r = r1(v, env)
                    x = l1(v, env)
                    if type(x) is int and type(r) is int:
                        return int_op(x, r)
                    return fn(x, r)
                except JqError as e:
                    _annotate(e, offset)
                    raise

            return _from_one(one_int)

        def one(v: Any, env: Env) -> Any:
            try:
                r = r1(v, env)
                return fn(l1(v, env), r)
            except JqError as e:
                _annotate(e, offset)
                raise

        return _from_one(one)
    l_run, r_run = left.run, right.run

    def run(v: Any, env: Env) -> Iterator[Any]:
        try:
            for r in r_run(v, env):
                for x in l_run(v, env):
                    yield fn(x, r)
        except JqError as e:
            _annotate(e, offset)
            raise

    return Code(run)


# operators that chain to the left at one precedence level
_OP_GROUP = {"+": "+", "-": "+", "*": "*", "/": "*", "%": "*", "and": "and", "or": "or"}
_OP_GROUP.update({op: op for op in ("==", "!=", "<", "<=", ">", ">=")})


def _arith_chain(codes: list[Code], ops: list[tuple[str, int]]) -> Code:
    """``a + b - c …`` (three or more operands) without nesting closures: as the nested form,
    operands are evaluated last first (the last one varies slowest) and folded left."""
    n = len(codes)
    fns = [(_BINOPS[op], offset) for op, offset in ops]
    # an operand's own unannotated error takes the offset of the operator on its right-hand
    # side's nesting (operand 0 shares operator 1's)
    where = [ops[0][1], *(offset for _op, offset in ops)]

    def fold(vals: list[Any]) -> Any:
        acc = vals[0]
        for i, (fn, offset) in enumerate(fns, 1):
            try:
                acc = fn(acc, vals[i])
            except JqError as e:
                _annotate(e, offset)
                raise
        return acc

    if all(c.one is not None for c in codes):
        ones: list[One] = [c.one for c in codes]  # type: ignore[misc]

        def one(v: Any, env: Env) -> Any:
            vals = [None] * n
            i = n - 1
            try:
                while i >= 0:
                    vals[i] = ones[i](v, env)
                    i -= 1
            except JqError as e:
                _annotate(e, where[i])
                raise
            return fold(vals)

        return _from_one(one)
    runs = [c.run for c in codes]

    def run(v: Any, env: Env) -> Iterator[Any]:
        # nested loops, the last operand outermost, as an odometer of iterators
        vals: list[Any] = [None] * n
        its: list[Iterator[Any]] = [iter(())] * n
        i = n - 1
        try:
            its[i] = iter(runs[i](v, env))
            while True:
                x = next(its[i], _NOTHING)
                if x is _NOTHING:
                    i += 1
                    if i == n:
                        return
                    continue
                vals[i] = x
                if i == 0:
                    yield fold(vals)
                else:
                    i -= 1
                    its[i] = iter(runs[i](v, env))
        except JqError as e:
            _annotate(e, where[min(i, n - 1)])
            raise

    return Code(run)


def _logic_chain(is_and: bool, codes: list[Code]) -> Code:
    """``a and b and …`` / ``a or b or …`` (three or more operands), short-circuiting left to
    right without nesting closures."""
    if all(c.one is not None for c in codes):
        ones: list[One] = [c.one for c in codes]  # type: ignore[misc]

        def one(v: Any, env: Env) -> Any:
            acc = False
            for i, f in enumerate(ones):
                if i and acc is not is_and:
                    return acc
                y = f(v, env)
                acc = not (y is None or y is False)
            return acc

        return _from_one(one)
    runs = [c.run for c in codes]
    n = len(codes)

    def run(v: Any, env: Env) -> Iterator[Any]:
        # stage i turns each truth value of stages 0..i-1 into its own outputs
        stack: list[Iterator[Any]] = [iter(runs[0](v, env))]
        while stack:
            y = next(stack[-1], _NOTHING)
            if y is _NOTHING:
                stack.pop()
                continue
            t = not (y is None or y is False)
            depth = len(stack)
            if depth == n:
                yield t
            elif t is not is_and:
                stack.append(iter((t,)))
            else:
                stack.append(iter(runs[depth](v, env)))

    return Code(run)


def _logic(op: str, left: Code, right: Code) -> Code:
    is_and = op == "and"
    if left.one is not None and right.one is not None:
        l1, r1 = left.one, right.one
        if is_and:

            def one_and(v: Any, env: Env) -> Any:
                x = l1(v, env)
                if x is None or x is False:
                    return False
                y = r1(v, env)
                return not (y is None or y is False)

            return _from_one(one_and)

        def one_or(v: Any, env: Env) -> Any:
            x = l1(v, env)
            if not (x is None or x is False):
                return True
            y = r1(v, env)
            return not (y is None or y is False)

        return _from_one(one_or)

    def run(v: Any, env: Env) -> Iterator[Any]:
        for x in left.run(v, env):
            t = not (x is None or x is False)
            if t != is_and:
                yield t
                continue
            for y in right.run(v, env):
                yield not (y is None or y is False)

    return Code(run)


def _cmp(pred: Callable[[int], bool]) -> Callable[[Any, Any], bool]:
    compare = jv.compare

    def fn(a: Any, b: Any) -> bool:
        return pred(compare(a, b))

    return fn


def _equals(a: Any, b: Any) -> bool:
    return jv.equals(a, b)


def _not_equals(a: Any, b: Any) -> bool:
    return not jv.equals(a, b)


_INT_OPS: dict[str, Callable[[int, int], int]] = {
    "+": int.__add__,
    "-": int.__sub__,
    "*": jv.int_multiply,  # capped: a product of huge ints could run past any deadline
}

_BINOPS: dict[str, Callable[[Any, Any], Any]] = {
    "+": jv.add,
    "-": jv.subtract,
    "*": jv.multiply,
    "/": jv.divide,
    "%": jv.modulo,
    "==": _equals,
    "!=": _not_equals,
    "<": _cmp(lambda c: c < 0),
    "<=": _cmp(lambda c: c <= 0),
    ">": _cmp(lambda c: c > 0),
    ">=": _cmp(lambda c: c >= 0),
}


def _setpath(v: Any, path: list[Any], x: Any, offset: int, allocator: Allocator) -> Any:
    """setpath sharing one allocator across an assignment: each container is copied once."""
    try:
        return setpath(v, path, x, allocator)
    except JqError as e:
        _annotate(e, offset)
        raise


def _modify(
    v: Any,
    env: Env,
    all_paths: Callable[[Any, Env], Iterator[list[Any]]],
    update: Run,
    offset: int,
) -> Any:
    getpath = NATIVES[("getpath", 1)]
    acc = v
    allocator = Allocator()
    deletions: list[list[Any]] = []
    for p in all_paths(v, env):
        try:
            old = getpath(acc, p)
        except JqError as e:
            _annotate(e, offset)
            raise
        for new in update(old, env):
            acc = _setpath(acc, p, new, offset, allocator)
            break
        else:
            deletions.append(p)
    if deletions:
        try:
            acc = delpaths(acc, deletions, allocator)
        except JqError as e:
            _annotate(e, offset)
            raise
    return acc


def _recurse_children_run(v: Any, env: Env) -> Iterator[Any]:
    """``..``: pre-order, objects in key order; iterative so deep values cannot overflow."""
    ctx = env[0]
    stack: list[Iterator[Any]] = [iter((v,))]
    iterate = jv.iterate
    while stack:
        x = next(stack[-1], _NOTHING)
        if x is _NOTHING:
            stack.pop()
            continue
        yield x
        tx = type(x)
        if tx is list or tx is dict:
            _tick(ctx)
            if len(stack) > 1_000_000:  # pragma: no cover - JSON nesting is bounded upstream
                raise JqLimitError("value too deep")
            stack.append(iterate(x))


def _recurse_children_paths(v: Any, p: Path | None, env: Env) -> Iterator[tuple[Any, Path | None]]:
    ctx = env[0]
    stack: list[Iterator[tuple[Any, Path | None]]] = [iter(((v, p),))]
    while stack:
        item = next(stack[-1], _NOTHING)
        if item is _NOTHING:
            stack.pop()
            continue
        yield item
        x, xp = item
        tx = type(x)
        if tx is list or tx is dict:
            _tick(ctx)
            if xp is None:
                raise _invalid_iter_path(x)
            stack.append(_child_paths(x, xp))


def _child_paths(x: Any, xp: Path) -> Iterator[tuple[Any, Path]]:
    for k, w in jv.iterate_items(x):
        yield w, (*xp, k)


def _param_call(slot: int) -> Code:
    def run(v: Any, env: Env) -> Iterable[Any]:
        code, cenv = env[slot]
        return code.run(v, cenv)  # type: ignore[no-any-return]

    def paths(v: Any, p: Path | None, env: Env) -> Iterable[tuple[Any, Path | None]]:
        code, cenv = env[slot]
        return code.paths(v, p, cenv)  # type: ignore[no-any-return]

    return Code(run, None, paths)


def _func_call(info: FuncInfo, args: list[Code], offset: int) -> Code:
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
            if value_params or body.tail is None:
                for new_env in make_env(v, env):
                    yield from body.run(v, new_env)
                return
            call: TailCall | None = (info, v, env[:n_def] + tuple((a, env) for a in args))
            while call is not None:
                callee, cv, cenv = call
                cbody = callee.body
                assert cbody is not None
                call = yield from _run_tail(cbody, cv, cenv)
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
            _tick(ctx)
            body = info.body
            assert body is not None
            for new_env in make_env(v, env):
                yield from body.paths(v, p, new_env)
        finally:
            ctx.depth -= 1

    return Code(run, None, paths, tail=tail)


def _at_call_site(code: Code, offset: int) -> Code:
    """Errors raised inside a builtin.jq function point at the call in the user's program."""
    c_run, c_paths = code.run, code.paths

    def run(v: Any, env: Env) -> Iterator[Any]:
        try:
            yield from c_run(v, env)
        except JqError as e:
            _annotate(e, offset)
            raise

    def paths(v: Any, p: Path | None, env: Env) -> Iterator[tuple[Any, Path | None]]:
        try:
            yield from c_paths(v, p, env)
        except JqError as e:
            _annotate(e, offset)
            raise

    return Code(run, None, paths)


def _native_call(fn: Callable[..., Any], args: list[Code], offset: int, stream: bool) -> Code:
    n = len(args)
    if n == 0:
        if stream:

            def run0s(v: Any, env: Env) -> Iterator[Any]:
                ctx = env[0]
                try:
                    for x in fn(v):
                        _tick(ctx)
                        yield x
                except JqError as e:
                    _annotate(e, offset)
                    raise

            return Code(run0s)

        def one0(v: Any, env: Env) -> Any:
            try:
                return fn(v)
            except JqError as e:
                _annotate(e, offset)
                raise

        return _from_one(one0)
    if not stream and all(a.one is not None for a in args):
        ones = [a.one for a in args]
        if n == 1:
            a1 = ones[0]
            assert a1 is not None
            if args[0].const is not _NOTHING:
                c = args[0].const

                def one_c(v: Any, env: Env) -> Any:
                    try:
                        return fn(v, c)
                    except JqError as e:
                        _annotate(e, offset)
                        raise

                return _from_one(one_c)

            def one1(v: Any, env: Env) -> Any:
                try:
                    return fn(v, a1(v, env))
                except JqError as e:
                    _annotate(e, offset)
                    raise

            return _from_one(one1)

        def one_n(v: Any, env: Env) -> Any:
            try:
                vals = [o(v, env) for o in reversed(ones)]  # type: ignore[misc]
                vals.reverse()
                return fn(v, *vals)
            except JqError as e:
                _annotate(e, offset)
                raise

        return _from_one(one_n)

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
                        _tick(ctx)
                        yield x
                else:
                    yield fn(v, *vals)
        except JqError as e:
            _annotate(e, offset)
            raise

    return Code(run)


# --- builtins: the compiler's closure builtins and builtin.jq --------------------------------------

Special = Callable[[Compiler, list[Code], ast.Call], Code]
SPECIALS: dict[tuple[str, int], Special] = {}

_BUILTIN_DEFS: dict[tuple[str, int], ast.FuncDef] | None = None
_BUILTIN_FUNCS: dict[tuple[str, int], FuncInfo] = {}
_BUILTIN_LOCK = threading.RLock()


def _load_builtin_defs() -> dict[tuple[str, int], ast.FuncDef]:
    global _BUILTIN_DEFS
    if _BUILTIN_DEFS is None:
        from importlib import resources

        from workload_map.jq.parser import parse

        text = resources.files("workload_map.jq.builtins").joinpath("builtin.jq").read_text()
        tree = _without_offsets(parse(text + " ."))
        defs: dict[tuple[str, int], ast.FuncDef] = {}
        assert isinstance(tree, ast.WithDefs)
        for d in tree.defs:
            defs[(d.name, len(d.params))] = d
        _BUILTIN_DEFS = defs
    return _BUILTIN_DEFS


def _without_offsets(node: Any) -> Any:
    """A copy of a builtin.jq tree with every offset -1 (they are not the user's program)."""
    if isinstance(node, tuple):
        return tuple(_without_offsets(x) for x in node)
    if not dataclasses.is_dataclass(node) or isinstance(node, type):
        return node
    changes = {
        f.name: _without_offsets(getattr(node, f.name))
        for f in dataclasses.fields(node)
        if f.name != "offset"
    }
    if any(f.name == "offset" for f in dataclasses.fields(node)):
        changes["offset"] = -1
    return dataclasses.replace(node, **changes)


def builtin_names() -> list[str]:
    """Every builtin a program can call, as ``name/arity`` (what ``builtins`` yields)."""
    names = {f"{n}/{a}" for n, a in _load_builtin_defs() if not n.startswith("_")}
    names |= {f"{n}/{a}" for n, a in SPECIALS if not n.startswith("_")}
    names |= {
        f"{n}/{a}" for n, a in list(NATIVES) + list(STREAM_NATIVES) if not n.startswith(("_", "@"))
    }
    return sorted(names)


def _builtin_func(key: tuple[str, int]) -> FuncInfo | None:
    info = _BUILTIN_FUNCS.get(key)
    if info is not None and info.body is not None:
        return info
    with _BUILTIN_LOCK:
        return _compile_builtin(key)


def _compile_builtin(key: tuple[str, int]) -> FuncInfo | None:
    info = _BUILTIN_FUNCS.get(key)
    if info is not None:
        return info  # compiled, or being compiled by this thread (recursion)
    d = _load_builtin_defs().get(key)
    if d is None:
        return None
    info = FuncInfo(d.name, d.params, 1, builtin=True)
    _BUILTIN_FUNCS[key] = info
    root = _root_scope(())
    inner = root.bind_func(info)
    for param in d.params:
        inner = inner.bind_param(param.lstrip("$"))
    for param in d.params:
        if param.startswith("$"):
            inner = inner.bind_var(param[1:])
    try:
        info.body = Compiler(None).compile(d.body, inner)
    except BaseException:
        del _BUILTIN_FUNCS[key]
        raise
    return info


def _special(name: str, arity: int) -> Callable[[Special], Special]:
    def deco(fn: Special) -> Special:
        SPECIALS[(name, arity)] = fn
        return fn

    return deco


@_special("empty", 0)
def _sp_empty(c: Compiler, args: list[Code], node: ast.Call) -> Code:
    return EMPTY


@_special("not", 0)
def _sp_not(c: Compiler, args: list[Code], node: ast.Call) -> Code:
    def one(v: Any, env: Env) -> Any:
        return v is None or v is False

    return _from_one(one)


@_special("path", 1)
def _sp_path(c: Compiler, args: list[Code], node: ast.Call) -> Code:
    f_paths = args[0].paths

    def run(v: Any, env: Env) -> Iterator[Any]:
        for x, p in f_paths(v, (), env):
            if p is None:
                raise _invalid_path(x)
            yield list(p)

    return Code(run)


@_special("getpath", 1)
def _sp_getpath(c: Compiler, args: list[Code], node: ast.Call) -> Code:
    getpath = NATIVES[("getpath", 1)]
    base = _native_call(getpath, args, node.offset, False)
    arg = args[0]
    offset = node.offset

    def paths(v: Any, p: Path | None, env: Env) -> Iterator[tuple[Any, Path | None]]:
        for path in arg.run(v, env):
            try:
                w = getpath(v, path)
            except JqError as e:
                _annotate(e, offset)
                raise
            if p is None:
                raise _invalid_path(v)
            yield w, (*p, *path)

    return Code(base.run, base.one, paths)


@_special("select", 1)
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


@_special("map", 1)
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
                _annotate(e, offset)
                raise
            return [f1(x, env) for x in items]

        return _from_one(one1)
    f_run = f.run

    def one(v: Any, env: Env) -> Any:
        try:
            items = iterate(v)
        except JqError as e:
            _annotate(e, offset)
            raise
        out: list[Any] = []
        append = out.append
        ctx = env[0]
        n = 0
        for x in items:
            for y in f_run(x, env):
                append(y)
                n += 1
                if n & 1023 == 0:
                    ctx.check()
                    if n > MAX_ARRAY_LENGTH:
                        raise JqLimitError(
                            f"array too large: more than {MAX_ARRAY_LENGTH} elements"
                        )
        return out

    return _from_one(one)


def _first_of(it: Iterable[Any]) -> Any:
    for x in it:
        return x
    return _NOTHING


@_special("first", 1)
def _sp_first(c: Compiler, args: list[Code], node: ast.Call) -> Code:
    f = args[0]

    def run(v: Any, env: Env) -> tuple[Any, ...]:
        x = _first_of(f.run(v, env))
        return () if x is _NOTHING else (x,)

    def paths(v: Any, p: Path | None, env: Env) -> tuple[tuple[Any, Path | None], ...]:
        x = _first_of(f.paths(v, p, env))
        return () if x is _NOTHING else (x,)

    return Code(run, None, paths)


@_special("last", 1)
def _sp_last(c: Compiler, args: list[Code], node: ast.Call) -> Code:
    f = args[0]

    def run(v: Any, env: Env) -> tuple[Any, ...]:
        ctx = env[0]
        last = _NOTHING
        for x in f.run(v, env):
            last = x
            _tick(ctx)
        return () if last is _NOTHING else (last,)

    return Code(run)


@_special("isempty", 1)
def _sp_isempty(c: Compiler, args: list[Code], node: ast.Call) -> Code:
    f = args[0]

    def one(v: Any, env: Env) -> Any:
        return _first_of(f.run(v, env)) is _NOTHING

    return _from_one(one)


_BAD_COUNT = -1  # a count greater than every number (a string, array or object)


def _count(n: Any, negative: str, rounding: Callable[[float], int]) -> int:
    """gojq's counting for limit/skip/nth: ``$n > 0`` counts down with ``. - 1``."""
    if jv.is_number(n):
        if n != n:
            raise _user_error(negative)
        if n > 0:
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


@_special("limit", 2)
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


@_special("skip", 2)
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


@_special("nth", 2)
def _sp_nth(c: Compiler, args: list[Code], node: ast.Call) -> Code:
    n_code, f = args
    message = "nth doesn't support negative index"

    def run(v: Any, env: Env) -> Iterator[Any]:
        for n in n_code.run(v, env):
            count = _count(n, message, math.floor)
            x = _first_of(_counted(f.run(v, env), n, count, max(count, 0), None))
            if x is not _NOTHING:
                yield x

    def paths(v: Any, p: Path | None, env: Env) -> Iterator[tuple[Any, Path | None]]:
        for n in n_code.run(v, env):
            count = _count(n, message, math.floor)
            x = _first_of(_counted(f.paths(v, p, env), n, count, max(count, 0), None))
            if x is not _NOTHING:
                yield x

    return Code(run, None, paths)


def _any_all(is_any: bool, gen: Code | None, cond: Code | None) -> Code:
    iterate = jv.iterate

    c1 = cond.one if cond is not None else None

    def one(v: Any, env: Env) -> Any:
        items = gen.run(v, env) if gen is not None else iterate(v)
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

    return _from_one(one)


@_special("any", 0)
def _sp_any0(c: Compiler, args: list[Code], node: ast.Call) -> Code:
    return _any_all(True, None, None)


@_special("any", 1)
def _sp_any1(c: Compiler, args: list[Code], node: ast.Call) -> Code:
    return _any_all(True, None, args[0])


@_special("any", 2)
def _sp_any2(c: Compiler, args: list[Code], node: ast.Call) -> Code:
    return _any_all(True, args[0], args[1])


@_special("all", 0)
def _sp_all0(c: Compiler, args: list[Code], node: ast.Call) -> Code:
    return _any_all(False, None, None)


@_special("all", 1)
def _sp_all1(c: Compiler, args: list[Code], node: ast.Call) -> Code:
    return _any_all(False, None, args[0])


@_special("all", 2)
def _sp_all2(c: Compiler, args: list[Code], node: ast.Call) -> Code:
    return _any_all(False, args[0], args[1])


def _recurse(f: Code, cond: Code | None) -> Code:
    """``recurse(f)``/``recurse(f; cond)``: depth-first, iterative."""

    def run(v: Any, env: Env) -> Iterator[Any]:
        ctx = env[0]
        stack: list[Iterator[Any]] = [iter((v,))]
        while stack:
            x = next(stack[-1], _NOTHING)
            if x is _NOTHING:
                stack.pop()
                continue
            yield x
            _tick(ctx)
            if len(stack) > _MAX_STACK:
                raise JqLimitError(f"recursion deeper than {_MAX_STACK} levels")
            children: Iterator[Any] = iter(f.run(x, env))
            if cond is not None:
                children = _select_iter(children, cond, env)
            stack.append(children)

    def paths(v: Any, p: Path | None, env: Env) -> Iterator[tuple[Any, Path | None]]:
        ctx = env[0]
        stack: list[Iterator[tuple[Any, Path | None]]] = [iter(((v, p),))]
        while stack:
            item = next(stack[-1], _NOTHING)
            if item is _NOTHING:
                stack.pop()
                continue
            yield item
            _tick(ctx)
            if len(stack) > _MAX_STACK:
                raise JqLimitError(f"recursion deeper than {_MAX_STACK} levels")
            children = iter(f.paths(item[0], item[1], env))
            if cond is not None:
                children = (
                    (x, xp)
                    for x, xp in children
                    for y in cond.run(x, env)
                    if not (y is None or y is False)
                )
            stack.append(children)

    return Code(run, None, paths)


def _select_iter(it: Iterator[Any], cond: Code, env: Env) -> Iterator[Any]:
    for x in it:
        for y in cond.run(x, env):
            if not (y is None or y is False):
                yield x


@_special("recurse", 0)
def _sp_recurse0(c: Compiler, args: list[Code], node: ast.Call) -> Code:
    return Code(_recurse_children_run, None, _recurse_children_paths)


@_special("recurse", 1)
def _sp_recurse1(c: Compiler, args: list[Code], node: ast.Call) -> Code:
    return _recurse(args[0], None)


@_special("recurse", 2)
def _sp_recurse2(c: Compiler, args: list[Code], node: ast.Call) -> Code:
    return _recurse(args[0], args[1])


@_special("repeat", 1)
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


@_special("while", 2)
def _sp_while(c: Compiler, args: list[Code], node: ast.Call) -> Code:
    cond, update = args

    def run(v: Any, env: Env) -> Iterator[Any]:
        # def _while: if cond then ., (update | _while) else empty end
        ctx = env[0]
        stack: list[Iterator[Any]] = [iter((v,))]
        while stack:
            x = next(stack[-1], _NOTHING)
            if x is _NOTHING:
                stack.pop()
                continue
            _tick(ctx)
            for ok in cond.run(x, env):
                if not (ok is None or ok is False):
                    yield x
                    stack.append(iter(update.run(x, env)))
                    break
            if len(stack) > _MAX_STACK:
                raise JqLimitError(f"recursion deeper than {_MAX_STACK} levels")

    return Code(run)


@_special("until", 2)
def _sp_until(c: Compiler, args: list[Code], node: ast.Call) -> Code:
    cond, update = args

    def run(v: Any, env: Env) -> Iterator[Any]:
        # def _until: if cond then . else next | _until end
        ctx = env[0]
        stack: list[Iterator[Any]] = [iter((v,))]
        while stack:
            x = next(stack[-1], _NOTHING)
            if x is _NOTHING:
                stack.pop()
                continue
            _tick(ctx)
            for ok in cond.run(x, env):
                if not (ok is None or ok is False):
                    yield x
                else:
                    stack.append(iter(update.run(x, env)))
                    if len(stack) > _MAX_STACK:
                        raise JqLimitError(f"recursion deeper than {_MAX_STACK} levels")

    return Code(run)


@_special("walk", 1)
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
            item = next(frame[0], _NOTHING)
            if item is _NOTHING:
                stack.pop()
                if not stack:
                    yield from f_run(frame[1], env)
                    return
                parent = stack[-1]
                deliver(parent, outputs(frame[1], type(parent[1]) is list))
                continue
            _tick(ctx)
            if type(frame[1]) is dict:
                frame[2], item = item
            if not enter(item):
                deliver(frame, outputs(item, type(frame[1]) is list))

    return Code(run)


@_special("env", 0)
def _sp_env(c: Compiler, args: list[Code], node: ast.Call) -> Code:
    def one(v: Any, env: Env) -> Any:
        return dict(env[0].environ())

    return _from_one(one)


@_special("builtins", 0)
def _sp_builtins(c: Compiler, args: list[Code], node: ast.Call) -> Code:
    def one(v: Any, env: Env) -> Any:
        return builtin_names()

    return _from_one(one)


@_special("modulemeta", 0)
def _sp_modulemeta(c: Compiler, args: list[Code], node: ast.Call) -> Code:
    """No module loader here: gojq's library error for every module name."""
    from workload_map.jq import encoding

    def one(v: Any, env: Env) -> Any:
        if type(v) is not str:
            raise JqRuntimeError(f"modulemeta cannot be applied to: {jv.type_error_preview(v)}")
        raise JqRuntimeError(f"cannot load module: {encoding.dumps(v, None)}")

    return _from_one(one)


def _stderr_write(env: Env, text: str) -> None:
    hook = env[0].stderr
    if hook is not None:
        hook(text)
    else:
        sys.stderr.write(text)


@_special("debug", 0)
def _sp_debug0(c: Compiler, args: list[Code], node: ast.Call) -> Code:
    from workload_map.jq import encoding

    def one(v: Any, env: Env) -> Any:
        _stderr_write(env, encoding.dumps(["DEBUG:", v], None) + "\n")
        return v

    return _from_one(one)


@_special("debug", 1)
def _sp_debug1(c: Compiler, args: list[Code], node: ast.Call) -> Code:
    from workload_map.jq import encoding

    msg = args[0]

    def run(v: Any, env: Env) -> Iterator[Any]:
        for m in msg.run(v, env):
            _stderr_write(env, encoding.dumps(["DEBUG:", m], None) + "\n")
        yield v

    return Code(run)


@_special("stderr", 0)
def _sp_stderr(c: Compiler, args: list[Code], node: ast.Call) -> Code:
    from workload_map.jq import encoding

    def one(v: Any, env: Env) -> Any:
        # gojq: strings raw, other values as compact JSON, no newline
        _stderr_write(env, v if type(v) is str else encoding.dumps(v, None))
        return v

    return _from_one(one)


@_special("tostream", 0)
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
            _tick(ctx)
            leaf = enter(item[1], [*path, item[0]])
            if leaf is not None:
                yield leaf

    return Code(run)


@_special("sub", 3)
def _sp_sub(c: Compiler, args: list[Code], node: ast.Call) -> Code:
    """``sub($re; replacement; $flags)``; one output per combination of replacement outputs,
    the last match's replacement varying slowest (gojq's order)."""
    re_code, replacement, flags_code = args
    match = NATIVES[("_match", 3)]
    capture = NATIVES[("_capture", 0)]
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
            _annotate(e, offset)
            raise

    return Code(run)


_DISPATCH: dict[type, Callable[[Compiler, Any, Scope], Code]] = {
    ast.Identity: Compiler.c_identity,
    ast.RecurseAll: Compiler.c_recurse_all,
    ast.Literal: Compiler.c_literal,
    ast.Str: Compiler.c_str,
    ast.Format: Compiler.c_format,
    ast.Var: Compiler.c_var,
    ast.Index: Compiler.c_index,
    ast.Slice: Compiler.c_slice,
    ast.Iterate: Compiler.c_iterate,
    ast.Optional: Compiler.c_optional,
    ast.Try: Compiler.c_try,
    ast.Array: Compiler.c_array,
    ast.Object: Compiler.c_object,
    ast.Unary: Compiler.c_unary,
    ast.Pipe: Compiler.c_pipe,
    ast.Comma: Compiler.c_comma,
    ast.Alt: Compiler.c_alt,
    ast.Binary: Compiler.c_binary,
    ast.Update: Compiler.c_update,
    ast.If: Compiler.c_if,
    ast.Reduce: Compiler.c_reduce,
    ast.Foreach: Compiler.c_foreach,
    ast.Bind: Compiler.c_bind,
    ast.Label: Compiler.c_label,
    ast.Break: Compiler.c_break,
    ast.Call: Compiler.c_call,
    ast.WithDefs: Compiler.c_withdefs,
}


def compile_tree(tree: Any, source: str | None, variables: tuple[str, ...] = ()) -> Code:
    """Compile a parsed program; ``variables`` are the names of the program-level ``$vars``."""
    return compile_program(tree, source, variables)[0]


def compile_program(
    tree: Any, source: str | None, variables: tuple[str, ...] = ()
) -> tuple[Code, bool]:
    """Compile a parsed program; also tell whether it needs a per-run context."""
    compiler = Compiler(source)
    try:
        code = compiler.compile(tree, _root_scope(variables))
    except RecursionError:
        raise JqCompileError("query too deep to compile", program=source) from None
    return code, compiler.needs_ctx
