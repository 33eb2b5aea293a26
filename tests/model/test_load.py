"""Loading from every kind of input, the errors that name fields, and the dump round trip."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.model.conftest import FIXTURES, base_doc
from workload_map.errors import WlmapError
from workload_map.model import (
    GVK,
    ConditionsDefinition,
    KartaLoadError,
    dump_karta,
    load_karta,
    load_kartas,
)


def _problems(exc: KartaLoadError) -> dict[str, str]:
    return {p.path: p.message for p in exc.problems}


def test_load_from_dict_text_json_and_path(tmp_path: Path) -> None:
    doc = base_doc()
    from_dict = load_karta(doc)
    assert from_dict.root.name == "root"
    assert from_dict.spec.structure_definition.child_components[0].owner_ref == "root"
    assert load_karta(yaml.safe_dump(doc)) == from_dict
    assert load_karta(json.dumps(doc)) == from_dict
    path = tmp_path / "k.yaml"
    path.write_text(yaml.safe_dump(doc))
    assert load_karta(path) == from_dict
    assert load_karta(str(path)) == from_dict
    assert load_karta(yaml.safe_dump(doc).encode()) == from_dict
    assert load_karta(from_dict) is from_dict


def test_hand_written_fixtures_load() -> None:
    full = load_karta(FIXTURES / "trainer-full.yaml")
    worker = full.component("worker")
    assert worker is not None and worker.pod_selector is not None
    selector = worker.pod_selector.component_type_selector
    assert selector is not None
    assert selector.match_labels == {
        "example.com/role": "worker",
        "app.kubernetes.io/component": "",
    }
    mappings = full.root.status_definition.status_mappings  # type: ignore[union-attr]
    assert mappings.completed[0].by_conditions[0].reason == "AllDone"
    assert full.root.suspend_definition.suspend_actions[0].value == "true"  # type: ignore[union-attr]
    assert full.spec.structure_definition.additional_child_kinds == (GVK("", "v1", "Service"),)
    gang = full.gang_scheduling
    assert gang is not None and gang.pod_groups[0].members[1].filters

    graph = load_karta(FIXTURES / "services-map.yaml")
    service = graph.component("service")
    assert service is not None and service.spec_definition is not None
    frag = service.spec_definition.fragmented_pod_spec_definition
    assert frag is not None and frag.image_path == ".spec.services | .[] | .main.image"
    pod_group = graph.gang_scheduling.pod_group  # type: ignore[union-attr]
    assert pod_group is not None and pod_group.sub_groups[0].topology is not None
    assert pod_group.sub_groups[1].topology is None

    pod = load_karta(FIXTURES / "pod.json")
    assert pod.root_gvk == GVK("", "v1", "Pod")
    assert pod.spec.optimization_instructions is not None


def test_conditions_defaults_applied() -> None:
    doc = base_doc()
    doc["spec"]["structureDefinition"]["rootComponent"]["statusDefinition"][
        "conditionsDefinition"
    ] = {"path": ".status.conditions"}
    karta = load_karta(doc)
    assert karta.root.status_definition is not None
    assert karta.root.status_definition.conditions_definition == ConditionsDefinition(
        ".status.conditions", "type", "status", "message", "reason"
    )


def test_multi_document_and_list() -> None:
    kartas = load_kartas(FIXTURES / "two-kartas.yaml")
    assert [k.root.name for k in kartas] == ["a", "b"]
    with pytest.raises(KartaLoadError, match="2 documents"):
        load_karta(FIXTURES / "two-kartas.yaml")
    assert [k.root.name for k in load_kartas([base_doc(), base_doc()])] == ["root", "root"]
    listed = {"apiVersion": "run.ai/v1alpha1", "kind": "KartaList", "items": [base_doc()]}
    assert len(load_kartas(listed)) == 1
    with pytest.raises(KartaLoadError, match="no document"):
        load_karta("")


def test_legacy_resource_interface_converted_with_warning() -> None:
    with pytest.warns(DeprecationWarning, match="ResourceInterface"):
        karta = load_karta(FIXTURES / "legacy-resourceinterface.yaml")
    assert (karta.api_version, karta.kind) == ("run.ai/v1alpha1", "Karta")
    assert dump_karta(karta)["kind"] == "Karta"
    assert karta.root.status_definition is not None
    conditions = karta.root.status_definition.conditions_definition
    assert conditions is not None and conditions.message_field_name == "message"


def test_unknown_fields_named_with_path_and_suggestion() -> None:
    doc = base_doc()
    doc["spec"]["structureDefinition"]["rootComponent"]["specDefinition"] = {
        "podTemplatePath": ".spec.template"
    }
    doc["spec"]["structureDefinition"]["childComponents"][0]["specDefinition"] = {
        "fragmentedPodDefinition": {}
    }
    doc["spec"]["bogus"] = 1
    with pytest.raises(KartaLoadError) as info:
        load_karta(doc, source="mine.yaml")
    problems = _problems(info.value)
    root_spec = "spec.structureDefinition.rootComponent.specDefinition"
    assert problems[f"{root_spec}.podTemplatePath"].startswith("unknown field")
    assert "podTemplateSpecPath" in problems[f"{root_spec}.podTemplatePath"]
    child_spec = "spec.structureDefinition.childComponents[0].specDefinition"
    assert "fragmentedPodSpecDefinition" in problems[f"{child_spec}.fragmentedPodDefinition"]
    assert "spec.bogus" in problems
    text = str(info.value)
    assert text.startswith("mine.yaml: ")
    assert f"{root_spec}.podTemplatePath: unknown field" in text
    assert isinstance(info.value, WlmapError)


def test_wrong_types_and_missing_required_fields() -> None:
    doc = base_doc()
    root = doc["spec"]["structureDefinition"]["rootComponent"]
    root["statusDefinition"]["statusMappings"]["running"] = [
        {"byConditions": [{"type": "Ready", "status": True}]}
    ]
    root["scaleDefinition"] = {"replicasPath": 3}
    root["podSelector"] = {"componentInstanceSelector": {}}
    doc["spec"]["structureDefinition"]["childComponents"] = {"name": "x"}
    with pytest.raises(KartaLoadError) as info:
        load_karta(doc)
    problems = _problems(info.value)
    base = "spec.structureDefinition.rootComponent"
    status = f"{base}.statusDefinition.statusMappings.running[0].byConditions[0].status"
    assert problems[status].startswith("expected string, got boolean true")
    assert "quote" in problems[status]
    assert problems[f"{base}.scaleDefinition.replicasPath"].startswith("expected string")
    assert problems[f"{base}.podSelector.componentInstanceSelector.idPath"] == (
        "required field is missing"
    )
    assert problems["spec.structureDefinition.childComponents"].startswith("expected array")


def test_not_a_karta_and_bad_text() -> None:
    with pytest.raises(KartaLoadError, match="not a Karta definition"):
        load_karta({"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "spec": {}})
    with pytest.raises(KartaLoadError, match="unsupported version"):
        load_karta({"apiVersion": "run.ai/v2", "kind": "Karta", "spec": {}})
    with pytest.raises(KartaLoadError, match=r"line 2, column"):
        load_karta("a: b\n  c: [d\n")
    with pytest.raises(KartaLoadError, match="expected a Karta object"):
        load_karta("- 1\n- 2\n")
    with pytest.raises(KartaLoadError, match="no such file"):
        load_karta("missing-file.yaml")
    with pytest.raises(KartaLoadError, match="spec: required field is missing"):
        load_karta({"apiVersion": "run.ai/v1alpha1", "kind": "Karta"})
    with pytest.raises(KartaLoadError, match="cannot load a Karta from a int"):
        load_karta(3)


def test_timestamps_stay_text() -> None:
    doc = base_doc()
    doc["status"] = {
        "conditions": [
            {
                "type": "Ready",
                "status": "True",
                "reason": "Ready",
                "message": "ok",
                "lastTransitionTime": "2026-01-01T00:00:00Z",
                "observedGeneration": 2,
            }
        ]
    }
    text = yaml.safe_dump(doc).replace("'2026-01-01T00:00:00Z'", "2026-01-01T00:00:00Z")
    karta = load_karta(text)
    assert karta.status is not None
    assert karta.status.conditions[0].last_transition_time == "2026-01-01T00:00:00Z"
    assert dump_karta(karta) == doc


@pytest.mark.parametrize("name", ["trainer-full.yaml", "services-map.yaml", "pod.json"])
def test_fixture_round_trip(name: str) -> None:
    text = (FIXTURES / name).read_text()
    raw = yaml.safe_load(text)
    assert dump_karta(load_karta(text)) == raw


# -- generated canonical definitions round-trip ------------------------------------------------

_names = st.text(alphabet="abcdefghijklmnopqrstuvwxyz-", min_size=1, max_size=8)
_paths = st.sampled_from(
    [".spec.a", ".spec.b[]", '.metadata.labels["x/y"]', ".spec.c // 1", ".status.phase", "."]
)
_text = st.text(max_size=6)


def _opt(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(st.none(), strategy)


def _drop_none(d: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in d.items() if v is not None and v != []}


def _obj(**fields: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(fields).map(_drop_none)


_gvk = st.fixed_dictionaries({"group": _text, "version": _text, "kind": _text})
_matcher = _obj(
    byPhase=_opt(_text),
    byConditions=st.lists(_obj(type=_text, status=_opt(_text), reason=_opt(_text)), max_size=2),
    byExpression=_opt(st.fixed_dictionaries({"expression": _paths, "expectedResult": _text})),
)
_status = _obj(
    phaseDefinition=_opt(st.fixed_dictionaries({"path": _paths})),
    conditionsDefinition=_opt(
        st.fixed_dictionaries(
            {
                "path": _paths,
                "typeFieldName": _text,
                "statusFieldName": _text,
                "messageFieldName": _text,
                "reasonFieldName": _text,
            }
        )
    ),
    statusMappings=st.fixed_dictionaries(
        {},
        optional={
            key: st.lists(_matcher, min_size=1, max_size=2)
            for key in ("initializing", "running", "failed", "resuming")
        },
    ),
)
_action = st.fixed_dictionaries({"path": _paths, "value": _text})
_component = _obj(
    name=_names,
    kind=_opt(_gvk),
    ownerRef=_opt(_names),
    specDefinition=_opt(
        _obj(
            podTemplateSpecPath=_opt(_paths),
            podSpecPath=_opt(_paths),
            metadataPath=_opt(_paths),
            fragmentedPodSpecDefinition=_opt(
                _obj(labelsPath=_opt(_paths), containerPath=_opt(_paths), imagePath=_opt(_paths))
            ),
        )
    ),
    scaleDefinition=_opt(_obj(replicasPath=_opt(_paths), maxReplicasPath=_opt(_paths))),
    statusDefinition=_opt(_status),
    suspendDefinition=_opt(
        st.fixed_dictionaries(
            {
                "suspendActions": st.lists(_action, min_size=1, max_size=2),
                "resumeActions": st.lists(_action, min_size=1, max_size=2),
            }
        )
    ),
    instanceIdPath=_opt(_paths),
    podSelector=_opt(
        _obj(
            componentTypeSelector=_opt(
                _obj(
                    keyPath=_opt(_paths),
                    value=_opt(_text),
                    matchLabels=_opt(st.dictionaries(_names, _text, max_size=2)),
                )
            ),
            componentInstanceSelector=_opt(st.fixed_dictionaries({"idPath": _paths})),
            replicaSelector=_opt(st.fixed_dictionaries({"keyPath": _paths})),
        )
    ),
)
_topology = _obj(
    topologyName=_opt(_text),
    preferredTopologyLevel=_opt(_text),
    requiredTopologyLevel=_opt(_text),
)
_gang = _obj(
    podGroup=_opt(
        _obj(
            name=_names,
            topology=_opt(_topology),
            subGroups=st.lists(_obj(componentName=_names, topology=_opt(_topology)), max_size=2),
        )
    ),
    podGroups=st.lists(
        st.fixed_dictionaries(
            {
                "name": _names,
                "members": st.lists(
                    _obj(
                        componentName=_names,
                        groupByKeyPaths=st.lists(_paths, max_size=2),
                        filters=st.lists(_paths, max_size=2),
                    ),
                    max_size=2,
                ),
            }
        ),
        max_size=2,
    ),
)
KARTA_DOCS = st.fixed_dictionaries(
    {
        "apiVersion": st.just("run.ai/v1alpha1"),
        "kind": st.just("Karta"),
        "spec": _obj(
            structureDefinition=_obj(
                rootComponent=_component,
                childComponents=st.lists(_component, max_size=3),
                additionalChildKinds=st.lists(_gvk, max_size=2),
            ),
            optimizationInstructions=_opt(_obj(gangScheduling=_opt(_gang))),
        ),
    },
    optional={"metadata": st.fixed_dictionaries({"name": _names})},
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(KARTA_DOCS)
def test_round_trip_generated(doc: dict[str, Any]) -> None:
    assert dump_karta(load_karta(doc)) == doc
    assert dump_karta(load_karta(json.dumps(doc))) == doc


def test_no_warning_for_current_form() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        load_karta(base_doc())
