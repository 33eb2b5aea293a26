"""The alpha rules build a group's ``GangAssignment`` and ``PodGroup`` with positional
arguments (per group: keywords cost a Struct a third more). A Struct takes positional values
in its declared field order and checks no types, so a misplaced value would land silently in
another field: the order is pinned here, and real groups are checked field by field, each
with a value of its own (filters, a later pod count, reserved requests, an error)."""

from __future__ import annotations

from typing import Any

from tests.engine.test_gang_late_members import LATER, _karta, _obj, _pods
from workload_map.engine import Workload
from workload_map.engine.gang_views import GangAssignment, PodGroup
from workload_map.model.views import to_json

SET = '.metadata.labels["example.com/set"]'
INDEX = '.metadata.labels["example.com/group-index"]'
FILTER = f'{SET} == "t"'


def test_the_field_order_the_positional_builds_rely_on() -> None:
    # gang_rules._Candidate.join and alpha_groups pass these in this order
    assert GangAssignment.__struct_fields__[:6] == (  # type: ignore[attr-defined]
        "group",
        "definition",
        "member",
        "effective_component",
        "keys",
        "filters",
    )
    assert PodGroup.__struct_fields__ == (  # type: ignore[attr-defined]
        "name",
        "min_member",
        "pods",
        "sub_groups",
        "definition",
        "keys",
        "rule",
        "topology",
        "error",
        "unresolved_keys",
        "created_later",
        "min_resources",
    )


def _workload(size: Any = 3) -> Workload:
    karta = _karta(LATER)
    member = karta["spec"]["optimizationInstructions"]["gangScheduling"]["podGroups"][0]
    member["members"][0]["filters"] = [FILTER]
    obj = _obj(groups=2, size=3)
    obj["spec"]["size"] = size
    return Workload(karta, obj, _pods(2, 3, helpers=True))


def test_an_assignment_carries_each_field_in_its_place() -> None:
    assignments = _workload().gangs.assignments
    assert to_json(assignments[0]) == {
        "group": "pg-u-t-0",
        "definition": "group",
        "member": "group",
        "effectiveComponent": "group",
        "keys": [{"path": SET, "value": "t"}, {"path": INDEX, "value": "0"}],
        "filters": [FILTER],
        "reason": None,
    }
    assert assignments[1] is assignments[0]  # the pods of one group share theirs
    assert [a.group for a in assignments] == ["pg-u-t-0"] * 3 + ["pg-u-t-1"] * 3


def test_a_group_carries_each_field_in_its_place() -> None:
    group = _workload().pod_groups()[1]
    assert group.sub_groups == () and group.topology is None and group.unresolved_keys == ()
    assert to_json(group) == {
        "name": "pg-u-t-1",
        "minMember": 1,
        "pods": ["t-1-0", "t-1-1", "t-1-2"],
        "subGroups": [],
        "definition": "group",
        "keys": ["t", "1"],
        "minMemberRule": "one replica of group: its own scale (3 pods), "
        "less 2 created after admission",
        "createdLater": 2,
        "minResources": {
            "gpus": 2,
            "cpuMillis": 10000,
            "memoryBytes": 0,
            "byResource": {"nvidia.com/gpu": 2},
            "gpusAnyVendor": 2,
            "resourceClaims": 0,
        },
    }


def test_a_group_carries_its_error_in_its_place() -> None:
    group = _workload(size="x").pod_groups()[0]
    assert (group.min_member, group.rule, group.topology) == (0, "", None)
    assert group.error == 'replicas value "x" at index 0 is not a number'
    assert (group.created_later, group.min_resources) == (0, None)
