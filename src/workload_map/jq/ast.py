"""The jq syntax tree: frozen node classes plus ``format`` printing a tree back to jq source.

Nodes carry the character offset of the construct they came from (``offset``, excluded from
equality) so that compile and runtime errors and Karta safety findings can point into the program.
The tree is canonical: ``.a``, ``."a"`` and ``.["a"]`` are the same ``Index`` node, so
``parse(format(tree)) == tree`` holds for every tree the parser produces.
"""

from __future__ import annotations

import json
import math
from typing import Any, ClassVar, dataclass_transform

__all__ = [
    "Alt",
    "Array",
    "Binary",
    "Bind",
    "Break",
    "Call",
    "Comma",
    "Foreach",
    "Format",
    "FuncDef",
    "Identity",
    "If",
    "Index",
    "Iterate",
    "Label",
    "Literal",
    "Node",
    "Object",
    "ObjectEntry",
    "Optional",
    "PArray",
    "PObject",
    "PVar",
    "Pattern",
    "Pipe",
    "RecurseAll",
    "Reduce",
    "Slice",
    "Str",
    "Try",
    "Unary",
    "Update",
    "Var",
    "WithDefs",
    "format",
    "iter_children",
]


@dataclass_transform(frozen_default=True, eq_default=True)
class _NodeType(type):
    """Makes each node class (annotated fields, defaults as class values) slotted and frozen as
    its class statement runs: one class object per node, where a class decorator rebuilding the
    class for its slots made two (about 2M instructions of every start, callgrind)."""

    def __new__(mcs, name: str, bases: tuple[type, ...], namespace: dict[str, Any]) -> Any:
        if bases:  # a node class, not _Node itself
            # the class's own annotations (inspect.get_annotations would import inspect, ~5 ms)
            fields = tuple(namespace.get("__annotations__", {}))
            namespace["DEFAULTS"] = {f: namespace.pop(f) for f in fields if f in namespace}
            namespace["__slots__"] = namespace["FIELDS"] = namespace["__match_args__"] = fields
        return super().__new__(mcs, name, bases, namespace)


class _Node(metaclass=_NodeType):
    """What the node classes share: ``__init__`` from the fields, equality and hash without
    ``offset``, immutability. Dataclasses did this but cost ~1 ms per class at import (each
    class's methods are generated and exec'd); these are generic, and ``__init__`` is written
    per class on its first use only."""

    __slots__ = ()
    FIELDS: ClassVar[tuple[str, ...]] = ()
    DEFAULTS: ClassVar[dict[str, Any]] = {}

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        cls = type(self)
        cls.__init__ = _specialised_init(cls)  # type: ignore[method-assign]
        cls.__init__(self, *args, **kwargs)

    def _key(self) -> tuple[Any, ...]:
        return tuple(getattr(self, f) for f in self.FIELDS if f != "offset")

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash((self.__class__.__name__, self._key()))

    def __repr__(self) -> str:
        shown = ", ".join(f"{f}={getattr(self, f)!r}" for f in self.FIELDS if f != "offset")
        return f"{type(self).__name__}({shown})"

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"cannot assign to field {name!r}: syntax nodes are immutable")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field {name!r}: syntax nodes are immutable")

    def replace(self, **changes: Any) -> Any:
        """A copy with ``changes`` (``dataclasses.replace``)."""
        values = {f: getattr(self, f) for f in self.FIELDS}
        values.update(changes)
        return type(self)(**values)


def _specialised_init(cls: type[_Node]) -> Any:
    # generated per class as dataclasses do, but on first use instead of at import
    params = ", ".join(f"{f}=_d[{f!r}]" if f in cls.DEFAULTS else f for f in cls.FIELDS)
    body = "".join(f"    _set(self, {f!r}, {f})\n" for f in cls.FIELDS) or "    pass\n"
    namespace: dict[str, Any] = {"_d": cls.DEFAULTS, "_set": object.__setattr__}
    exec(f"def __init__(self, {params}):\n{body}", namespace)
    return namespace["__init__"]


