"""An alpha candidate whose groups' minimum the definition decides (``replica_of``: a
LeaderWorkerSet's group index) lists its entries' pod names, not their placements: the names
are what its groups list, read once per pod as it joins. Placements are found again only
for a name that several key tuples make (their minimum looks at the pods). Either way the
groups and assignments are those of entries listing placements."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from workload_map.catalog import catalog
from workload_map.engine import Workload, gang_rules
from workload_map.engine.pods import Placement
from workload_map.model.views import to_json

LWS = "leaderworkerset.sigs.k8s.io"
_KARTA = catalog.get("leaderworkerset.x-k8s.io", "v1", "LeaderWorkerSet")
_OBJ = {
    "apiVersion": "leaderworkerset.x-k8s.io/v1",
    "kind": "LeaderWorkerSet",
    "metadata": {"name": "x", "namespace": "ns", "uid": "u"},
    "spec": {
        "replicas": 3,
        "leaderWorkerTemplate": {
            "size": 2,
            "workerTemplate": {"spec": {"containers": [{"name": "c"}]}},
        },
    },
}


def _pod(name: str, set_name: Any, index: Any, worker: str) -> dict[str, Any]:
    labels = {f"{LWS}/name": set_name, f"{LWS}/group-index": index, f"{LWS}/worker-index": worker}
    meta: dict[str, Any] = {"name": name, "labels": labels}
    if worker != "0":
        meta["annotations"] = {f"{LWS}/leader-name": "x-0"}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta}


def _made(monkeypatch: pytest.MonkeyPatch, by_name: bool | None = None) -> list[Any]:
    """The candidates made from now on (with ``by_name`` forced when given)."""
    made: list[Any] = []
    init = gang_rules._Candidate.__init__

    def recorded(self: Any, *args: Any) -> None:
        init(self, *args)
        if by_name is not None:
            self.by_name = by_name
        made.append(self)

    monkeypatch.setattr(gang_rules._Candidate, "__init__", recorded)
    return made


def test_a_replica_keyed_candidate_lists_names(monkeypatch: pytest.MonkeyPatch) -> None:
    made = _made(monkeypatch)
    pods = [_pod(f"x-{g}-{w}", "x", str(g), str(w)) for g in range(3) for w in range(2)]
    gangs = Workload(_KARTA, _OBJ, pods, owned=True).gangs
    (candidate,) = made
    assert candidate.by_name
    assert [members for _, members, _ in candidate.assigned.values()] == [
        ["x-0-0", "x-0-1"],
        ["x-1-0", "x-1-1"],
        ["x-2-0", "x-2-1"],
    ]
    assert [g.pods for g in gangs.groups] == [
        ("x-0-0", "x-0-1"),
        ("x-1-0", "x-1-1"),
        ("x-2-0", "x-2-1"),
    ]


def test_key_tuples_naming_one_group_find_their_placements(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # ("x-1", "2") and ("x", "1-2") both name pg-u-x-1-2: one group, its minimum from the pods
    made = _made(monkeypatch)
    pods = [
        _pod("b", "x", "1-2", "0"),
        _pod("a", "x-1", "2", "0"),
        _pod("c", "x", "1-2", "1"),
    ]
    groups = Workload(_KARTA, _OBJ, pods, owned=True).gangs.groups
    assert made[0].by_name
    (group,) = groups
    assert group.name == "pg-u-x-1-2"
    assert group.pods == ("a", "b", "c")
    assert group.keys == ("x", "1-2")  # the first pod's keys


@st.composite
def fleets(draw: st.DrawFn) -> list[Any]:
    """Pods of a few groups, some key tuples naming one group, some keys odd or missing."""
    values = st.sampled_from(["x", "x-1", "1", "2", "1-2", "", None, 3])
    return [
        _pod(f"p{n}", draw(values), draw(values), draw(st.sampled_from(["0", "1"])))
        for n in range(draw(st.integers(1, 8)))
    ]


def _gangs(pods: list[Any]) -> Any:
    gangs = Workload(_KARTA, _OBJ, pods, owned=True).gangs
    return to_json(gangs.groups), to_json(gangs.assignments)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(fleets())
def test_names_or_placements_make_the_same_groups(pods: list[Any]) -> None:
    with pytest.MonkeyPatch.context() as patch:
        _made(patch, by_name=False)
        placed = _gangs(pods)
    with pytest.MonkeyPatch.context() as patch:
        made = _made(patch)
        named = _gangs(pods)
    assert named == placed
    assert all(c.by_name for c in made)
    for candidate in made:
        for _, members, _ in candidate.assigned.values():
            assert all(type(m) is str for m in members)
            assert not any(isinstance(m, Placement) for m in members)
