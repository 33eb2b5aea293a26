"""References on a definition: loading, the CRD, and every validation rule naming its field."""

from __future__ import annotations

from typing import Any

import pytest

import workload_map as wm
from tests.model.conftest import base_doc
from workload_map.model import dump_karta
from workload_map.model.crd import crd_manifest
from workload_map.model.references import check as check_references
from workload_map.model.references import resolution_order, unbound_variables, variables_used
from workload_map.model.shape import iter_jq_fields

RUNTIME_KIND = {"group": "trainer.kubeflow.org", "version": "v1alpha1", "kind": "TrainingRuntime"}


def _karta(
    references: list[dict[str, Any]], replicas: str = "$runtime.spec.n // 1"
) -> dict[str, Any]:
    """The model tests' small definition whose worker reads its template and replicas through
    ``references`` (``$runtime``)."""
    doc = base_doc()
    structure = doc["spec"]["structureDefinition"]
    worker = structure["childComponents"][0]
    worker["specDefinition"]["podTemplateSpecPath"] = "$runtime.spec.template"
    worker["scaleDefinition"]["replicasPath"] = replicas
    structure["references"] = references
    return doc


def _lookup(name: str = "runtime", **extra: Any) -> dict[str, Any]:
    return {
        "name": name,
        "lookup": {"kinds": [RUNTIME_KIND], "namePath": ".spec.runtimeRef.name", **extra},
    }


def _codes(doc: dict[str, Any]) -> list[tuple[str, str]]:
    return [(f.path, str(f.code)) for f in wm.validate(doc) if f.is_error]


def test_a_valid_reference_loads_dumps_and_validates() -> None:
    doc = _karta([_lookup() | {"optional": True}])
    karta = wm.load_karta(doc)
    (ref,) = karta.spec.structure_definition.references
    assert ref.name == "runtime" and ref.optional is True and ref.lookup is not None
    assert (
        dump_karta(karta)["spec"]["structureDefinition"]["references"]
        == doc["spec"]["structureDefinition"]["references"]
    )
    assert _codes(doc) == []


def test_a_definition_without_references_is_unchanged_on_the_wire() -> None:
    doc = _karta([], replicas=".spec.n")
    doc["spec"]["structureDefinition"]["childComponents"][0]["specDefinition"] = {
        "podTemplateSpecPath": ".spec.template"
    }
    del doc["spec"]["structureDefinition"]["references"]
    assert "references" not in dump_karta(wm.load_karta(doc))["spec"]["structureDefinition"]


def test_the_crd_gains_references_with_lookup_and_list() -> None:
    crd = crd_manifest()
    structure = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"][
        "properties"
    ]["structureDefinition"]["properties"]
    refs = structure["references"]
    assert refs["x-kubernetes-list-map-keys"] == ["name"]
    item = refs["items"]["properties"]
    assert {"lookup", "list", "optional", "allowConfigMap", "name"} <= set(item)
    assert item["optional"]["type"] == "boolean"
    assert "matchLabelsPath" in item["list"]["properties"]


def test_an_unknown_variable_is_a_finding_at_its_field() -> None:
    doc = _karta([], replicas="$runtime.spec.n")
    found = _codes(doc)
    path = "spec.structureDefinition.childComponents[0].scaleDefinition.replicasPath"
    assert (path, "unknown-variable") in found
    assert (
        "spec.structureDefinition.childComponents[0].specDefinition.podTemplateSpecPath",
        "unknown-variable",
    ) in found
    message = next(f.message for f in wm.validate(doc) if f.path == path)
    assert "$runtime" in message


def test_references_are_not_bound_in_pod_selector_paths() -> None:
    doc = _karta([_lookup()])
    doc["spec"]["structureDefinition"]["childComponents"][0]["podSelector"] = {
        "componentTypeSelector": {"keyPath": ".metadata.labels[$runtime.metadata.name]"}
    }
    assert (
        "spec.structureDefinition.childComponents[0].podSelector.componentTypeSelector.keyPath",
        "reference-in-selector",
    ) in _codes(doc)


def test_self_reference_and_cycles() -> None:
    me = _lookup("a") | {"lookup": {"kinds": [RUNTIME_KIND], "namePath": "$a.metadata.name"}}
    found = _codes(_karta([me, _lookup()]))
    assert ("spec.structureDefinition.references[0].lookup.namePath", "reference-cycle") in found
    a = {"name": "a", "lookup": {"kinds": [RUNTIME_KIND], "namePath": "$b.metadata.name"}}
    b = {"name": "b", "lookup": {"kinds": [RUNTIME_KIND], "namePath": "$a.metadata.name"}}
    found = _codes(_karta([a, b, _lookup()]))
    assert ("spec.structureDefinition.references[0]", "reference-cycle") in found
    order, cycles = resolution_order(wm.load_karta(_karta([a, b, _lookup()])))
    assert [r.name for r in order] == ["runtime"] and cycles == [["a", "b"]]


def test_a_reference_may_use_an_earlier_one_in_order() -> None:
    first = {"name": "b", "lookup": {"kinds": [RUNTIME_KIND], "namePath": "$runtime.metadata.name"}}
    karta = wm.load_karta(_karta([first, _lookup()]))
    assert _codes(dump_karta(karta)) == []
    order, cycles = resolution_order(karta)
    assert [r.name for r in order] == ["runtime", "b"] and cycles == []


