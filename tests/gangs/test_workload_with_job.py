"""Coexistence with the in-tree Job controller under ``WorkloadWithJob`` (gangs/jobs.py).

Which Jobs the v1.37.2 Job controller takes over (``job_scheduling_manager.go``:
``getManagementMode``), that they get nothing of ours (not even for a moment: recognised from the
object once the gate is known, before any write), how the gate is learned (the start-up probe,
a Workload the Job controller made, pods arriving with its group) and what is said (one
``LeftAlone`` event, the decision annotation on the pods). With the gate not known, nothing
changes.
"""

from __future__ import annotations

import argparse
import copy
import json
from dataclasses import replace
from typing import Any

import pytest

from tests.gangs.conftest import StartWatch
from tests.gangs.test_shared_informers import FakeApiClient
from workload_map.gangs import plan
from workload_map.gangs import watcher as watcher_module
from workload_map.gangs.admission import PodAdmitter, json_patch
from workload_map.gangs.cache import ObjectCache
from workload_map.gangs.config import (
    ANNOTATION_DECISION,
    LABEL_NAMESPACE_OPT_IN,
    GangConfig,
)
from workload_map.gangs.controller import GangController
from workload_map.gangs.definitions import KartaIndex
from workload_map.gangs.flags import add_flags, config_from_args
from workload_map.gangs.jobs import (
    GROUP_TEMPLATE_ANNOTATION,
    foreign_group,
    is_job_controllers,
    probe_workload_with_job,
    taken_over,
)
from workload_map.gangs.policy import left_alone
from workload_map.gangs.reconcile import reconcile
from workload_map.gangs.runtime import GangRuntime
from workload_map.kube.errors import ApiError, Forbidden, Invalid
from workload_map.operator.controllers import OperatorConfig

Obj = dict[str, Any]
ON = GangConfig(workload_with_job=True)
OFF = GangConfig()
NS = "ml"
OPTED = {LABEL_NAMESPACE_OPT_IN: "enabled"}
THEIR_GROUP = "train-1x2y3z-train-pgt-0-4a5b6c"
JOB = KartaIndex().resolve("batch/v1", "Job")


def _job(*, gang: int | None = None, owner: bool = False, annotated: bool = False) -> Obj:
    meta: Obj = {
        "name": "train",
        "namespace": NS,
        "uid": "uid-train",
        "resourceVersion": "1",
        "annotations": {"kai.scheduler/batch-min-member": "3"},
    }
    if owner:
        meta["ownerReferences"] = [
            {
                "apiVersion": "jobset.x-k8s.io/v1alpha2",
                "kind": "JobSet",
                "name": "js",
                "uid": "uid-js",
                "controller": True,
            }
        ]
    if annotated:
        meta["annotations"][GROUP_TEMPLATE_ANNOTATION] = "workers"
    spec: Obj = {
        "completionMode": "Indexed",
        "completions": 3,
        "parallelism": 3,
        "template": {"spec": {"containers": [{"name": "main", "image": "x"}]}},
    }
    if gang is not None:
        spec["scheduling"] = {"schedulingPolicy": {"gang": {"minCount": gang}}}
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": meta, "spec": spec}


def _pod(index: int, group: str | None = THEIR_GROUP) -> Obj:
    spec: Obj = {"containers": [{"name": "main", "image": "x"}]}
    if group is not None:
        spec["schedulingGroup"] = {"podGroupName": group}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"train-{index}",
            "namespace": NS,
            "uid": f"uid-pod-{index}",
            "resourceVersion": "1",
            "labels": {"batch.kubernetes.io/job-completion-index": str(index)},
            "annotations": {"batch.kubernetes.io/job-completion-index": str(index)},
            "ownerReferences": [
                {
                    "apiVersion": "batch/v1",
                    "kind": "Job",
                    "name": "train",
                    "uid": "uid-train",
                    "controller": True,
                }
            ],
        },
        "spec": spec,
    }


