"""Karta's rules for jq expressions in definitions: safety and writability.

``karta_violations`` rejects what the reference validator rejects (assignment and update
operators, ``del``, ``..``, ``recurse``, ``walk``, ``paths``, ``range``, ``repeat``) with the
reference's messages, but checks the WHOLE tree (the reference only looks at function arguments
and binary operands, so ``[del(.x)]`` slipped through there).

It also enforces workload-map's own security rules, beyond the reference's, for expressions a
controller evaluates on behalf of whoever wrote a cluster-scoped definition: no reading the
evaluator's environment (``$ENV``, ``env``), its inputs or file names (``input``, ``inputs``,
``input_filename``), no stopping it or writing to its logs (``halt``, ``halt_error``, ``debug``,
``stderr``), no ``until`` or ``while`` (no catalog definition needs them; they are how a program
runs forever): each is a builtin the registry (``jq.builtins.registry``) marks with that effect,
so a new builtin is refused by its mark, not by a list kept here. And, as a conservative
syntactic rule, no recursive ``def``.
Each ``Violation`` says which rule it breaks (``rule``) and whether the reference has it.

``writability`` tells whether every output of a program is a location in its input (what
``path(…)`` can find), so that write-back through the program is meaningful. As in the
reference's write-back engine, negative indexes and slices are not writable locations.
"""

from __future__ import annotations

import enum
import functools
from typing import Any

from workload_map.jq import ast
from workload_map.jq.builtins import registry
from workload_map.jq.trees import parse

__all__ = [
    "SafetyRule",
    "Violation",
    "is_writable",
    "karta_violations",
    "unwritable",
    "writability",
]

# the reference validator's own list of names (any function so named, a local def too): kept as
# its list, where workload-map's rules are effects marked on the builtins themselves
_EXCESSIVE = frozenset({"range", "paths", "recurse", "walk", "repeat"})


class SafetyRule(enum.Enum):
    """The rule a construct breaks: the reference's, or workload-map's own security rules."""

    MODIFYING_OPERATOR = "modifying-operator"
    DELETE = "delete"
    RECURSIVE_DESCENT = "recursive-descent"
    EXCESSIVE_OUTPUT = "excessive-output"
    # workload-map's own rules (beyond the reference's)
    ENVIRONMENT = "environment"
    INPUT = "input"
    HALT = "halt"
    LOGGING = "logging"
    RECURSIVE_DEF = "recursive-def"
    UNBOUNDED_LOOP = "unbounded-loop"
    # writability of suspend/resume action paths
    NOT_A_LOCATION = "not-a-location"

    @property
    def in_reference(self) -> bool:
        """Whether the reference validator has this rule too (else it is workload-map's own)."""
        return self in _REFERENCE_RULES


_REFERENCE_RULES = frozenset(
    {
        SafetyRule.MODIFYING_OPERATOR,
        SafetyRule.DELETE,
        SafetyRule.RECURSIVE_DESCENT,
        SafetyRule.EXCESSIVE_OUTPUT,
    }
)


class Violation:
    """A forbidden construct: the message (the reference's words for the reference's rules, no
    offset in it), the construct's offset in the program, the construct and the rule.

    Immutable, compared and hashed by its fields: what a frozen dataclass gives, written out
    because creating a dataclass costs more at import (~1.4 ms) than the whole of this module."""

    __slots__ = ("construct", "message", "offset", "rule")
    message: str
    offset: int
    construct: str
    rule: SafetyRule

    def __init__(
        self,
        message: str,
        offset: int,
        construct: str,
        rule: SafetyRule = SafetyRule.EXCESSIVE_OUTPUT,
    ) -> None:
        for name, value in zip(self.__slots__, (construct, message, offset, rule), strict=True):
            object.__setattr__(self, name, value)

    def _fields(self) -> tuple[str, int, str, SafetyRule]:
        return (self.message, self.offset, self.construct, self.rule)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"cannot assign to field {name!r}: Violation is immutable")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field {name!r}: Violation is immutable")

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not Violation:
            return NotImplemented
        assert isinstance(other, Violation)
        return self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())

    def __repr__(self) -> str:
        return (
            f"Violation(message={self.message!r}, offset={self.offset!r}, "
            f"construct={self.construct!r}, rule={self.rule!r})"
        )


