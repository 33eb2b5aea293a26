"""Compiled-code representation shared by every compiler module.

``Code`` (run/one/paths/tail entry points), the per-run ``Ctx``, the compile-time ``Scope``
and ``FuncInfo``, and the tiny constant codes; the bottom of the compiler's import graph.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Generator, Iterable, Iterator
from typing import Any

from workload_map.jq import cpuclock
from workload_map.jq import values as jv
from workload_map.jq.errors import (
    JqDeadlineError,
    JqError,
    JqHaltError,
    JqLimitError,
    JqRuntimeError,
)
from workload_map.jq.meter import CHARS_PER_UNIT, ELEMENTS_PER_UNIT

Env = tuple[Any, ...]
Path = tuple[Any, ...]
Run = Callable[[Any, Env], Iterable[Any]]
One = Callable[[Any, Env], Any]
PathRun = Callable[[Any, "Path | None", Env], Iterable[tuple[Any, "Path | None"]]]

MAX_ARRAY_LENGTH = 4_000_000  # memory guard for collected arrays (`[range(1e9)]`)
# recurse/while/until run on explicit stacks: one entry per level of the jq recursion
MAX_STACK = 200_000
_TICKS = 512
label_ids = itertools.count(1)
NOTHING: Any = object()


#: the deadline's clock (cpuclock.clock): CPU time of the evaluating thread net of full garbage
#: collections, so that the work a program does is measured, not the time a loaded machine,
#: another thread holding the GIL or a collection of the whole process takes
clock = cpuclock.clock


class Ctx:
    """Per-evaluation state: deadline, call depth, hooks.

    The deadline is ``timeout`` seconds of the evaluating thread's CPU time (``clock``): a
    preempted or descheduled evaluation is not charged for the wait. An evaluation moved to
    another thread (the deep-stack retry) carries what is left of it (``remaining`` and
    ``rebase``), since each thread's CPU clock starts on its own."""

    __slots__ = ("deadline", "depth", "env", "max_depth", "stderr", "ticks", "timeout")

    def __init__(
        self,
        timeout: float | None,
        max_depth: int,
        stderr: Callable[[str], None] | None = None,
    ) -> None:
        self.timeout = timeout
        self.deadline = (clock() + timeout) if timeout is not None else None
        self.depth = 0
        self.max_depth = max_depth
        self.ticks = _TICKS
        self.stderr = stderr
        self.env: dict[str, str] | None = None

    def check(self) -> None:
        self.ticks = _TICKS
        if self.deadline is not None and clock() > self.deadline:
            raise JqDeadlineError(self.timeout if self.timeout is not None else 0.0)

    def spend(self, units: int) -> None:
        """Count ``units`` of work done inside one step (``meter.Meter``: a long serialisation,
        sort or walk reports its work as it goes, so that the clock is looked at in time)."""
        self.ticks -= units
        if self.ticks <= 0:
            self.check()

    def remaining(self) -> float | None:
        """CPU seconds left before the deadline, on the calling thread's clock."""
        return None if self.deadline is None else self.deadline - clock()

    def rebase(self, remaining: float | None) -> None:
        """Carry ``remaining`` over to the calling thread's clock."""
        if remaining is not None:
            self.deadline = clock() + remaining

    def environ(self) -> dict[str, str]:
        if self.env is None:
            self.env = dict(os.environ)
        return self.env


BIG_TEXT = 1 << 13
BIG_CONTAINER = 256


def costly(v: Any, out: Any) -> bool:
    """Whether a native step was as costly as many small ones (a sort of a large array, a
    text of a large value): such a step is charged its work (``charge``), not one step, so
    that a few hundred of them do not run between two looks at the clock
    (`.[] | unique_by(f)` over 2000 elements, `recurse(tojson)`)."""
    tv = type(v)
    if (tv is list or tv is dict) and len(v) > BIG_CONTAINER:
        return True
    to = type(out)
    if to is str:
        return len(out) > BIG_TEXT
    return (to is list or to is dict) and len(out) > BIG_CONTAINER


def charge(ctx: Ctx, v: Any, out: Any) -> None:
    """Count a costly native step (``costly``) in proportion to the sizes it read and wrote:
    ``ELEMENTS_PER_UNIT`` elements or ``CHARS_PER_UNIT`` characters a unit (a step that did
    more than that between two spends counts its work itself: ``meter.Meter``)."""
    units = 1
    tv = type(v)
    if tv is list or tv is dict:
        units += len(v) // ELEMENTS_PER_UNIT
    to = type(out)
    if to is str:
        units += len(out) // CHARS_PER_UNIT
    elif to is list or to is dict:
        units += len(out) // ELEMENTS_PER_UNIT
    ctx.spend(units)


def _collected(ctx: Ctx, n: int) -> None:
    """Every 1024 collected elements: the deadline, and the array's size bound."""
    ctx.check()
    if n > MAX_ARRAY_LENGTH:
        raise JqLimitError(f"array too large: more than {MAX_ARRAY_LENGTH} elements")


