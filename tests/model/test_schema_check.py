"""Schema-aware checking of a definition's workload paths against the target CRD."""

from __future__ import annotations

import copy
from typing import Any

import pytest
import yaml

from tests.model.conftest import FIXTURES
from workload_map.model import (
    check_against_crd,
    dump_karta,
    load_karta,
    schema_nodes_at,
    schema_types_at,
    validate,
)

CRD: dict[str, Any] = yaml.safe_load((FIXTURES / "trainer-crd.yaml").read_text())
TRAINER = yaml.safe_load((FIXTURES / "trainer-full.yaml").read_text())
WORKER = "spec.structureDefinition.childComponents[1]"


def _with_worker_path(key: str, expr: str) -> list[Any]:
    doc = copy.deepcopy(TRAINER)
    doc["spec"]["structureDefinition"]["childComponents"][1]["scaleDefinition"][key] = expr
    return check_against_crd(load_karta(doc), CRD)


def test_fixture_definition_matches_its_crd() -> None:
    karta = load_karta(TRAINER)
    assert check_against_crd(karta, CRD) == []
    assert [f for f in validate(karta, crd=CRD) if f.is_error] == []


@pytest.mark.parametrize(
    ("expr", "message", "offset"),
    [
        (
            ".spec.elastc.minReplicas",
            "field 'elastc' does not exist at .spec (did you mean 'elastic'?)",
            5,
        ),
        (".spec.elastic.min", "field 'min' does not exist at .spec.elastic", 13),
        (
            ".spec.elastic.minReplicas.x",
            "cannot read field 'x': .spec.elastic.minReplicas is an integer",
            25,
        ),
        (
            ".spec.tags.first",
            "cannot read field 'first': .spec.tags is an array (iterate it with [] first)",
            10,
        ),
        (".spec.suspend[]", "cannot iterate: .spec.suspend is a boolean", 13),
        (".spec.elastic // .spec.nope", "field 'nope' does not exist at .spec", 22),
        (".spec.elastic | .minReplica", "did you mean 'minReplicas'?", 16),
        (
            ".spec.elastic | select(.maxx > 1) | .minReplicas",
            "field 'maxx' does not exist at .spec.elastic",
            23,
        ),
        ("{a: .spec.nope}", "field 'nope' does not exist at .spec", 9),
        ("if .spec.suspend then .spec.x else 1 end", "field 'x' does not exist at .spec", 27),
        ("if .spec.y then 0 else 1 end", "field 'y' does not exist at .spec", 8),
        (".spec.roles | to_entries[] | .value.replica", "field 'replica' does not exist at", 35),
        (".status.conditions[] | .typ", "did you mean 'type'?", 23),
        ('.spec["elastic"].mx', "field 'mx' does not exist at .spec.elastic", 16),
        ("[.spec.bad[]] | length", "field 'bad' does not exist at .spec", 6),
        ("any(.status.conditions[]; .stat == 1)", "field 'stat' does not exist", 26),
    ],
)
def test_paths_that_cannot_exist(expr: str, message: str, offset: int) -> None:
    findings = _with_worker_path("minReplicasPath", expr)
    assert len(findings) == 1, findings
    finding = findings[0]
    assert finding.path == f"{WORKER}.scaleDefinition.minReplicasPath"
    assert finding.component == "worker"
    assert finding.severity == "error"
    assert finding.code in ("schema-unknown-field", "schema-type-mismatch")
    assert message in finding.message
    assert finding.offset == offset


@pytest.mark.parametrize(
    "expr",
    [
        ".spec.extra.anything.below[]",  # preserve-unknown-fields
        ".spec.roles.anyname.template.spec.containers[0]",  # additionalProperties + preserve
        ".spec.tags[0]",
        ".spec.tags[1:]",
        ".metadata.labels.x",  # metadata declared without fields
        ".spec.elastic.minReplicas? // 1",
        ".spec.suspend[]?",  # optional: a type error there is caught at run time
        ".spec.roles | keys[]",
        "$__loc__",
        "def f: .x; f",
        ".spec.roles | with_entries(.value)",
        ".spec.elastic as $e | $e.whatever",
        "reduce .spec.tags[] as $t (0; . + 1)",
        ".spec.elastic | to_entries[] | .nope",
        "try .spec.tags.bad catch 1",
    ],
)
def test_unknown_constructs_are_not_guessed(expr: str) -> None:
    assert _with_worker_path("minReplicasPath", expr) == []


