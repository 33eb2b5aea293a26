"""The jq path API for callers outside the engine: constant paths and getpath/setpath/delpaths.

A definition's expressions are mostly plain paths (``.spec.replicatedJobs[0].template``).
Callers that read or write such locations directly (the engine's fast reads and write-backs) ask
the compiled program for its constant path instead of parsing the text again, and apply it with
the same getpath/setpath/delpaths the jq builtins use, so that negative indexes, null handling
and error texts are gojq's in every place.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from workload_map.jq import ast
from workload_map.jq.builtins import paths as values_paths

__all__ = ["Path", "PathKey", "constant_path", "defaulted_path", "delpaths", "getpath", "setpath"]

#: one step of a path: an object key or an array index (negative counts from the end)
PathKey = str | int
#: a path as ``path(f)`` yields it, as an immutable tuple
Path = tuple[PathKey, ...]


def _key(node: ast.Node) -> PathKey | None:
    if isinstance(node, ast.Literal):
        value = node.value
        if node.kind == "string" and type(value) is str:
            return value
        if node.kind == "number" and type(value) is int:
            return value
        return None
    if (
        isinstance(node, ast.Unary)
        and node.op == "-"
        and isinstance(node.operand, ast.Literal)
        and node.operand.kind == "number"
        and type(node.operand.value) is int
    ):
        return -node.operand.value
    return None


def constant_path(tree: ast.Node) -> Path | None:
    """The path a program made only of constant keys and indexes addresses, else None.

    ``.spec.replicatedJobs[0].template`` → ``("spec", "replicatedJobs", 0, "template")``;
    ``.a | .b`` → ``("a", "b")``; ``.`` → ``()``; anything else (iteration, ``?``, slices, computed keys, pipes) → None.
    On any input the program's only output is ``getpath(input, path)``, and it fails where
    that fails.
    """
    if isinstance(tree, ast.Pipe):
        left = constant_path(tree.left)
        right = constant_path(tree.right) if left is not None else None
        return None if left is None or right is None else left + right
    out: list[PathKey] = []
    node: ast.Node = tree
    while not isinstance(node, ast.Identity):
        if not isinstance(node, ast.Index):
            return None
        key = _key(node.key)
        if key is None:
            return None
        out.append(key)
        node = node.target
    out.reverse()
    return tuple(out)


def defaulted_path(tree: ast.Node) -> tuple[Path, Any] | None:
    """``(path, default)`` for ``PATH // LITERAL`` with a constant path; else None.

    The program's output is ``getpath(input, path)`` unless that is null or false (or fails),
    then ``default``. A lone constant path is not matched here (see :func:`constant_path`).
    """
    if not isinstance(tree, ast.Alt) or not isinstance(tree.right, ast.Literal):
        return None
    path = constant_path(tree.left)
    if path is None:
        return None
    return path, tree.right.value


def getpath(value: Any, path: Sequence[PathKey]) -> Any:
    """jq's ``getpath(path)``: null where the path runs through null or a missing key; negative
    indexes count from the end; a key of the wrong type for the value is a JqRuntimeError."""
    return values_paths.getpath(value, list(path))


def setpath(value: Any, path: Sequence[PathKey], new: Any) -> Any:
    """jq's ``setpath(path; new)``: a new value (the input is not modified); creates objects and
    arrays through null; JqRuntimeError on a type mismatch or an out-of-range negative index."""
    return values_paths.setpath(value, list(path), new)


def delpaths(value: Any, paths: Sequence[Sequence[PathKey]]) -> Any:
    """jq's ``delpaths(paths)``: a new value without those locations (the input is not
    modified); missing locations are ignored; JqRuntimeError on a type mismatch."""
    return values_paths.delpaths(value, [list(p) for p in paths])
