"""The inventory keeps an informer's already trimmed workload as it is, and trims the others."""

from __future__ import annotations

from typing import Any

from workload_map.cluster.inventory import Inventory
from workload_map.kube.trim import trim_workload


def _job(**meta: Any) -> dict[str, Any]:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "train", "namespace": "ml", "uid": "job-1", **meta},
        "spec": {"parallelism": 2, "template": {"spec": {"containers": [{"name": "c"}]}}},
    }


def test_an_informers_trimmed_workload_is_kept_as_it_is() -> None:
    inventory = Inventory()
    stored = trim_workload(_job(managedFields=[{"manager": "kubectl"}]))
    inventory.apply_workload("ADDED", stored, trimmed=True)
    (entry,) = inventory.entries()
    assert entry.obj is stored and "managedFields" not in entry.obj["metadata"]
    modified = trim_workload(_job(resourceVersion="2"))
    inventory.apply_workload("MODIFIED", modified, trimmed=True)
    (entry,) = inventory.entries()
    assert entry.obj is modified


def test_an_untrimmed_workload_is_trimmed_and_copied() -> None:
    inventory = Inventory()
    raw = _job(managedFields=[{"manager": "kubectl"}])
    inventory.apply_workload("ADDED", raw)
    (entry,) = inventory.entries()
    assert entry.obj is not raw and "managedFields" not in entry.obj["metadata"]
    assert entry.obj["spec"] == raw["spec"]
    assert entry.summary is not None and entry.summary.totals.desired == 2
