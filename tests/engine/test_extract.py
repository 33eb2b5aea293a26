"""Extraction per component and instance (REFERENCE §8 items 24-28 and the conversion rules)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.engine.conftest import karta_dict, root, workload
from workload_map.engine import DefinitionNotFoundError, ExtractionError, Scale, Workload


def _wl(child: dict[str, Any], spec: dict[str, Any], *, validate: bool = True) -> Workload:
    child = {"name": "c", "ownerRef": "thing", **child}
    if "instanceIdPath" in child:
        child["podSelector"] = {"componentInstanceSelector": {"idPath": ".metadata.labels.i"}}
    obj = {"apiVersion": "example.com/v1", "kind": "Thing", "metadata": {"name": "x"}, "spec": spec}
    return Workload(karta_dict(root(), child), obj, validate=validate)


JOBS = {"jobs": [{"name": "a", "replicas": 2, "min": 1}, {"name": "b", "replicas": "3"}]}


def test_instance_ids_from_an_array_keep_order() -> None:
    wl = _wl({"instanceIdPath": ".spec.jobs[].name"}, JOBS)
    assert wl.instance_ids("c") == ["a", "b"]


def test_instance_ids_from_map_keys_are_sorted() -> None:
    spec = {"services": {"zeta": {"r": 1}, "alpha": {"r": 2}, "mid": {"r": 3}}}
    wl = _wl(
        {
            "instanceIdPath": ".spec.services | to_entries[] | .key",
            "scaleDefinition": {"replicasPath": ".spec.services[] | .r"},
        },
        spec,
    )
    assert wl.instance_ids("c") == ["alpha", "mid", "zeta"]
    assert {k: v.replicas for k, v in wl.scales("c").items()} == {"alpha": 2, "mid": 3, "zeta": 1}


def test_empty_instance_id_is_an_error() -> None:
    wl = _wl(
        {"instanceIdPath": ".spec.jobs[].name"},
        {"jobs": [{"name": "a"}, {"name": ""}, {"name": "b"}]},
    )
    with pytest.raises(
        ExtractionError, match=r"instance id path contained empty string values \[a,,b\]"
    ):
        wl.instance_ids("c")


def test_non_string_instance_id_fails_conversion() -> None:
    wl = _wl({"instanceIdPath": ".spec.jobs[].n"}, {"jobs": [{"n": 1}]})
    with pytest.raises(ExtractionError, match="failed to convert object at index 0 to type string"):
        wl.instance_ids("c")


def test_no_instance_id_path_is_the_single_unnamed_instance() -> None:
    wl = _wl({"specDefinition": {"podSpecPath": ".spec.pod"}}, {"pod": {"containers": []}})
    assert wl.instance_ids("c") == [""]
    assert wl.pod_specs("c") == {"": {"containers": []}}


def test_scale_zips_by_position_with_nil_holes_and_numeric_strings() -> None:
    wl = _wl(
        {
            "instanceIdPath": ".spec.jobs[].name",
            "scaleDefinition": {
                "replicasPath": ".spec.jobs[].replicas",
                "minReplicasPath": ".spec.jobs[].min",
            },
        },
        JOBS,
    )
    assert wl.scales("c") == {"a": Scale(2, 1, None), "b": Scale(3, None, None)}


def test_non_numeric_scale_string_is_the_reference_error() -> None:
    wl = _wl({"scaleDefinition": {"replicasPath": ".spec.r"}}, {"r": "x"})
    with pytest.raises(ExtractionError, match=r'replicas value "x" at index 0 is not a number'):
        wl.scales("c")


@pytest.mark.parametrize("value", [2.5, True, {"a": 1}])
def test_other_scale_values_fail_conversion(value: Any) -> None:
    wl = _wl({"scaleDefinition": {"minReplicasPath": ".spec.r"}}, {"r": value})
    with pytest.raises(ExtractionError, match="failed to convert object at index 0"):
        wl.scales("c")


def test_integral_floats_are_accepted() -> None:
    wl = _wl({"scaleDefinition": {"replicasPath": ".spec.r"}}, {"r": 4.0})
    assert wl.scales("c") == {"": Scale(4, None, None)}


def test_results_count_must_match_instance_ids() -> None:
    wl = _wl(
        {
            "instanceIdPath": ".spec.jobs[].name",
            "specDefinition": {"podTemplateSpecPath": ".spec.templates[]"},
        },
        {"jobs": [{"name": "a"}, {"name": "b"}], "templates": [{}]},
    )
    with pytest.raises(
        ExtractionError, match=r"instance ids count \(2\) does not match results count \(1\)"
    ):
        wl.pod_template_specs("c")


def test_null_result_keeps_alignment_as_an_empty_value() -> None:
    wl = _wl(
        {
            "instanceIdPath": ".spec.jobs[].name",
            "specDefinition": {"podTemplateSpecPath": ".spec.jobs[].template"},
        },
        {"jobs": [{"name": "a"}, {"name": "b", "template": {"spec": {}}}]},
    )
    assert wl.pod_template_specs("c") == {"a": {}, "b": {"spec": {}}}


def test_missing_path_is_one_null_result() -> None:
    wl = _wl({"scaleDefinition": {"replicasPath": ".spec.nothing.here"}}, {})
    assert wl.scales("c") == {"": Scale(None, None, None)}


def test_extracted_instances_fill_only_existing_parts() -> None:
    wl = _wl(
        {
            "specDefinition": {"podTemplateSpecPath": ".spec.t"},
            "scaleDefinition": {"replicasPath": ".spec.r"},
        },
        {"t": {"spec": {"containers": []}}, "r": 2},
    )
    [inst] = wl.instances("c").values()
    assert sorted(inst.to_dict()) == ["podTemplateSpec", "scale"]
    assert inst.pod_spec is None and inst.fragmented_pod_spec is None


def test_missing_definitions_give_none_and_required_parts_raise() -> None:
    wl = _wl({}, {})
    assert wl.pod_template_specs("c") is None
    assert wl.scales("c") is None
    assert wl.fragmented_pod_specs("c") is None
    with pytest.raises(
        DefinitionNotFoundError, match="component c does not have pod template spec definition"
    ):
        wl.update_pod_template("c", {})


def test_fragments_are_zipped_and_unset_fields_omitted() -> None:
    wl = workload("reactor")
    frags = wl.fragmented_pod_specs("service")
    assert list(frags) == ["api", "cache", "worker"]
    assert frags["worker"]["schedulerName"] == "kai-scheduler"
    assert frags["worker"]["labels"] == {"tier": "gpu"}
    assert "schedulerName" not in frags["api"] and "labels" not in frags["api"]
    assert frags["cache"]["image"] == "cache:1"


def test_fragment_of_the_wrong_type_is_an_error() -> None:
    wl = _wl(
        {"specDefinition": {"fragmentedPodSpecDefinition": {"labelsPath": ".spec.l"}}}, {"l": "x"}
    )
    with pytest.raises(
        ExtractionError, match="labels_path: failed to convert object at index 0 to type dict"
    ):
        wl.fragmented_pod_specs("c")


def test_bad_expression_errors_name_component_and_expression() -> None:
    wl = _wl(
        {"scaleDefinition": {"replicasPath": ".spec.jobs[] | .replicas +"}}, {}, validate=False
    )
    with pytest.raises(
        ExtractionError, match=r"component 'c' replicasPath: failed to parse JQ expression"
    ):
        wl.scales("c")
    wl = _wl({"scaleDefinition": {"replicasPath": ".spec.x[]"}}, {"x": 3})
    with pytest.raises(ExtractionError, match=r"JQ execution error for expression '\.spec\.x\[\]'"):
        wl.scales("c")


def test_unknown_component() -> None:
    wl = _wl({}, {})
    with pytest.raises(ExtractionError, match="component nope not found"):
        wl.instance_ids("nope")


def test_invalid_definition_is_refused_before_evaluation() -> None:
    from workload_map.engine import InvalidDefinitionError

    child = {"name": "c", "ownerRef": "thing", "instanceIdPath": ".spec.jobs[].name"}
    karta = karta_dict(root(), child)
    with pytest.raises(InvalidDefinitionError, match=r"invalid karta: .*instance id path"):
        Workload(
            karta, {"apiVersion": "example.com/v1", "kind": "Thing", "metadata": {"name": "x"}}
        )
