"""Workloads whose own controller makes scheduling objects are left alone: we write nothing."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from tests.gangs.cases import OBJECTS, example, karta_of, opted
from workload_map.gangs import plan
from workload_map.gangs.admission import pod_decisions
from workload_map.gangs.naming import dns_label, dns_subdomain, label_value


def _first(kind: str, group: str) -> dict[str, Any]:
    for obj in OBJECTS:
        if obj.get("kind") == kind and obj.get("apiVersion", "").startswith(group + "/"):
            return opted(obj)
    raise AssertionError(f"no fixture of {group} {kind}")


def _volcano_job() -> dict[str, Any]:
    return _first("Job", "batch.volcano.sh")


def _kubeflow() -> dict[str, Any]:
    obj, _ = example("pytorchjob")
    obj = opted(obj)
    obj["spec"].setdefault("runPolicy", {})["schedulingPolicy"] = {"minAvailable": 4}
    return obj


def _spark() -> dict[str, Any]:
    obj = _first("SparkApplication", "sparkoperator.k8s.io")
    obj["spec"]["batchScheduler"] = "volcano"
    return obj


def _kuberay() -> dict[str, Any]:
    obj, _ = example("raycluster")
    obj = opted(obj)
    obj["metadata"].setdefault("labels", {})["ray.io/scheduler-name"] = "volcano"
    return obj


def _job_with_scheduling() -> dict[str, Any]:
    obj = _first("Job", "batch")
    obj["spec"]["parallelism"] = obj["spec"]["completions"] = 4
    obj["spec"]["scheduling"] = {"schedulingPolicy": {"gang": {"minCount": 4}}}
    return obj


def _presetted() -> dict[str, Any]:
    obj, _ = example("jobset")
    obj = opted(obj)
    for rj in obj["spec"]["replicatedJobs"]:
        rj["template"]["spec"]["template"]["spec"]["schedulingGroup"] = {"podGroupName": "theirs"}
    return obj


LEFT_ALONE = {
    "volcano-job": (_volcano_job, "Volcano's job controller"),
    "kubeflow-scheduling-policy": (_kubeflow, "runPolicy.schedulingPolicy"),
    "spark-batch-scheduler": (_spark, "spec.batchScheduler"),
    "kuberay-scheduler-label": (_kuberay, "ray.io/scheduler-name"),
    "job-workload-with-job": (_job_with_scheduling, "WorkloadWithJob"),
    "templates-set-scheduling-group": (_presetted, "spec.schedulingGroup"),
}


@pytest.mark.parametrize("case", sorted(LEFT_ALONE))
def test_left_alone_writes_nothing(case: str) -> None:
    make, why = LEFT_ALONE[case]
    obj = make()
    karta = karta_of(obj)
    result = plan(karta, obj)
    assert not result.handled and result.objects == [] and result.gangs == []
    assert why in result.reason
    # the webhook sets nothing on their pods either
    pod = {"metadata": {"name": "p", "namespace": obj["metadata"]["namespace"]}, "spec": {}}
    (shown,) = pod_decisions(karta, obj, [pod])
    assert shown["schedulingGroup"] is None and shown["labels"] == {} and why in shown["reason"]


def test_same_workloads_without_the_marker_are_handled() -> None:
    """The markers, not the kinds, decide (except Volcano Jobs, always their controller's)."""
    for make in (_kubeflow, _spark, _kuberay, _job_with_scheduling, _presetted):
        obj = make()
        clean = copy.deepcopy(obj)
        clean["spec"].pop("batchScheduler", None)
        clean["spec"].pop("scheduling", None)
        clean["spec"].get("runPolicy", {}).pop("schedulingPolicy", None)
        clean["metadata"].get("labels", {}).pop("ray.io/scheduler-name", None)
        for rj in clean["spec"].get("replicatedJobs", []):
            rj["template"]["spec"]["template"]["spec"].pop("schedulingGroup", None)
        result = plan(karta_of(clean), clean)
        assert result.handled and not result.reason.startswith("left alone"), obj["kind"]


def test_names() -> None:
    assert dns_subdomain("pg-abc-workers") == "pg-abc-workers"
    assert dns_subdomain("pg-ABC-Workers") == "pg-abc-workers"
    cleaned = dns_subdomain("pg-a_b-<x>")
    assert cleaned.startswith("pg-a-b--x-") and len(cleaned) == len("pg-a-b--x-") + 8
    assert dns_subdomain("pg-a_b") != dns_subdomain("pg-a-b")
    long = dns_subdomain("x" * 300)
    assert len(long) == 253 and long != dns_subdomain("x" * 301)
    assert dns_label("Worker.Group") == dns_label("Worker.Group") != "worker.group"
    assert len(dns_label("y" * 80)) == 63
    assert label_value("a" * 63) == "a" * 63
    assert len(label_value("a" * 64)) == 63 and label_value("a" * 64) != label_value("a" * 65)
    assert label_value("Mixed_Case.ok") == "Mixed_Case.ok"
