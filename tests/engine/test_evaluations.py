"""engine/evaluations: one evaluation per workload for a process's consumers, matched only to
the very objects it was made from, and kept only while a consumer still has to take it."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from workload_map.catalog import catalog
from workload_map.engine import Workload
from workload_map.engine.evaluations import Evaluations
from workload_map.model import Karta, dump_karta, load_karta


def _karta(kind: str) -> Karta:
    return next(k for k in catalog.list() if k.root_gvk is not None and k.root_gvk.kind == kind)


def _job(parallelism: int = 3, rv: str = "1") -> dict[str, Any]:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "train", "namespace": "ml", "uid": "uid-train", "resourceVersion": rv},
        "spec": {
            "parallelism": parallelism,
            "completions": parallelism,
            "template": {"spec": {"containers": [{"name": "c"}]}},
        },
        "status": {"active": parallelism},
    }


def _pod(i: int, *, job: str = "train", labels: dict[str, str] | None = None) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"{job}-{i}",
            "namespace": "ml",
            "uid": f"uid-{job}-{i}",
            "labels": labels or {"batch.kubernetes.io/job-name": job},
            "ownerReferences": [
                {
                    "apiVersion": "batch/v1",
                    "kind": "Job",
                    "name": job,
                    "uid": f"uid-{job}",
                    "controller": True,
                }
            ],
        },
        "spec": {"nodeName": "n1", "containers": [{"name": "c"}]},
        "status": {"phase": "Running"},
    }


def _both() -> Evaluations:
    shared = Evaluations()
    shared.join("inventory")
    shared.join("gangs")
    return shared


def test_the_second_consumer_reads_the_first_ones_evaluation_then_nothing_is_kept() -> None:
    shared, karta, job, pods = _both(), _karta("Job"), _job(), [_pod(i) for i in range(3)]
    made = shared.workload("inventory", karta, job, pods, owned=True, validate=False)
    assert len(shared) == 1  # the gangs have not taken it yet
    summary = made.summary()
    # the planner's copy of the definition: equal, not the same object
    taken = shared.workload("gangs", _karta("Job"), job, pods, owned=False)
    assert taken is made and (shared.shared, shared.made) == (1, 1)
    assert len(shared) == 0  # every consumer took it: it lives on where they keep it
    assert taken.summary() is summary
    # what it holds is what a Workload of its own would hold
    alone = Workload(karta, job, pods)
    assert [g.name for g in taken.pod_groups()] == [g.name for g in alone.pod_groups()]
    assert [g.min_member for g in taken.pod_groups()] == [g.min_member for g in alone.pod_groups()]
    assert taken.summary() == alone.summary() and taken.phases() == alone.phases()


def test_any_change_of_the_inputs_makes_a_new_evaluation() -> None:
    karta, job, pods = _karta("Job"), _job(), [_pod(i) for i in range(3)]
    changes: list[tuple[dict[str, Any], list[dict[str, Any]]]] = [
        (_job(), pods),  # an equal workload object, but another one (a new watch event)
        (job, [*pods[:2], _pod(2)]),  # one pod replaced
        (job, [pods[1], pods[0], pods[2]]),  # another order
        (job, pods[:2]),  # a pod gone
    ]
    for obj, given in changes:
        shared = _both()
        made = shared.workload("inventory", karta, job, pods, owned=True)
        other = shared.workload("gangs", karta, obj, given, owned=False)
        assert other is not made and shared.shared == 0
        # the newest inputs replace the older ones (one entry per workload uid)
        assert len(shared) == 1
    shared = _both()
    made = shared.workload("inventory", karta, job, pods, owned=True)
    # another definition (its name, or what it says): not shared
    assert shared.workload("gangs", karta, job, pods, owned=False, definition_name="x") is not made
    # a definition of the same name that says something else: not equal, not shared
    source = copy.deepcopy(dump_karta(karta))
    source["metadata"].setdefault("annotations", {})["example.com/edited"] = "yes"
    edited = load_karta(source)
    assert edited != karta and edited.name == karta.name
    made = shared.workload("inventory", karta, job, pods, owned=True)
    assert shared.workload("gangs", edited, job, pods, owned=False) is not made


def test_a_consumer_that_does_not_cover_the_definition_is_not_waited_for() -> None:
    shared = Evaluations()
    shared.join("inventory")
    shared.join(
        "gangs", lambda karta: karta.root_gvk is not None and karta.root_gvk.kind == "JobSet"
    )
    job, pods = _job(), [_pod(i) for i in range(2)]
    shared.workload("inventory", _karta("Job"), job, pods, owned=True)
    assert len(shared) == 0  # the gangs will never ask for a Job here
    shared.workload("inventory", _karta("Job"), job, pods, owned=True)  # and asked again
    assert len(shared) == 0


def test_one_consumer_keeps_nothing_and_deleted_workloads_are_forgotten() -> None:
    alone = Evaluations()
    alone.join("inventory")
    alone.workload("inventory", _karta("Job"), _job(), [_pod(0)], owned=True)
    assert len(alone) == 0
    shared = _both()
    shared.workload("inventory", _karta("Job"), _job(), [_pod(0)], owned=True)
    assert len(shared) == 1
    shared.forget("uid-train")
    assert len(shared) == 0


def test_kept_entries_are_bounded() -> None:
    shared = Evaluations(capacity=2)
    shared.join("inventory")
    shared.join("gangs")
    for i in range(4):
        job = _job()
        job["metadata"]["uid"] = f"uid-{i}"
        shared.workload("inventory", _karta("Job"), job, [], owned=True)
    assert len(shared) == 2


def _jobset() -> dict[str, Any]:
    template = {"spec": {"parallelism": 2, "completions": 2, "template": {"spec": {}}}}
    return {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {"name": "js", "namespace": "ml", "uid": "uid-js", "resourceVersion": "1"},
        "spec": {"replicatedJobs": [{"name": "w", "replicas": 1, "template": template}]},
    }


def _member(i: int, jobset: str = "js") -> dict[str, Any]:
    # owned by the JobSet's Job (not among the pods: the planner's partition reads labels)
    return _pod(i, job="js-w-0", labels={"jobset.sigs.k8s.io/jobset-name": jobset})


def test_partitioned_and_owned_evaluations_serve_each_other_only_when_no_pod_is_left_out() -> None:
    karta, js = _karta("JobSet"), _jobset()
    # a pod linked by its chain whose owner label names another JobSet: the planner's
    # partition leaves it out, the inventory's owned evaluation counts it
    pods = [_member(0), _member(1), _member(9, jobset="other")]
    shared = _both()
    owned = shared.workload("inventory", karta, js, pods, owned=True)
    partitioned = shared.workload("gangs", karta, js, pods, owned=False)
    assert partitioned is not owned
    assert [name for name, _ in partitioned.excluded] == ["js-w-0-9"]
    assert len(owned.candidate_pods) == 3 and len(partitioned.candidate_pods) == 2
    # the other way round: the planner's evaluation left a pod out, the inventory makes its own
    shared = _both()
    partitioned = shared.workload("gangs", karta, js, pods, owned=False)
    assert shared.workload("inventory", karta, js, pods, owned=True) is not partitioned
    # no pod left out: either serves the other, both ways
    clean = [_member(0), _member(1)]
    shared = _both()
    partitioned = shared.workload("gangs", karta, js, clean, owned=False)
    assert shared.workload("inventory", karta, js, clean, owned=True) is partitioned
    shared = _both()
    owned = shared.workload("inventory", karta, js, clean, owned=True)
    assert shared.workload("gangs", karta, js, clean, owned=False) is owned


def test_objects_without_uid_are_never_kept() -> None:
    shared = _both()
    job = _job()
    del job["metadata"]["uid"]
    first = shared.workload("inventory", _karta("Job"), job, [_pod(0)], owned=True)
    assert len(shared) == 0
    assert shared.workload("gangs", _karta("Job"), job, first.pods or [], owned=False) is not first


def test_a_consumer_that_made_its_own_the_other_way_is_not_waited_for() -> None:
    karta, js = _karta("JobSet"), _jobset()
    pods = [_member(0), _member(9, jobset="other")]  # the partition leaves one out
    shared = _both()
    shared.workload("inventory", karta, js, pods, owned=True)
    shared.workload("gangs", karta, js, pods, owned=False)  # its own: a pod left out
    assert len(shared) == 0  # each consumer has its own: nothing kept for anyone


def test_two_consumers_evaluating_at_once_share_the_first_stored(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    shared = _both()
    karta, job, pods = _karta("Job"), _job(), [_pod(0)]
    made: list[Workload] = []
    real = Evaluations._make
    meanwhile = [True]

    def make(*args: Any) -> Workload:
        if meanwhile.pop() if meanwhile else False:
            # the gangs build theirs; meanwhile the inventory stores its own
            made.append(shared.workload("inventory", karta, job, pods, owned=True))
        return real(*args)

    monkeypatch.setattr(Evaluations, "_make", staticmethod(make))
    taken = shared.workload("gangs", karta, job, pods, owned=False)
    assert taken is made[0]  # the gangs' own, made meanwhile, is dropped
    assert len(shared) == 0 and (shared.shared, shared.made) == (1, 1)


def _counting_partitions(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many pods the partition (the workload's own and the sharing check) decides."""
    import workload_map.engine.evaluations as evaluations
    import workload_map.engine.workload as workload

    seen: list[int] = []

    def counted(real: Any) -> Any:
        def partition(obj: Any, items: Any) -> Any:
            seen.append(len(items))
            return real(obj, items)

        return partition

    for module in (evaluations, workload):
        for name in ("partition_pods", "partition_listed"):
            if hasattr(module, name):
                monkeypatch.setattr(module, name, counted(getattr(module, name)))
    return seen


