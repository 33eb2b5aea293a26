"""Expression results shared between equal inputs, across the workloads of a process.

Each workload's evaluation runs its definition's expressions on its own object
(:class:`~workload_map.engine.runner.Evaluations`, a memo per workload). Across a fleet the
same expression meets equal inputs again and again: the statuses of 10k Jobs read
``.spec.suspend`` and ``.status``, their replicas ``.spec.parallelism`` and
``.spec.completions``, and the watch caches keep equal subtrees as one object
(``kube/trim.py``). :class:`SharedEvaluations` is that per-workload memo with a process-wide
table in front: an expression whose read paths are known
(:func:`~workload_map.engine.reads.input_paths`) is keyed by the values at those paths (the
very objects for objects and arrays, type and value for scalars), so a workload whose object
holds the same values there gets the results another workload's evaluation made.

Exact by construction: two inputs with the same key give the same results (the paths are all
the expression reads, and a path whose way down passes anything but objects is not keyed at
all). Only results are shared, never failures (an error is raised again by evaluating), and
never for a workload with references bound (``$runtime`` differs per workload). Results are
shared lists: callers read them, as they read the per-workload memo's. The table is bounded
(emptied when full) and holds the keyed values, so an identity is never reused while its
entry lives.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from typing import Any, ClassVar, TypeVar

from workload_map.engine.reads import Path, input_paths, minimal
from workload_map.engine.runner import Evaluations, Expression

__all__ = ["Keyer", "SharedEvaluations", "clear", "derived", "keyer"]

#: (expression text, key) -> (the keyed values, held; the results)
_TABLE: dict[tuple[str, tuple[Any, ...]], tuple[tuple[Any, ...], list[Any]]] = {}
_TABLE_KEPT = 16384
#: per structure and what is derived: the table of derived values kept
_DERIVED_KEPT = 4096

_T = TypeVar("_T")
#: a key builder: (the key of a value, the objects it holds) or None
Keyer = Callable[[dict[str, Any]], tuple[tuple[Any, ...], tuple[Any, ...]] | None]


def clear() -> None:
    """Forget every shared result (tests; the table is bounded on its own)."""
    _TABLE.clear()


def keyer(paths: tuple[Path, ...]) -> Keyer:
    """The key of a value by what it holds at ``paths``: the very objects for objects and
    arrays (held, so that their ids stay theirs), the value for strings and null, type and
    value for other scalars (1, 1.0 and True are equal keys but not equal values). None when
    a path passes anything but objects (a lookup there fails: not keyed)."""

    def key(value: dict[str, Any]) -> tuple[tuple[Any, ...], tuple[Any, ...]] | None:
        parts: list[Any] = []
        held: list[Any] = []
        for path in paths:
            v: Any = value
            for step in path:
                if type(v) is dict:
                    v = v.get(step)
                elif v is None:
                    break
                else:
                    return None
            kind = type(v)
            if kind is str or v is None:
                parts.append(v)
            elif kind is dict or kind is list:
                parts.append(id(v))  # an int part is an id: int scalars are tuples
                held.append(v)
            elif kind is int or kind is float or kind is bool:
                parts.append((kind, v))
            else:
                return None
        return tuple(parts), tuple(held)

    return key


def _keyer_of(text: str) -> Keyer | None:
    found = _KEYERS.get(text, _NO_KEY)
    if found is _NO_KEY:
        paths = input_paths(text)
        found = _KEYERS[text] = keyer(paths) if paths is not None else None
        if len(_KEYERS) > 4096:
            _KEYERS.clear()
    return found  # type: ignore[return-value]


_KEYERS: dict[str, Keyer | None] = {}
#: a table of derived values: key -> (the objects the key holds, the value)
_Derived = dict[tuple[Any, ...], tuple[tuple[Any, ...], Any]]
_NO_KEY = object()


def derived(
    memo: dict[Any, Any],
    what: Hashable,
    texts: Callable[[], Iterable[str]],
    value: dict[str, Any],
    compute: Callable[[], _T],
) -> _T:
    """``compute()``, a value derived from ``value`` by the expressions ``texts`` alone, kept in
    ``memo`` (a definition's :attr:`~workload_map.engine.structure.Structure.memo`) under
    ``what`` by the values those expressions read, and reused for any value holding the same
    (module doc). A failure is not kept."""
    found: tuple[Keyer | None, _Derived] | None = memo.get(("equal inputs", what))
    if found is None:
        union: set[Path] = set()
        for text in texts():
            paths = input_paths(text)
            if paths is None:
                union = {()}
                break
            union.update(paths)
        kept: _Derived = {}
        found = (keyer(minimal(union)) if () not in union else None, kept)
        memo[("equal inputs", what)] = found
    key_of, table = found
    keyed = key_of(value) if key_of is not None else None
    if keyed is None:
        return compute()
    hit = table.get(keyed[0])
    if hit is not None:
        return hit[1]  # type: ignore[no-any-return]  # (kept by compute: a _T)
    out = compute()
    if len(table) >= _DERIVED_KEPT:
        table.clear()
    table[keyed[0]] = (keyed[1], out)
    return out


class SharedEvaluations(Evaluations):
    """A workload's memo of evaluations (:class:`~workload_map.engine.runner.Evaluations`)
    that takes and leaves results in the process's table of equal inputs (module doc)."""

    __slots__ = ()
    shared: ClassVar[bool] = True

    def __call__(self, expression: Expression, value: Any) -> list[Any]:
        if expression.direct or type(value) is not dict or self.bindings:
            return super().__call__(expression, value)
        key_of = _keyer_of(expression.text)
        keyed = key_of(value) if key_of is not None else None
        if keyed is None:
            return super().__call__(expression, value)
        key = (expression.text, keyed[0])
        found = _TABLE.get(key)
        if found is not None:
            return found[1]
        result = super().__call__(expression, value)
        if len(_TABLE) >= _TABLE_KEPT:
            _TABLE.clear()
        _TABLE[key] = (keyed[1], result)
        return result
