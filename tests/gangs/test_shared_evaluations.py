"""The operator's two rooms read one evaluation per workload (engine/evaluations, issue 21 item
4): the operator's context hands one to the gang controller and to the exporter's inventory,
and what either does with it is what it did alone: the same writes and events of the gang
controller, the same summaries of the inventory, whichever room evaluates first."""

from __future__ import annotations

import argparse
from typing import Any

import pytest

from tests.gangs.test_shared_informers import FakeApiClient, _FakeApi, _resources
from workload_map.cluster import feed
from workload_map.cluster.inventory import Inventory
from workload_map.engine.evaluations import Evaluations
from workload_map.exporter import settings as exporter_settings
from workload_map.exporter.operator import WorkloadMetrics
from workload_map.gangs.config import LABEL_NAMESPACE_OPT_IN, GangConfig
from workload_map.gangs.controller import GangController
from workload_map.gangs.definitions import has_gangs
from workload_map.gangs.runtime import GangRuntime
from workload_map.kube.cache import InformerSet
from workload_map.kube.trim import trim_intermediate, trim_pod, trim_workload
from workload_map.operator.controllers import OperatorConfig
from workload_map.operator.main import SharedContext

Obj = dict[str, Any]
NS = "ml"


def _ref(obj: Obj) -> Obj:
    m = obj["metadata"]
    return {
        "apiVersion": obj["apiVersion"],
        "kind": obj["kind"],
        "name": m["name"],
        "uid": m["uid"],
        "controller": True,
    }


def _pod(name: str, owner: Obj, labels: dict[str, str], group: str | None, node: str) -> Obj:
    spec: Obj = {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}
    if node:
        spec["nodeName"] = node
    if group is not None:
        spec["schedulingGroup"] = {"podGroupName": group}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": NS,
            "uid": f"uid-{name}",
            "resourceVersion": "1",
            "labels": labels,
            "ownerReferences": [_ref(owner)],
        },
        "spec": spec,
        "status": {"phase": "Running" if node else "Pending"},
    }


def _fleet() -> tuple[list[Obj], list[Obj], list[Obj]]:
    """(workloads, links, pods): an Indexed Job gang of 3 whose pods missed the webhook, a
    JobSet gang of 4 through two Jobs (admitted), a Deployment (no gangs) through a ReplicaSet."""
    template = {"spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}}
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": "train",
            "namespace": NS,
            "uid": "uid-train",
            "resourceVersion": "1",
            "annotations": {"kai.scheduler/batch-min-member": "3"},
        },
        "spec": {
            "completionMode": "Indexed",
            "completions": 3,
            "parallelism": 3,
            "template": template,
        },
        "status": {"active": 3},
    }
    js = {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {"name": "js", "namespace": NS, "uid": "uid-js", "resourceVersion": "1"},
        "spec": {
            "replicatedJobs": [
                {
                    "name": r,
                    "replicas": 1,
                    "template": {
                        "spec": {"parallelism": 2, "completions": 2, "template": template}
                    },
                }
                for r in ("a", "b")
            ]
        },
    }
    dep = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": NS, "uid": "uid-web", "resourceVersion": "1"},
        "spec": {"replicas": 2, "template": template},
        "status": {"replicas": 2},
    }
    links: list[Obj] = []
    pods = [_pod(f"train-{i}", job, {}, None, "n1" if i else "") for i in range(3)]
    for r in ("a", "b"):
        labels = {
            "jobset.sigs.k8s.io/jobset-name": "js",
            "jobset.sigs.k8s.io/replicatedjob-name": r,
        }
        child = {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {
                "name": f"js-{r}-0",
                "namespace": NS,
                "uid": f"uid-js-{r}",
                "resourceVersion": "1",
                "labels": labels,
                "ownerReferences": [_ref(js)],
            },
            "spec": {"parallelism": 2, "completions": 2, "template": template},
        }
        links.append(child)
        pods += [_pod(f"js-{r}-0-{k}", child, labels, "pg-uid-js-jobset", "n1") for k in range(2)]
    rs = {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {
            "name": "web-1",
            "namespace": NS,
            "uid": "uid-web-1",
            "resourceVersion": "1",
            "ownerReferences": [_ref(dep)],
        },
    }
    pods += [_pod(f"web-1-{k}", rs, {}, None, "n1") for k in range(2)]
    return [job, js, dep], [*links, rs], pods


class _Api:
    def __init__(self) -> None:
        self.writes: list[tuple[str, str, Any]] = []

    def request(self, method: str, path: str, body: Any = None, **kw: Any) -> Any:
        self.writes.append((method, path, body))
        return {}

    def merge_patch(self, path: str, patch: Any, manager: str = "") -> Any:
        self.writes.append(("PATCH", path, patch))
        return {}