def _their_workload() -> Obj:
    """The Workload the v1.37.2 Job controller makes (``generateWorkload``)."""
    return {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "Workload",
        "metadata": {
            "name": "train-1x2y3z",
            "namespace": NS,
            "resourceVersion": "1",
            "ownerReferences": [
                {
                    "apiVersion": "batch/v1",
                    "kind": "Job",
                    "name": "train",
                    "uid": "uid-train",
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": {
            "controllerRef": {"apiGroup": "batch", "kind": "Job", "name": "train"},
            "podGroupTemplates": [
                {"name": "train-pgt-0", "schedulingPolicy": {"basic": {}}},
            ],
        },
    }


# -- which Jobs the Job controller takes over ---------------------------------------------------
def test_root_jobs_are_taken_over_with_their_policy_said() -> None:
    basic = taken_over(_job())
    assert basic is not None and "Basic policy" in basic
    gang = taken_over(_job(gang=4))
    assert gang is not None and "spec.scheduling" in gang and "minCount 4" in gang


def test_child_jobs_only_with_the_template_annotation() -> None:
    assert taken_over(_job(owner=True)) is None  # its owner's controller decides
    child = taken_over(_job(owner=True, annotated=True))
    assert child is not None and GROUP_TEMPLATE_ANNOTATION in child


def test_a_parent_whose_job_templates_name_its_workload_template() -> None:
    jobset = {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {"name": "js", "namespace": NS},
        "spec": {
            "replicatedJobs": [
                {
                    "name": "workers",
                    "template": {
                        "metadata": {"annotations": {GROUP_TEMPLATE_ANNOTATION: "workers"}},
                        "spec": {},
                    },
                }
            ]
        },
    }
    assert taken_over(jobset) is not None
    jobset["spec"]["replicatedJobs"][0]["template"]["metadata"] = {}
    assert taken_over(jobset) is None
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {}, "spec": {}}
    assert taken_over(deployment) is None


def test_left_alone_only_where_the_gate_is_known() -> None:
    assert left_alone(_job(), [], OFF) is None  # gate not known: unchanged
    assert left_alone(_job(), [], ON) == taken_over(_job())
    # a template that names a group itself wins (the Job controller leaves that Job too)
    named = [{"schedulingGroup": {"podGroupName": "mine"}}]
    assert left_alone(_job(), named, ON) == "its pod templates already set spec.schedulingGroup"


def test_the_job_controllers_workload_and_its_pods_give_it_away() -> None:
    assert is_job_controllers(_their_workload())
    other = copy.deepcopy(_their_workload())
    other["spec"]["controllerRef"] = {"apiGroup": "jobset.x-k8s.io", "kind": "JobSet", "name": "x"}
    assert not is_job_controllers(other)
    assert foreign_group(_job(), [_pod(0, None), _pod(1)]) == THEIR_GROUP
    assert foreign_group(_job(), [_pod(0, "pg-uid-train-job")]) is None  # a name we give
    assert foreign_group(_job(), [_pod(0, None)]) is None
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"uid": "u"}}
    assert foreign_group(deployment, [_pod(0)]) is None


# -- the plan -------------------------------------------------------------------------------
def test_an_opted_in_job_is_left_alone_and_says_so() -> None:
    for job, words in ((_job(), "Basic policy"), (_job(gang=3), "spec.scheduling")):
        p = plan(JOB, job, [], namespace_labels=OPTED, config=ON)
        assert not p.handled and p.objects == [] and p.gangs == []
        (decision,) = p.decisions
        assert decision.reason == "LeftAlone" and words in decision.message


def test_a_job_not_opted_in_is_not_reported() -> None:
    p = plan(JOB, _job(), [], namespace_labels={}, config=ON)
    assert not p.handled and p.decisions == [] and p.objects == []


def test_without_the_gate_an_opted_in_job_gets_its_gang_as_before() -> None:
    p = plan(JOB, _job(), [], namespace_labels=OPTED, config=OFF)
    assert p.handled and {o["kind"] for o in p.objects} == {"Workload", "PodGroup"}


# -- the webhook ----------------------------------------------------------------------------
def _admitter(config: GangConfig) -> PodAdmitter:
    cache = ObjectCache()
    cache.upsert(_job())
    cache.upsert(
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS, "labels": OPTED}}
    )
    return PodAdmitter(cache, config=config, miss_wait=0.0)