class Identity(_Node):
    offset: int = -1


class RecurseAll(_Node):
    """``..``"""

    offset: int = -1


class Literal(_Node):
    """null, true, false, a number or a string without interpolation."""

    value: Any
    kind: str  # "null" | "boolean" | "number" | "string"
    offset: int = -1


class Str(_Node):
    """A string with interpolations; ``fmt`` is the ``@format`` applied to each interpolation."""

    parts: tuple[str | Node, ...]
    fmt: str | None = None
    offset: int = -1


class Format(_Node):
    """``@name`` alone, a filter."""

    name: str
    offset: int = -1


class Var(_Node):
    name: str  # without the "$"
    offset: int = -1


class Index(_Node):
    """``T.name``, ``T."str"``, ``T[key]``."""

    target: Node
    key: Node
    offset: int = -1


class Slice(_Node):
    target: Node
    start: Node | None
    end: Node | None
    offset: int = -1


class Iterate(_Node):
    """``T[]``"""

    target: Node
    offset: int = -1


class Optional(_Node):
    """``T?``. gojq guards only the last suffix of a suffix chain: ``.a.b?`` is ``.a | try .b``
    (``guards_all`` False), while ``(.a.b)?`` guards the whole term (``guards_all`` True)."""

    target: Node
    guards_all: bool = True
    offset: int = -1


class Array(_Node):
    body: Node | None
    offset: int = -1


class ObjectEntry(_Node):
    """One entry. ``key`` is a Literal string, a Str, a Var (``$x``) or any node for ``(q)``.

    ``value`` None is the shorthand form (``{a}``, ``{$x}``, ``{"a b"}``, ``{"\\(x)"}``).
    ``computed`` marks a parenthesised key ``(q)``.
    """

    key: Node
    value: Node | None
    computed: bool = False


class Object(_Node):
    entries: tuple[ObjectEntry, ...]
    offset: int = -1


class Unary(_Node):
    op: str  # "-" | "+"
    operand: Node
    offset: int = -1


class Pipe(_Node):
    left: Node
    right: Node
    offset: int = -1


class Comma(_Node):
    left: Node
    right: Node
    offset: int = -1


class Alt(_Node):
    """``a // b``"""

    left: Node
    right: Node
    offset: int = -1


class Binary(_Node):
    """Arithmetic, comparison, ``and``/``or``."""

    op: str
    left: Node
    right: Node
    offset: int = -1


class Update(_Node):
    """Assignment and update operators: ``=``, ``|=``, ``+=``, ``-=``, ``*=``, ``/=``, ``%=``, ``//=``."""

    op: str
    left: Node
    right: Node
    offset: int = -1


class PVar(_Node):
    name: str
    offset: int = -1


class PArray(_Node):
    elements: tuple[Pattern, ...]
    offset: int = -1


class PObject(_Node):
    """Entries (key, pattern). key is a Var (``$x`` binds too), Literal string, Str or a node
    for ``(q)`` (``computed``); pattern None only for the ``$x`` shorthand."""

    entries: tuple[tuple[Node, Pattern | None, bool], ...]
    offset: int = -1


Pattern = PVar | PArray | PObject


class Bind(_Node):
    """``source as $p ?// $q | body``"""

    source: Node
    patterns: tuple[Pattern, ...]
    body: Node
    offset: int = -1


class Reduce(_Node):
    source: Node
    pattern: Pattern
    init: Node
    update: Node
    offset: int = -1


class Foreach(_Node):
    source: Node
    pattern: Pattern
    init: Node
    update: Node
    extract: Node | None
    offset: int = -1


class If(_Node):
    cond: Node
    then: Node
    elifs: tuple[tuple[Node, Node], ...]
    otherwise: Node | None
    offset: int = -1


class Try(_Node):
    body: Node
    catch: Node | None
    offset: int = -1


