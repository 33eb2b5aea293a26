"""The workload tree (REFERENCE §8 item 38)."""

from __future__ import annotations

import pytest

from tests.engine.conftest import karta_dict, root, workload
from workload_map.engine import InvalidDefinitionError, Workload


def test_single_instance_has_no_key_and_map_instances_are_sorted() -> None:
    tree = workload("reactor", with_pods=False).tree()
    assert tree.phases == ["Running", "Degraded"]
    assert tree.root.instances[0].instance_key is None
    [service] = tree.children
    assert service.kind is None and service.has_pod_definition
    assert [i.instance_key for i in service.instances] == ["api", "cache", "worker"]


def test_replica_selector_component_is_one_instance() -> None:
    tree = workload("leaderworker", with_pods=False).tree()
    [group] = tree.children
    assert [i.instance_key for i in group.instances] == [None]
    assert [c.name for c in group.instances[0].children] == ["leader", "worker"]


def test_inverted_scale_is_kept_and_child_without_scale_has_none() -> None:
    child = {
        "name": "c",
        "ownerRef": "thing",
        "specDefinition": {"podSpecPath": ".spec.p"},
        "scaleDefinition": {"minReplicasPath": ".spec.min", "maxReplicasPath": ".spec.max"},
    }
    bare = {
        "name": "d",
        "ownerRef": "thing",
        "specDefinition": {"podSpecPath": ".spec.p"},
        "podSelector": {"componentTypeSelector": {"keyPath": ".x"}},
    }
    child["podSelector"] = {"componentTypeSelector": {"keyPath": ".y"}}
    obj = {
        "apiVersion": "example.com/v1",
        "kind": "Thing",
        "metadata": {"name": "x"},
        "spec": {"p": {}, "min": 5, "max": 2},
    }
    tree = Workload(karta_dict(root(), child, bare), obj).tree()
    c, d = tree.children
    assert (
        c.instances[0].extracted.scale.min_replicas == 5
        and c.instances[0].extracted.scale.max_replicas == 2
    )
    assert d.instances[0].extracted.scale is None


def test_pod_bearing_root_has_no_children() -> None:
    karta = karta_dict(root(specDefinition={"podTemplateSpecPath": ".spec.template"}))
    obj = {
        "apiVersion": "example.com/v1",
        "kind": "Thing",
        "metadata": {"name": "x"},
        "spec": {"template": {}},
    }
    tree = Workload(karta, obj).tree()
    assert tree.children == [] and tree.root.has_pod_definition


def test_invalid_definition_gives_no_tree() -> None:
    karta = karta_dict(root(), {"name": "c"})
    with pytest.raises(InvalidDefinitionError):
        Workload(
            karta, {"apiVersion": "example.com/v1", "kind": "Thing", "metadata": {"name": "x"}}
        ).tree()


def test_subtrees_under_instances_do_not_alias() -> None:
    parent = {
        "name": "p",
        "ownerRef": "thing",
        "instanceIdPath": ".spec.ps[]",
        "podSelector": {"componentInstanceSelector": {"idPath": ".metadata.labels.p"}},
    }
    child = {"name": "c", "ownerRef": "p", "specDefinition": {"podSpecPath": ".spec.pod"}}
    obj = {
        "apiVersion": "example.com/v1",
        "kind": "Thing",
        "metadata": {"name": "x"},
        "spec": {"ps": ["a", "b"], "pod": {}},
    }
    tree = Workload(karta_dict(root(), parent, child), obj).tree()
    a, b = tree.children[0].instances
    assert a.children[0] is not b.children[0]
    a.children[0].name = "changed"
    assert b.children[0].name == "c"


def test_pods_hang_under_their_instance_and_to_dict() -> None:
    tree = workload("jobgroup").tree()
    workers = next(i for i in tree.children[0].instances if i.instance_key == "workers")
    assert len(workers.pods) == 4
    as_dict = tree.to_dict()
    assert as_dict["children"][0]["name"] == "job"
    assert as_dict["children"][0]["instances"][1]["scale"] == {
        "replicas": 4,
        "minReplicas": None,
        "maxReplicas": None,
    }
