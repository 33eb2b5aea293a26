"""Write-back: merge per instance, all-or-nothing refusals, suspend/resume (§8 items 29-31)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from tests.engine.conftest import FIXTURE_NAMES, karta_dict, load_fixture, root, workload
from workload_map.engine import DefinitionNotFoundError, Workload, WriteRefusedError
from workload_map.engine.writeback import merge


def _frozen(wl: Workload) -> Any:
    return copy.deepcopy(wl.obj)


@pytest.mark.parametrize("name", FIXTURE_NAMES)
def test_extract_then_update_with_the_same_values_is_identity(name: str) -> None:
    karta, obj, pods = load_fixture(name)
    before = copy.deepcopy(obj)
    wl = Workload(karta, obj, pods)
    checked = 0
    for comp in wl.karta.components():
        if not comp.has_pod_definition:
            continue
        for getter, updater in (
            (wl.pod_template_specs, wl.update_pod_template),
            (wl.pod_specs, wl.update_pod_spec),
            (wl.pod_metadata, wl.update_pod_metadata),
            (wl.fragmented_pod_specs, wl.update_fragmented_pod_spec),
        ):
            values = getter(comp.name)
            if values is None:
                continue
            values = values if comp.instance_id_path else values[""]
            assert updater(comp.name, copy.deepcopy(values)) == before
            checked += 1
    assert checked and obj == before


def test_template_update_per_instance_merges_and_keeps_unknown_fields() -> None:
    wl = workload("jobgroup")
    before = _frozen(wl)
    new = wl.update_pod_template(
        "job",
        {
            "workers": {
                "spec": {
                    "schedulerName": "kai",
                    "containers": [{"name": "main", "image": "worker:2"}],
                }
            },
            "driver": None,  # nil skips the instance
        },
    )
    assert wl.obj == before  # input untouched
    workers = new["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    assert workers["schedulerName"] == "kai"
    main = workers["containers"][0]
    assert main["image"] == "worker:2"
    assert (
        main["x-unknown-field"] == "keep-me" and main["resources"]["limits"]["nvidia.com/gpu"] == 8
    )
    assert new["spec"]["replicatedJobs"][1] == before["spec"]["replicatedJobs"][1]


def test_value_not_found_for_instance_id() -> None:
    wl = workload("jobgroup")
    with pytest.raises(WriteRefusedError, match="value not found for instance id: driver"):
        wl.update_pod_template("job", {"workers": {}})


def test_value_count_mismatch_is_refused() -> None:
    wl = workload("jobgroup")
    with pytest.raises(WriteRefusedError, match="2 instances but 3 values"):
        wl.update_pod_template("job", [{}, {}, {}])


def test_containers_merge_by_name_and_null_removes() -> None:
    old = {
        "containers": [{"name": "a", "image": "1", "x": 1}, {"name": "b", "image": "2"}],
        "keep": 1,
        "drop": 2,
    }
    new = {"containers": [{"name": "b", "image": "3"}, {"name": "c"}], "drop": None}
    assert merge(old, new) == {
        "containers": [{"name": "b", "image": "3"}, {"name": "c"}],
        "keep": 1,
    }
    assert merge({"tolerations": [{"key": "a"}]}, {"tolerations": [{"key": "b"}]}) == {
        "tolerations": [{"key": "b"}]
    }
    assert merge({"a": None}, {"a": None}) == {"a": None}


def _thing(spec: dict[str, Any], **component: Any) -> Workload:
    child = {"name": "c", "ownerRef": "thing", **component}
    obj = {
        "apiVersion": "example.com/v1",
        "kind": "Thing",
        "metadata": {"name": "x", "uid": "u"},
        "spec": spec,
        "status": {"s": 1},
    }
    return Workload(karta_dict(root(), child), obj)


def test_unset_fragments_are_never_written_as_null() -> None:
    frag = {
        "labelsPath": ".spec.labels",
        "annotationsPath": ".spec.annotations",
        "resourcesPath": ".spec.resources",
        "containersPath": ".spec.containers",
    }
    wl = _thing(
        {"containers": [{"name": "a", "image": "1", "env": [{"name": "E", "value": "v"}]}]},
        specDefinition={"fragmentedPodSpecDefinition": frag},
    )
    extracted = wl.fragmented_pod_specs("c")[""]
    assert set(extracted) == {"containers"}
    same = wl.update_fragmented_pod_spec(
        "c", {**extracted, "labels": None, "annotations": {}, "resources": {}}
    )
    assert same == wl.obj and "labels" not in same["spec"]
    changed = wl.update_fragmented_pod_spec(
        "c", {"containers": [{"name": "a", "image": "2"}], "labels": {"q": "1"}}
    )
    assert changed["spec"]["labels"] == {"q": "1"}
    assert changed["spec"]["containers"] == [
        {"name": "a", "image": "2", "env": [{"name": "E", "value": "v"}]}
    ]


def test_fragment_without_a_path_is_refused_when_non_empty() -> None:
    wl = _thing({}, specDefinition={"fragmentedPodSpecDefinition": {"labelsPath": ".spec.labels"}})
    assert wl.update_fragmented_pod_spec("c", {"image": ""}) == wl.obj
    with pytest.raises(WriteRefusedError, match="path is not defined and values are not empty"):
        wl.update_fragmented_pod_spec("c", {"labels": {"a": "b"}, "image": "x"})


def test_fragmented_update_is_all_or_nothing() -> None:
    frag = {"labelsPath": ".spec.labels", "resourcesPath": "{requests: .spec.res}"}
    wl = _thing(
        {"labels": {"a": "1"}, "res": {"cpu": "1"}},
        specDefinition={"fragmentedPodSpecDefinition": frag},
    )
    before = _frozen(wl)
    # the computed view may be "written" unchanged (read-modify-write round trips keep working)
    assert wl.update_fragmented_pod_spec(
        "c", {"labels": {"a": "2"}, "resources": {"requests": {"cpu": "1"}}}
    )["spec"]["labels"] == {"a": "2"}
    with pytest.raises(WriteRefusedError, match="refused, nothing was written"):
        wl.update_fragmented_pod_spec(
            "c", {"labels": {"a": "2"}, "resources": {"requests": {"cpu": "2"}}}
        )
    assert wl.obj == before


def test_identity_changes_are_refused() -> None:
    karta = karta_dict(root(specDefinition={"podTemplateSpecPath": "."}))
    karta["spec"]["structureDefinition"]["rootComponent"]["kind"] = {
        "group": "",
        "version": "v1",
        "kind": "Pod",
    }
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "uid": "u", "labels": {"a": "1"}},
        "spec": {"containers": [{"name": "c"}]},
        "status": {"phase": "Running"},
    }
    wl = Workload(karta, pod)
    ok = wl.update_pod_template("thing", {"metadata": {"labels": {"b": "2"}}})
    assert ok["metadata"]["labels"] == {"a": "1", "b": "2"} and ok["metadata"]["name"] == "p"
    for change, field in (
        ({"metadata": {"name": "q"}}, "metadata.name"),
        ({"kind": "Job"}, "kind"),
        ({"status": {"phase": "x"}}, "status"),
        ({"metadata": {"uid": None}}, "metadata.uid"),
    ):
        with pytest.raises(WriteRefusedError, match=f"would change {field}"):
            wl.update_pod_template("thing", change)
    assert wl.obj == pod


def test_alternative_paths_write_the_existing_side_and_select_writes_only_selected() -> None:
    wl = _thing(
        {"primary": {"a": 1}}, specDefinition={"podSpecPath": ".spec.primary // .spec.fallback"}
    )
    assert wl.update_pod_spec("c", {"b": 2})["spec"] == {"primary": {"a": 1, "b": 2}}
    wl = _thing(
        {"fallback": {"a": 1}}, specDefinition={"podSpecPath": ".spec.primary // .spec.fallback"}
    )
    assert wl.update_pod_spec("c", {"b": 2})["spec"] == {"fallback": {"a": 1, "b": 2}}
    wl = _thing(
        {"items": [{"id": 1}, {"id": 2}]},
        specDefinition={"podSpecPath": ".spec.items[] | select(.id == 2)"},
    )
    assert wl.update_pod_spec("c", {"x": 1})["spec"]["items"] == [{"id": 1}, {"id": 2, "x": 1}]


def test_single_instance_accepts_the_empty_key_and_broadcasts() -> None:
    wl = _thing({"a": {}, "b": {}}, specDefinition={"podSpecPath": ".spec.a, .spec.b"})
    out = wl.update_pod_spec("c", {"": {"z": 1}})
    assert out["spec"] == {"a": {"z": 1}, "b": {"z": 1}}
    with pytest.raises(WriteRefusedError, match="one instance but 2 values"):
        wl.update_pod_spec("c", [{}, {}])


def test_creates_missing_intermediate_objects() -> None:
    wl = _thing({}, specDefinition={"podTemplateSpecPath": ".spec.deep.template"})
    assert wl.update_pod_template("c", {"spec": {"x": 1}})["spec"] == {
        "deep": {"template": {"spec": {"x": 1}}}
    }


def test_suspend_and_resume() -> None:
    wl = workload("jobgroup")
    suspended = wl.suspend()
    assert suspended["spec"]["suspend"] is True and wl.obj["spec"]["suspend"] is False
    assert wl.with_object(suspended).resume()["spec"]["suspend"] is False
    trainer = workload("trainer")
    assert trainer.suspend()["spec"]["runPolicy"] == {"suspend": True}


def test_suspend_errors() -> None:
    with pytest.raises(DefinitionNotFoundError, match="does not have suspendDefinition"):
        workload("leaderworker").suspend()
    karta, obj, _ = load_fixture("jobgroup")
    karta["spec"]["structureDefinition"]["rootComponent"]["suspendDefinition"]["suspendActions"][0][
        "value"
    ] = "tru"
    # (the validator refuses such a definition; evaluated without validation, nothing is written)
    with pytest.raises(WriteRefusedError, match=r"suspendActions\[0\]: failed to decode value"):
        Workload(karta, obj, validate=False).suspend()


def test_non_object_values_are_refused() -> None:
    wl = _thing({"a": {}}, specDefinition={"podSpecPath": ".spec.a"})
    with pytest.raises(WriteRefusedError, match="must be objects"):
        wl.update_pod_spec("c", "nope")


def _json_strategy():  # type: ignore[no-untyped-def]
    from hypothesis import strategies as st

    scalars = st.none() | st.booleans() | st.integers() | st.text(max_size=5)
    return st.recursive(
        scalars,
        lambda inner: (
            st.lists(inner, max_size=3)
            | st.dictionaries(
                st.sampled_from(["name", "a", "b", "containers", "env"]), inner, max_size=3
            )
        ),
        max_leaves=12,
    )


def test_merging_a_value_onto_itself_changes_nothing() -> None:
    from hypothesis import given, settings

    @settings(max_examples=200, deadline=None)
    @given(_json_strategy())
    def check(value: Any) -> None:
        before = copy.deepcopy(value)
        assert merge(value, value) == before
        assert value == before

    check()


def test_resources_per_instance_desired_and_actual() -> None:
    r = workload("jobgroup").resources()
    workers = r["components"]["job"]["instances"]["workers"]
    assert (
        workers["desiredPods"] == 4 and workers["observedPods"] == 4 and workers["readyPods"] == 3
    )
    assert workers["perPod"]["cpuMillis"] == 4250 and workers["desired"]["gpus"] == 32
    assert workers["actual"]["gpus"] == 32
    assert r["desired"]["gpus"] == 32 and r["actual"]["gpus"] == 32
    offline = workload("jobgroup", with_pods=False).resources()
    assert offline["actual"] is None and offline["components"]["job"]["observedPods"] is None


def test_slices_and_negative_indexes_are_not_writable() -> None:
    for path in (".spec.items[-1]", ".spec.items[0:1]"):
        wl = _thing({"items": [{"a": 1}]}, specDefinition={"podSpecPath": path})
        with pytest.raises(WriteRefusedError, match="refused"):
            wl.update_pod_spec("c", {"b": 2})


def test_one_instance_is_updated_alone_and_the_others_stay() -> None:
    wl = workload("jobgroup")
    before = _frozen(wl)
    new = wl.update_pod_template("job", {"spec": {"schedulerName": "kai"}}, instance="driver")
    assert wl.obj == before
    jobs = new["spec"]["replicatedJobs"]
    assert jobs[1]["template"]["spec"]["template"]["spec"]["schedulerName"] == "kai"
    assert jobs[0] == before["spec"]["replicatedJobs"][0]
    # the same write through the full mapping gives the same object
    full = wl.pod_template_specs("job")
    assert full is not None
    changed = {**full, "driver": {"spec": {"schedulerName": "kai"}}}
    assert wl.update_pod_template("job", changed) == new


def test_an_unknown_instance_is_refused_naming_component_and_instances() -> None:
    wl = workload("jobgroup")
    with pytest.raises(WriteRefusedError) as err:
        wl.update_pod_template("job", {"spec": {}}, instance="launcher")
    text = str(err.value)
    assert "component 'job' has no instance 'launcher'" in text
    assert "'workers'" in text and "'driver'" in text and "nothing was written" in text
    with pytest.raises(
        WriteRefusedError, match="component 'job': pod template spec values must be objects"
    ):
        wl.update_pod_template("job", ["not", "an", "object"], instance="workers")


def test_a_partial_mapping_says_which_instance_lacks_a_value_and_how_to_update_one() -> None:
    wl = workload("jobgroup")
    with pytest.raises(WriteRefusedError) as err:
        wl.update_pod_template("job", {"workers": {}})
    text = str(err.value)
    assert "value not found for instance id: driver" in text
    assert "component 'job'" in text and "instance='workers'" in text


def test_single_instance_component_takes_its_empty_instance_id() -> None:
    wl = _thing({"a": {"x": 1}}, specDefinition={"podSpecPath": ".spec.a"})
    assert wl.update_pod_spec("c", {"y": 2}, instance="")["spec"]["a"] == {"x": 1, "y": 2}
    with pytest.raises(WriteRefusedError, match="component 'c' has no instance 'main'"):
        wl.update_pod_spec("c", {"y": 2}, instance="main")


def test_fragmented_update_of_one_instance() -> None:
    frag = {"labelsPath": ".spec.groups[].labels"}
    karta = karta_dict(
        root(),
        {
            "name": "c",
            "ownerRef": "thing",
            "instanceIdPath": ".spec.groups[].name",
            "podSelector": {"componentInstanceSelector": {"idPath": ".metadata.labels.g"}},
            "specDefinition": {"fragmentedPodSpecDefinition": frag},
        },
    )
    obj = {
        "apiVersion": "example.com/v1",
        "kind": "Thing",
        "metadata": {"name": "x", "uid": "u"},
        "spec": {"groups": [{"name": "a", "labels": {"k": "1"}}, {"name": "b", "labels": {}}]},
    }
    wl = Workload(karta, obj)
    new = wl.update_fragmented_pod_spec("c", {"labels": {"k": "2"}}, instance="b")
    assert new["spec"]["groups"] == [
        {"name": "a", "labels": {"k": "1"}},
        {"name": "b", "labels": {"k": "2"}},
    ]
