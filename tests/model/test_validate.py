"""Every validation rule: a table of broken definitions, each checked for its path and code."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tests.model.conftest import FIXTURES, base_doc
from workload_map.model import Finding, is_valid, load_karta, validate

Doc = dict[str, Any]
SD = "spec.structureDefinition"
ROOT = f"{SD}.rootComponent"
CHILD0 = f"{SD}.childComponents[0]"
GANG = "spec.optimizationInstructions.gangScheduling"


def _root(d: Doc) -> Doc:
    return d["spec"]["structureDefinition"]["rootComponent"]  # type: ignore[no-any-return]


def _child(d: Doc, i: int = 0) -> Doc:
    return d["spec"]["structureDefinition"]["childComponents"][i]  # type: ignore[no-any-return]


def _add_child(d: Doc, **fields: Any) -> None:
    d["spec"]["structureDefinition"]["childComponents"].append(fields)


def _gang(d: Doc, **gang: Any) -> None:
    d["spec"]["optimizationInstructions"] = {"gangScheduling": gang}


def _errors(findings: list[Finding]) -> set[tuple[str, str]]:
    return {(f.path, f.code) for f in findings if f.is_error}


def _run(mutate: Callable[[Doc], None]) -> list[Finding]:
    doc = base_doc()
    mutate(doc)
    return validate(load_karta(doc))


def test_base_and_fixtures_are_valid() -> None:
    assert validate(load_karta(base_doc())) == []
    for name in ("trainer-full.yaml", "services-map.yaml", "pod.json", "two-kartas.yaml"):
        text = (FIXTURES / name).read_text()
        from workload_map.model import load_kartas

        for karta in load_kartas(text):
            findings = validate(karta)
            assert not [f for f in findings if f.is_error], (name, findings)
    assert [f.code for f in validate(load_karta(FIXTURES / "trainer-full.yaml"))] == []


def _set(path: list[Any], value: Any) -> Callable[[Doc], None]:
    def mutate(d: Doc) -> None:
        node: Any = d
        for key in path[:-1]:
            node = node[key]
        if value is _DELETE:
            del node[path[-1]]
        else:
            node[path[-1]] = value

    return mutate


_DELETE = object()
_R = ["spec", "structureDefinition", "rootComponent"]
_C = ["spec", "structureDefinition", "childComponents", 0]


def _suspend(path: str, value: str, resume_path: str | None = None) -> Doc:
    return {
        "suspendActions": [{"path": path, "value": value}],
        "resumeActions": [{"path": resume_path or ".spec.suspend", "value": "false"}],
    }


def _both(*mutations: Callable[[Doc], None]) -> Callable[[Doc], None]:
    def mutate(d: Doc) -> None:
        for m in mutations:
            m(d)

    return mutate


INVALID: list[tuple[str, Callable[[Doc], None], set[tuple[str, str]]]] = [
    ("root kind missing", _set([*_R, "kind"], _DELETE), {(f"{ROOT}.kind", "root-kind-incomplete")}),
    (
        "root version empty",
        _set([*_R, "kind", "version"], ""),
        {(f"{ROOT}.kind", "root-kind-incomplete")},
    ),
    (
        "root group empty for a non-Pod",
        _set([*_R, "kind", "group"], ""),
        {(f"{ROOT}.kind", "root-kind-incomplete")},
    ),
    (
        "root kind empty",
        _set([*_R, "kind", "kind"], ""),
        {(f"{ROOT}.kind", "root-kind-incomplete")},
    ),
    ("root owner ref", _set([*_R, "ownerRef"], "x"), {(f"{ROOT}.ownerRef", "root-owner-ref")}),
    (
        "root empty owner ref",
        _set([*_R, "ownerRef"], ""),
        {(f"{ROOT}.ownerRef", "root-owner-ref")},
    ),
    (
        "root without status",
        _set([*_R, "statusDefinition"], _DELETE),
        {(f"{ROOT}.statusDefinition", "root-no-status")},
    ),
    (
        "child without owner",
        _set([*_C, "ownerRef"], _DELETE),
        {(f"{CHILD0}.ownerRef", "missing-owner-ref")},
    ),
    (
        "child empty owner",
        _set([*_C, "ownerRef"], ""),
        {(f"{CHILD0}.ownerRef", "missing-owner-ref")},
    ),
    (
        "unknown owner",
        _set([*_C, "ownerRef"], "nobody"),
        {(f"{CHILD0}.ownerRef", "unknown-owner")},
    ),
    (
        "empty name",
        _set([*_C, "name"], ""),
        {(f"{CHILD0}.name", "empty-component-name")},
    ),
    (
        "template + podSpec",
        _set([*_C, "specDefinition", "podSpecPath"], ".spec.x"),
        {(f"{CHILD0}.specDefinition", "multiple-spec-definitions")},
    ),
    (
        "template + fragmented",
        _set([*_C, "specDefinition", "fragmentedPodSpecDefinition"], {"labelsPath": ".a"}),
        {(f"{CHILD0}.specDefinition", "multiple-spec-definitions")},
    ),
    (
        "podSpec + fragmented",
        _set(
            [*_C, "specDefinition"],
            {"podSpecPath": ".a", "fragmentedPodSpecDefinition": {"labelsPath": ".a"}},
        ),
        {(f"{CHILD0}.specDefinition", "multiple-spec-definitions")},
    ),
    (
        "all three spec shapes",
        _set(
            [*_C, "specDefinition"],
            {
                "podTemplateSpecPath": ".a",
                "podSpecPath": ".a",
                "fragmentedPodSpecDefinition": {},
            },
        ),
        {(f"{CHILD0}.specDefinition", "multiple-spec-definitions")},
    ),
    (
        "instance id without selector",
        _set([*_C, "instanceIdPath"], ".spec.jobs[].name"),
        {(f"{CHILD0}.instanceIdPath", "instance-id-without-selector")},
    ),
    (
        "selector without instance id",
        _set([*_C, "podSelector", "componentInstanceSelector"], {"idPath": ".metadata.name"}),
        {(f"{CHILD0}.podSelector.componentInstanceSelector", "selector-without-instance-id")},
    ),
    (
        "empty type selector",
        _set([*_C, "podSelector", "componentTypeSelector"], {}),
        {(f"{CHILD0}.podSelector.componentTypeSelector", "type-selector-empty")},
    ),
    (
        "empty matchLabels",
        _set([*_C, "podSelector", "componentTypeSelector"], {"matchLabels": {}}),
        {(f"{CHILD0}.podSelector.componentTypeSelector.matchLabels", "empty-match-labels")},
    ),
    (
        "value without keyPath",
        _set(
            [*_C, "podSelector", "componentTypeSelector"], {"value": "x", "matchLabels": {"a": "b"}}
        ),
        {(f"{CHILD0}.podSelector.componentTypeSelector.value", "value-without-key-path")},
    ),
    (
        "label key with a space",
        _set([*_C, "podSelector", "componentTypeSelector"], {"matchLabels": {"app name": "x"}}),
        {(f'{CHILD0}.podSelector.componentTypeSelector.matchLabels["app name"]', "invalid-label")},
    ),
    (
        "label value with a trailing space",
        _set([*_C, "podSelector", "componentTypeSelector"], {"matchLabels": {"app": "proxy "}}),
        {(f'{CHILD0}.podSelector.componentTypeSelector.matchLabels["app"]', "invalid-label")},
    ),
    (
        "unknown pod-group member",
        lambda d: _gang(d, podGroups=[{"name": "g", "members": [{"componentName": "ghost"}]}]),
        {(f"{GANG}.podGroups[0].members[0].componentName", "unknown-pod-group-member")},
    ),
    (
        "unknown subgroup component (stricter than the reference)",
        lambda d: _gang(
            d,
            podGroup={
                "name": "g",
                "subGroups": [{"componentName": "worker"}, {"componentName": "ghost"}],
            },
        ),
        {(f"{GANG}.podGroup.subGroups[1].componentName", "unknown-subgroup-component")},
    ),
    (
        "suspend path that computes a value",
        _set([*_R, "suspendDefinition"], _suspend(".spec.suspend | not", "true")),
        {(f"{ROOT}.suspendDefinition.suspendActions[0].path", "action-path-not-writable")},
    ),
    (
        "resume path building an array",
        _set([*_C, "suspendDefinition"], _suspend(".spec.suspend", "true", "[.spec.x]")),
        {(f"{CHILD0}.suspendDefinition.resumeActions[0].path", "action-path-not-writable")},
    ),
    (
        "suspend value not JSON",
        _set([*_R, "suspendDefinition"], _suspend(".spec.suspend", "Suspended")),
        {(f"{ROOT}.suspendDefinition.suspendActions[0].value", "action-value-not-json")},
    ),
    (
        "second resume value not JSON",
        _set(
            [*_R, "suspendDefinition"],
            {
                "suspendActions": [{"path": ".spec.suspend", "value": "true"}],
                "resumeActions": [
                    {"path": ".spec.suspend", "value": "false"},
                    {"path": ".spec.mode", "value": "{bad"},
                ],
            },
        ),
        {(f"{ROOT}.suspendDefinition.resumeActions[1].value", "action-value-not-json")},
    ),
    (
        "forbidden suspend path is reported once, as jq-forbidden",
        _set([*_R, "suspendDefinition"], _suspend(".spec.suspend |= true", "true")),
        {(f"{ROOT}.suspendDefinition.suspendActions[0].path", "jq-forbidden")},
    ),
]


@pytest.mark.parametrize(
    ("mutate", "expected"), [c[1:] for c in INVALID], ids=[c[0] for c in INVALID]
)
def test_invalid_definitions(mutate: Callable[[Doc], None], expected: set[tuple[str, str]]) -> None:
    findings = _run(mutate)
    assert _errors(findings) == expected
    for finding in findings:
        assert finding.message and finding.severity in ("error", "warning")


@pytest.mark.parametrize(
    "mutate",
    [
        _set([*_R, "kind"], {"group": "", "version": "v1", "kind": "Pod"}),
        _set([*_C, "specDefinition"], {"podSpecPath": ".spec.p", "metadataPath": ".spec.m"}),
        _set([*_C, "podSelector", "componentTypeSelector"], {"keyPath": ".metadata.name"}),
        _set(
            [*_C, "podSelector", "componentTypeSelector"],
            {"matchLabels": {"app.kubernetes.io/component": "", "a": "b"}},
        ),
        _set(
            [*_C, "podSelector", "componentTypeSelector"],
            {"keyPath": ".metadata.name", "value": "x", "matchLabels": {"a": "b"}},
        ),
        _both(
            _set([*_C, "instanceIdPath"], ".spec.jobs[].name"),
            _set([*_C, "podSelector", "componentInstanceSelector"], {"idPath": ".metadata.name"}),
        ),
        _set(
            [*_R, "suspendDefinition"],
            _suspend(".spec.runPolicy.suspend // .spec.suspend", '"Suspended"', '.spec.a["b"]'),
        ),
    ],
    ids=[
        "pod root without group",
        "podSpec+metadata",
        "keyPath only",
        "matchLabels",
        "all",
        "ids",
        "writable suspend",
    ],
)
def test_accepted_shapes(mutate: Callable[[Doc], None]) -> None:
    assert _errors(_run(mutate)) == set()


def test_all_bad_labels_reported_in_stable_order() -> None:
    labels = {
        "z key": "ok",
        "Example.com/x": "ok",
        "a": "-bad",
        "b": "x" * 64,
        "c" * 64: "ok",
        "/x": "ok",
        "a/b/c": "ok",
    }
    findings = _run(_set([*_C, "podSelector", "componentTypeSelector"], {"matchLabels": labels}))
    bad = [f for f in findings if f.code == "invalid-label"]
    keys = [f.path.split("matchLabels")[1] for f in bad]
    assert keys == sorted(keys)
    assert {k.strip('[]"') for k in keys} == set(labels)
    assert any('Invalid value: "z key"' in f.message for f in bad)
    assert any('Invalid value: "-bad"' in f.message for f in bad)
    assert all(f.component == "worker" for f in bad)


def test_duplicates_stop_everything() -> None:
    def mutate(d: Doc) -> None:
        _child(d)["name"] = "root"
        del _root(d)["statusDefinition"]
        _gang(d, podGroups=[{"name": "g", "members": [{"componentName": "ghost"}]}])

    findings = _run(mutate)
    assert [(f.path, f.code) for f in findings] == [(f"{CHILD0}.name", "duplicate-component")]
    assert findings[0].message == "component name root is not unique"


def test_independent_errors_aggregate() -> None:
    def mutate(d: Doc) -> None:
        del _root(d)["kind"]
        del _child(d)["ownerRef"]
        _gang(d, podGroups=[{"name": "g", "members": [{"componentName": "ghost"}]}])

    assert {code for _, code in _errors(_run(mutate))} == {
        "root-kind-incomplete",
        "missing-owner-ref",
        "unknown-pod-group-member",
    }


def test_cycles_detected_once_each() -> None:
    def two(d: Doc) -> None:
        _add_child(d, name="a", ownerRef="b")
        _add_child(d, name="b", ownerRef="a")

    def three(d: Doc) -> None:
        _add_child(d, name="a", ownerRef="c")
        _add_child(d, name="b", ownerRef="a")
        _add_child(d, name="c", ownerRef="b")

    def itself(d: Doc) -> None:
        _add_child(d, name="a", ownerRef="a")

    for mutate, size in ((two, 2), (three, 3), (itself, 1)):
        cycles = [f for f in _run(mutate) if f.code == "ownership-cycle"]
        assert len(cycles) == 1
        assert cycles[0].path == f"{SD}.childComponents[1].ownerRef"
        assert cycles[0].message.startswith("ownership cycle detected involving component a")
        assert cycles[0].message.count("->") == size


def test_no_cycle_check_when_structure_is_broken() -> None:
    def mutate(d: Doc) -> None:
        _add_child(d, name="a", ownerRef="b")
        _add_child(d, name="b", ownerRef="a")
        _add_child(d, name="c", ownerRef="ghost")

    assert {code for _, code in _errors(_run(mutate))} == {"unknown-owner"}


def test_nil_karta() -> None:
    assert [(f.code, f.message) for f in validate(None)] == [("karta-nil", "karta is nil")]


def test_reference_messages() -> None:
    findings = _run(_set([*_C, "ownerRef"], "nobody"))
    assert findings[0].message == (
        "child component 'worker' has owner ref to non-existing component 'nobody'"
    )
    assert findings[0].component == "worker"
    text = str(findings[0])
    assert text.startswith(f"{CHILD0}.ownerRef: child component 'worker'")
    assert "(unknown-owner)" in text


def test_validate_accepts_dicts_and_is_valid() -> None:
    assert validate(base_doc()) == []
    assert is_valid(base_doc())
    doc = base_doc()
    del _root(doc)["statusDefinition"]
    assert not is_valid(doc)


# -- warnings never change the verdict -----------------------------------------------------------

WARNINGS: list[tuple[str, Callable[[Doc], None], str, str]] = [
    (
        "unattributable",
        lambda d: _add_child(
            d, name="sidecar", ownerRef="root", specDefinition={"podTemplateSpecPath": ".spec.s"}
        ),
        f"{SD}.childComponents[1].podSelector",
        "unattributable-component",
    ),
    (
        "empty matcher",
        _set([*_R, "statusDefinition", "statusMappings", "failed"], [{}]),
        f"{ROOT}.statusDefinition.statusMappings.failed[0]",
        "empty-status-matcher",
    ),
    (
        "no mappings",
        _set([*_R, "statusDefinition", "statusMappings"], {}),
        f"{ROOT}.statusDefinition.statusMappings",
        "no-status-mappings",
    ),
    (
        "byPhase without phase",
        _set([*_R, "statusDefinition", "phaseDefinition"], _DELETE),
        f"{ROOT}.statusDefinition.statusMappings.running[0].byPhase",
        "phase-without-phase-definition",
    ),
    (
        "byConditions without conditions",
        _set(
            [*_R, "statusDefinition", "statusMappings", "failed"],
            [{"byConditions": [{"type": "Failed", "status": "True"}]}],
        ),
        f"{ROOT}.statusDefinition.statusMappings.failed[0].byConditions",
        "conditions-without-conditions-definition",
    ),
    (
        "status on a child",
        _set([*_C, "statusDefinition"], {"statusMappings": {"running": [{"byPhase": "x"}]}}),
        f"{CHILD0}.statusDefinition",
        "status-on-child",
    ),
    (
        "scale without pods",
        lambda d: _add_child(
            d, name="group", ownerRef="root", scaleDefinition={"replicasPath": "2"}
        ),
        f"{SD}.childComponents[1].scaleDefinition",
        "scale-without-pods",
    ),
    (
        "both gang forms",
        lambda d: _gang(
            d,
            podGroup={"name": "g"},
            podGroups=[{"name": "g", "members": [{"componentName": "worker"}]}],
        ),
        GANG,
        "both-pod-group-forms",
    ),
    (
        "topology without level",
        lambda d: _gang(d, podGroup={"name": "g", "topology": {"topologyName": "t"}}),
        f"{GANG}.podGroup.topology",
        "topology-without-level",
    ),
    (
        "selector outside pod fields",
        _set([*_C, "podSelector", "componentTypeSelector", "keyPath"], '.labels["x"]'),
        f"{CHILD0}.podSelector.componentTypeSelector.keyPath",
        "selector-not-pod-field",
    ),
    (
        "metadata without podSpec",
        _set([*_C, "specDefinition", "metadataPath"], ".spec.meta"),
        f"{CHILD0}.specDefinition.metadataPath",
        "metadata-without-pod-spec",
    ),
    (
        "conditions definition with an empty path",
        _set(
            [*_R, "statusDefinition", "conditionsDefinition"],
            {"path": "", "messageFieldName": "msg", "reasonFieldName": "why"},
        ),
        f"{ROOT}.statusDefinition.conditionsDefinition.path",
        "conditions-without-path",
    ),
    (
        "byConditions with an empty conditions path",
        _both(
            _set([*_R, "statusDefinition", "conditionsDefinition"], {"path": ""}),
            _set(
                [*_R, "statusDefinition", "statusMappings", "failed"],
                [{"byConditions": [{"type": "Failed", "status": "True"}]}],
            ),
        ),
        f"{ROOT}.statusDefinition.statusMappings.failed[0].byConditions",
        "conditions-without-conditions-definition",
    ),
    (
        "duplicate additional kind",
        _set(
            ["spec", "structureDefinition", "additionalChildKinds"],
            [{"group": "", "version": "v1", "kind": "Service"}] * 2,
        ),
        f"{SD}.additionalChildKinds[1].kind",
        "duplicate-list-key",
    ),
]


@pytest.mark.parametrize(
    ("mutate", "path", "code"), [w[1:] for w in WARNINGS], ids=[w[0] for w in WARNINGS]
)
def test_warnings(mutate: Callable[[Doc], None], path: str, code: str) -> None:
    findings = _run(mutate)
    assert (path, code) in {(f.path, f.code) for f in findings if f.severity == "warning"}
    assert not [f for f in findings if f.is_error]
