"""The planner's memo of spec-only results (SpecMemo): the same plans and webhook decisions
with and without it, a hit per version of a workload, a miss on a new version or definition."""

from __future__ import annotations

import copy
from typing import Any

from tests.gangs.cases import example, karta_of, opted
from tests.gangs.owners import jobset_chain, lws_chain
from tests.gangs.test_admission import cache_with
from workload_map.gangs.admission import PodAdmitter
from workload_map.gangs.config import GangConfig
from workload_map.gangs.planner import SpecMemo, plan


def _versioned(obj: dict[str, Any], rv: str = "7") -> dict[str, Any]:
    out = copy.deepcopy(obj)
    out["metadata"]["resourceVersion"] = rv
    return out


def _named(pods: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {**p, "metadata": {**p["metadata"], "name": p["metadata"].get("name") or f"p{i}"}}
        for i, p in enumerate(pods)
    ]


def test_plans_are_the_same_with_the_memo_and_hit_once_per_version() -> None:
    # the alpha form (LeaderWorkerSet) derives the groups its spec implies without pods; the
    # v2 form (JobSet) has none to derive, and the memo stays out of it
    for name, chain, derived in (
        ("jobset", jobset_chain, False),
        ("leaderworkerset", lws_chain, True),
    ):
        obj = _versioned(opted(example(name)[0]))
        karta = karta_of(obj)
        pods = _named(chain(obj)[1])
        memo = SpecMemo()
        for count in range(len(pods) + 1):  # the pods arriving one by one
            some = pods[:count]
            assert plan(karta, obj, some, memo=memo).to_dict() == plan(karta, obj, some).to_dict()
        if not derived:
            assert memo.misses == memo.hits == 0
            continue
        assert memo.misses == 1 and memo.hits == len(pods), name
        # a new version of the object is derived again; the old entry is not used
        newer = _versioned(obj, "8")
        assert plan(karta, newer, pods, memo=memo).to_dict() == plan(karta, newer, pods).to_dict()
        assert memo.misses == 2 and len(memo) == 2


def test_a_replaced_definition_never_hits() -> None:
    obj = _versioned(opted(example("leaderworkerset")[0]))
    memo = SpecMemo()
    plan(karta_of(obj), obj, [], memo=memo)
    other = copy.deepcopy(karta_of(obj))  # same name, another object (a Karta edited)
    plan(other, obj, [], memo=memo)
    assert memo.hits == 0 and memo.misses == 2


def test_objects_without_a_version_are_not_kept_and_the_memo_is_bounded() -> None:
    obj = opted(example("leaderworkerset")[0])
    obj["metadata"].pop("resourceVersion", None)
    memo = SpecMemo(capacity=2)
    plan(karta_of(obj), obj, [], memo=memo)
    assert len(memo) == 0 and memo.misses == 0
    for rv in ("1", "2", "3"):
        plan(karta_of(obj), _versioned(obj, rv), [], memo=memo)
    assert len(memo) == 2  # the least recently used went
    plan(karta_of(obj), _versioned(obj, "1"), [], memo=memo)
    assert memo.misses == 4  # "1" had been evicted


def test_webhook_decisions_are_the_same_with_the_memo() -> None:
    for name, chain, derived in (
        ("jobset", jobset_chain, False),
        ("leaderworkerset", lws_chain, True),
    ):
        obj = _versioned(opted(example(name)[0]))
        owners, pods = chain(obj)
        memo = SpecMemo()
        with_memo = PodAdmitter(cache_with(obj, *owners), memo=memo)
        without = PodAdmitter(cache_with(obj, *owners))
        for pod in pods:
            a, b = with_memo.decide(pod), without.decide(pod)
            assert a.to_dict() == b.to_dict(), name
            assert a.pod_group, a.reason
        assert memo.hits == (len(pods) - 1 if derived else 0), (name, memo.hits)
        # every form: the workload's spec side is read for its first pod only
        assert (memo.side_misses, memo.side_hits) == (1, len(pods) - 1), name


def test_the_spec_side_is_read_once_per_version_and_config() -> None:
    # every form (the v2 JobSet too): the templates' pod specs, the left-alone answer and the
    # phases are read once per version of the object, and the plans stay the same
    obj = _versioned(opted(example("jobset")[0]))
    karta = karta_of(obj)
    pods = _named(jobset_chain(obj)[1])
    memo = SpecMemo()
    for count in range(len(pods) + 1):
        some = pods[:count]
        assert plan(karta, obj, some, memo=memo).to_dict() == plan(karta, obj, some).to_dict()
    assert (memo.side_misses, memo.side_hits) == (1, len(pods))
    # another setting the answer depends on (WorkloadWithJob) is read again, not reused
    config = GangConfig(workload_with_job=True)
    assert plan(karta, obj, pods, memo=memo, config=config).to_dict() == (
        plan(karta, obj, pods, config=config).to_dict()
    )
    assert memo.side_misses == 2
    # an equal setting made anew (the runtime replaces its config on a probe) still hits
    plan(karta, obj, pods, memo=memo, config=GangConfig(workload_with_job=True))
    assert memo.side_hits == len(pods) + 1


def test_a_new_version_is_read_again_its_phases_too_and_replaces_the_old() -> None:
    obj = _versioned(opted(example("jobset")[0]))
    karta = karta_of(obj)
    pods = _named(jobset_chain(obj)[1])
    memo = SpecMemo()
    assert plan(karta, obj, pods, memo=memo).gangs
    suspended = _versioned(obj, "8")
    suspended["spec"]["suspend"] = True
    planned = plan(karta, suspended, pods, memo=memo)
    assert [d.reason for d in planned.decisions] == ["GangsReleased"], planned.decisions
    assert not planned.gangs and memo.side_misses == 2
    # one side per workload: the newer version's replaced the older's, which is read again
    # (and still gives the older answer) when a late cache plans with it
    assert memo.sides == 1
    assert plan(karta, obj, pods, memo=memo).gangs and memo.side_misses == 3
    assert memo.sides == 1


def test_a_plan_without_objects_has_the_same_gangs_and_decisions() -> None:
    for name, chain in (("jobset", jobset_chain), ("leaderworkerset", lws_chain)):
        obj = _versioned(opted(example(name)[0]))
        karta = karta_of(obj)
        pods = _named(chain(obj)[1])
        full, lean = plan(karta, obj, pods), plan(karta, obj, pods, objects=False)
        assert full.objects and not lean.objects, name
        assert {**full.to_dict(), "objects": []} == lean.to_dict(), name


def test_the_sides_are_bounded() -> None:
    memo = SpecMemo(capacity=2)
    objects = {}
    karta = karta_of(opted(example("jobset")[0]))
    for uid in ("a", "b", "c"):
        obj = objects[uid] = _versioned(opted(example("jobset")[0]))
        obj["metadata"]["uid"] = uid
        plan(karta, obj, [], memo=memo)
    assert memo.sides == 2 and memo.side_misses == 3
    # "a" went first; "b" is still kept
    plan(karta, objects["b"], [], memo=memo)
    plan(karta, objects["a"], [], memo=memo)
    assert (memo.side_hits, memo.side_misses, memo.sides) == (1, 4, 2)