@pytest.mark.parametrize(
    ("kind", "allow", "code"),
    [
        ({"group": "", "version": "v1", "kind": "Secret"}, True, "reference-forbidden-kind"),
        ({"group": "", "version": "v1", "kind": "ConfigMap"}, False, "reference-forbidden-kind"),
        ({"group": "", "version": "v1", "kind": "ConfigMap"}, True, None),
    ],
)
def test_forbidden_kinds(kind: dict[str, str], allow: bool, code: str | None) -> None:
    ref = {
        "name": "runtime",
        "allowConfigMap": allow,
        "lookup": {"kinds": [kind], "namePath": ".x"},
    }
    found = [c for p, c in _codes(_karta([ref])) if p.startswith("spec.structureDefinition.ref")]
    assert found == ([code] if code else [])


def test_declaration_rules_name_their_field() -> None:
    both = _lookup() | {"list": {"kinds": [RUNTIME_KIND], "matchLabels": {"a": "b"}}}
    bad_name = _lookup("ENV")
    no_selector = {"name": "runtime", "list": {"kinds": [RUNTIME_KIND]}}
    assert ("spec.structureDefinition.references[0]", "reference-invalid") in _codes(_karta([both]))
    assert ("spec.structureDefinition.references[0].name", "reference-invalid") in _codes(
        _karta([bad_name, _lookup()])
    )
    assert ("spec.structureDefinition.references[0].list", "reference-invalid") in _codes(
        _karta([no_selector])
    )
    many = [_lookup(f"r{i}") for i in range(9)] + [_lookup()]
    assert ("spec.structureDefinition.references", "reference-invalid") in _codes(_karta(many))
    bad_labels = {"name": "runtime", "list": {"kinds": [RUNTIME_KIND], "matchLabels": {"a b": "c"}}}
    assert any(c == "invalid-label" for _, c in _codes(_karta([bad_labels])))


def test_reference_paths_follow_the_jq_safety_rules() -> None:
    ref = _lookup() | {"lookup": {"kinds": [RUNTIME_KIND], "namePath": "[.. | .name?][0]"}}
    assert ("spec.structureDefinition.references[0].lookup.namePath", "jq-forbidden") in _codes(
        _karta([ref])
    )


def test_loader_reports_wrong_types_in_references() -> None:
    doc = _karta([_lookup() | {"optional": "yes"}])
    found = [(f.path, str(f.code)) for f in wm.validate(doc)]
    assert ("spec.structureDefinition.references[0].optional", "wrong-type") in found


def test_helpers() -> None:
    assert variables_used("$runtime.a // $other | $runtime", ["runtime", "x"]) == ("runtime",)
    assert unbound_variables(". as $x | $x + $y + $z", ["z"]) == [("y", 15)]


def test_jq_and_variable_findings_keep_their_order_from_one_field_walk() -> None:
    # the jq rules and the variable checks share one walk of the jq fields: the jq findings
    # come first, then the variable findings in document order (fields without a `$` skipped)
    me = {"name": "a", "lookup": {"kinds": [RUNTIME_KIND], "namePath": "$a.metadata.name | $nope"}}
    doc = _karta([me, _lookup()], replicas="$runtime.spec.n // $missing")
    structure = doc["spec"]["structureDefinition"]
    worker = structure["childComponents"][0]
    worker["podSelector"] = {
        "componentTypeSelector": {"keyPath": ".metadata.labels[$runtime.metadata.name]"}
    }
    worker["instanceIdPath"] = ".spec.x | ("
    structure["rootComponent"]["statusDefinition"]["phaseDefinition"] = {"path": "[.. | $other]"}
    child = "spec.structureDefinition.childComponents[0]"
    phase = "spec.structureDefinition.rootComponent.statusDefinition.phaseDefinition.path"
    name_path = "spec.structureDefinition.references[0].lookup.namePath"
    unknown = "unknown variable ${}: no reference of this definition binds it"
    found = [(f.path, str(f.code), f.message, f.component, f.offset) for f in wm.validate(doc)]
    assert found == [
        (
            f"{child}.instanceIdPath",
            "instance-id-without-selector",
            "component 'worker' has instance id path but no pod component instance selector",
            "worker",
            None,
        ),
        (
            phase,
            "jq-forbidden",
            "JQ expression '[.. | $other]' failed validation: recursive descent '..' is not "
            "allowed",
            "root",
            1,
        ),
        (
            f"{child}.instanceIdPath",
            "jq-parse-error",
            "failed to parse JQ expression '.spec.x | (': unexpected EOF",
            "worker",
            11,
        ),
        (phase, "unknown-variable", unknown.format("other"), "root", 6),
        (
            f"{child}.scaleDefinition.replicasPath",
            "unknown-variable",
            unknown.format("missing"),
            "worker",
            19,
        ),
        (
            f"{child}.podSelector.componentTypeSelector.keyPath",
            "reference-in-selector",
            "$runtime is a reference, and references are not bound in pod-selector paths (a "
            "pod's place must follow from the pod alone)",
            "worker",
            17,
        ),
        (name_path, "reference-cycle", "reference 'a' uses its own variable $a", None, 0),
        (name_path, "unknown-variable", unknown.format("nope"), None, 19),
    ]
    karta = wm.load_karta(doc)
    assert check_references(karta) == check_references(karta, tuple(iter_jq_fields(karta)))
