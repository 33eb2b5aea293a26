"""Status: phase, conditions and matched statuses (REFERENCE §8 items 18-23)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.engine.conftest import karta_dict, root
from workload_map.engine import ExtractionError, Workload
from workload_map.model import STATUS_ORDER, StatusMappings


def _status(status_definition: dict[str, Any], status: Any, spec: Any = None, **kw: Any) -> Any:
    karta = karta_dict(root(statusDefinition=status_definition))
    obj = {
        "apiVersion": "example.com/v1",
        "kind": "Thing",
        "metadata": {"name": "x"},
        "status": status,
    }
    if spec is not None:
        obj["spec"] = spec
    return Workload(karta, obj, **kw).status()


CONDS = {"path": ".status.conditions"}


def test_entries_are_always_eight_in_the_fixed_order() -> None:
    entries = StatusMappings().entries()
    assert [name for name, _ in entries] == list(STATUS_ORDER) and len(entries) == 8


def test_nothing_matches_is_undefined() -> None:
    s = _status(
        {
            "phaseDefinition": {"path": ".status.phase"},
            "statusMappings": {"running": [{"byPhase": "Running"}]},
        },
        {"phase": "Pending"},
    )
    assert s.matched == ("Undefined",)


def test_empty_conditions_are_undefined() -> None:
    s = _status(
        {
            "conditionsDefinition": CONDS,
            "statusMappings": {"running": [{"byConditions": [{"type": "Ready"}]}]},
        },
        {"conditions": []},
    )
    assert s.matched == ("Undefined",) and s.conditions == ()


def test_several_statuses_match_in_fixed_order() -> None:
    mappings = {
        "degraded": [{"byPhase": "Up"}],
        "running": [{"byPhase": "Up"}],
        "suspended": [{"byConditions": [{"type": "Paused", "status": "True"}]}],
        "resuming": [{"byConditions": [{"type": "Paused"}]}],
    }
    s = _status(
        {
            "phaseDefinition": {"path": ".status.phase"},
            "conditionsDefinition": CONDS,
            "statusMappings": mappings,
        },
        {"phase": "Up", "conditions": [{"type": "Paused", "status": "True"}]},
    )
    assert s.matched == ("Resuming", "Suspended", "Running", "Degraded")


def test_matcher_parts_are_and_ed() -> None:
    definition = {
        "phaseDefinition": {"path": ".status.phase"},
        "conditionsDefinition": CONDS,
        "statusMappings": {
            "running": [
                {
                    "byPhase": "Running",
                    "byConditions": [{"type": "Ready", "status": "True"}],
                    "byExpression": {"expression": ".status.ok", "expectedResult": "true"},
                }
            ]
        },
    }
    good = {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}], "ok": True}
    assert _status(definition, good).matched == ("Running",)
    for broken in (
        {"phase": "Other"},
        {"conditions": [{"type": "Ready", "status": "False"}]},
        {"ok": False},
    ):
        assert _status(definition, {**good, **broken}).matched == ("Undefined",)


def test_reason_rules() -> None:
    definition = {
        "conditionsDefinition": CONDS,
        "statusMappings": {
            "failed": [{"byConditions": [{"type": "Failed", "status": "True", "reason": "Boom"}]}],
            "running": [{"byConditions": [{"type": "Failed", "status": "True"}]}],
        },
    }
    no_reason = _status(definition, {"conditions": [{"type": "Failed", "status": "True"}]})
    assert no_reason.matched == ("Running",)
    with_reason = _status(
        definition, {"conditions": [{"type": "Failed", "status": "True", "reason": "Boom"}]}
    )
    assert with_reason.matched == ("Running", "Failed")


@pytest.mark.parametrize(
    ("expression", "expected", "matches"),
    [
        ('"running"', "running", True),
        (".status.state", "running", True),
        ("false", "true", False),
        ("null", "null", False),
        ("empty", "", False),
        ("1 + 1", "2", True),
        ("[1, 2]", "[1,2]", True),
    ],
)
def test_by_expression(expression: str, expected: str, matches: bool) -> None:
    definition = {
        "statusMappings": {
            "running": [{"byExpression": {"expression": expression, "expectedResult": expected}}]
        }
    }
    s = _status(definition, {"state": "running"})
    assert (s.matched == ("Running",)) is matches


def test_invalid_expression_is_an_error() -> None:
    definition = {
        "statusMappings": {
            "running": [{"byExpression": {"expression": ".a[]", "expectedResult": "x"}}]
        }
    }
    with pytest.raises(ExtractionError, match="byExpression"):
        _status(definition, {"a": 1})


def test_no_phase_definition_leaves_phase_none_and_other_matchers_work() -> None:
    definition = {
        "conditionsDefinition": CONDS,
        "statusMappings": {
            "running": [{"byPhase": "Running"}],
            "completed": [{"byConditions": [{"type": "Done"}]}],
        },
    }
    s = _status(definition, {"conditions": [{"type": "Done", "status": "True"}]})
    assert s.phase is None and s.matched == ("Completed",)


def test_null_phase_is_an_empty_string_and_missing_fields_tolerated() -> None:
    definition = {
        "phaseDefinition": {"path": ".status.phase"},
        "conditionsDefinition": CONDS,
        "statusMappings": {},
    }
    s = _status(definition, {"conditions": [{"type": "A"}, {"status": "True", "message": 3}]})
    assert s.phase == ""
    assert [c.to_dict() for c in s.conditions] == [
        {"type": "A", "status": None, "reason": None, "message": ""},
        {"type": "", "status": "True", "reason": None, "message": ""},
    ]


def test_custom_field_names_and_later_duplicates_win() -> None:
    definition = {
        "conditionsDefinition": {
            "path": ".status.c",
            "typeFieldName": "kind",
            "statusFieldName": "on",
            "messageFieldName": "text",
            "reasonFieldName": "why",
        },
        "statusMappings": {"running": [{"byConditions": [{"type": "Up", "status": "yes"}]}]},
    }
    s = _status(
        definition,
        {"c": [{"kind": "Up", "on": "no"}, {"kind": "Up", "on": "yes", "why": "w", "text": "t"}]},
    )
    assert s.matched == ("Running",)
    assert s.conditions[1].to_dict() == {
        "type": "Up",
        "status": "yes",
        "reason": "w",
        "message": "t",
    }


def test_conditions_results_are_flattened_and_non_lists_rejected() -> None:
    definition = {
        "conditionsDefinition": {"path": ".status.a, .status.b"},
        "statusMappings": {"running": [{"byConditions": [{"type": "B"}]}]},
    }
    s = _status(definition, {"a": [{"type": "A"}], "b": [{"type": "B"}]})
    assert [c.type for c in s.conditions] == ["A", "B"] and s.matched == ("Running",)
    with pytest.raises(ExtractionError, match="failed to extract conditions"):
        _status(definition, {"a": {"type": "A"}})


def test_non_string_phase_and_invalid_paths_are_errors() -> None:
    definition = {"phaseDefinition": {"path": ".status.phase"}, "statusMappings": {}}
    with pytest.raises(ExtractionError, match="phaseDefinition"):
        _status(definition, {"phase": 3})
    definition = {"phaseDefinition": {"path": ".status[]"}, "statusMappings": {}}
    with pytest.raises(ExtractionError, match="phaseDefinition"):
        _status(definition, 5)


def test_matcher_with_nothing_set_matches_everything() -> None:
    s = _status({"statusMappings": {"failed": [{}]}}, {})
    assert s.matched == ("Failed",)


def test_no_status_definition_means_undefined_phases() -> None:
    karta = karta_dict(root())
    karta["spec"]["structureDefinition"]["rootComponent"].pop("statusDefinition")
    wl = Workload(
        karta,
        {"apiVersion": "example.com/v1", "kind": "Thing", "metadata": {"name": "x"}},
        validate=False,
    )
    assert wl.status() is None and wl.phases() == ["Undefined"]
