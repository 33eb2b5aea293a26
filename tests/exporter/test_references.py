"""The exporter's series of a workload whose definition reads another object: a TrainJob's
pods and GPUs come from its runtime, an edited runtime changes them at the next scrape, and a
missing or unreadable runtime is a ``workloadmap_workload_references`` series with its reason
(and a log line), never a crash or a silent zero."""

from __future__ import annotations

import logging

import pytest

from tests.cluster.test_inventory_references import runtime, trainjob
from tests.exporter.test_collector import exposition, one, samples
from workload_map.cluster.inventory import Inventory
from workload_map.exporter import ExporterHealth, WorkloadCollector

TJ = {"kind": "TrainJob", "namespace": "ml"}


def _collector() -> tuple[Inventory, WorkloadCollector]:
    inventory = Inventory()
    inventory.apply_documents(
        [runtime("torch", 3, 2), trainjob("a", "torch"), trainjob("c", "gone")]
    )
    return inventory, WorkloadCollector(inventory, health=ExporterHealth(last_sync=1.0))


def _pods(text: str, name: str) -> float:
    return one(text, "workloadmap_workload_pods", workload=name, state="desired", **TJ)


def _gpus(text: str, name: str) -> float:
    return one(
        text,
        "workloadmap_workload_resources",
        workload=name,
        resource="nvidia.com/gpu",
        state="requested",
        **TJ,
    )


def test_the_runtime_decides_the_series_and_an_edit_changes_them() -> None:
    inventory, collector = _collector()
    text = exposition(collector)
    assert (_pods(text, "a"), _gpus(text, "a")) == (3, 6)
    assert (
        one(
            text,
            "workloadmap_workload_references",
            workload="a",
            reference="runtime",
            object_kind="ClusterTrainingRuntime",
            object="torch",
            reason="",
        )
        == 1
    )
    assert one(text, "workloadmap_gang_min_members", workload="a", **TJ) == 3
    inventory.apply_referenced("MODIFIED", runtime("torch", 4, 8, version="2"))
    text = exposition(collector)
    assert (_pods(text, "a"), _gpus(text, "a")) == (4, 32)
    assert one(text, "workloadmap_gang_min_members", workload="a", **TJ) == 4


def test_a_missing_runtime_is_a_series_with_its_reason_and_a_log_line(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING, logger="workload_map.inventory"):
        _, collector = _collector()
        text = exposition(collector)
        exposition(collector)  # a second scrape logs nothing new
    found = [
        (labels["object"], labels["reason"], value)
        for labels, value in samples(text, "workloadmap_workload_references")
        if labels["workload"] == "c"
    ]
    assert found == [("gone", "missing", 0.0)]
    # the workload is still exported, with what the TrainJob alone says
    assert one(text, "workloadmap_workload_info", workload="c", **TJ) == 1
    assert _pods(text, "c") == 1
    logged = [r.getMessage() for r in caplog.records if "reference 'runtime'" in r.getMessage()]
    assert logged == [
        "TrainJob ml/c: reference 'runtime': ClusterTrainingRuntime/gone in namespace ml not "
        "found (shown with what the workload alone says)"
    ]


def test_a_forbidden_runtime_kind_is_a_series_with_reason_forbidden() -> None:
    inventory, collector = _collector()
    inventory.reference_unavailable(
        "trainer.kubeflow.org", "ClusterTrainingRuntime", "forbidden", "cannot list"
    )
    text = exposition(collector)
    reasons = {
        labels["workload"]: labels["reason"]
        for labels, _ in samples(text, "workloadmap_workload_references")
    }
    assert reasons == {"a": "forbidden", "c": "forbidden"}
