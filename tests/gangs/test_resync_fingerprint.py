"""A periodic resync stops at a settled workload's fingerprint while its inputs are the same,
and plans it again once one of them changes: a pod's or an object of ours' resourceVersion,
the namespace's labels. The order in which the pods are read is no input."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from tests.gangs import test_shared_evaluations as fleet
from workload_map.gangs import controller as controller_module
from workload_map.gangs import planner
from workload_map.gangs.config import LABEL_NAMESPACE_OPT_IN
from workload_map.gangs.controller import GangController
from workload_map.kube.trim import trim_pod

JOB, JOBSET = "batch|Job|ml|train", "jobset.x-k8s.io|JobSet|ml|js"


def _settled(monkeypatch: pytest.MonkeyPatch) -> tuple[GangController, Any, list[str]]:
    """The fleet's controller once its objects exist (what it created, fed back as its
    informer would), and the names of the workloads each later resync plans."""
    _, controller, ctx = fleet._rooms(None)
    fleet._resync(controller)
    for method, _, body in ctx.api.writes:
        if method == "POST":
            made = copy.deepcopy(body)
            made["metadata"]["resourceVersion"] = "1"
            controller._on_scheduling_object("ADDED", made)
    ctx.api.writes.clear()
    planned: list[str] = []

    def plan(karta: Any, workload: Any, *args: Any, **kwargs: Any) -> Any:
        planned.append(workload["metadata"]["name"])
        return planner.plan(karta, workload, *args, **kwargs)

    monkeypatch.setattr(controller_module, "plan", plan)  # the name the controller calls
    fleet._resync(controller)
    assert sorted(planned) == ["js", "train"] and ctx.api.writes == []
    assert sorted(controller._settled) == [JOB, JOBSET]
    planned.clear()
    return controller, ctx, planned


def test_unchanged_inputs_stop_at_the_fingerprint(monkeypatch: pytest.MonkeyPatch) -> None:
    controller, ctx, planned = _settled(monkeypatch)
    fleet._resync(controller)
    fleet._resync(controller)
    assert planned == [] and ctx.api.writes == []


def test_the_pods_order_is_no_input() -> None:
    _, controller, _ = fleet._rooms(None)
    found = controller.inputs(JOBSET)
    assert found is not None and len(found[2]) == 4
    backwards = (*found[:2], found[2][::-1], *found[3:])
    assert controller._fingerprint(backwards, 1, ()) == controller._fingerprint(found, 1, ())


def test_a_pods_new_version_replans_its_workload(monkeypatch: pytest.MonkeyPatch) -> None:
    controller, ctx, planned = _settled(monkeypatch)
    pod = next(p for p in fleet._fleet()[2] if p["metadata"]["name"] == "js-b-0-1")
    pod["metadata"]["resourceVersion"] = "2"
    controller.runtime.on_object("MODIFIED", trim_pod(pod))
    fleet._resync(controller)
    assert planned == ["js"] and ctx.api.writes == []
    planned.clear()
    fleet._resync(controller)  # settled again
    assert planned == []


def test_a_new_version_of_an_object_of_ours_replans_its_workload(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    controller, _, planned = _settled(monkeypatch)
    uid = "uid-train"
    ident, ours = next(iter(sorted(controller._ours[uid].items())))
    newer = copy.deepcopy(ours)
    newer["metadata"]["resourceVersion"] = "2"
    controller._on_scheduling_object("MODIFIED", newer)
    assert controller._ours[uid][ident] is newer
    fleet._resync(controller)
    assert planned == ["train"]


def test_a_namespace_label_replans_its_workloads(monkeypatch: pytest.MonkeyPatch) -> None:
    controller, _, planned = _settled(monkeypatch)
    namespace = {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": fleet.NS, "labels": {LABEL_NAMESPACE_OPT_IN: "enabled", "a": "b"}},
    }
    controller.runtime.on_object("MODIFIED", namespace)
    fleet._resync(controller)
    assert sorted(planned) == ["js", "train"]