def test_pod_paths_are_not_checked_against_the_workload() -> None:
    doc = copy.deepcopy(TRAINER)
    worker = doc["spec"]["structureDefinition"]["childComponents"][1]
    worker["podSelector"]["componentTypeSelector"] = {"keyPath": ".spec.nodeName"}
    assert check_against_crd(load_karta(doc), CRD) == []


def test_version_must_be_served() -> None:
    doc = copy.deepcopy(TRAINER)
    doc["spec"]["structureDefinition"]["rootComponent"]["kind"]["version"] = "v0"
    (finding,) = check_against_crd(load_karta(doc), CRD)
    assert finding.code == "version-not-served"
    assert finding.path == "spec.structureDefinition.rootComponent.kind.version"
    assert "does not serve version 'v0'" in finding.message and "served: v1" in finding.message
    doc["spec"]["structureDefinition"]["rootComponent"]["kind"]["version"] = "v9"
    (finding,) = check_against_crd(load_karta(doc), CRD)
    assert "does not define version 'v9'" in finding.message


def test_crd_for_another_kind() -> None:
    doc = copy.deepcopy(TRAINER)
    doc["spec"]["structureDefinition"]["rootComponent"]["kind"]["kind"] = "Other"
    (finding,) = check_against_crd(load_karta(doc), CRD)
    assert finding.code == "crd-mismatch"
    assert check_against_crd(load_karta(doc), {"kind": "ConfigMap"})[0].code == "crd-invalid"


def test_validate_with_crd_adds_schema_findings() -> None:
    doc = copy.deepcopy(TRAINER)
    doc["spec"]["structureDefinition"]["childComponents"][1]["specDefinition"][
        "podTemplateSpecPath"
    ] = ".spec.role.worker.template"
    findings = validate(load_karta(doc), crd=CRD)
    assert [(f.code, f.message.split(": ", 1)[1]) for f in findings if f.is_error] == [
        (
            "schema-unknown-field",
            "field 'role' does not exist at .spec (did you mean 'roles'?) in Trainer example.com/v1",
        )
    ]
    assert validate(load_karta(doc)) == []


def test_types_at_the_end_of_a_path() -> None:
    assert schema_types_at(CRD, ".spec.elastic.minReplicas") == {"integer"}
    assert schema_types_at(CRD, ".spec.roles.worker.replicas // 1") == {"integer"}
    assert schema_types_at(CRD, ".spec.roles.worker.template") == {"object"}
    assert schema_types_at(CRD, ".spec.roles.worker.replicas * 2") == {"integer"}
    assert schema_types_at(CRD, ".spec.tags[]") == {"string"}
    assert schema_types_at(CRD, ".spec.suspend") == {"boolean"}
    assert schema_types_at(CRD, ".spec.extra.x") == {"unknown"}
    assert schema_types_at(CRD, ".spec.nope") == frozenset()
    assert schema_types_at(CRD, "{requests: .spec.elastic}") == {"object"}
    assert schema_types_at(CRD, ".spec.roles | to_entries[] | .key") == {"string"}
    assert schema_types_at(CRD, ".spec.elastic.minReplicas", version="v0") == {"unknown"}
    schema = CRD["spec"]["versions"][1]["schema"]["openAPIV3Schema"]
    (node,) = schema_nodes_at(schema, ".spec.roles.x")
    assert node is not None and "replicas" in node["properties"]


def test_round_trip_unaffected_by_checks() -> None:
    karta = load_karta(TRAINER)
    check_against_crd(karta, CRD)
    assert dump_karta(karta) == TRAINER


def test_expression_too_long_to_check_is_a_warning_not_a_crash() -> None:
    # a flat chain is valid jq of any length; the schema walk may give up, but says so
    long_chain = " | ".join(["."] * 3000) + " | .spec.elastic.minReplicas"
    findings = _with_worker_path("minReplicasPath", long_chain)
    assert all(not f.is_error for f in findings)
    assert [f.code for f in findings] == ["schema-check-skipped"]
    assert findings[0].path.endswith("minReplicasPath")