class Label(_Node):
    name: str
    body: Node
    offset: int = -1


class Break(_Node):
    name: str
    offset: int = -1


class Call(_Node):
    name: str
    args: tuple[Node, ...]
    offset: int = -1


class FuncDef(_Node):
    name: str
    params: tuple[str, ...]  # "$x" for value params, "f" for filter params
    body: Node
    offset: int = -1


class WithDefs(_Node):
    defs: tuple[FuncDef, ...]
    body: Node
    offset: int = -1


Node = (
    Identity
    | RecurseAll
    | Literal
    | Str
    | Format
    | Var
    | Index
    | Slice
    | Iterate
    | Optional
    | Array
    | Object
    | Unary
    | Pipe
    | Comma
    | Alt
    | Binary
    | Update
    | Bind
    | Reduce
    | Foreach
    | If
    | Try
    | Label
    | Break
    | Call
    | WithDefs
)


def iter_children(node: Any) -> list[Any]:
    """Direct sub-nodes (including patterns' key queries), for tree walks."""
    out: list[Any] = []
    if isinstance(node, (Identity, RecurseAll, Literal, Format, Var, Break, PVar)):
        return out
    if isinstance(node, Str):
        return [p for p in node.parts if not isinstance(p, str)]
    if isinstance(node, Index):
        return [node.target, node.key]
    if isinstance(node, Slice):
        return [x for x in (node.target, node.start, node.end) if x is not None]
    if isinstance(node, (Iterate, Optional)):
        return [node.target]
    if isinstance(node, Array):
        return [node.body] if node.body is not None else []
    if isinstance(node, Object):
        for e in node.entries:
            out.append(e.key)
            if e.value is not None:
                out.append(e.value)
        return out
    if isinstance(node, Unary):
        return [node.operand]
    if isinstance(node, (Pipe, Comma, Alt, Binary, Update)):
        return [node.left, node.right]
    if isinstance(node, Bind):
        return [node.source, *node.patterns, node.body]
    if isinstance(node, Reduce):
        return [node.source, node.pattern, node.init, node.update]
    if isinstance(node, Foreach):
        xs = [node.source, node.pattern, node.init, node.update]
        if node.extract is not None:
            xs.append(node.extract)
        return xs
    if isinstance(node, If):
        out = [node.cond, node.then]
        for c, t in node.elifs:
            out += [c, t]
        if node.otherwise is not None:
            out.append(node.otherwise)
        return out
    if isinstance(node, Try):
        return [node.body] + ([node.catch] if node.catch is not None else [])
    if isinstance(node, Label):
        return [node.body]
    if isinstance(node, Call):
        return list(node.args)
    if isinstance(node, FuncDef):
        return [node.body]
    if isinstance(node, WithDefs):
        return [*node.defs, node.body]
    if isinstance(node, PArray):
        return list(node.elements)
    if isinstance(node, PObject):
        for key, pat, _computed in node.entries:
            out.append(key)
            if pat is not None:
                out.append(pat)
        return out
    raise TypeError(f"not a jq node: {node!r}")


# --- formatter -------------------------------------------------------------------------------

_IDENT_OK = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_0123456789")


def _is_ident(name: str) -> bool:
    return bool(name) and not name[0].isdigit() and all(c in _IDENT_OK for c in name)


def _quote(s: str) -> str:
    return json.dumps(s, ensure_ascii=False)


def _number(v: Any) -> str:
    if isinstance(v, int):
        return str(v)
    if math.isinf(v):
        return "1e1000" if v > 0 else "-1e1000"
    return repr(float(v))


# Precedence levels used for parenthesising: higher binds tighter.
_PREC_PIPE, _PREC_COMMA, _PREC_ALT, _PREC_UPDATE = 1, 2, 3, 4
_PREC_BIN = {"or": 5, "and": 6, "==": 7, "!=": 7, "<": 7, "<=": 7, ">": 7, ">=": 7}
_PREC_BIN.update({"+": 8, "-": 8, "*": 9, "/": 9, "%": 9})
_PREC_TERM = 10


