"""The shared evaluation's value types: immutable, compared and read as before they were views."""

from __future__ import annotations

import dataclasses
from types import MappingProxyType
from typing import Any

import pytest

from workload_map.engine.pods import ACTIVE, TERMINATING, Placement
from workload_map.engine.summary import (
    ComponentTally,
    GangTally,
    PodFacts,
    PodPlace,
    Tally,
    WorkloadSummary,
    placed_facts,
    pod_facts,
    sum_tallies,
    tally_of,
)
from workload_map.kube.trim import trim_pod


def _pod(*, node: str = "", ready: bool = False, gpus: str = "1") -> dict[str, object]:
    spec: dict[str, object] = {
        "containers": [{"name": "c", "resources": {"requests": {"nvidia.com/gpu": gpus}}}]
    }
    if node:
        spec["nodeName"] = node
    status = {"conditions": [{"type": "Ready", "status": "True" if ready else "False"}]}
    return {"kind": "Pod", "metadata": {"name": "p"}, "spec": spec, "status": status}


def _placed() -> Placement:
    return Placement(pod="p", component="main", instance="", state=ACTIVE)


def test_the_fields_keep_their_order_and_names() -> None:
    # positional construction (tally_of, summarize) depends on this order
    assert [f.name for f in dataclasses.fields(Tally)] == [
        "desired",
        "current",
        "ready",
        "pending",
        "held",
        "requested",
        "pending_requests",
        "held_requests",
        "current_requests",
    ]
    assert [f.name for f in dataclasses.fields(PodPlace)] == [
        "name",
        "uid",
        "component",
        "instance",
        "replica",
        "pod_group",
    ]
    assert [f.name for f in dataclasses.fields(WorkloadSummary)] == [
        "phases",
        "error",
        "totals",
        "components",
        "gangs",
        "pods",
        "detailed",
    ]
    assert Tally(1, None, None, None, None, {}, None, None).current_requests is None


@pytest.mark.parametrize(
    "value",
    [
        PodFacts(True, True, True, True, {}),
        Tally(1, 1, 1, 0, 1, {}, {}, {}),
        ComponentTally("c", "", Tally(1, 1, 1, 0, 1, {}, {}, {})),
        GangTally("g", 2, ("a", "b"), 2, 1),
        PodPlace("p", "u", "c", "", "0", "g"),
        WorkloadSummary(
            ("Running",), None, Tally(0, None, None, None, None, {}, None, None), (), (), ()
        ),
    ],
)
def test_values_are_immutable(value: object) -> None:
    first = dataclasses.fields(value)[0].name  # type: ignore[arg-type]
    with pytest.raises(AttributeError):
        setattr(value, first, None)


def test_equal_values_compare_equal_and_hash_alike() -> None:
    assert GangTally("g", 2, ("a",), 1, 0) == GangTally("g", 2, ("a",), 1, 0)
    assert GangTally("g", 2, ("a",), 1, 0) != GangTally("g", 2, ("a",), 1, 1)
    assert hash(PodPlace("p", "u", "c", "", "", "")) == hash(PodPlace("p", "u", "c", "", "", ""))
    assert dataclasses.replace(PodPlace("p", "u", "c", "", "", ""), pod_group="g").pod_group == "g"


def test_pod_facts_and_tallies_count_pending_held_and_ready() -> None:
    bound = pod_facts(_pod(node="n1", ready=True, gpus="2"), ACTIVE)
    waiting = pod_facts(_pod(gpus="1"), ACTIVE)
    assert (bound.active, bound.ready, bound.bound, bound.held, bound.pending) == (
        True,
        True,
        True,
        True,
        False,
    )
    assert waiting.pending and not waiting.held
    tally = tally_of(3, {"nvidia.com/gpu": 6}, [bound, waiting])
    assert (tally.current, tally.ready, tally.pending, tally.held) == (2, 1, 1, 1)
    assert tally.by_state() == {
        "requested": {"nvidia.com/gpu": 6},
        "pending": {"nvidia.com/gpu": 1},
        "held": {"nvidia.com/gpu": 2},
    }
    assert tally.current_requests == {"nvidia.com/gpu": 3}
    both = sum_tallies([tally, tally_of(1, {"nvidia.com/gpu": 2}, None)])
    assert (both.desired, both.current, both.pending, both.held) == (4, 2, 1, 1)
    assert both.requested == {"nvidia.com/gpu": 8}


@pytest.mark.parametrize("wrap", [dict, MappingProxyType], ids=["dict", "mapping"])
def test_a_pod_on_a_node_is_bound_whatever_mapping_holds_its_spec(wrap: Any) -> None:
    # its request was read from any mapping: its node too (it was held, not pending)
    pod = {**_pod(node="n1", ready=True), "spec": wrap(_pod(node="n1")["spec"])}
    for facts in (pod_facts(pod, ACTIVE), placed_facts([pod], [_placed()])[0]):
        assert facts is not None
        assert facts.bound and facts.held and not facts.pending
        assert facts.request == {"nvidia.com/gpu": 1}


def test_a_trimmed_pod_keeps_its_spec_a_dict_and_its_node() -> None:
    # what the watch caches hold (kube/trim.py): the spec stays a plain dict
    pod = trim_pod({**_pod(node="n1", ready=True), "apiVersion": "v1"})
    assert type(pod["spec"]) is dict
    facts = placed_facts([pod], [_placed()])[0]
    assert facts is not None and facts.bound and facts.held


def test_pods_sharing_spec_and_status_objects_are_read_by_their_state_too() -> None:
    # placed_facts reads a pod once per (spec, status, state) objects: the same spec and status
    # objects in another state, or another status object, give that pod's own facts
    bound = _pod(node="n1", ready=True)
    spec, status = bound["spec"], bound["status"]
    same = {"kind": "Pod", "metadata": {"name": "q"}, "spec": spec, "status": status}
    unready = {**same, "status": _pod(ready=False)["status"]}
    pods = [bound, same, same, unready]
    states = [ACTIVE, ACTIVE, TERMINATING, ACTIVE]
    placements = [Placement(pod="p", component="main", instance="", state=s) for s in states]
    got = placed_facts(pods, placements)
    assert got[0] is got[1]
    expected = [pod_facts(p, s) for p, s in zip(pods, states, strict=True)]
    assert got == expected
    assert [f.ready if f else None for f in got] == [True, True, False, False]
    assert [f.active if f else None for f in got] == [True, True, False, True]
