"""The v2 group's members read by C-level passes agree with the loop over the placements.

Without subgroups, when every pod is attributed, ``v2_groups`` takes the pods' names and one
shared assignment per pod without a Python step per pod; any other list goes through
``_v2_members``, the loop. Both must give the same group members and assignments.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.engine.test_pods_fast import CASES, _jobset
from workload_map.engine import Workload
from workload_map.engine.gang_minimums import GangCounter
from workload_map.engine.gang_rules import _v2_members, v2_groups
from workload_map.engine.gang_views import GangAssignment, GroupKey
from workload_map.engine.pods import Placement

PLACEMENTS = st.builds(
    Placement,
    pod=st.sampled_from(["a", "b", "c", "d-0"]),
    component=st.one_of(st.just("replicatedjob"), st.just("replicatedjob"), st.none()),
    instance=st.sampled_from(["driver", "workers", None]),
    reason=st.one_of(st.none(), st.none(), st.none(), st.just("why")),
)


def _workload() -> Workload:
    return Workload(CASES[0][1], _jobset())


@settings(max_examples=300, deadline=None)
@given(st.lists(PLACEMENTS, max_size=8))
def test_whole_group_members_agree_with_the_loop(placements: list[Placement]) -> None:
    wl = _workload()
    groups, assignments = v2_groups(GangCounter(wl.extractor, placements), placements, "u-js")
    whole = GangAssignment(
        group="pg-u-js-jobset",
        definition="jobset",
        keys=(GroupKey("podGroup.name", "jobset"),),
    )
    names, expected = _v2_members(placements, {}, {}, whole, [])
    assert list(groups[0].pods) == sorted(names)
    assert assignments == expected


def test_a_jobsets_pods_join_the_whole_group() -> None:
    pods: list[dict[str, Any]] = [
        {
            "metadata": {
                "name": f"js-{rj}-{i}",
                "labels": {"jobset.sigs.k8s.io/replicatedjob-name": rj},
            }
        }
        for rj in ("workers", "driver")
        for i in range(2)
    ]
    wl = Workload(CASES[0][1], _jobset(), pods, owned=True)
    result = wl.gangs
    assert [g.pods for g in result.groups] == [
        ("js-driver-0", "js-driver-1", "js-workers-0", "js-workers-1")
    ]
    assert {a.group for a in result.assignments} == {"pg-u-js-jobset"}
    assert len(result.assignments) == 4