def test_pods_whose_controller_is_the_workload_are_not_partitioned(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen = _counting_partitions(monkeypatch)
    karta, job, pods = _karta("Job"), _job(), [_pod(i) for i in range(3)]
    # the planner first: its evaluation is an owned one, which the inventory takes as it is
    shared = _both()
    planned = shared.workload("gangs", karta, job, pods, owned=False)
    assert seen == [] and planned.excluded == [] and planned.candidate_pods == pods
    assert shared.workload("inventory", karta, job, pods, owned=True) is planned
    # the inventory first: the planner takes its evaluation without a partition
    shared = _both()
    made = shared.workload("inventory", karta, job, pods, owned=True)
    assert shared.workload("gangs", karta, job, pods, owned=False) is made and seen == []
    alone = Workload(karta, job, pods)  # what a partition of them all gives
    assert [g.min_member for g in planned.pod_groups()] == [
        g.min_member for g in alone.pod_groups()
    ]


def test_only_pods_their_controller_does_not_prove_are_partitioned(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen = _counting_partitions(monkeypatch)
    karta, job = _karta("Job"), _job()
    # named by uid but as another kind: the partition reads its labels; without a controller
    # flag the reference proves nothing either
    other_kind = _pod(1)
    other_kind["metadata"]["ownerReferences"][0]["kind"] = "CronJob"
    unflagged = _pod(2)
    del unflagged["metadata"]["ownerReferences"][0]["controller"]
    pods = [_pod(0), other_kind, unflagged]
    shared = _both()
    planned = shared.workload("gangs", karta, job, pods, owned=False)
    assert seen == [2] and planned.excluded == []  # both kept: an owned evaluation
    assert shared.workload("inventory", karta, job, pods, owned=True) is planned
    # a pod the partition leaves out (its label names another Job): the planner's own,
    # partitioned as before
    seen.clear()
    stray = _pod(3, labels={"batch.kubernetes.io/job-name": "other"})
    stray["metadata"]["ownerReferences"][0].update(kind="CronJob")
    pods = [_pod(0), stray]
    shared = _both()
    made = shared.workload("inventory", karta, job, pods, owned=True)
    planned = shared.workload("gangs", karta, job, pods, owned=False)
    assert planned is not made and [n for n, _ in planned.excluded] == ["train-3"]
    assert seen == [1, 2]  # the one not proven, then the planner's own evaluation only
    assert [n for n, _ in Workload(karta, job, pods).excluded] == ["train-3"]


def test_a_link_among_the_pods_is_no_candidate_of_a_planners_evaluation() -> None:
    karta, job = _karta("Job"), _job()
    link = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x", "uid": "uid-x"}}
    pods = [_pod(0), link]
    shared = _both()
    made = shared.workload("inventory", karta, job, pods, owned=True)
    planned = shared.workload("gangs", karta, job, pods, owned=False)
    # as a Workload of its own partitions them: the link only links, and the inventory's
    # owned evaluation (where it counts as given) does not serve
    assert planned is not made and planned.candidate_pods == [pods[0]]
    assert Workload(karta, job, pods).candidate_pods == planned.candidate_pods


def _owned_pod(
    name: str, owner_kind: str, owner_uid: str, labels: dict[str, str]
) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": "ns",
            "uid": f"uid-{name}",
            "labels": labels,
            "ownerReferences": [
                {"kind": owner_kind, "name": "o", "uid": owner_uid, "controller": True}
            ],
        },
    }


@pytest.mark.parametrize("foreign", [False, True])
def test_whether_the_partition_keeps_every_pod_does_not_depend_on_which_pod_comes_first(
    foreign: bool,
) -> None:
    # a list whose first pod the workload does not control (a JobSet's pods, owned by its
    # Jobs) is partitioned whole; one led by a pod it controls is partitioned past those
    from workload_map.engine.evaluations import _keeps_all

    jobset = {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {"name": "js", "namespace": "ns", "uid": "js-uid"},
    }
    mine = {"jobset.sigs.k8s.io/jobset-name": "js"}
    other = {"jobset.sigs.k8s.io/jobset-name": "other" if foreign else "js"}
    by_job = [_owned_pod("a", "Job", "job-uid", mine), _owned_pod("b", "Job", "job-uid", other)]
    direct = _owned_pod("c", "JobSet", "js-uid", {})
    answers = {
        _keeps_all(jobset, "js-uid", pods)
        for pods in ([*by_job, direct], [direct, *by_job], [by_job[0], direct, by_job[1]])
    }
    assert answers == {not foreign}