def _prec(node: Any) -> int:
    if isinstance(node, (Pipe, Bind, Label, WithDefs)):
        return _PREC_PIPE
    if isinstance(node, Comma):
        return _PREC_COMMA
    if isinstance(node, Alt):
        return _PREC_ALT
    if isinstance(node, Update):
        return _PREC_UPDATE
    if isinstance(node, Binary):
        return _PREC_BIN[node.op]
    if isinstance(node, Literal) and node.kind == "number":
        # a negative literal prints with a leading "-": keep it atomic.
        v = node.value
        if (isinstance(v, (int, float)) and (v < 0 or math.copysign(1.0, v) < 0)) or (
            isinstance(v, float) and math.isnan(v)
        ):
            return _PREC_TERM - 1
    return _PREC_TERM


def _paren(node: Any, min_prec: int) -> str:
    text = format(node)
    if _prec(node) < min_prec:
        return f"({text})"
    return text


def _term(node: Any) -> str:
    """Format as a postfix-able term."""
    text = format(node)
    if _prec(node) < _PREC_TERM or isinstance(node, (Unary, Reduce, Foreach, If, Try)):
        return f"({text})"
    return text


def _suffix_target(node: Any) -> str:
    if isinstance(node, Identity):
        return ""
    if isinstance(node, Literal) and node.kind == "number":
        return f"({format(node)})"
    return _term(node)


def _format_pattern(p: Any) -> str:
    if isinstance(p, PVar):
        return "$" + p.name
    if isinstance(p, PArray):
        return "[" + ", ".join(_format_pattern(e) for e in p.elements) + "]"
    parts = []
    for key, pat, computed in p.entries:
        if isinstance(key, Var) and not computed:
            k = "$" + key.name
        elif computed:
            k = f"({format(key)})"
        elif isinstance(key, Literal):
            k = key.value if _is_ident(key.value) else _quote(key.value)
        else:
            k = format(key)
        parts.append(k if pat is None else f"{k}: {_format_pattern(pat)}")
    return "{" + ", ".join(parts) + "}"


def _format_str(node: Str) -> str:
    out = ['"']
    for part in node.parts:
        if isinstance(part, str):
            out.append(_quote(part)[1:-1])
        else:
            out.append("\\(" + format(part) + ")")
    out.append('"')
    text = "".join(out)
    return f"{node.fmt} {text}" if node.fmt else text


def _format_def(d: FuncDef) -> str:
    head = d.name + ("(" + "; ".join(d.params) + ")" if d.params else "")
    return f"def {head}: {format(d.body)};"


def _objval(node: Any) -> str:
    # object values are pipes of exprs: anything lower than "//"... needs parentheses except pipe
    if isinstance(node, Pipe):
        return _objval(node.left) + " | " + _objval(node.right)
    return _paren(node, _PREC_ALT)


