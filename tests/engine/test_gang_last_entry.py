"""The alpha rules' loop keeps the entry the last pod joined, with its keys: the pods of one
group mostly come together, and a pod whose keys equal the last ones joins that entry without
a key tuple, its hash and a lookup. Only an equal string equals a string key, so it is the
entry the lookup would find; a change of candidate forgets it. Any order of the pods gives
the same groups and assignments."""

from __future__ import annotations

import random
from typing import Any

import pytest

from tests.engine.conftest import karta_dict, root
from tests.engine.test_gang_key_views import _KARTA, _lws
from workload_map.engine import Workload, gang_rules
from workload_map.model.views import to_json

SET = "example.com/set"
INDEX = "example.com/index"
ROLE = "example.com/role"
KEYS = [f'.metadata.labels["{SET}"]', f'.metadata.labels["{INDEX}"]']


def _component(name: str) -> dict[str, Any]:
    return {
        "name": name,
        "ownerRef": "thing",
        "specDefinition": {"podTemplateSpecPath": f".spec.{name}"},
        "scaleDefinition": {"replicasPath": ".spec.n"},
        "podSelector": {
            "componentTypeSelector": {"keyPath": f'.metadata.labels["{ROLE}"]', "value": name}
        },
    }


def _two_definitions() -> dict[str, Any]:
    """Components a and b, each grouped by its own definition on the same two label keys."""
    groups = [
        {"name": f"g{c}", "members": [{"componentName": c, "groupByKeyPaths": KEYS}]}
        for c in ("a", "b")
    ]
    return karta_dict(root(), _component("a"), _component("b"), gang={"podGroups": groups})


def _pod(name: str, role: str, index: Any) -> dict[str, Any]:
    labels = {SET: "t", INDEX: index, ROLE: role}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": labels}}


_TEMPLATE = {"spec": {"containers": [{"name": "c"}]}}
_OBJ = {
    "apiVersion": "example.com/v1",
    "kind": "Thing",
    "metadata": {"name": "t", "namespace": "ns", "uid": "u"},
    "spec": {"n": 2, "a": _TEMPLATE, "b": _TEMPLATE},
}


def test_pods_of_two_candidates_with_equal_keys_keep_their_own_definitions() -> None:
    # alternating components whose keys read the same values: each pod's own candidate
    pods = [_pod(f"{role}-{i}", role, "0") for i in range(2) for role in ("a", "b")]
    workload = Workload(_two_definitions(), _OBJ, pods)
    assert [a.definition for a in workload.gangs.assignments] == ["ga", "gb", "ga", "gb"]
    assert [a.group for a in workload.gangs.assignments] == ["pg-u-t-0"] * 4


@pytest.mark.parametrize("odd", [0, "", None, ["0"], {"0": "0"}, "1"])
def test_a_pod_after_another_reads_its_own_keys(odd: Any) -> None:
    # between two pods of one group, a pod whose key is another value (or not a string) is
    # grouped as it would be on its own
    pods = [_pod("a-0", "a", "0"), _pod("a-1", "a", odd), _pod("a-2", "a", "0")]
    assignments = Workload(_two_definitions(), _OBJ, pods).gangs.assignments
    alone = Workload(_two_definitions(), _OBJ, [pods[1]]).gangs.assignments
    assert to_json(assignments[1]) == to_json(alone[0])
    assert assignments[0].group == "pg-u-t-0"
    assert assignments[2] is assignments[0]


def _grouping(pods: list[Any]) -> dict[str, Any]:
    workload = Workload(_KARTA, _lws("w", replicas=4, size=3)[0], pods, owned=True)
    by_pod = {
        pod["metadata"]["name"]: (a.group, a.keys)
        for pod, a in zip(pods, workload.gangs.assignments, strict=True)
    }
    return {"groups": workload.gangs.groups, "by_pod": by_pod}


@pytest.mark.parametrize("order", ["as listed", "reversed", "round robin", "shuffled"])
def test_any_order_of_the_pods_groups_them_alike(order: str) -> None:
    _, pods = _lws("w", replicas=4, size=3)
    if order == "reversed":
        pods = pods[::-1]
    elif order == "round robin":  # no two pods of one group in a row
        pods = [pods[g * 3 + w] for w in range(3) for g in range(4)]
    elif order == "shuffled":
        random.Random(7).shuffle(pods)
    found = _grouping(pods)
    assert found["groups"] == _grouping(_lws("w", replicas=4, size=3)[1])["groups"]
    for name, (group, keys) in found["by_pod"].items():
        index = name.split("-")[1]
        assert group == f"pg-u-w-w-{index}"
        assert [k.value for k in keys] == ["w", index]


class _Counted(dict[Any, Any]):
    lookups = 0

    def get(self, key: Any, default: Any = None) -> Any:
        _Counted.lookups += 1
        return super().get(key, default)


def test_the_pods_of_one_group_in_a_row_look_their_entry_up_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    made = gang_rules._Candidate.__init__

    def counted(self: Any, *args: Any) -> None:
        made(self, *args)
        self.assigned = _Counted()

    monkeypatch.setattr(gang_rules._Candidate, "__init__", counted)
    monkeypatch.setattr(_Counted, "lookups", 0)
    obj, pods = _lws("x", replicas=5, size=4)
    workload = Workload(_KARTA, obj, pods, owned=True)
    _Counted.lookups = 0
    assert len(workload.gangs.groups) == 5
    # per group: the loop's lookup of its first pod (join makes the entry without another),
    # not one per pod
    assert _Counted.lookups == 5


def test_key_tuples_that_make_one_name_make_one_group() -> None:
    # three key tuples join to the same name: one group of their pods, the first pod's keys
    def pod(name: str, first: str, second: str) -> dict[str, Any]:
        out = _pod(name, "a", second)
        out["metadata"]["labels"][SET] = first
        return out

    pods = [
        pod("p3", "a-b-c", "d"),
        pod("p1", "a", "b-c-d"),
        pod("p2", "a-b", "c-d"),
        pod("p4", "a", "b-c-d"),
    ]
    workload = Workload(_two_definitions(), _OBJ, pods)
    assert to_json(workload.gangs.groups) == [
        {
            "name": "pg-u-a-b-c-d",
            "minMember": 2,
            "pods": ["p1", "p2", "p3", "p4"],
            "subGroups": [],
            "definition": "ga",
            "keys": ["a-b-c", "d"],
            "minMemberRule": "pods implied for a",
        }
    ]
    assert [a.group for a in workload.gangs.assignments] == ["pg-u-a-b-c-d"] * 4
    assert [[k.value for k in a.keys] for a in workload.gangs.assignments][:3] == [
        ["a-b-c", "d"],
        ["a", "b-c-d"],
        ["a-b", "c-d"],
    ]
