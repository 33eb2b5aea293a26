"""The planner's v2 group without subgroups: from the object alone, members only where read.

A plain Job's group of one gets no object, so planning it attributes none of its pods; a
group with an object takes the engine's gangs, which reuse the group made from the object,
as does any later ``Workload.gangs`` of the same workload (the exporter's, after the gang
resync). Either way the engine's answer is the same (``Workload.spec_gangs`` against a fresh
``Workload.gangs`` for every catalog sample with operator-made pods).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from tests.catalog.operator_pods import operator_for
from tests.gangs.cases import OBJECTS, karta_of, opted
from workload_map.catalog import catalog
from workload_map.engine import Workload
from workload_map.engine.gang_minimums import GangCounter
from workload_map.engine.gangs import v2_spec_group
from workload_map.gangs import plan
from workload_map.gangs.planner import _gangs

Obj = dict[str, Any]


def _job(parallelism: int) -> tuple[Obj, list[Obj]]:
    uid = "0a0b0c0d-0000-4000-8000-000000000001"
    job = opted(
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": "train", "namespace": "default", "uid": uid},
            "spec": {
                "parallelism": parallelism,
                "completions": parallelism,
                "template": {"spec": {"containers": [{"name": "main", "image": "x"}]}},
            },
        }
    )
    pods = [
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": f"train-{i}",
                "namespace": "default",
                "uid": f"pod-{i}",
                "labels": {"batch.kubernetes.io/controller-uid": uid, "job-name": "train"},
                "ownerReferences": [
                    {
                        "apiVersion": "batch/v1",
                        "kind": "Job",
                        "name": "train",
                        "uid": uid,
                        "controller": True,
                    }
                ],
            },
            "spec": {"containers": [{"name": "main", "image": "x"}]},
        }
        for i in range(parallelism)
    ]
    return job, pods


def _jobset() -> tuple[Obj, list[Obj]]:
    obj = next(
        opted(o) for o in OBJECTS if o.get("kind") == "JobSet" and operator_for(o) is not None
    )
    maker = operator_for(obj)
    assert maker is not None
    return obj, maker[0](obj)


def test_a_plain_jobs_group_of_one_places_none_of_its_pods() -> None:
    job, pods = _job(4)
    the_plan = plan(karta_of(job), job, pods)
    assert [d.reason for d in the_plan.decisions] == ["GroupOfOne"]
    assert the_plan.view is not None
    # neither the placements nor the gangs with their per-pod assignments were derived
    assert "placements" not in vars(the_plan.view)
    assert "gangs" not in vars(the_plan.view)


def test_a_group_with_an_object_lists_its_attributed_pods() -> None:
    obj, pods = _jobset()
    the_plan = plan(karta_of(obj), obj, pods)
    engine = Workload(karta_of(obj), obj, pods=pods)
    (group,) = engine.pod_groups()
    assert group.min_member >= 2 and len(group.pods) == len(pods)
    assert [g.pods for g in the_plan.gangs] == [group.pods]


def _minimums(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the v2 group minimums computed (each reads the stated minimum once)."""
    calls: list[int] = []
    real = GangCounter.stated_minimum

    def counted(self: GangCounter) -> int | None:
        calls.append(1)
        return real(self)

    monkeypatch.setattr(GangCounter, "stated_minimum", counted)
    return calls


@pytest.mark.parametrize("make", [lambda: _job(4), _jobset], ids=["group-of-one", "jobset"])
def test_the_engines_gangs_after_the_plan_reuse_the_group_from_the_object(
    make: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    obj, pods = make()
    fresh = Workload(karta_of(obj), obj, pods=pods).gangs
    calls = _minimums(monkeypatch)
    the_plan = plan(karta_of(obj), obj, pods)
    assert the_plan.view is not None
    assert len(calls) == 1
    # the exporter's full gangs after the gang resync: members and assignments only
    assert the_plan.view.gangs == fresh
    assert len(calls) == 1


def test_the_group_from_the_object_is_the_workloads_own() -> None:
    job, pods = _job(4)
    wl = Workload(karta_of(job), job, pods=pods)
    mine = wl.spec_group
    assert mine is not None and mine.pods == ()
    assert mine.name == f"pg-{wl.uid}-{mine.definition}"
    other = v2_spec_group(wl.extractor, "another-uid")
    assert other is not None and other.name != mine.name
    # reused by the workload's gangs: its members added, all else as a fresh evaluation's
    assert wl.gangs == Workload(karta_of(job), job, pods=pods).gangs


def test_gangs_another_consumer_derived_are_read_as_they_are() -> None:
    obj, pods = _jobset()
    wl = Workload(karta_of(obj), obj, pods=pods)
    derived = wl.gangs
    assert _gangs(wl) is derived


def _cases() -> list[tuple[str, Obj, list[Obj]]]:
    out = []
    for obj in OBJECTS:
        found = catalog.resolve(str(obj.get("apiVersion")), str(obj.get("kind")))
        maker = operator_for(obj) if found is not None else None
        if found is None or maker is None:
            continue
        gang = found[0].gang_scheduling
        if gang is None or gang.pod_group is None or gang.pod_group.sub_groups:
            continue
        name = (obj.get("metadata") or {}).get("name")
        out.append((f"{obj['kind']}/{name}", opted(obj), maker[0](obj)))
    return out


CASES = _cases()


def test_there_are_cases_of_several_kinds() -> None:
    assert {"Job", "JobSet", "PyTorchJob"} <= {c[1]["kind"] for c in CASES}


@pytest.mark.parametrize(("case", "obj", "pods"), CASES, ids=[c[0] for c in CASES])
def test_the_groups_from_the_object_alone_are_the_engines(
    case: str, obj: Obj, pods: list[Obj]
) -> None:
    for given in (pods, pods[: len(pods) // 2], None):
        wl = Workload(karta_of(obj), obj, pods=given)
        spec = wl.spec_gangs()
        assert spec is not None
        # the engine's gangs of a workload that never made the group alone
        full = Workload(karta_of(obj), obj, pods=given).gangs
        assert spec.groups == tuple(dataclasses.replace(g, pods=()) for g in full.groups)
        assert (*spec.notes, *spec.ungrouped) == (*full.notes, *full.ungrouped)
        # and those of the workload that did: the group reused, its members added
        assert wl.gangs == full


def test_other_forms_are_not_answered_from_the_object_alone() -> None:
    # subgroups (RayCluster) and alpha groups (LeaderWorkerSet) split pods by what each carries
    others = [o for o in OBJECTS if o.get("kind") in ("RayCluster", "LeaderWorkerSet")]
    assert {o["kind"] for o in others} == {"RayCluster", "LeaderWorkerSet"}
    for obj in others:
        wl = Workload(karta_of(obj), opted(obj), pods=[])
        assert wl.spec_group is None and wl.spec_gangs() is None