def collect(outputs: Iterable[Any], ctx: Ctx) -> list[Any]:
    """Outputs gathered into an array (``[f]``, ``map(f)``): the deadline is looked at every
    1024 elements, and more than MAX_ARRAY_LENGTH elements is a JqLimitError."""
    out: list[Any] = []
    append = out.append
    n = 0
    for x in outputs:
        append(x)
        n += 1
        if n & 1023 == 0:
            _collected(ctx, n)
    return out


def collect_each(run: Run, items: Iterable[Any], env: Env, size: int) -> list[Any]:
    """``collect`` of ``run``'s outputs for each of the ``size`` ``items`` in turn (``map(f)``)
    as two plain loops: no generator or chain between ``f`` and the array; the items count
    against the deadline as they are taken (``paced``)."""
    out: list[Any] = []
    append = out.append
    n = 0
    for x in paced(items, size, env[0]):
        for y in run(x, env):
            append(y)
            n += 1
            if n & 1023 == 0:
                _collected(env[0], n)
    return out


def tick(ctx: Ctx) -> None:
    ctx.ticks -= 1
    if ctx.ticks <= 0:
        ctx.check()


def depth_first(
    root: Any, expand: Callable[[Any], Iterator[Any] | None], max_stack: int, too_deep: str
) -> Iterator[Any]:
    """Pre-order walk on an explicit stack (``..``, ``recurse(f)``, with or without paths), so
    that deep values cannot overflow Python's stack: each item is yielded, then ``expand``
    gives its children (None: a leaf) and counts the step against the deadline."""
    stack: list[Iterator[Any]] = [iter((root,))]
    while stack:
        x = next(stack[-1], NOTHING)
        if x is NOTHING:
            stack.pop()
            continue
        yield x
        children = expand(x)
        if children is not None:
            if len(stack) > max_stack:
                raise JqLimitError(too_deep)
            stack.append(children)


def spend(ctx: Ctx, steps: int) -> None:
    """Count ``steps`` units of work against the deadline: a step that starts work in
    proportion to a container's size (``.[]``, ``..``, ``map``) counts its length, so that a
    loop whose body yields nothing (``.[] as $x | .[] | .b?``) still looks at the clock."""
    ctx.ticks -= steps
    if ctx.ticks <= 0:
        ctx.check()


def paced(items: Iterable[Any], n: int, ctx: Ctx) -> Iterable[Any]:
    """The ``n`` elements of a container, each a step for whatever runs on it: a short one is
    spent at once, a long one as it is consumed (every ``_TICKS`` elements), so that a body
    that yields nothing or never ticks (``.[] | select(.a)``) still looks at the clock while it
    works through a million elements, not only before."""
    if n <= PACE:
        ctx.ticks -= n
        if ctx.ticks <= 0:
            ctx.check()
        return items
    return paced_long(items, n, ctx)


#: elements a container may have to be spent at once before it is iterated (``paced``)
PACE = _TICKS


def paced_long(items: Iterable[Any], n: int, ctx: Ctx) -> Iterator[Any]:
    """``paced`` for more than ``PACE`` elements (hot paths test the length inline): the
    elements in runs of ``PACE``, each run spent as it starts, iterated at C speed."""
    return itertools.chain.from_iterable(_runs(iter(items), n, ctx))


def _runs(it: Iterator[Any], n: int, ctx: Ctx) -> Iterator[Iterator[Any]]:
    for _ in range(0, n, PACE):
        ctx.spend(PACE)
        yield itertools.islice(it, PACE)


def catchable(e: JqRuntimeError) -> bool:
    return not isinstance(e, (JqLimitError, JqHaltError))


def annotate(e: JqError, offset: int) -> None:
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


def invalid_path(v: Any) -> JqRuntimeError:
    return JqRuntimeError(f"invalid path against: {jv.type_error_preview(v)}")


def invalid_iter_path(v: Any) -> JqRuntimeError:
    return JqRuntimeError(f"invalid path on iterating against: {jv.type_error_preview(v)}")


class Code:
    """A compiled node (see the module docstring)."""

    __slots__ = ("const", "one", "paths", "run", "tail")

    def __init__(
        self,
        run: Run,
        one: One | None = None,
        paths: PathRun | None = None,
        const: Any = NOTHING,
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


def run_tail(code: Code, v: Any, env: Env) -> Generator[Any, None, TailCall | None]:
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


def from_one(one: One, paths: PathRun | None = None, const: Any = NOTHING) -> Code:
    def run(v: Any, env: Env) -> tuple[Any]:
        return (one(v, env),)

    return Code(run, one, paths, const)


def const_code(value: Any) -> Code:
    def one(v: Any, env: Env) -> Any:
        return value

    def run(v: Any, env: Env) -> tuple[Any]:
        return (value,)

    return Code(run, one, None, value)


KEYED = Code(lambda v, env: (v,))  # marker: object shorthand value `.[key]`

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


def root_scope(variables: tuple[str, ...]) -> Scope:
    scope = Scope(None, "root", None, None, 1)
    for name in variables:
        scope = scope.bind_var(name.lstrip("$"))
    return scope
