"""Compiled programs, evaluation limits and the compile cache: the engine's public entry points.

``compile(text)`` parses and compiles once per distinct text (a repeated compile is a dict hit);
``Program.all/first/iter/paths`` evaluate it on plain Python JSON values under ``Limits`` (result
cap, cooperative deadline in CPU time of the evaluating thread, call depth). Errors leaving a
program carry its text and the offset of the failing term.
"""

from __future__ import annotations

import _thread
import dataclasses
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from sys import getrecursionlimit
from typing import Any, ClassVar, TypeVar

from workload_map.jq.closures import clock
from workload_map.jq.compiler import Code, Ctx, compile_program
from workload_map.jq.deep import BOUND_ABOVE, run_bounded, run_deep
from workload_map.jq.errors import JqError, JqLimitError, JqRuntimeError
from workload_map.jq.paths import Path, constant_path, defaulted_path
from workload_map.jq.trees import parse
from workload_map.jq.values import type_error_preview

__all__ = ["DEFAULT_LIMITS", "DEFINITION_LIMITS", "Limits", "Program", "SlowEvaluation", "compile"]

_T = TypeVar("_T")


class _Record:
    """What :class:`SlowEvaluation` and :class:`Limits` share: frozen, slotted records with
    equality, hash and repr over their fields, read by ``dataclasses.fields`` and
    ``dataclasses.replace`` as the frozen slotted dataclasses they were.

    Written out rather than ``@dataclass(frozen=True, slots=True)``: the decorator generates,
    compiles and executes six methods and rebuilds the class for its slots at every import of
    the jq engine, about 4.5M instructions a class (callgrind), more than the rest of this
    module's body.
    """

    __slots__ = ()
    #: the fields, in order (each subclass's ``__slots__``)
    FIELDS: ClassVar[tuple[str, ...]] = ()
    __dataclass_fields__: ClassVar[dict[str, dataclasses.Field[Any]]] = {}

    def _fill(self, *values: Any) -> None:
        for name, value in zip(self.FIELDS, values, strict=True):
            object.__setattr__(self, name, value)

    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self.FIELDS)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        assert isinstance(other, _Record)
        return self._values() == other._values()

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.FIELDS)
        return f"{type(self).__qualname__}({shown})"

    def __setattr__(self, name: str, value: Any) -> None:
        raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")

    def __reduce__(self) -> tuple[Any, ...]:
        # copy and pickle rebuild through __init__ (a frozen record refuses setattr)
        return (type(self), self._values())


_R = TypeVar("_R", bound=_Record)  # the class, not its name (a ForwardRef: docs/cli.md)


def _record(cls: type[_R]) -> type[_R]:
    """Record ``cls``'s fields (``FIELDS``, the defaults of its ``__init__``) as
    ``dataclasses`` would, so that ``dataclasses.fields``/``replace``/``is_dataclass`` read
    it."""
    given = cls.__init__.__defaults__ or ()
    defaults = dict(zip(cls.FIELDS[len(cls.FIELDS) - len(given) :], given, strict=True))
    annotations: dict[str, Any] = cls.__dict__.get("__annotations__", {})  # noqa: RUF063
    fields: dict[str, dataclasses.Field[Any]] = {}
    for name in cls.FIELDS:
        f: dataclasses.Field[Any] = dataclasses.field(
            default=defaults.get(name, dataclasses.MISSING)
        )
        f.name = name
        f.type = annotations.get(name, "Any")
        f._field_type = dataclasses._FIELD  # type: ignore[attr-defined]
        fields[name] = f
    cls.__dataclass_fields__ = fields
    return cls


@_record
class SlowEvaluation(_Record):
    """What ``Limits.on_slow`` is told: the program, how long it took, and its deadline."""

    FIELDS = ("program", "elapsed", "timeout")
    __slots__ = FIELDS
    program: str
    elapsed: float
    timeout: float | None

    def __init__(self, program: str, elapsed: float, timeout: float | None) -> None:
        self._fill(program, elapsed, timeout)


@_record
class Limits(_Record):
    """Evaluation limits. ``max_results``: reaching it is an error (the reference runner's rule);
    ``timeout``: seconds of the evaluating thread's CPU time, checked cooperatively
    (``JqDeadlineError``): the work done is measured, not wall time, so a loaded machine or
    another thread holding the GIL does not trip it; ``max_depth``: nested jq function calls.
    With ``on_slow`` set, an evaluation that succeeds but takes ``warn_after`` CPU seconds or
    more calls it once (a definition getting close to its deadline)."""

    FIELDS = ("max_results", "timeout", "max_depth", "warn_after", "on_slow")
    __slots__ = FIELDS
    max_results: int | None
    timeout: float | None
    max_depth: int
    warn_after: float | None
    on_slow: Callable[[SlowEvaluation], None] | None

    def __init__(
        self,
        max_results: int | None = 1000,
        timeout: float | None = 10.0,
        max_depth: int = 1000,
        warn_after: float | None = None,
        on_slow: Callable[[SlowEvaluation], None] | None = None,
    ) -> None:
        self._fill(max_results, timeout, max_depth, warn_after, on_slow)


