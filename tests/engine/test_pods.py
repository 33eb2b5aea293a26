"""Pod attribution (REFERENCE §8 items 32-35) and the explain trace."""

from __future__ import annotations

from typing import Any

import pytest

from tests.engine.conftest import karta_dict, root, workload
from workload_map.engine import ExtractionError, Workload
from workload_map.engine.pods import matches_type, single_value
from workload_map.engine.structure import prepare
from workload_map.model import ComponentTypeSelector, load_karta

POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {
        "name": "p",
        "labels": {"role": "worker", "empty": "", "quote": 'say "hi"', "n": "3"},
        "annotations": {"leader": "p-0", "flag": "false"},
    },
    "spec": {"containers": [{"name": "a", "image": "x"}, {"name": "b"}], "priority": 7},
}


@pytest.fixture(scope="module")
def structure() -> Any:
    return prepare(load_karta(karta_dict(root())), validate=False)


@pytest.mark.parametrize(
    ("key_path", "value", "expected"),
    [
        (".metadata.labels.role", None, True),
        (".metadata.labels.missing", None, False),
        (".metadata.labels.empty", None, True),
        (".metadata.annotations.flag", None, True),
        (".metadata.labels.role", "worker", True),
        (".metadata.labels.role", "master", False),
        (".metadata.labels.quote", 'say "hi"', True),
        (".metadata.labels.missing", "x", False),
        (".spec.containers[0].image", "x", True),
        (".spec.containers[].name", "b", True),
        (".spec.priority", "7", False),
    ],
)
def test_type_selector_key_path(
    structure: Any, key_path: str, value: str | None, expected: bool
) -> None:
    assert (
        matches_type(structure, ComponentTypeSelector(key_path=key_path, value=value), POD)
        is expected
    )


def test_type_selector_match_labels_and_both(structure: Any) -> None:
    assert matches_type(
        structure, ComponentTypeSelector(match_labels={"role": "worker", "n": "3"}), POD
    )
    assert not matches_type(
        structure, ComponentTypeSelector(match_labels={"role": "worker", "n": "4"}), POD
    )
    both = ComponentTypeSelector(
        key_path=".metadata.annotations.leader", match_labels={"role": "master"}
    )
    assert not matches_type(structure, both, POD)
    assert not matches_type(structure, None, POD)


def test_type_selector_invalid_jq_is_an_error(structure: Any) -> None:
    with pytest.raises(ExtractionError):
        matches_type(
            structure, ComponentTypeSelector(key_path=".metadata.labels | .[", value="x"), POD
        )


@pytest.mark.parametrize(
    ("expr", "result"),
    [
        (".metadata.labels.role", "worker"),
        (".metadata.labels.n | tonumber", "3"),
        (".spec.priority", "7"),
        ('.metadata.annotations.flag == "false"', "true"),
    ],
)
def test_single_value_stringifies(structure: Any, expr: str, result: str) -> None:
    assert single_value(structure, expr, POD) == result


@pytest.mark.parametrize(
    ("expr", "message"),
    [
        (".metadata.labels.missing", "query result is empty <nil>"),
        (".metadata.labels.empty", "query result is empty"),
        (".spec.containers[].name", "expected single query result, got 2"),
    ],
)
def test_single_value_errors(structure: Any, expr: str, message: str) -> None:
    with pytest.raises(ExtractionError, match=message):
        single_value(structure, expr, POD)


def _two_leaves(selector_b: dict[str, Any] | None) -> dict[str, Any]:
    a = {
        "name": "a",
        "ownerRef": "thing",
        "specDefinition": {"podSpecPath": ".spec.a"},
        "podSelector": {
            "componentTypeSelector": {"keyPath": ".metadata.labels.role", "value": "a"}
        },
    }
    b: dict[str, Any] = {
        "name": "b",
        "ownerRef": "thing",
        "specDefinition": {"podSpecPath": ".spec.b"},
    }
    if selector_b:
        b["podSelector"] = {"componentTypeSelector": selector_b}
    return karta_dict(root(), a, b)