def test_the_job_controllers_pod_gets_the_decision_annotation_only() -> None:
    pod = _pod(0)
    decision = _admitter(ON).decide(pod, NS)
    assert decision.scheduling_group is None and decision.labels == {}
    note = json.loads(decision.annotations[ANNOTATION_DECISION])
    assert note["gate"] == "WorkloadWithJob" and note["podGroup"] == THEIR_GROUP
    assert "Basic policy" in note["leftAlone"]
    ops = json_patch(pod, decision)
    assert [op["path"] for op in ops] == [
        f"/metadata/annotations/{ANNOTATION_DECISION.replace('/', '~1')}"
    ]


def test_a_pod_with_the_job_controllers_group_before_the_gate_is_known() -> None:
    decision = _admitter(OFF).decide(_pod(0), NS)
    assert decision.scheduling_group is None
    assert THEIR_GROUP in json.loads(decision.annotations[ANNOTATION_DECISION])["leftAlone"]
    # a pod without a group still joins ours: the gate is not assumed
    plain = _admitter(OFF).decide(_pod(1, None), NS)
    assert plain.scheduling_group and ANNOTATION_DECISION not in plain.annotations


# -- reconcile ------------------------------------------------------------------------------
def test_their_workload_with_nothing_of_ours_is_said_once() -> None:
    p = plan(JOB, _job(), [], namespace_labels=OPTED, config=ON)
    actions = reconcile(p, [], [], foreign_workload=_their_workload())
    assert actions.writes == 0
    assert [d.reason for d in actions.decisions] == ["LeftAlone"]


def test_ours_made_before_their_workload_was_seen_are_removed() -> None:
    made = plan(JOB, _job(), [], namespace_labels=OPTED, config=OFF).objects
    actions = reconcile(
        plan(JOB, _job(), [], namespace_labels=OPTED, config=OFF),
        [],
        made,
        foreign_workload=_their_workload(),
    )
    assert sorted(o["kind"] for o in actions.delete) == ["PodGroup", "Workload"]
    assert not actions.create and "WorkloadWithJob" in actions.decisions[-1].message


# -- the controller -------------------------------------------------------------------------
class _Api:
    def __init__(self) -> None:
        self.writes: list[tuple[str, str]] = []

    def request(self, method: str, path: str, *args: Any, **kw: Any) -> Any:
        self.writes.append((method, path))
        return {}

    def merge_patch(self, path: str, patch: Any, manager: str = "") -> Any:
        self.writes.append(("PATCH", path))
        return {}


class _Events:
    def __init__(self) -> None:
        self.said: list[tuple[str, str]] = []

    def normal(self, obj: Obj, reason: str, action: str, message: str) -> None:
        self.said.append((reason, message))

    warning = normal


class _Ctx:
    def __init__(self) -> None:
        self.api = _Api()
        self.events = _Events()


def _controller(config: GangConfig, mode: str = "auto") -> tuple[GangController, _Ctx]:
    runtime = GangRuntime(config, miss_wait=0.0)
    args = argparse.Namespace(
        gang_missed_member_mode="lower-minimum",
        gang_resync_period=300.0,
        gang_workers=1,
        gang_workload_with_job=mode,
    )
    controller = GangController(runtime, OperatorConfig(args=args, namespace="wlmap", identity="t"))
    ctx = _Ctx()
    controller.ctx = ctx  # type: ignore[assignment]
    runtime.listeners.append(controller.on_event)
    runtime.on_object(
        "ADDED",
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS, "labels": OPTED}},
    )
    runtime.on_object("ADDED", _job())
    return controller, ctx


KEY = f"batch|Job|{NS}|train"


def test_with_the_gate_known_a_new_job_gets_no_write_ever() -> None:
    controller, ctx = _controller(ON)
    controller.reconcile_key(KEY)  # the Job seen before the Job controller acted
    for i in range(3):
        controller.runtime.on_object("ADDED", _pod(i))
    controller._on_scheduling_object("ADDED", _their_workload())
    controller.reconcile_key(KEY)
    assert ctx.api.writes == []
    assert [r for r, _ in ctx.events.said] == ["LeftAlone"]


def test_without_the_gate_known_a_job_gets_its_gang_as_before() -> None:
    controller, ctx = _controller(OFF, mode="off")
    controller.reconcile_key(KEY)
    assert [m for m, _ in ctx.api.writes] == ["POST", "POST"]


