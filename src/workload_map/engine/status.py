"""The generic status of a workload: phase, conditions and every matched status.

Statuses are checked in the reference's fixed order (Resuming, Suspending, Suspended, Running,
Failed, Completed, Initializing, Degraded); all that match are reported, ``["Undefined"]`` when
none does. A matcher's parts (phase, each condition, expression) must all hold; the matchers of
one status are alternatives.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from workload_map.engine.errors import ExtractionError
from workload_map.engine.runner import Run, direct
from workload_map.engine.structure import Structure
from workload_map.jq import dumps as jq_dumps
from workload_map.model import StatusDefinition, StatusMatcher
from workload_map.model.views import View, json_field, to_json

__all__ = ["UNDEFINED", "Condition", "Status", "evaluate_status", "status_expressions"]

#: the phase when no generic status matches: the value of model.Phase.UNDEFINED, written out
#: (the enum is built when asked for; tests/model/test_phases.py pins the two equal)
UNDEFINED: str = "Undefined"


class Condition(View):
    """One condition as the definition's field names read it (strings only)."""

    type: str = json_field("type")
    status: str | None = json_field("status", default=None)
    reason: str | None = json_field("reason", default=None)
    message: str = json_field("message", default="")

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = to_json(self)
        return out


class Status(View):
    phase: str | None
    conditions: tuple[Condition, ...]
    matched: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "phase": self.phase,
            "conditions": [c.to_dict() for c in self.conditions],
            "phases": list(self.matched),
        }


def _string(entry: dict[str, Any], key: str | None) -> str | None:
    if not key:
        return None
    value = entry.get(key)
    return value if isinstance(value, str) else None


def _phase(structure: Structure, definition: StatusDefinition, obj: Any, run: Run) -> str | None:
    if definition.phase_definition is None or not definition.phase_definition.path:
        return None
    path = definition.phase_definition.path
    try:
        values = run(structure.expressions.get(path), obj)
    except ExtractionError as err:
        raise ExtractionError(f"phaseDefinition: {err}") from err
    if not values:
        return None
    value = values[0]
    if value is None:
        return ""
    if not isinstance(value, str):
        raise ExtractionError(
            f"phaseDefinition: failed to convert phase of '{path}' to string: got {value!r}"
        )
    return value


def _conditions(
    structure: Structure, definition: StatusDefinition, obj: Any, run: Run
) -> list[Condition]:
    cd = definition.conditions_definition
    if cd is None or not cd.path:
        return []
    try:
        results = run(structure.expressions.get(cd.path), obj)
    except ExtractionError as err:
        raise ExtractionError(f"conditionsDefinition: {err}") from err
    out: list[Condition] = []
    for result in results:
        if result is None:
            continue
        if not isinstance(result, list) or not all(isinstance(e, dict) for e in result):
            raise ExtractionError(
                f"conditionsDefinition: failed to extract conditions from '{cd.path}': "
                "expected a list of objects"
            )
        for entry in result:
            out.append(
                Condition(
                    type=_string(entry, cd.type_field_name or "type") or "",
                    status=_string(entry, cd.status_field_name or "status"),
                    reason=_string(entry, cd.reason_field_name),
                    message=_string(entry, cd.message_field_name) or "",
                )
            )
    return out


def _tostring(value: Any) -> str:
    """jq's ``tostring``: strings as they are, anything else as compact JSON."""
    if isinstance(value, str):
        return value
    if value is True:
        return "true"
    if value is False:
        return "false"
    return jq_dumps(value, indent=None)


_Matcher = Callable[[str | None, dict[str, Condition], Any, Run], bool]


def _compile(structure: Structure, matcher: StatusMatcher) -> _Matcher:
    """One matcher as a closure, its expression looked up once (status runs per object)."""
    by_phase = matcher.by_phase
    conditions = tuple((c.type, c.status, c.reason) for c in matcher.by_conditions)
    expression = None
    expected = None
    if matcher.by_expression is not None:
        expression = structure.expressions.get(matcher.by_expression.expression)
        expected = matcher.by_expression.expected_result

    def matches(phase: str | None, by_type: dict[str, Condition], obj: Any, run: Run) -> bool:
        if by_phase and phase != by_phase:
            return False
        for kind, status, reason in conditions:
            cond = by_type.get(kind)
            if cond is None:
                return False
            if status and cond.status != status:
                return False
            if reason and cond.reason != reason:
                return False
        if expression is not None:
            try:
                values = run(expression, obj)
            except ExtractionError as err:
                raise ExtractionError(f"statusMappings byExpression: {err}") from err
            if not values or values[0] is None:
                return False
            return _tostring(values[0]) == expected
        return True

    return matches


def _plan(structure: Structure, name: str) -> list[tuple[str, list[_Matcher]]]:
    key = ("status", name)
    plan: list[tuple[str, list[_Matcher]]] | None = structure.memo.get(key)
    if plan is None:
        plan = structure.memo[key] = [
            (status, [_compile(structure, m) for m in matchers])
            for status, matchers in structure.status_entries(name)
        ]
    return plan


def status_expressions(structure: Structure, component: str | None = None) -> list[str]:
    """Every expression :func:`evaluate_status` may run for ``component`` (default: the root):
    what its result is derived from."""
    comp = structure.components[component] if component else structure.root
    definition = comp.status_definition
    if definition is None:
        return []
    out = [
        d.path
        for d in (definition.phase_definition, definition.conditions_definition)
        if d is not None and d.path
    ]
    for _, matchers in structure.status_entries(comp.name):
        out += [m.by_expression.expression for m in matchers if m.by_expression is not None]
    return out


def evaluate_status(
    structure: Structure, obj: Any, component: str | None = None, *, run: Run = direct
) -> Status | None:
    """The status of ``obj`` by ``component``'s (default: the root's) status definition.

    None when that component has no status definition. ``run`` evaluates the expressions (a
    workload passes its memo, so a failing expression fails once).
    """
    comp = structure.components[component] if component else structure.root
    definition = comp.status_definition
    if definition is None:
        return None
    phase = _phase(structure, definition, obj, run)
    conditions = _conditions(structure, definition, obj, run)
    by_type = {c.type: c for c in conditions}
    matched = []
    for status, matchers in _plan(structure, comp.name):
        for matches in matchers:
            if matches(phase, by_type, obj, run):
                matched.append(status)
                break
    return Status(phase, tuple(conditions), tuple(matched) or (UNDEFINED,))
