"""When each workload entered its phase, and its generations (issue 25 item 2, phase history)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.exporter.test_collector import exposition, samples
from workload_map.catalog import catalog
from workload_map.cluster.inventory import Inventory
from workload_map.exporter import ExporterHealth, WorkloadCollector, phase_history
from workload_map.exporter.phase_history import PhaseClock, generations, status_since


def _job(status: dict[str, Any], generation: int = 3) -> dict[str, Any]:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": "train",
            "namespace": "ml",
            "uid": "uid-job-train",
            "generation": generation,
            "creationTimestamp": "2026-01-01T00:00:00Z",
        },
        "spec": {
            "parallelism": 1,
            "template": {"spec": {"containers": [{"name": "c", "image": "x"}]}},
        },
        "status": status,
    }


COMPLETE = {
    "succeeded": 1,
    "conditions": [
        {
            "type": "SuccessCriteriaMet",
            "status": "True",
            "lastTransitionTime": "2026-01-01T01:00:00Z",
        },
        {"type": "Complete", "status": "True", "lastTransitionTime": "2026-01-01T01:00:05Z"},
    ],
}


def test_a_phase_matched_by_conditions_entered_at_their_last_transition() -> None:
    karta = catalog.get("batch", "v1", "Job")
    assert karta is not None
    obj = _job(COMPLETE)
    # the newest transition of the conditions that matched (both matchers of Completed hold)
    assert status_since(karta, obj, "Completed") == 1767229205.0  # 2026-01-01T01:00:05Z
    assert status_since(karta, obj, "Running") is None  # an expression: no status time
    assert status_since(karta, _job({}), "Completed") is None


def test_conditions_are_read_only_for_a_phase_matched_by_conditions(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    karta = catalog.get("batch", "v1", "Job")
    assert karta is not None
    reads: list[int] = []
    real = phase_history._raw_conditions

    def counting(*args: Any) -> Any:
        reads.append(1)
        return real(*args)

    monkeypatch.setattr(phase_history, "_raw_conditions", counting)
    assert status_since(karta, _job(COMPLETE), "Running") is None  # an expression
    assert reads == []  # (a jq evaluation per workload and phase, for nothing)
    assert status_since(karta, _job(COMPLETE), "Completed") == 1767229205.0
    assert reads == [1]


def test_generations_where_the_object_has_them() -> None:
    assert generations(_job({"observedGeneration": 2})) == (3.0, 2.0)
    assert generations({"metadata": {}, "status": {}}) == (None, None)
    assert generations({"metadata": {"generation": True}}) == (None, None)


def test_first_seen_times_come_from_the_clock_and_reset_when_the_phase_changes() -> None:
    now = [100.0]
    clock = PhaseClock(lambda: now[0])
    assert clock.seen("a", ["Running"]) == {"Running": 100.0}
    now[0] = 160.0
    assert clock.seen("a", ["Running"]) == {"Running": 100.0}  # still the same entry
    assert clock.seen("a", ["Running", "Degraded"]) == {"Running": 100.0, "Degraded": 160.0}
    now[0] = 200.0
    assert clock.seen("a", ["Failed"]) == {"Failed": 200.0}
    clock.forget(["b"])
    now[0] = 300.0
    assert clock.seen("a", ["Failed"]) == {"Failed": 300.0}  # gone and back: seen anew


def test_series_from_status_and_from_the_exporter() -> None:
    now = [1000.0]
    inventory = Inventory()
    inventory.apply_documents([_job(COMPLETE)])
    collector = WorkloadCollector(
        inventory, health=ExporterHealth(last_sync=1.0), now=lambda: now[0]
    )
    text = exposition(collector)
    since = samples(text, "workloadmap_workload_phase_since_timestamp_seconds")
    assert [(s["phase"], s["source"], v) for s, v in since] == [
        ("Completed", "status", 1767229205.0)
    ]
    assert [v for _, v in samples(text, "workloadmap_workload_generation")] == [3.0]
    assert samples(text, "workloadmap_workload_observed_generation") == []
    # a running Job (phase by expression): the time this exporter first saw it so
    inventory.apply_documents(
        [_job({"active": 1, "ready": 1, "observedGeneration": 4}, generation=4)]
    )
    now[0] = 2000.0
    text = exposition(collector)
    since = samples(text, "workloadmap_workload_phase_since_timestamp_seconds")
    assert [(s["phase"], s["source"], v) for s, v in since] == [("Running", "exporter", 2000.0)]
    assert [v for _, v in samples(text, "workloadmap_workload_observed_generation")] == [4.0]
    now[0] = 3000.0  # another scrape: the time it entered stays
    assert (
        samples(exposition(collector), "workloadmap_workload_phase_since_timestamp_seconds")[0][1]
        == 2000.0
    )
    assert collector.exposition().decode() == exposition(collector)