def test_the_job_controllers_workload_teaches_the_gate() -> None:
    controller, _ = _controller(OFF)
    controller._on_scheduling_object("ADDED", _their_workload())
    assert controller.runtime.config.workload_with_job
    assert controller.runtime.admitter.config.workload_with_job
    stubborn, _ = _controller(OFF, mode="off")
    stubborn._on_scheduling_object("ADDED", _their_workload())
    assert not stubborn.runtime.config.workload_with_job


def test_pods_with_the_job_controllers_group_remove_ours_and_teach_the_gate() -> None:
    controller, ctx = _controller(OFF)
    controller.reconcile_key(KEY)  # ours, made before anything told us
    made = [
        {
            **o,
            "metadata": {**o["metadata"], "resourceVersion": "1"},
        }
        for o in plan(JOB, _job(), [], namespace_labels=OPTED, config=OFF).objects
    ]
    for obj in made:
        controller._on_scheduling_object("ADDED", obj)
    for i in range(3):
        controller.runtime.on_object("ADDED", _pod(i))
    ctx.api.writes.clear()
    controller.reconcile_key(KEY)
    assert sorted(m for m, _ in ctx.api.writes) == ["DELETE", "DELETE"]
    assert any(THEIR_GROUP in m for r, m in ctx.events.said if r == "LeftAlone")
    assert controller.runtime.config.workload_with_job


# -- flags and the probe --------------------------------------------------------------------
def test_the_flag() -> None:
    parser = argparse.ArgumentParser()
    add_flags(parser)
    assert config_from_args(parser.parse_args([])).workload_with_job is False
    on = parser.parse_args(["--gang-workload-with-job=on"])
    assert config_from_args(on).workload_with_job is True
    runtime = GangRuntime(replace(OFF, workload_with_job=True))
    assert runtime.workload_with_job and not runtime.learn_workload_with_job("again")


class _ProbeApi:
    def __init__(self, answer: Any) -> None:
        self.answer = answer
        self.sent: list[Any] = []

    def request(self, method: str, path: str, body: Any, query: Any = None) -> Any:
        self.sent.append((method, path, body, query))
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer(body)


@pytest.mark.parametrize(
    ("answer", "state"),
    [
        (lambda body: body, "on"),
        (lambda body: {**body, "spec": {"template": body["spec"]["template"]}}, "off"),
        (Invalid(422, "spec.scheduling: Forbidden"), "off"),
        (Forbidden(403, "jobs is forbidden"), "error"),
        (ApiError(500, "boom"), "error"),
    ],
)
def test_the_probe_is_a_dry_run_that_the_field_survives(answer: Any, state: str) -> None:
    api = _ProbeApi(answer)
    assert probe_workload_with_job(api, "wlmap")[0] == state
    ((method, path, body, query),) = api.sent
    assert (method, path, query) == (
        "POST",
        "/apis/batch/v1/namespaces/wlmap/jobs",
        [("dryRun", "All")],
    )
    assert body["spec"]["scheduling"] == {"schedulingPolicy": {"gang": {"minCount": 1}}}


# -- the watcher: the probe before any workload is cached ----------------------------------------
@pytest.mark.parametrize(("state", "known"), [("on", True), ("off", False), ("error", False)])
def test_the_watcher_probes_before_it_caches_a_workload(
    monkeypatch: pytest.MonkeyPatch, gang_watcher: StartWatch, state: str, known: bool
) -> None:
    cached: list[bool] = []

    def probe(api: Any, namespace: str) -> tuple[str, str]:
        cached.append(len(list(runtime.cache)) == 0)
        assert namespace == "wlmap"
        return state, "probed"

    monkeypatch.setattr(watcher_module, "probe_workload_with_job", probe)
    rig = gang_watcher(FakeApiClient({}), begin=False)
    runtime = rig.runtime
    rig.watcher.start(rig.ctx)
    assert cached == [True]  # once, with nothing cached yet
    assert runtime.config.workload_with_job is known
    assert runtime.admitter.config.workload_with_job is known


def test_a_fixed_flag_is_not_probed(
    monkeypatch: pytest.MonkeyPatch, gang_watcher: StartWatch
) -> None:
    monkeypatch.setattr(
        watcher_module, "probe_workload_with_job", lambda api, ns: pytest.fail("probed")
    )
    rig = gang_watcher(FakeApiClient({}), begin=False)
    rig.ctx.config.args.gang_workload_with_job = "off"
    rig.watcher.start(rig.ctx)
    assert not rig.runtime.config.workload_with_job
