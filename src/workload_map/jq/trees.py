"""A syntax tree as plain data and back: what a command keeps of the programs it parsed.

Every command parses its definitions' jq programs again (the JobSet's 13: the lexer's patterns,
each node class's ``__init__`` written on its first use and the parse itself, about 16M
instructions of a live ``get``). :func:`dump` writes a tree as tuples, lists and scalars (what
``marshal`` reads back in C); :func:`load` rebuilds the nodes without running the parser or
the nodes' ``__init__``. :func:`keep_trees` (``jq.keep_trees``) takes such trees by program
text; the command line keeps them between commands (``cli.context``).

:func:`parse`, the jq engine's one entry to the parser, lives here so that a command whose
programs are all kept imports neither the parser nor the lexer (about 58 KB of bytecode):
``jq.parser`` is imported by the first program that is really parsed.
"""

from __future__ import annotations

import functools
from typing import Any

from workload_map.jq import ast

__all__ = ["dump", "fresh_trees", "keep_trees", "load", "parse"]

_SCALARS = (str, int, float, bool, type(None))
_new = object.__new__
_set = object.__setattr__
#: the node classes by name, with their fields (filled on the first load)
_CLASSES: dict[str, tuple[type[Any], tuple[str, ...]]] = {}


def dump(node: Any) -> Any:
    """A node as ``(class name, field...)``, a tuple of the tree as a list, a scalar as is."""
    if isinstance(node, ast._Node):
        return (type(node).__name__, *[dump(getattr(node, f)) for f in node.FIELDS])
    if type(node) is tuple:
        return [dump(v) for v in node]
    if type(node) in _SCALARS:
        return node
    raise TypeError(f"not a value of a syntax tree: {type(node).__name__}")


def load(data: Any) -> Any:
    """The tree :func:`dump` wrote; KeyError or ValueError when it names a node class or a
    field count the syntax does not have (a tree kept by another version)."""
    if type(data) is tuple:
        return _node(data)
    if type(data) is list:
        return _items(data)
    return data


def _classes() -> dict[str, tuple[type[Any], tuple[str, ...]]]:
    _CLASSES.update(
        (name, (cls, cls.FIELDS))
        for name, cls in vars(ast).items()
        if isinstance(cls, type) and issubclass(cls, ast._Node) and cls is not ast._Node
    )
    return _CLASSES


def _node(data: tuple[Any, ...]) -> Any:
    # the hot path of a command's kept programs (~360 nodes for the JobSet's 13): one lookup
    # of the class with its fields, each field's type read once
    cls, fields = (_CLASSES or _classes())[data[0]]
    if len(data) != len(fields) + 1:
        raise ValueError(f"{data[0]} has {len(fields)} fields, the kept tree {len(data) - 1}")
    node = _new(cls)
    at = 1
    for name in fields:
        value = data[at]
        at += 1
        kind = type(value)
        if kind is tuple:
            value = _node(value)
        elif kind is list:
            value = _items(value)
        _set(node, name, value)
    return node


def _items(data: list[Any]) -> tuple[Any, ...]:
    return tuple(
        [_node(v) if type(v) is tuple else _items(v) if type(v) is list else v for v in data]
    )


#: trees parsed by earlier processes (:func:`dump`'s form), by program text: see keep_trees()
_KEPT: dict[str, Any] = {}
#: the programs parsed since keep_trees() was first called (None: not recording)
_FRESH: dict[str, ast.Node] | None = None


def keep_trees(kept: dict[str, Any]) -> None:
    """Trees an earlier process parsed (:func:`dump`'s form, by program text): :func:`parse`
    rebuilds those instead of parsing them (a tree that does not fit the syntax any more is
    parsed), and from now on records the programs it parses, for :func:`fresh_trees`."""
    global _FRESH
    _KEPT.update(kept)
    if _FRESH is None:
        _FRESH = {}


def fresh_trees() -> dict[str, Any]:
    """The programs parsed, not rebuilt, since :func:`keep_trees`, in :func:`dump`'s form.
    A tree too deep for :func:`dump`'s recursion (a chain of thousands of terms, which the
    parser reads iteratively) is left out: it is parsed again next time."""
    kept: dict[str, Any] = {}
    for text, tree in (_FRESH or {}).items():
        try:
            kept[text] = dump(tree)
        except RecursionError:
            continue
    return kept


@functools.lru_cache(maxsize=4096)
def parse(source: str) -> ast.Node:
    """Parse a jq program into its tree; raises ``JqParseError``. Trees are immutable, so a
    repeated text (the same path in many definitions) is parsed once; a kept one is rebuilt."""
    kept = _KEPT.get(source)
    if kept is not None:
        try:
            rebuilt: ast.Node = load(kept)
            return rebuilt
        except (KeyError, ValueError, TypeError, IndexError, RecursionError):
            pass
    from workload_map.jq import parser  # loaded by the first program really parsed

    tree = parser.parse(source)
    if _FRESH is not None:
        _FRESH[source] = tree
    return tree