OBJ = {
    "apiVersion": "example.com/v1",
    "kind": "Thing",
    "metadata": {"name": "x"},
    "spec": {"a": {}, "b": {}},
}


def _pod(name: str, **labels: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": labels}}


def test_single_leaf_takes_every_pod_without_selectors() -> None:
    karta = karta_dict(
        root(),
        {
            "name": "only",
            "ownerRef": "thing",
            "specDefinition": {"podSpecPath": ".spec.a"},
            "podSelector": {"componentTypeSelector": {"keyPath": ".metadata.labels.never"}},
        },
    )
    placement = Workload(karta, OBJ).attribute(_pod("p"))
    assert placement.component == "only" and placement.attributed
    assert "only component describing pods" in placement.steps[0]


def test_several_leaves_use_selectors_in_definition_order() -> None:
    wl = Workload(_two_leaves({"keyPath": ".metadata.labels.role"}), OBJ)
    assert wl.attribute(_pod("p", role="a")).component == "a"  # a comes first
    assert wl.attribute(_pod("p", role="b")).component == "b"
    miss = wl.attribute(_pod("p"))
    assert miss.component is None and "no component's componentTypeSelector matches" in miss.reason


def test_leaves_without_selectors_are_never_matched_and_explained() -> None:
    wl = Workload(_two_leaves(None), OBJ)
    miss = wl.attribute(_pod("p", role="b"))
    assert miss.component is None
    assert "b cannot claim pods" in miss.reason


def test_instance_and_replica_from_fixture() -> None:
    wl = workload("reactor")
    p = {p.pod: p for p in wl.placements}
    assert (
        p["chat-worker-1-0"].component,
        p["chat-worker-1-0"].instance,
        p["chat-worker-1-0"].replica,
    ) == ("service", "worker", "1")
    assert p["chat-api-0"].replica is None and p["chat-api-0"].attributed
    assert not p["chat-unlabelled-0"].attributed


def test_replica_is_inherited_from_an_ancestor() -> None:
    wl = workload("leaderworker")
    p = {p.pod: p for p in wl.placements}
    assert (p["vllm-1-1"].component, p["vllm-1-1"].replica, p["vllm-1-1"].replica_component) == (
        "worker",
        "1",
        "group",
    )


def test_explain_lists_expressions_values_and_groups() -> None:
    wl = workload("jobgroup")
    explained = {e["pod"]: e for e in wl.explain()}
    entry = explained["train-workers-0-0-aaaaa"]
    assert entry["component"] == "job" and entry["instance"] == "workers"
    assert any(
        'instance workers: .metadata.labels["jobgroup.example.com/replicatedjob-name"]' in s
        for s in entry["steps"]
    )
    gang = entry["gang"]
    assert gang["group"] == "pg-1111-aaaa-workers" and gang["minMember"] == 4
    assert gang["keys"] == [
        {"path": '.metadata.labels["jobgroup.example.com/replicatedjob-name"]', "value": "workers"}
    ]
    assert "keys pin job instance workers" in gang["minMemberRule"]
    assert explained["other-workers-0-0-zzzzz"]["unattributedReason"].startswith("owned by another")


def test_explain_for_v2_names_the_subgroup() -> None:
    wl = workload("trainer")
    entry = {e["pod"]: e for e in wl.explain()}["mnist-worker-1"]
    assert entry["gang"]["subGroup"] == {
        "name": "worker",
        "minMember": 3,
        "minMemberRule": "pods implied for worker and its descendants",
    }


def test_attribute_accepts_client_objects() -> None:
    class KrObj:
        raw = _pod("p", role="a")

    wl = Workload(_two_leaves({"keyPath": ".metadata.labels.role"}), OBJ)
    assert wl.attribute(KrObj()).component == "a"