# what a builtin marked with an effect does (the marks are in the builtin registry)
_WHY = {
    "environment": "reads the evaluating process's environment",
    "input": "reads the evaluating process's inputs or input file name",
    "halt": "stops the evaluating process",
    "logging": "writes to the evaluating process's log",
    "unbounded-loop": "may loop forever",
}


@functools.cache
def _forbidden() -> dict[str, tuple[SafetyRule, str]]:
    """Builtin name (``$NAME`` for a variable) -> the rule it breaks and why, from the effects
    the registry marks; by name, any arity (a local ``def env`` is refused too: conservative)."""
    return {b.name: (SafetyRule(b.effect), _WHY[b.effect]) for b in registry.entries() if b.effect}


_OURS = "(a workload-map security rule)"


def _recursive_defs(tree: Any) -> list[Violation]:
    """Each ``def`` whose body calls the function itself (by name and arity, conservatively:
    a jq function can only reach itself through a call in its own body)."""
    found: list[Violation] = []
    for node in _walk(tree):
        if not isinstance(node, ast.WithDefs):
            continue
        for d in node.defs:
            arity = len(d.params)
            if any(
                isinstance(n, ast.Call) and n.name == d.name and len(n.args) == arity
                for n in _walk(d.body)
            ):
                found.append(
                    Violation(
                        f"recursive function '{d.name}/{arity}' is not allowed {_OURS}",
                        d.offset,
                        f"def {d.name}",
                        SafetyRule.RECURSIVE_DEF,
                    )
                )
    return found


def _walk(tree: Any) -> list[Any]:
    """Every node of the tree, iteratively (deep programs cannot overflow the stack)."""
    out: list[Any] = []
    stack = [tree]
    while stack:
        node = stack.pop()
        out.append(node)
        stack.extend(reversed(ast.iter_children(node)))
    return out


def karta_violations(program: str) -> list[Violation]:
    """Every forbidden construct anywhere in ``program``, in source order.

    Raises ``JqParseError`` when the program does not parse. The verdict of a text is kept
    (the same expressions recur across definitions, and the webhook validates each one).
    """
    return list(_violations(program))


@functools.lru_cache(maxsize=4096)
def _violations(program: str) -> tuple[Violation, ...]:
    tree = parse(program)
    found: list[Violation] = _recursive_defs(tree)
    for node in _walk(tree):
        if isinstance(node, ast.Update):
            found.append(
                Violation(
                    f"modifying operator '{node.op}' is not allowed",
                    node.offset,
                    node.op,
                    SafetyRule.MODIFYING_OPERATOR,
                )
            )
        elif isinstance(node, ast.RecurseAll):
            found.append(
                Violation(
                    "recursive descent '..' is not allowed",
                    node.offset,
                    "..",
                    SafetyRule.RECURSIVE_DESCENT,
                )
            )
        elif isinstance(node, ast.Var) and "$" + node.name in _forbidden():
            rule, why = _forbidden()["$" + node.name]
            found.append(
                Violation(
                    f"variable '${node.name}' {why} and is not allowed {_OURS}",
                    node.offset,
                    f"${node.name}",
                    rule,
                )
            )
        elif isinstance(node, ast.Call):
            if node.name == "del":
                found.append(
                    Violation("del function is not allowed", node.offset, "del", SafetyRule.DELETE)
                )
            elif node.name in _EXCESSIVE:
                found.append(
                    Violation(
                        f"function '{node.name}' may produce excessive output and is not allowed",
                        node.offset,
                        node.name,
                        SafetyRule.EXCESSIVE_OUTPUT,
                    )
                )
            elif node.name in _forbidden():
                rule, why = _forbidden()[node.name]
                found.append(
                    Violation(
                        f"function '{node.name}' {why} and is not allowed {_OURS}",
                        node.offset,
                        node.name,
                        rule,
                    )
                )
    found.sort(key=lambda v: v.offset)
    return tuple(found)


# --- writability -----------------------------------------------------------------------------

# path-mode facts of the reference's write-back engine (which calls keep a location), by name
_LOCATION_CALLS_1 = frozenset({"select", "first", "getpath", "recurse"})
_TRANSPARENT_CALLS = {("limit", 2): 1, ("skip", 2): 1, ("nth", 2): 1, ("first", 1): 0}
_EMPTY_CALLS = frozenset({("empty", 0), ("error", 0), ("error", 1)})


