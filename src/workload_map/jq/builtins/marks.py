"""The ``@builtin`` mark a group module puts on the functions it implements, and the record of
them by module.

Kept apart from ``registry`` so that a group module depends on the mark only: the registry names
the group modules (it imports each on first use), and a group importing the registry back would
close an import circle.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["EFFECTS", "KINDS", "builtin", "marked"]

KINDS = ("value", "stream", "special", "jq")
EFFECTS = ("environment", "input", "halt", "logging", "unbounded-loop")
_MARK = "__jq_builtin__"
#: the marked functions of each module, by the module's name, as they are marked
_MARKED: dict[str, list[Callable[..., Any]]] = {}
F = TypeVar("F", bound=Callable[..., Any])


def builtin(
    name: str,
    arity: int,
    *,
    kind: str = "value",
    effect: str = "",
    listed: bool = True,
    needs_ctx: bool | None = None,
) -> Callable[[F], F]:
    """Mark a function as the builtin ``name/arity`` (stackable: one function, several names);
    ``listed=False`` keeps it out of ``builtins`` (names starting ``_ @ $`` never are);
    ``needs_ctx`` whether a call can loop, recurse or read the run's context (the program then
    gets a context of its own): by default a value native cannot and every other kind can."""
    if kind not in KINDS[:3] or (effect and effect not in EFFECTS):
        raise ValueError(f"builtin {name}/{arity}: unknown kind {kind!r} or effect {effect!r}")

    def mark(fn: F) -> F:
        ctx = kind != "value" if needs_ctx is None else needs_ctx
        before = getattr(fn, _MARK, ())
        if not before:
            _MARKED.setdefault(fn.__module__, []).append(fn)
        setattr(fn, _MARK, (*before, (name, arity, kind, effect, listed, ctx)))
        return fn

    return mark


def marked(
    module: Any,
) -> dict[tuple[str, int], tuple[Callable[..., Any], str, str, bool, bool]]:
    """The builtins ``module`` marks: (name, arity) -> (function, kind, effect, listed,
    needs_ctx), from the functions it marked as they were marked (families built from a table,
    such as math's ``sin``/``cos``/…, included). A function counts for the module that defines
    it, so an imported builtin is not registered twice. Both the registry's group loading (a
    program's first call of one of the group's builtins) and ``index.py``'s generator read
    this one record."""
    found: dict[tuple[str, int], tuple[Callable[..., Any], str, str, bool, bool]] = {}
    for fn in _MARKED.get(module.__name__, ()):
        for name, arity, kind, effect, listed, ctx in getattr(fn, _MARK):
            if (name, arity) in found:
                raise RuntimeError(f"builtin {name}/{arity} is registered twice")
            found[(name, arity)] = (fn, kind, effect, listed, ctx)
    return found