def format(node: Any) -> str:
    """Print a tree as jq source that parses back to an equal tree."""
    if isinstance(node, Identity):
        return "."
    if isinstance(node, RecurseAll):
        return ".."
    if isinstance(node, Literal):
        if node.kind == "null":
            return "null"
        if node.kind == "boolean":
            return "true" if node.value else "false"
        if node.kind == "string":
            return _quote(node.value)
        return _number(node.value)
    if isinstance(node, Str):
        return _format_str(node)
    if isinstance(node, Format):
        return node.name
    if isinstance(node, Var):
        return "$" + node.name
    if isinstance(node, Index):
        key = node.key
        base = _suffix_target(node.target)
        if isinstance(key, Literal) and key.kind == "string" and _is_ident(key.value):
            return f"{base}.{key.value}"
        if isinstance(key, (Literal, Str)) and (
            key.kind == "string" if isinstance(key, Literal) else key.fmt is None
        ):
            return f"{base}.{format(key)}"
        return f"{base or '.'}[{format(key)}]"
    if isinstance(node, Slice):
        base = _suffix_target(node.target) or "."
        s = format(node.start) if node.start is not None else ""
        e = format(node.end) if node.end is not None else ""
        return f"{base}[{s}:{e}]"
    if isinstance(node, Iterate):
        return (_suffix_target(node.target) or ".") + "[]"
    if isinstance(node, Optional):
        target = node.target
        if (
            node.guards_all
            and isinstance(target, (Index, Slice, Iterate))
            and not isinstance(target.target, Identity)
        ):
            return f"({format(target)})?"
        return _term(target) + "?"
    if isinstance(node, Array):
        return "[]" if node.body is None else f"[{format(node.body)}]"
    if isinstance(node, Object):
        parts = []
        for ent in node.entries:
            if ent.computed:
                k = f"({format(ent.key)})"
            elif isinstance(ent.key, Var):
                k = "$" + ent.key.name
            elif isinstance(ent.key, Literal):
                k = ent.key.value if _is_ident(ent.key.value) else _quote(ent.key.value)
            else:
                k = format(ent.key)
            parts.append(k if ent.value is None else f"{k}: {_objval(ent.value)}")
        return "{" + ", ".join(parts) + "}"
    if isinstance(node, Unary):
        return node.op + _term(node.operand)
    if isinstance(node, Pipe):
        return f"{_paren(node.left, _PREC_COMMA)} | {format(node.right)}"
    if isinstance(node, Comma):
        return f"{_paren(node.left, _PREC_COMMA)}, {_paren(node.right, _PREC_ALT)}"
    if isinstance(node, Alt):
        return f"{_paren(node.left, _PREC_UPDATE)} // {_paren(node.right, _PREC_ALT)}"
    if isinstance(node, Update):
        return f"{_paren(node.left, _PREC_UPDATE + 1)} {node.op} {_paren(node.right, _PREC_UPDATE + 1)}"
    if isinstance(node, Binary):
        p = _PREC_BIN[node.op]
        nonassoc = p == 7
        left = _paren(node.left, p + 1 if nonassoc else p)
        return f"{left} {node.op} {_paren(node.right, p + 1)}"
    if isinstance(node, Bind):
        pats = " ?// ".join(_format_pattern(p) for p in node.patterns)
        return f"{_paren(node.source, _PREC_ALT)} as {pats} | {format(node.body)}"
    if isinstance(node, Reduce):
        return (
            f"reduce {_paren(node.source, _PREC_ALT)} as {_format_pattern(node.pattern)} "
            f"({format(node.init)}; {format(node.update)})"
        )
    if isinstance(node, Foreach):
        ext = f"; {format(node.extract)}" if node.extract is not None else ""
        return (
            f"foreach {_paren(node.source, _PREC_ALT)} as {_format_pattern(node.pattern)} "
            f"({format(node.init)}; {format(node.update)}{ext})"
        )
    if isinstance(node, If):
        out = f"if {format(node.cond)} then {format(node.then)}"
        for c, t in node.elifs:
            out += f" elif {format(c)} then {format(t)}"
        if node.otherwise is not None:
            out += f" else {format(node.otherwise)}"
        return out + " end"
    if isinstance(node, Try):
        out = "try " + _term(node.body)
        if node.catch is not None:
            out += " catch " + _term(node.catch)
        return out
    if isinstance(node, Label):
        return f"label ${node.name} | {format(node.body)}"
    if isinstance(node, Break):
        return f"break ${node.name}"
    if isinstance(node, Call):
        if not node.args:
            return node.name
        return node.name + "(" + "; ".join(format(a) for a in node.args) + ")"
    if isinstance(node, FuncDef):
        return _format_def(node)
    if isinstance(node, WithDefs):
        return " ".join(_format_def(d) for d in node.defs) + " " + format(node.body)
    raise TypeError(f"not a jq node: {node!r}")
