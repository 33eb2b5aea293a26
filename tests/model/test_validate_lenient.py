"""Validating a document lists its schema problems AND every rule's findings in one pass."""

from __future__ import annotations

import pytest
import yaml

from tests.model.conftest import base_doc
from workload_map.model import Finding, KartaLoadError, load_karta, validate
from workload_map.model.load import load_karta_leniently

SD = "spec.structureDefinition"
ROOT = f"{SD}.rootComponent"
CHILD0 = f"{SD}.childComponents[0]"


def _codes(findings: list[Finding]) -> list[tuple[str, str]]:
    return [(f.path, f.code) for f in findings if f.is_error]


def _qa6_doc() -> dict[str, object]:
    doc = base_doc()
    child = doc["spec"]["structureDefinition"]["childComponents"][0]
    child["bogus"] = 1
    child["ownerRef"] = "ghost"
    child["scaleDefinition"]["replicasPath"] = "[del(.x)] | length"
    return doc


QA6 = [
    (f"{CHILD0}.bogus", "unknown-field"),
    (f"{CHILD0}.ownerRef", "unknown-owner"),
    (f"{CHILD0}.scaleDefinition.replicasPath", "jq-forbidden"),
]


def test_schema_problem_does_not_hide_other_rules() -> None:
    findings = validate(_qa6_doc())
    assert _codes(findings) == QA6
    assert {f.component for f in findings} == {"worker"}


def test_same_from_yaml_text() -> None:
    assert _codes(validate(yaml.safe_dump(_qa6_doc()))) == QA6


def test_library_loader_stays_strict() -> None:
    with pytest.raises(KartaLoadError, match="bogus: unknown field"):
        load_karta(_qa6_doc())


def test_wrong_type_is_a_finding_and_treated_as_absent() -> None:
    doc = base_doc()
    child = doc["spec"]["structureDefinition"]["childComponents"][0]
    child["scaleDefinition"]["replicasPath"] = 5
    child["ownerRef"] = "ghost"
    findings = validate(doc)
    assert _codes(findings) == [
        (f"{CHILD0}.scaleDefinition.replicasPath", "wrong-type"),
        (f"{CHILD0}.ownerRef", "unknown-owner"),
    ]
    assert "expected string, got number 5" in findings[0].message


def test_unusable_list_item_keeps_later_indexes() -> None:
    doc = base_doc()
    children = doc["spec"]["structureDefinition"]["childComponents"]
    children.insert(0, "not-a-component")
    children[1]["ownerRef"] = "ghost"
    assert _codes(validate(doc)) == [
        (CHILD0, "wrong-type"),
        (f"{SD}.childComponents[1].ownerRef", "unknown-owner"),
    ]


def test_rule_findings_explained_by_a_schema_finding_are_left_out() -> None:
    doc = base_doc()
    doc["spec"]["structureDefinition"]["rootComponent"]["statusDefinition"] = "Running"
    doc["spec"]["structureDefinition"]["rootComponent"]["suspendDefinition"] = {
        "suspendActions": [{"path": ".spec.suspend"}],
        "resumeActions": [{"path": ".spec.suspend", "value": "false"}],
    }
    # no root-no-status (statusDefinition is the wrong type) and no action-value-not-json
    # (the value is missing): the schema findings say it already
    assert _codes(validate(doc)) == [
        (f"{ROOT}.statusDefinition", "wrong-type"),
        (f"{ROOT}.suspendDefinition.suspendActions[0].value", "missing-field"),
    ]


def test_unsupported_version_is_a_finding_and_rules_still_run() -> None:
    doc = base_doc()
    doc["apiVersion"] = "run.ai/v2"
    doc["spec"]["structureDefinition"]["childComponents"][0]["ownerRef"] = "ghost"
    findings = validate(doc)
    assert _codes(findings) == [
        ("apiVersion", "unsupported-version"),
        (f"{CHILD0}.ownerRef", "unknown-owner"),
    ]
    assert "'run.ai/v2'" in findings[0].message


def test_other_kind_is_one_finding() -> None:
    pod = {"apiVersion": "v1", "kind": "Pod", "spec": {"containers": []}}
    findings = validate(pod)
    assert _codes(findings) == [("kind", "not-a-karta")]
    assert "not a Karta definition" in findings[0].message


def test_non_object_document_raises() -> None:
    with pytest.raises(KartaLoadError, match="expected a Karta object, got number"):
        validate("42")


def test_lenient_load_reports_every_problem() -> None:
    doc = _qa6_doc()
    doc["spec"]["structureDefinition"]["rootComponent"]["kind"]["version"] = 1
    loaded = load_karta_leniently(doc)
    assert loaded.karta is not None
    assert [(p.path, p.code) for p in loaded.problems] == [
        (f"{ROOT}.kind.version", "wrong-type"),
        (f"{CHILD0}.bogus", "unknown-field"),
    ]
    assert loaded.karta.root_gvk is not None and loaded.karta.root_gvk.version == ""


@pytest.mark.parametrize("empty", [[], None])
def test_status_mapping_key_without_matchers_warns(empty: object) -> None:
    doc = base_doc()
    mappings = doc["spec"]["structureDefinition"]["rootComponent"]["statusDefinition"][
        "statusMappings"
    ]
    mappings["failed"] = empty
    findings = validate(doc)
    assert [(f.path, f.code, f.severity) for f in findings] == [
        (f"{ROOT}.statusDefinition.statusMappings.failed", "empty-status-mapping", "warning")
    ]
    assert findings[0].component == "root"
