"""jq fields: parse errors and the Karta safety rules, with the position of the fault."""

from __future__ import annotations

from typing import Any

import pytest

from tests.model.conftest import base_doc
from workload_map.model import load_karta, validate

CHILD0 = "spec.structureDefinition.childComponents[0]"
TEMPLATE = f"{CHILD0}.specDefinition.podTemplateSpecPath"


def _with_template(expr: str) -> list[Any]:
    doc = base_doc()
    doc["spec"]["structureDefinition"]["childComponents"][0]["specDefinition"] = {
        "podTemplateSpecPath": expr
    }
    return [f for f in validate(load_karta(doc)) if f.is_error]


def test_parse_error_with_offset() -> None:
    (finding,) = _with_template(".spec | [.a")
    assert (finding.path, finding.code, finding.component) == (TEMPLATE, "jq-parse-error", "worker")
    assert finding.message.startswith("failed to parse JQ expression '.spec | [.a'")
    assert finding.offset is not None and 7 <= finding.offset <= 11


@pytest.mark.parametrize(
    ("expr", "construct_offset", "needle"),
    [
        (".spec | del(.a)", 8, "del"),
        (".spec | range(10)", 8, "range"),
        (".spec | recurse", 8, "recurse"),
        (".spec | walk(.)", 8, "walk"),
        (".spec | paths", 8, "paths"),
        (".spec | repeat(.)", 8, "repeat"),
        (".spec | .. | .a", 8, ".."),
        (".spec.a |= 1", None, "|="),
        (".spec.a = 1", None, "="),
        (".a += 1", None, "+="),
        (".a //= 1", None, "//="),
        ("[.. | .x]", 1, ".."),
        ("[del(.x)]", 1, "del"),
        ("{a: (.b | del(.c))}", 10, "del"),
        ("if .a then del(.b) else . end", 11, "del"),
    ],
)
def test_forbidden_constructs_anywhere(
    expr: str, construct_offset: int | None, needle: str
) -> None:
    findings = _with_template(expr)
    assert findings, expr
    assert {f.code for f in findings} == {"jq-forbidden"}
    assert all(f.path == TEMPLATE for f in findings)
    assert any(needle in f.message for f in findings)
    if construct_offset is not None:
        assert construct_offset in {f.offset for f in findings}


@pytest.mark.parametrize(
    "expr",
    [
        '.spec.a // .spec.b // "c"',
        '.metadata.annotations["x"] // 1 | tonumber?',
        ".spec.services | to_entries[] | .key",
        'any(.status.c[]?; .type == "Ready")',
        'all(.status.c[]?; .status == "True")',
        '.spec.items[] | select(.name == "x")',
        ".spec.x | ascii_downcase",
        "{requests: .spec.resources}",
        'if .spec.mode == "Suspended" then 0 else 1 end',
        ".",
    ],
)
def test_catalog_style_expressions_accepted(expr: str) -> None:
    assert _with_template(expr) == []


def test_every_jq_field_is_checked() -> None:
    bad = "del(.x)"
    doc = base_doc()
    root = doc["spec"]["structureDefinition"]["rootComponent"]
    root["instanceIdPath"] = bad
    root["podSelector"] = {
        "componentInstanceSelector": {"idPath": bad},
        "replicaSelector": {"keyPath": bad},
        "componentTypeSelector": {"keyPath": bad},
    }
    root["scaleDefinition"] = {"replicasPath": bad, "minReplicasPath": bad, "maxReplicasPath": bad}
    frag_keys = [
        "schedulerNamePath",
        "labelsPath",
        "annotationsPath",
        "resourcesPath",
        "resourceClaimsPath",
        "podAffinityPath",
        "nodeAffinityPath",
        "containersPath",
        "containerPath",
        "priorityClassNamePath",
        "imagePath",
    ]
    root["specDefinition"] = {"fragmentedPodSpecDefinition": dict.fromkeys(frag_keys, bad)}
    status = root["statusDefinition"]
    status["phaseDefinition"] = {"path": bad}
    status["conditionsDefinition"] = {"path": bad}
    status["statusMappings"]["failed"] = [
        {"byExpression": {"expression": bad, "expectedResult": "true"}}
    ]
    root["suspendDefinition"] = {
        "suspendActions": [{"path": bad, "value": "true"}],
        "resumeActions": [{"path": bad, "value": "false"}],
    }
    child = doc["spec"]["structureDefinition"]["childComponents"][0]
    child["specDefinition"] = {"podSpecPath": bad, "metadataPath": bad}
    doc["spec"]["optimizationInstructions"] = {
        "gangScheduling": {
            "podGroups": [
                {
                    "name": "g",
                    "members": [
                        {"componentName": "worker", "groupByKeyPaths": ["", bad], "filters": [bad]}
                    ],
                }
            ]
        }
    }
    paths = {f.path for f in validate(load_karta(doc)) if f.code == "jq-forbidden"}
    r = "spec.structureDefinition.rootComponent"
    frag = f"{r}.specDefinition.fragmentedPodSpecDefinition"
    member = "spec.optimizationInstructions.gangScheduling.podGroups[0].members[0]"
    expected = {
        f"{r}.instanceIdPath",
        f"{r}.podSelector.componentInstanceSelector.idPath",
        f"{r}.podSelector.replicaSelector.keyPath",
        f"{r}.podSelector.componentTypeSelector.keyPath",
        f"{r}.scaleDefinition.replicasPath",
        f"{r}.scaleDefinition.minReplicasPath",
        f"{r}.scaleDefinition.maxReplicasPath",
        *(f"{frag}.{k}" for k in frag_keys),
        f"{r}.statusDefinition.phaseDefinition.path",
        f"{r}.statusDefinition.conditionsDefinition.path",
        f"{r}.statusDefinition.statusMappings.failed[0].byExpression.expression",
        f"{r}.suspendDefinition.suspendActions[0].path",
        f"{r}.suspendDefinition.resumeActions[0].path",
        f"{CHILD0}.specDefinition.podSpecPath",
        f"{CHILD0}.specDefinition.metadataPath",
        f"{member}.groupByKeyPaths[1]",
        f"{member}.filters[0]",
    }
    assert paths == expected


def test_empty_expressions_are_skipped() -> None:
    assert _with_template("") == []
