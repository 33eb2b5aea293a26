"""Evaluating a definition's jq expressions: compiled once, run with the reference's limits.

Every expression of a Karta runs against the whole workload object or the whole pod. The
reference's runner caps results at 1000 and time at 10 s per query; :mod:`workload_map.jq` has
those defaults. Plain field paths (``.metadata.labels["x"]``, ``.spec.replicas // 1``) — most of
what definitions contain, and what runs once per pod — take a direct dictionary walk with the
same results; anything else, and any type surprise on the way, goes through the jq engine.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from workload_map.engine.errors import ExtractionError

__all__ = [
    "Evaluations",
    "Expression",
    "ExpressionCache",
    "Run",
    "direct",
    "fast_path",
    "located_path",
    "plain_path",
]

_IDENT = re.compile(r"\.([A-Za-z_][A-Za-z0-9_]*)")
_QUOTED = re.compile(r'\.?\[\s*("(?:[^"\\]|\\[^(])*")\s*\]|\."((?:[^"\\]|\\[^(])*)"')
_INDEX = re.compile(r"\.?\[\s*(\d+)\s*\]")
_ALT = re.compile(r"\s*//\s*(.+?)\s*$", re.S)
_LITERAL = re.compile(
    r'^(?:"(?:[^"\\]|\\[^(])*"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null)$'
)


class _Fallback(Exception):
    """The direct walk met something only the jq engine can answer exactly."""


_MISSING = object()


def _parse_steps(text: str) -> list[str | int] | None:
    if text == ".":
        return []
    steps: list[str | int] = []
    pos = 0
    while pos < len(text):
        m = _IDENT.match(text, pos)
        if m:
            steps.append(m.group(1))
            pos = m.end()
            continue
        m = _QUOTED.match(text, pos)
        if m:
            steps.append(json.loads(m.group(1)) if m.group(1) else json.loads(f'"{m.group(2)}"'))
            pos = m.end()
            continue
        m = _INDEX.match(text, pos)
        if m and (pos > 0 or text.startswith(".")):
            steps.append(int(m.group(1)))
            pos = m.end()
            continue
        return None
    return steps if text.startswith(".") else None


def plain_path(expr: str) -> list[str | int] | None:
    """The steps of a plain field path (``.a["b"][0]``), or None for any other expression."""
    return _parse_steps(expr.strip())


def located_path(expr: str) -> list[str | int] | None:
    """The steps of a plain path, with or without a trailing ``// literal``; else None."""
    text = expr.strip()
    alt = _ALT.search(text)
    if alt and _LITERAL.match(alt.group(1)) and "//" not in text[: alt.start()]:
        text = text[: alt.start()].strip()
    return _parse_steps(text)


def fast_path(
    expr: str, slow: Callable[[Any], list[Any]] | None = None
) -> Callable[[Any], list[Any]] | None:
    """A direct evaluator for a plain path (optionally ``// literal``), or None.

    On a value of an unexpected type on the way it calls ``slow`` with the input (without
    ``slow`` it raises ``_Fallback``).
    """
    text = expr.strip()
    default: Any = _MISSING
    alt = _ALT.search(text)
    if alt and _LITERAL.match(alt.group(1)) and "//" not in text[: alt.start()]:
        default = json.loads(alt.group(1))
        text = text[: alt.start()].strip()
    steps = _parse_steps(text)
    if steps is None:
        return None

    return _generate(steps, default, slow)


def _generate(
    steps: list[str | int], default: Any, slow: Callable[[Any], list[Any]] | None
) -> Callable[[Any], list[Any]]:
    """Straight-line Python for one path: no loop, no per-step dispatch (it runs per pod)."""
    missing = "[_DEFAULT]" if default is not _MISSING else "[None]"
    bail = "return _SLOW(root)" if slow is not None else "raise _Fallback"
    lines = ["def walk(root):", "    v = root"]
    for index, step in enumerate(steps):
        lines.append("    if v is None:")
        lines.append(f"        return {missing}")
        if isinstance(step, str):
            lines.append("    if type(v) is not dict:")
            lines.append(f"        {bail}")
            lines.append(f"    v = v.get(_S{index})")
        else:
            lines.append("    if type(v) is not list:")
            lines.append(f"        {bail}")
            lines.append(f"    v = v[{step}] if {step} < len(v) else None")
    if default is not _MISSING:
        lines.append("    if v is None or v is False:")
        lines.append("        return [_DEFAULT]")
    lines.append("    return [v]")
    namespace: dict[str, Any] = {"_Fallback": _Fallback, "_DEFAULT": default, "_SLOW": slow}
    namespace.update({f"_S{i}": step for i, step in enumerate(steps)})
    exec("\n".join(lines), namespace)
    walk: Callable[[Any], list[Any]] = namespace["walk"]
    return walk


def _jq_error() -> type[Exception]:
    from workload_map.jq import JqError

    return JqError


class Expression:
    """One compiled expression of a definition.

    ``evaluate(value)`` is every output (the reference's ``Evaluate``): a straight-line walk for
    plain paths that hands anything unexpected to the jq engine, else the jq engine.
    """

    __slots__ = ("_program", "evaluate", "text")

    def __init__(self, text: str):
        self.text = text
        self._program: Any = None
        self.evaluate: Callable[[Any], list[Any]] = fast_path(text, self._slow) or self._slow

    def _compiled(self) -> Any:
        if self._program is None:
            from workload_map import jq

            try:
                self._program = jq.compile(self.text)
            except jq.JqParseError as err:
                raise ExtractionError(
                    f"failed to parse JQ expression '{self.text}': {err}"
                ) from err
            except jq.JqError as err:
                raise ExtractionError(
                    f"failed to compile JQ expression '{self.text}': {err}"
                ) from err
        return self._program

    def _slow(self, value: Any) -> list[Any]:
        program = self._program if self._program is not None else self._compiled()
        try:
            found = program.all(value)
            return found if type(found) is list else list(found)
        except _jq_error() as err:
            raise ExtractionError(
                f"JQ execution error for expression '{self.text}': {err}"
            ) from err

    def all(self, value: Any) -> list[Any]:
        """Every output (the reference's ``Evaluate``)."""
        return self.evaluate(value)

    def paths(self, value: Any) -> list[list[str | int]]:
        """The locations the expression addresses (``path(expr)``); raises when computed."""
        from workload_map import jq

        program = self._compiled()
        try:
            return [list(p) for p in program.paths(value)]
        except jq.JqError as err:
            raise ExtractionError(
                f"expression '{self.text}' does not address writable locations: {err}"
            ) from err


class ExpressionCache:
    """Expressions of one definition, compiled on first use."""

    def __init__(self) -> None:
        self._items: dict[str, Expression] = {}

    def get(self, text: str) -> Expression:
        found = self._items.get(text)
        if found is None:
            found = self._items[text] = Expression(text)
        return found

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

    __slots__ = ("_done",)

    def __init__(self) -> None:
        self._done: dict[tuple[int, int], tuple[Any, list[Any] | None, ExtractionError | None]] = {}

    def __call__(self, expression: Expression, value: Any) -> list[Any]:
        key = (id(expression), id(value))
        found = self._done.get(key)
        if found is not None and found[0] is value:
            if found[2] is not None:
                raise found[2]
            return found[1]  # type: ignore[return-value]
        try:
            result = expression.evaluate(value)
        except ExtractionError as err:
            self._done[key] = (value, None, err)
            raise
        self._done[key] = (value, result, None)
        return result
