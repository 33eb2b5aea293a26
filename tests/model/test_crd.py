"""The generated kartas.run.ai CRD: committed file in sync, structural, accepting our definitions."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from tests.conftest import ROOT
from tests.model.conftest import FIXTURES, base_doc
from workload_map.model import dump_karta, load_karta
from workload_map.model.crd import crd_manifest, render_crd

COMMITTED = ROOT / "deploy" / "crds" / "kartas.run.ai.yaml"


def test_committed_crd_matches_generator() -> None:
    assert COMMITTED.read_text() == render_crd(), (
        "deploy/crds/kartas.run.ai.yaml drifted from the model: run `make crd`"
    )


def test_module_prints_the_crd() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "workload_map.model.crd"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert out == render_crd()


def test_identity() -> None:
    crd = yaml.safe_load(render_crd())
    assert crd["metadata"]["name"] == "kartas.run.ai"
    spec = crd["spec"]
    assert spec["group"] == "run.ai" and spec["scope"] == "Cluster"
    assert spec["names"] == {
        "kind": "Karta",
        "listKind": "KartaList",
        "plural": "kartas",
        "singular": "karta",
        "shortNames": ["krt"],
    }
    (version,) = spec["versions"]
    assert (version["name"], version["served"], version["storage"]) == ("v1alpha1", True, True)
    assert version["subresources"] == {"status": {}}
    columns = {c["name"]: c["jsonPath"] for c in version["additionalPrinterColumns"]}
    assert columns == {
        "Framework": ".spec.structureDefinition.rootComponent.kind.kind",
        "Root Component": ".spec.structureDefinition.rootComponent.name",
        "Age": ".metadata.creationTimestamp",
    }


def _schema() -> dict[str, Any]:
    return crd_manifest()["spec"]["versions"][0]["schema"]["openAPIV3Schema"]  # type: ignore[no-any-return]


def _walk(node: dict[str, Any], path: str = "") -> list[tuple[str, dict[str, Any]]]:
    out = [(path, node)]
    for key, child in node.get("properties", {}).items():
        out += _walk(child, f"{path}.{key}")
    if isinstance(node.get("items"), dict):
        out += _walk(node["items"], f"{path}[]")
    if isinstance(node.get("additionalProperties"), dict):
        out += _walk(node["additionalProperties"], f"{path}{{}}")
    return out


def test_schema_is_structural() -> None:
    for path, node in _walk(_schema()):
        assert "type" in node, f"{path} has no type"
        assert not ("properties" in node and "additionalProperties" in node), path
        if node.get("x-kubernetes-list-type") == "map":
            items = node["items"]
            for key in node["x-kubernetes-list-map-keys"]:
                assert key in items.get("required", []) or "default" in items["properties"][key], (
                    path,
                    key,
                )
        if node.get("x-kubernetes-list-type") == "set":
            assert node["items"]["type"] in ("string", "integer"), path
        for banned in ("$ref", "anyOf", "oneOf", "allOf", "not"):
            assert banned not in node, (path, banned)


def test_schema_details() -> None:
    nodes = dict(_walk(_schema()))
    sd = ".spec.structureDefinition"
    assert nodes[".spec"]["required"] == ["structureDefinition"]
    assert nodes[sd]["required"] == ["rootComponent"]
    children = nodes[f"{sd}.childComponents"]
    assert children["x-kubernetes-list-map-keys"] == ["name"]
    assert nodes[f"{sd}.additionalChildKinds"]["x-kubernetes-list-map-keys"] == ["kind"]
    assert nodes[f"{sd}.rootComponent.kind"]["required"] == ["group", "kind", "version"]
    selector = nodes[f"{sd}.rootComponent.podSelector.componentTypeSelector"]
    assert selector["x-kubernetes-validations"] == [
        {
            "rule": "has(self.keyPath) || has(self.matchLabels)",
            "message": "at least one of keyPath or matchLabels must be set",
        },
        {"rule": "!has(self.value) || has(self.keyPath)", "message": "value requires keyPath"},
    ]
    assert selector["properties"]["keyPath"]["minLength"] == 1
    assert selector["properties"]["matchLabels"]["minProperties"] == 1
    conditions = nodes[f"{sd}.rootComponent.statusDefinition.conditionsDefinition"]
    assert conditions["required"] == ["path"]
    defaults = {k: v.get("default") for k, v in conditions["properties"].items()}
    assert defaults == {
        "path": None,
        "typeFieldName": "type",
        "statusFieldName": "status",
        "messageFieldName": "message",
        "reasonFieldName": "reason",
    }
    suspend = nodes[f"{sd}.rootComponent.suspendDefinition"]
    assert suspend["properties"]["suspendActions"]["minItems"] == 1
    assert suspend["properties"]["suspendActions"]["x-kubernetes-list-type"] == "atomic"
    gang = ".spec.optimizationInstructions.gangScheduling"
    assert nodes[f"{gang}.podGroups"]["x-kubernetes-list-map-keys"] == ["name"]
    assert nodes[f"{gang}.podGroups[].members"]["x-kubernetes-list-map-keys"] == ["componentName"]
    assert nodes[f"{gang}.podGroup.subGroups"]["x-kubernetes-list-map-keys"] == ["componentName"]
    assert nodes[f"{gang}.podGroups[].members[].filters"]["x-kubernetes-list-type"] == "set"
    assert nodes[".status.conditions"]["x-kubernetes-list-map-keys"] == ["type"]
    mappings = nodes[f"{sd}.rootComponent.statusDefinition.statusMappings"]
    assert set(mappings["properties"]) == {
        "initializing",
        "running",
        "completed",
        "failed",
        "degraded",
        "suspended",
        "suspending",
        "resuming",
    }


def _conforms(value: Any, node: dict[str, Any], path: str, errors: list[str]) -> None:
    typ = node["type"]
    checks = {
        "object": dict,
        "array": list,
        "string": str,
        "integer": int,
        "boolean": bool,
    }
    if not isinstance(value, checks[typ]):
        errors.append(f"{path}: not {typ}")
        return
    if typ == "object":
        for key in node.get("required", []):
            if key not in value:
                errors.append(f"{path}.{key}: required")
        if node.get("minProperties") and len(value) < node["minProperties"]:
            errors.append(f"{path}: too few properties")
        props = node.get("properties")
        for key, child in value.items():
            if props is not None and key in props:
                _conforms(child, props[key], f"{path}.{key}", errors)
            elif isinstance(node.get("additionalProperties"), dict):
                _conforms(child, node["additionalProperties"], f"{path}.{key}", errors)
            elif props is not None and not node.get("x-kubernetes-preserve-unknown-fields"):
                errors.append(f"{path}.{key}: pruned")
    elif typ == "array":
        if node.get("minItems") and len(value) < node["minItems"]:
            errors.append(f"{path}: too few items")
        for i, item in enumerate(value):
            _conforms(item, node["items"], f"{path}[{i}]", errors)
    elif typ == "string" and node.get("minLength") and len(value) < node["minLength"]:
        errors.append(f"{path}: too short")


def test_our_definitions_conform_to_the_schema() -> None:
    schema = _schema()
    docs = [base_doc()]
    for name in ("trainer-full.yaml", "services-map.yaml", "pod.json"):
        docs.append(dump_karta(load_karta(Path(FIXTURES / name))))
    for doc in docs:
        errors: list[str] = []
        _conforms(doc, schema, "", errors)
        assert errors == []