def _negative_literal(node: Any) -> bool:
    if isinstance(node, ast.Unary) and node.op == "-":
        inner = node.operand
        return isinstance(inner, ast.Literal) and inner.kind == "number" and inner.value > 0
    return isinstance(node, ast.Literal) and node.kind == "number" and node.value < 0


def _describe(node: Any) -> str:
    if isinstance(node, ast.Slice):
        return "a slice is not a writable location"
    if isinstance(node, ast.Index):
        return "a negative index is not a writable location"
    if isinstance(node, ast.Call):
        return f"'{node.name}' computes a value"
    if isinstance(node, ast.Literal):
        return "a literal is not a location"
    if isinstance(node, (ast.Str, ast.Format)):
        return "a string is computed"
    if isinstance(node, ast.Var):
        return f"variable ${node.name} is not a location"
    if isinstance(node, ast.Array):
        return "array construction is not a location"
    if isinstance(node, ast.Object):
        return "object construction is not a location"
    if isinstance(node, (ast.Binary, ast.Unary)):
        op = node.op
        return f"operator '{op}' computes a value"
    if isinstance(node, ast.Update):
        return f"operator '{node.op}' computes a value"
    if isinstance(node, (ast.Reduce, ast.Foreach)):
        return "reduce/foreach computes a value"
    if isinstance(node, ast.Try):
        return "a catch handler computes a value"
    if isinstance(node, ast.WithDefs):
        return "function definitions are not supported in a writable path"
    return f"{type(node).__name__.lower()} is not a location"


def _non_location(node: Any) -> Any | None:
    """The first node (in source order) whose outputs are not locations, or None."""
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, (ast.Identity, ast.RecurseAll, ast.Break)):
            continue
        if isinstance(n, ast.Slice):
            return n  # a slice is a copy, not a location (REFERENCE §2.4b)
        if isinstance(n, ast.Index):
            if _negative_literal(n.key):
                return n  # negative indexes count from the end: not a stable location
            stack.append(n.target)
        elif isinstance(n, (ast.Iterate, ast.Optional)):
            stack.append(n.target)
        elif isinstance(n, (ast.Pipe, ast.Comma, ast.Alt)):
            stack.extend((n.right, n.left))
        elif isinstance(n, ast.If):
            branches = [n.then, *(t for _c, t in n.elifs)]
            if n.otherwise is not None:
                branches.append(n.otherwise)
            stack.extend(reversed(branches))
        elif isinstance(n, ast.Try) and n.catch is None:
            stack.append(n.body)
        elif isinstance(n, (ast.Bind, ast.Label)):
            stack.append(n.body)
        elif isinstance(n, ast.Call):
            key = (n.name, len(n.args))
            if key in _EMPTY_CALLS:
                continue
            if key in _TRANSPARENT_CALLS:
                stack.append(n.args[_TRANSPARENT_CALLS[key]])
            elif n.name in _LOCATION_CALLS_1 and len(n.args) <= 2:
                if n.name == "recurse" and n.args:
                    stack.append(n.args[0])
                continue
            else:
                return n
        elif isinstance(n, ast.Literal) and n.kind == "null":
            return n
        else:
            return n
    return None


@functools.lru_cache(maxsize=4096)
def unwritable(program: str) -> Violation | None:
    """None when every output of ``program`` is a location in its input; else the first
    construct that is not, as data (``message`` without the offset, ``offset``, ``construct``).

    Raises ``JqParseError`` when the program does not parse.
    """
    tree = parse(program)
    bad = _non_location(tree)
    if bad is None:
        return None
    construct = getattr(bad, "name", None) or getattr(bad, "op", None) or type(bad).__name__
    return Violation(_describe(bad), bad.offset, str(construct), SafetyRule.NOT_A_LOCATION)


def writability(program: str) -> str | None:
    """The text form of :func:`unwritable`: ``"REASON (offset N)"`` or None (kept until its
    last caller moves to :func:`unwritable`)."""
    bad = unwritable(program)
    return None if bad is None else f"{bad.message} (offset {bad.offset})"


def is_writable(program: str) -> bool:
    """Whether every output of ``program`` is a location (fields, indexes, ``[]``, ``select``, …)."""
    return writability(program) is None
