"""Evaluating a definition's jq expressions: compiled once, run with the reference's limits.

Every expression of a Karta runs against the whole workload object or the whole pod. The
reference's runner caps results at 1000 and time at 10 s per query; :mod:`workload_map.jq` has
those defaults. Constant paths (``.metadata.labels["x"]``, ``.spec.replicas // 1``, as the jq
package recognises them: :func:`jq.constant_path`) — most of what definitions contain, and what
runs once per pod — take a direct dictionary walk with the same results; anything else, and any
type surprise on the way, goes through the jq engine.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

from workload_map import jq
from workload_map.engine.errors import ExtractionError
from workload_map.model.references import variables_used

__all__ = [
    "Evaluations",
    "Expression",
    "ExpressionCache",
    "Run",
    "direct",
    "lookup",
]

_MISSING = object()


def _walker(
    steps: jq.Path, default: Any, slow: Callable[[Any], list[Any]]
) -> Callable[[Any], list[Any]]:
    """A direct evaluator of a constant path (``default``: the ``// literal``, if any).

    It agrees with jq where values have the expected types (null through missing keys and
    out-of-range indexes, negative indexes from the end) and hands any other input to ``slow``.
    """
    absent = None if default is _MISSING else default
    defaulted = default is not _MISSING
    if all(type(step) is str for step in steps):
        keys: tuple[str, ...] = tuple(str(step) for step in steps)
        if not defaulted and 1 <= len(keys) <= 3:
            return _KEY_WALKERS[len(keys)](keys, slow)

        # object keys only: most definition paths, and the ones evaluated once per pod
        def walk_keys(root: Any) -> list[Any]:
            v = root
            for key in keys:
                if v is None:
                    return [absent]
                if type(v) is not dict:
                    return slow(root)
                v = v.get(key)
            if defaulted and (v is None or v is False):
                return [default]
            return [v]

        return walk_keys
    plan: tuple[tuple[bool, Any], ...] = tuple((type(step) is str, step) for step in steps)

    def walk(root: Any) -> list[Any]:
        v = root
        for is_key, step in plan:
            if v is None:
                return [absent]
            if is_key:
                if type(v) is not dict:
                    return slow(root)
                v = v.get(step)
            else:
                if type(v) is not list:
                    return slow(root)
                size = len(v)
                v = v[step] if -size <= step < size else None
        if defaulted and (v is None or v is False):
            return [default]
        return [v]

    return walk


def _keys1(keys: tuple[str, ...], slow: Callable[[Any], list[Any]]) -> Callable[[Any], list[Any]]:
    (k0,) = keys

    def walk1(root: Any) -> list[Any]:
        if type(root) is dict:
            return [root.get(k0)]
        return [None] if root is None else slow(root)

    return walk1


def _keys2(keys: tuple[str, ...], slow: Callable[[Any], list[Any]]) -> Callable[[Any], list[Any]]:
    k0, k1 = keys

    def walk2(root: Any) -> list[Any]:
        if type(root) is dict:
            v = root.get(k0)
            if type(v) is dict:
                return [v.get(k1)]
            if v is None:
                return [None]
        elif root is None:
            return [None]
        return slow(root)

    return walk2


def _keys3(keys: tuple[str, ...], slow: Callable[[Any], list[Any]]) -> Callable[[Any], list[Any]]:
    k0, k1, k2 = keys

    def walk3(root: Any) -> list[Any]:
        if type(root) is dict:
            v = root.get(k0)
            if type(v) is dict:
                v = v.get(k1)
                if type(v) is dict:
                    return [v.get(k2)]
            if v is None:
                return [None]
        elif root is None:
            return [None]
        return slow(root)

    return walk3


#: walkers of 1-3 object keys without a default, unrolled: pod label paths
#: (``.metadata.labels["x"]``), evaluated per pod, are the hottest code of attribution
_KEY_WALKERS: dict[
    int, Callable[[tuple[str, ...], Callable[[Any], list[Any]]], Callable[[Any], list[Any]]]
] = {1: _keys1, 2: _keys2, 3: _keys3}


def lookup(value: Any, path: jq.Path) -> Any:
    """jq's ``getpath``, with None where the path runs through a value of another type."""
    try:
        return jq.getpath(value, path)
    except jq.JqError:
        return None


class Expression:
    """One compiled expression of a definition.

    ``evaluate(value)`` is every output (the reference's ``Evaluate``): a direct walk for
    constant paths that hands anything unexpected to the jq engine, else the jq engine.
    ``path`` is the constant path the expression addresses (None when it is computed) and
    ``located`` the same for ``PATH // LITERAL`` too (where the value is read from).
    """

    __slots__ = (
        "_program",
        "_quick",
        "direct",
        "evaluate",
        "located",
        "path",
        "text",
        "timed_out",
        "variables",
    )

    def __init__(self, text: str, variables: Sequence[str] = ()):
        self.text = text
        #: the definition's reference variables this expression uses (``$runtime``): bound per
        #: workload by :meth:`bound`; :meth:`evaluate` binds them to null (nothing resolved)
        self.variables: tuple[str, ...] = variables_used(text, variables) if variables else ()
        # set when an evaluation ran past the jq deadline: later ones fail at once, so a slow
        # definition costs one deadline per process (command), not one per object
        self.timed_out: ExtractionError | None = None
        self._program: jq.Program | None = None
        self._quick: Callable[[Any], list[Any]] | None = None
        self.path: jq.Path | None = None
        self.located: jq.Path | None = None
        default: Any = _MISSING
        try:
            tree = jq.parse(text)
        except jq.JqError:
            tree = None  # reported, with the expression, when it is evaluated
        if tree is not None and not self.variables:
            self.path = self.located = jq.constant_path(tree)
            defaulted = jq.defaulted_path(tree) if self.path is None else None
            if defaulted is not None:
                self.located, default = defaulted
        self.evaluate: Callable[[Any], list[Any]] = (
            self._slow if self.located is None else _walker(self.located, default, self._slow)
        )
        #: a direct dictionary walk: cheaper to repeat than to memoise (see :class:`Evaluations`)
        self.direct = self.located is not None

    def _compiled(self) -> jq.Program:
        if self._program is None:
            try:
                self._program = jq.compile(self.text, variables=self.variables)
            except jq.JqParseError as err:
                raise ExtractionError(
                    f"failed to parse JQ expression '{self.text}': {err}"
                ) from err
            except jq.JqError as err:
                raise ExtractionError(
                    f"failed to compile JQ expression '{self.text}': {err}"
                ) from err
            if self.evaluate == self._slow and not self.variables:
                # later evaluations call the compiled program straight (it hands errors and
                # anything unusual back to _slow): one layer instead of _slow and Program.all;
                # not over a walker, nor over whatever else a caller put in the slot
                quick = self._program.quick(self._slow)
                if quick is not None:
                    self.evaluate = self._quick = quick
        return self._program

    def _slow(self, value: Any, bindings: Mapping[str, Any] | None = None) -> list[Any]:
        if self.timed_out is not None:
            raise self.timed_out
        program = self._program if self._program is not None else self._compiled()
        try:
            if self.variables:
                given = bindings or {}
                found = program.all(value, variables={n: given.get(n) for n in self.variables})
            else:
                found = program.all(value)
            return found if type(found) is list else list(found)
        except jq.JqDeadlineError as err:
            if self._quick is not None and self.evaluate is self._quick:
                self.evaluate = self._slow  # fail at once from now on, without evaluating
            self.timed_out = ExtractionError(
                f"JQ expression '{self.text}' ran past its deadline ({err.timeout:g} s); "
                "it is not evaluated again in this command"
            )
            raise self.timed_out from err
        except jq.JqError as err:
            raise ExtractionError(
                f"JQ execution error for expression '{self.text}': {err}"
            ) from err

    def all(self, value: Any) -> list[Any]:
        """Every output (the reference's ``Evaluate``)."""
        return self.evaluate(value)

    def bound(self, value: Any, bindings: Mapping[str, Any] | None) -> list[Any]:
        """Every output with the reference variables bound (an absent one is null)."""
        if not self.variables:
            return self.evaluate(value)
        return self._slow(value, bindings)

    def paths(self, value: Any) -> list[list[str | int]]:
        """The locations the expression addresses (``path(expr)``); raises when computed."""
        program = self._compiled()
        try:
            return [list(p) for p in program.paths(value)]
        except jq.JqError as err:
            raise ExtractionError(
                f"expression '{self.text}' does not address writable locations: {err}"
            ) from err


class ExpressionCache:
    """Expressions of one definition, compiled on first use.

    ``variables`` are the definition's reference names: an expression using one is compiled
    with it declared (see :attr:`Expression.variables`). The pod-selector paths come from a
    cache without them, so a reference never reaches a selector.
    """

    def __init__(self, variables: Sequence[str] = ()) -> None:
        self._items: dict[str, Expression] = {}
        self.variables = tuple(variables)

    def get(self, text: str) -> Expression:
        found = self._items.get(text)
        if found is None:
            found = self._items[text] = Expression(text, self.variables)
        return found

    def timed_out(self) -> list[str]:
        """The expressions that ran past their deadline (and are no longer evaluated)."""
        return [text for text, e in self._items.items() if e.timed_out is not None]

    def all(self, text: str, value: Any) -> list[Any]:
        return self.get(text).all(value)


#: how a view evaluates an expression on a value: :func:`direct`, or a per-workload memo
Run = Callable[[Expression, Any], list[Any]]


def direct(expression: Expression, value: Any) -> list[Any]:
    """Evaluate without memoising (one-off questions about a single pod or object)."""
    return expression.evaluate(value)


class Evaluations:
    """Each (expression, value) of one workload evaluated at most once, failures included.

    Several views ask the same question (describe reads scales for the desired count, the
    nodes and the gang minimum); an expression that fails — an error, or the 10 s deadline —
    must fail once, not once per view, so the error is kept and raised again. Entries hold the
    value itself, so an ``id`` is never reused for another value while the memo lives.
    """

    __slots__ = ("_done", "bindings")
    #: whether results are shared with other workloads (``engine.equal_inputs``'s subclass):
    #: read instead of an ``isinstance`` so that a command sharing none loads no such module
    shared: ClassVar[bool] = False

    def __init__(self, bindings: Mapping[str, Any] | None = None) -> None:
        self._done: dict[tuple[int, int], tuple[Any, list[Any] | None, ExtractionError | None]] = {}
        #: the workload's resolved references (``$name`` -> object, list or null)
        self.bindings = bindings

    def __call__(self, expression: Expression, value: Any) -> list[Any]:
        if expression.direct:
            # a constant path: a few dictionary lookups, bounded, and failing the same way each
            # time (a type surprise goes to jq, which fails fast): repeating it costs less than
            # the memo's key and entry, and it runs per pod
            return expression.evaluate(value)
        key = (id(expression), id(value))
        found = self._done.get(key)
        if found is not None and found[0] is value:
            if found[2] is not None:
                raise found[2]
            return found[1]  # type: ignore[return-value]
        try:
            result = (
                expression.bound(value, self.bindings)
                if expression.variables
                else expression.evaluate(value)
            )
        except ExtractionError as err:
            self._done[key] = (value, None, err)
            raise
        self._done[key] = (value, result, None)
        return result