DEFAULT_LIMITS = Limits(max_results=1000, timeout=10.0, max_depth=1000)

#: what a controller can afford per expression of a definition: a 50 ms deadline, a warning
#: from half of it (pass ``on_slow``; ``dataclasses.replace`` to configure)
DEFINITION_LIMITS = Limits(max_results=1000, timeout=0.05, max_depth=1000, warn_after=0.025)

# the context shared by programs that cannot loop or recurse (no deadline to arm)
_SHARED_ENV: tuple[Any, ...] = (Ctx(None, DEFAULT_LIMITS.max_depth, None),)

_CACHE: dict[tuple[str, tuple[str, ...]], Program] = {}
_CACHE_MAX = 1024
_CACHE_LOCK = _thread.allocate_lock()  # threading.Lock, without importing threading


def _normalise_vars(variables: Sequence[str]) -> tuple[str, ...]:
    out = []
    for name in variables:
        bare = name[1:] if name.startswith("$") else name
        if not bare:
            raise JqError(f"invalid variable name: {name!r}")
        out.append(bare)
    return tuple(out)


def compile(program: str, *, variables: Sequence[str] = ()) -> Program:
    """Parse and compile ``program``; cached by text. Raises JqParseError / JqCompileError."""
    key = (program, tuple(variables))
    cached = _CACHE.get(key)
    if cached is not None:
        return cached
    names = _normalise_vars(variables)
    tree = parse(program)
    code, needs_ctx = compile_program(tree, program, names)
    prog = Program(program, tree, code, names, needs_ctx=needs_ctx)
    with _CACHE_LOCK:
        if len(_CACHE) >= _CACHE_MAX:
            _CACHE.clear()
        _CACHE[key] = prog
    return prog


