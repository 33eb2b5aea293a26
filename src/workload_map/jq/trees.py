"""A syntax tree as plain data and back: what a command keeps of the programs it parsed.

Every command parses its definitions' jq programs again (the JobSet's 13: the lexer's patterns,
each node class's ``__init__`` written on its first use and the parse itself, about 16M
instructions of a live ``get``). :func:`dump` writes a tree as tuples, lists and scalars (what
``marshal`` reads back in C); :func:`load` rebuilds the nodes without running the parser or
the nodes' ``__init__``. ``jq.keep_trees`` takes such trees by program text; the command line
keeps them between commands (``cli.context``).
"""

from __future__ import annotations

from typing import Any

from workload_map.jq import ast

__all__ = ["dump", "load"]

_SCALARS = (str, int, float, bool, type(None))
_new = object.__new__
_set = object.__setattr__
_CLASSES: dict[str, type[Any]] = {}


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
        if not _CLASSES:
            _CLASSES.update(
                (name, cls)
                for name, cls in vars(ast).items()
                if isinstance(cls, type) and issubclass(cls, ast._Node) and cls is not ast._Node
            )
        cls = _CLASSES[data[0]]
        node = _new(cls)
        # strict: a field count the class no longer has is a ValueError
        for name, value in zip(cls.FIELDS, data[1:], strict=True):
            _set(node, name, load(value) if type(value) in (tuple, list) else value)
        return node
    if type(data) is list:
        return tuple([load(v) if type(v) in (tuple, list) else v for v in data])
    return data