class _Events:
    def __init__(self) -> None:
        self.said: list[tuple[str, str, str]] = []

    def normal(self, obj: Obj, reason: str, action: str, message: str) -> None:
        self.said.append((obj["metadata"]["name"], reason, message))

    warning = normal


class _Ctx:
    def __init__(self) -> None:
        self.api = _Api()
        self.events = _Events()


def _rooms(shared: Evaluations | None) -> tuple[Inventory, GangController, _Ctx]:
    """Both rooms fed the same objects, one store per kind (trimmed once, as the operator's
    InformerSet does), as the operator wires them; sharing ``shared`` if given."""
    workloads, links, pods = _fleet()
    inventory = Inventory()
    runtime = GangRuntime(GangConfig(), miss_wait=0.0)
    args = argparse.Namespace(
        gang_missed_member_mode="lower-minimum", gang_resync_period=300.0, gang_workers=1
    )
    controller = GangController(runtime, OperatorConfig(args=args, namespace="w", identity="t"))
    ctx = _Ctx()
    controller.ctx = ctx  # type: ignore[assignment]
    if shared is not None:
        inventory.share_evaluations(shared)
        runtime.evaluations = shared
        shared.join("gangs", has_gangs)  # as GangController.start does with the operator's
    runtime.listeners.append(controller.on_event)
    runtime.on_object(
        "ADDED",
        {
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": {"name": NS, "labels": {LABEL_NAMESPACE_OPT_IN: "enabled"}},
        },
    )
    for obj in workloads:
        kept = (trim_workload | trim_intermediate)(obj)
        inventory.apply_workload("ADDED", kept, trimmed=True)
        if obj["kind"] != "Deployment":  # the gang room watches the kinds with gangs only
            runtime.on_object("ADDED", kept)
    for obj in links:
        kept = (trim_workload | trim_intermediate)(obj)
        if obj["kind"] == "Job":  # a Job is a workload kind for both rooms
            inventory.apply_workload("ADDED", kept, trimmed=True)
        else:
            inventory.apply_intermediate("ADDED", kept)
        runtime.on_object("ADDED", kept)
    for obj in pods:
        kept = trim_pod(obj)
        inventory.apply_pod("ADDED", kept)
        runtime.on_object("ADDED", kept)
    return inventory, controller, ctx


def _resync(controller: GangController) -> None:
    for key in sorted(controller._by_uid.values()):
        controller.reconcile_key(key)


@pytest.mark.parametrize("gangs_first", [False, True])
def test_both_rooms_do_with_one_evaluation_what_they_did_alone(gangs_first: bool) -> None:
    alone_inventory, alone_controller, alone_ctx = _rooms(None)
    alone_entries = alone_inventory.entries()
    _resync(alone_controller)

    shared = Evaluations()
    inventory, controller, ctx = _rooms(shared)
    if gangs_first:
        _resync(controller)
        entries = inventory.entries()
    else:
        entries = inventory.entries()
        _resync(controller)

    # the gang controller: the same writes and events (a Job gang created, lowered by the
    # pods that missed the webhook; the JobSet's gang created)
    assert ctx.api.writes == alone_ctx.api.writes
    assert ctx.events.said == alone_ctx.events.said
    assert len(ctx.api.writes) >= 2 and any("missed" in str(w) for w in ctx.api.writes)
    # the inventory: the same summaries
    assert [(e.name, e.summary) for e in entries] == [(e.name, e.summary) for e in alone_entries]
    assert all(e.summary is not None and e.error is None for e in entries if e.top_level)
    # the Job and the JobSet were evaluated once for both rooms, and nothing is kept after
    assert shared.shared == 2 and len(shared) == 0


def test_the_operator_hands_one_evaluation_to_both_rooms(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(feed, "discover", lambda transport: _resources())
    informers = InformerSet(FakeApiClient({}))
    parser = argparse.ArgumentParser()
    exporter_settings.add_flags(parser)
    args = parser.parse_args(["--workload-metrics-bind-address", "127.0.0.1:0"])
    args.gang_missed_member_mode, args.gang_resync_period, args.gang_workers = (
        "lower-minimum",
        300.0,
        1,
    )
    cfg = OperatorConfig(args=args, namespace="wlmap", identity="t")
    api: Any = _FakeApi()
    ctx = SharedContext(config=cfg, api=api, informers=informers, events=None)  # type: ignore[arg-type]
    runtime = GangRuntime(GangConfig(), miss_wait=0.0)
    controller = GangController(runtime, cfg)
    metrics = WorkloadMetrics(cfg)
    try:
        controller.start(ctx)
        metrics.start(ctx)
        assert runtime.evaluations is ctx.evaluations
        assert metrics.service is not None
        inventory = metrics.service.inventory
        assert inventory._shared is ctx.evaluations  # what the exporter evaluates through
    finally:
        ctx.stopping.set()
        controller.stop()
        metrics.stop()
        informers.stop()