class Program:
    """A compiled jq program; safe to share between threads and calls."""

    __slots__ = ("_code", "_one", "_run", "_shared_env", "source", "tree", "variables")

    def __init__(
        self,
        source: str,
        tree: Any,
        code: Code,
        variables: tuple[str, ...],
        *,
        needs_ctx: bool = True,
    ) -> None:
        self.source = source
        self.tree = tree
        self.variables = variables
        self._code = code
        self._one = code.one
        self._run = code.run
        # Programs that cannot loop or recurse share one context (no deadline to arm).
        self._shared_env: tuple[Any, ...] | None = None
        if not variables and not needs_ctx:
            self._shared_env = _SHARED_ENV

    def __repr__(self) -> str:
        return f"Program({self.source!r})"

    @property
    def constant_path(self) -> Path | None:
        """The path this program addresses when it is made of constant keys and indexes only
        (``.a["b"][0]`` → ``("a", "b", 0)``), else None; see :func:`jq.constant_path`."""
        return constant_path(self.tree)

    @property
    def defaulted_path(self) -> tuple[Path, Any] | None:
        """``(path, default)`` when this program is ``CONSTANT_PATH // LITERAL``, else None."""
        return defaulted_path(self.tree)

    def quick(self, general: Callable[[Any], list[Any]]) -> Callable[[Any], list[Any]] | None:
        """A faster ``all(value)`` with default limits, when the program allows one, else None.

        Only for programs with one output and nothing to arm per run (no variables, loops,
        recursion or context, hence no side effect either): the function returns
        ``[output]`` itself and hands everything else (an error, a deep stack, a raised
        recursion limit) to ``general``, which must compute ``all(value)`` — it evaluates
        again, which nothing can observe. Callers evaluating per object skip the keyword
        handling and checks of :meth:`all` this way, about a fifth of a short program's cost.
        """
        one = self._one
        env = self._shared_env
        if one is None or env is None:
            return None

        def run(value: Any) -> list[Any]:
            if getrecursionlimit() <= BOUND_ABOVE:
                try:
                    return [one(value, env)]
                except (JqError, RecursionError):
                    pass
            return general(value)

        return run

    def _env(
        self,
        variables: Mapping[str, Any] | None,
        limits: Limits | None,
        stderr: Callable[[str], None] | None,
    ) -> tuple[Any, ...]:
        lim = limits if limits is not None else DEFAULT_LIMITS
        ctx = Ctx(lim.timeout, lim.max_depth, stderr)
        if not self.variables:
            return (ctx,)
        given = {}
        for k, v in (variables or {}).items():
            given[k[1:] if k.startswith("$") else k] = v
        missing = [n for n in self.variables if n not in given]
        if missing:
            raise JqError(f"variable not bound: ${missing[0]}", program=self.source)
        return (ctx, *(given[n] for n in self.variables))

    def _fail(self, e: BaseException) -> JqError:
        if isinstance(e, RecursionError):
            err: JqError = JqLimitError("maximum depth exceeded (recursion too deep)")
        else:
            assert isinstance(e, JqError)
            err = e
        if err.program is None:
            err.program = self.source
        return err

    def _deep(self, env: tuple[Any, ...], fn: Callable[..., _T], *args: Any) -> _T:
        """Re-run an evaluation that hit Python's recursion limit in a deep-stack thread.

        Takes the function and its arguments rather than a closure: a lambda in the callers
        would turn their locals into cells on every call, the hot path included."""
        ctx = env[0]
        ctx.depth = 0
        left = ctx.remaining()

        def on_deep_stack() -> _T:
            # the deadline is CPU time per thread: carry what is left there, and back
            nonlocal left
            ctx.rebase(left)
            try:
                return fn(*args)
            finally:
                left = ctx.remaining()

        try:
            return run_deep(on_deep_stack)
        except (JqError, RecursionError) as e:
            raise self._fail(e) from None
        finally:
            ctx.rebase(left)

    def _collect(self, value: Any, env: tuple[Any, ...], cap: int | None) -> list[Any]:
        if self._one is not None:
            return [self._one(value, env)]
        if cap is None:
            return list(self._run(value, env))
        out: list[Any] = []
        append = out.append
        for x in self._run(value, env):
            append(x)
            if len(out) >= cap:
                break
        return out

    def iter(
        self,
        value: Any,
        *,
        variables: Mapping[str, Any] | None = None,
        limits: Limits | None = None,
        stderr: Callable[[str], None] | None = None,
    ) -> Iterator[Any]:
        """Outputs one at a time (the result cap still applies)."""
        if limits is not None and limits.on_slow is not None and limits.warn_after is not None:
            return self._timed_iter(value, variables, limits, stderr)
        return self._iter(value, variables, limits, stderr)

    def _timed_iter(
        self,
        value: Any,
        variables: Mapping[str, Any] | None,
        limits: Limits,
        stderr: Callable[[str], None] | None,
    ) -> Iterator[Any]:
        started = clock()
        yield from self._iter(value, variables, _untimed(limits), stderr)
        self._report(limits, started)

    def _report(self, limits: Limits, started: float) -> None:
        elapsed = clock() - started
        if limits.on_slow is not None and elapsed >= (limits.warn_after or 0.0):
            limits.on_slow(SlowEvaluation(self.source, elapsed, limits.timeout))

    def _iter(
        self,
        value: Any,
        variables: Mapping[str, Any] | None,
        limits: Limits | None,
        stderr: Callable[[str], None] | None,
    ) -> Iterator[Any]:
        lim = limits if limits is not None else DEFAULT_LIMITS
        env = self._env(variables, lim, stderr)
        cap = lim.max_results
        n = 0
        try:
            bounded = getrecursionlimit() > BOUND_ABOVE
            outputs = _bounded_outputs(self._run, value, env) if bounded else self._run(value, env)
            for x in outputs:
                n += 1
                if cap is not None and n >= cap:
                    raise JqLimitError(f"query results exceed the allowed number {cap}")
                yield x
            return
        except JqError as e:
            raise self._fail(e) from None
        except RecursionError:
            pass
        # Too deep for this stack: evaluate again on a deep stack and carry on after the n
        # outputs already yielded (evaluation is deterministic; the replayed outputs' stderr
        # messages are muted).
        done = n
        rest = self._deep(env, self._replay, value, env, done, cap)
        for x in rest:
            n += 1
            if cap is not None and n >= cap:
                raise JqLimitError(
                    f"query results exceed the allowed number {cap}", program=self.source
                )
            yield x

    def _replay(self, value: Any, env: tuple[Any, ...], skip: int, cap: int | None) -> list[Any]:
        """The outputs after the first ``skip``, with the stderr of those first ones muted."""
        ctx = env[0]
        hook = ctx.stderr
        seen = 0

        def gate(text: str) -> None:
            if seen >= skip:
                (hook or sys.stderr.write)(text)

        ctx.stderr = gate
        try:
            out: list[Any] = []
            for x in self._run(value, env):
                seen += 1
                if seen > skip:
                    out.append(x)
                    if cap is not None and seen >= cap:
                        break
            return out
        finally:
            ctx.stderr = hook

    def all(
        self,
        value: Any,
        *,
        variables: Mapping[str, Any] | None = None,
        limits: Limits | None = None,
        stderr: Callable[[str], None] | None = None,
    ) -> list[Any]:
        """Every output, in order."""
        if limits is None and variables is None and stderr is None:
            one = self._one
            env = self._shared_env
            if one is not None and env is not None and getrecursionlimit() <= BOUND_ABOVE:
                # the engine's hot path (status matchers, per object): one output, default
                # limits, no deadline to arm; the result cap cannot be reached
                try:
                    return [one(value, env)]
                except JqError as e:
                    raise self._fail(e) from None
                except RecursionError:
                    return self._deep(env, self._collect, value, env, DEFAULT_LIMITS.max_results)
        if limits is not None and limits.on_slow is not None and limits.warn_after is not None:
            started = clock()
            out = self.all(value, variables=variables, limits=_untimed(limits), stderr=stderr)
            self._report(limits, started)
            return out
        lim = limits if limits is not None else DEFAULT_LIMITS
        env = self._shared_env
        # the shared context has no deadline: given limits with a timeout get their own
        if env is None or variables is not None or stderr is not None or limits is not None:
            env = self._env(variables, lim, stderr)
        cap = lim.max_results
        try:
            if getrecursionlimit() > BOUND_ABOVE:
                out = run_bounded(self._collect, value, env, cap)
            elif self._one is not None:
                out = [self._one(value, env)]
            elif cap is None:
                out = list(self._run(value, env))
            else:
                # _collect inlined: a method call per evaluation shows on short programs
                out = []
                append = out.append
                for x in self._run(value, env):
                    append(x)
                    if len(out) >= cap:
                        break
        except JqError as e:
            raise self._fail(e) from None
        except RecursionError:
            out = self._deep(env, self._collect, value, env, cap)
        if cap is not None and out and len(out) >= cap:
            raise JqLimitError(
                f"query results exceed the allowed number {cap}", program=self.source
            )
        return out

    def first(
        self,
        value: Any,
        *,
        variables: Mapping[str, Any] | None = None,
        limits: Limits | None = None,
        stderr: Callable[[str], None] | None = None,
    ) -> Any:
        """The first output, or None when there is none; later outputs are never computed."""
        if limits is not None and limits.on_slow is not None and limits.warn_after is not None:
            started = clock()
            x = self.first(value, variables=variables, limits=_untimed(limits), stderr=stderr)
            self._report(limits, started)
            return x
        env = self._shared_env
        if env is None or variables is not None or limits is not None or stderr is not None:
            env = self._env(variables, limits, stderr)
        try:
            if getrecursionlimit() > BOUND_ABOVE:
                return run_bounded(self._first, value, env)
            if self._one is not None:
                return self._one(value, env)
            return self._first(value, env)
        except JqError as e:
            raise self._fail(e) from None
        except RecursionError:
            return self._deep(env, self._first, value, env)

    def _first(self, value: Any, env: tuple[Any, ...]) -> Any:
        if self._one is not None:
            return self._one(value, env)
        for x in self._run(value, env):
            return x
        return None

    def paths(
        self,
        value: Any,
        *,
        variables: Mapping[str, Any] | None = None,
        limits: Limits | None = None,
        stderr: Callable[[str], None] | None = None,
    ) -> list[list[Any]]:
        """What ``path(PROGRAM)`` yields: the locations the program's outputs come from."""
        if limits is not None and limits.on_slow is not None and limits.warn_after is not None:
            started = clock()
            out = self.paths(value, variables=variables, limits=_untimed(limits), stderr=stderr)
            self._report(limits, started)
            return out
        lim = limits if limits is not None else DEFAULT_LIMITS
        env = self._env(variables, lim, stderr)
        cap = lim.max_results
        try:
            if getrecursionlimit() > BOUND_ABOVE:
                return run_bounded(self._paths, value, env, cap)
            return self._paths(value, env, cap)
        except JqError as e:
            raise self._fail(e) from None
        except RecursionError:
            return self._deep(env, self._paths, value, env, cap)

    def _paths(self, value: Any, env: tuple[Any, ...], cap: int | None) -> list[list[Any]]:
        out: list[list[Any]] = []
        for x, p in self._code.paths(value, (), env):
            if p is None:
                raise JqRuntimeError(f"invalid path against: {_preview(x)}", program=self.source)
            out.append(list(p))
            if cap is not None and len(out) >= cap:
                raise JqLimitError(f"query results exceed the allowed number {cap}")
        return out


def _bounded_outputs(
    run: Callable[[Any, tuple[Any, ...]], Iterable[Any]], value: Any, env: tuple[Any, ...]
) -> Iterator[Any]:
    """``run(value, env)``'s outputs, each step evaluated under ``run_bounded`` (between two
    outputs the caller's own code runs with its thread's counter as it was)."""
    outputs = iter(run_bounded(run, value, env))
    while True:
        try:
            x = run_bounded(next, outputs)
        except StopIteration:
            return
        yield x


def _untimed(limits: Limits) -> Limits:
    return dataclasses.replace(limits, on_slow=None)


def _preview(v: Any) -> str:
    return type_error_preview(v)
