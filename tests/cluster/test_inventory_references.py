"""The inventory (the exporter's and the web view's) answers a definition's references from the
referenced objects it is fed: a TrainJob counts its runtime's pods and GPUs, an edited runtime
re-evaluates exactly the TrainJobs that read it, and a runtime missing, forbidden or of a kind
not served is a problem on each workload that reads it, the workload still evaluated."""

from __future__ import annotations

import copy
from typing import Any

from tests.catalog import trainjobs
from workload_map.cluster.inventory import Inventory, referenced_kinds
from workload_map.model import GVK

GPU = "nvidia.com/gpu"


def runtime(name: str, nodes: int, gpus: int, version: str = "1") -> dict[str, Any]:
    """A ClusterTrainingRuntime of ``nodes`` nodes of ``gpus`` GPUs each."""
    container = {"name": "node", "image": "i", "resources": {"limits": {GPU: str(gpus)}}}
    return trainjobs.runtime(
        name, nodes, container=container, uid=f"rt-{name}", resourceVersion=version
    )


def trainjob(name: str, runtime_name: str, nodes: int | None = None) -> dict[str, Any]:
    """A TrainJob in ``ml`` naming ``runtime_name`` (and overriding its node count)."""
    trainer = {"numNodes": nodes} if nodes is not None else None
    return trainjobs.trainjob(
        name,
        {"name": runtime_name},
        trainer=trainer,
        uid=f"tj-{name}",
        creationTimestamp="2026-11-01T00:00:00Z",
    )


def _inventory() -> Inventory:
    inventory = Inventory()
    inventory.apply_documents(
        [runtime("torch", 3, 2), runtime("jax", 2, 8), trainjob("a", "torch"), trainjob("b", "jax")]
    )
    return inventory


def _numbers(inventory: Inventory, name: str) -> tuple[int, int]:
    entry = inventory.find(GVK("trainer.kubeflow.org", "v1alpha1", "TrainJob"), "ml", name)
    assert entry is not None and entry.summary is not None, entry
    totals = entry.summary.totals
    return totals.desired, totals.requested.get(GPU, 0)


def _entry(inventory: Inventory, name: str) -> Any:
    return inventory.find(GVK("trainer.kubeflow.org", "v1alpha1", "TrainJob"), "ml", name)


def test_the_catalog_references_the_trainer_runtimes() -> None:
    kinds = {(g.group, g.kind) for g in referenced_kinds(Inventory().definitions())}
    assert ("trainer.kubeflow.org", "ClusterTrainingRuntime") in kinds
    assert ("trainer.kubeflow.org", "TrainingRuntime") in kinds
    assert not any(kind in ("Secret", "ConfigMap") for _, kind in kinds)


def test_a_trainjob_counts_its_runtimes_pods_and_gpus() -> None:
    inventory = _inventory()
    assert _numbers(inventory, "a") == (3, 6)
    assert _numbers(inventory, "b") == (2, 16)
    entry = _entry(inventory, "a")
    assert [(r.name, r.object_name, r.found) for r in entry.references] == [("runtime", "torch", 1)]
    assert entry.reference_problems == []
    # the describe view (the web page) binds the same runtime
    assert entry.view["pods"]["desired"] == 3


def test_an_edited_runtime_re_evaluates_only_the_workloads_that_read_it() -> None:
    inventory = _inventory()
    a, b = _entry(inventory, "a"), _entry(inventory, "b")
    generation = inventory.generation
    edited = runtime("torch", 5, 2, version="2")
    inventory.apply_referenced("MODIFIED", edited)
    assert inventory.generation > generation  # readers of the inventory see a change
    assert _numbers(inventory, "a") == (5, 10)
    assert _entry(inventory, "b") is b  # jax did not change: b's evaluation is kept
    assert _entry(inventory, "a") is not a


def test_a_deleted_runtime_is_a_problem_and_the_workload_is_still_evaluated() -> None:
    inventory = _inventory()
    inventory.apply_referenced("DELETED", runtime("torch", 3, 2))
    entry = _entry(inventory, "a")
    assert entry.summary is not None and entry.error is None
    assert _numbers(inventory, "a") == (1, 0)  # what the TrainJob alone says: one node
    assert [(r.found, r.reason) for r in entry.references] == [(0, "missing")]
    assert entry.reference_problems == [
        "reference 'runtime': ClusterTrainingRuntime/torch in namespace ml not found"
    ]
    inventory.apply_referenced("ADDED", runtime("torch", 4, 2, version="3"))
    assert _numbers(inventory, "a") == (4, 8)
    assert _entry(inventory, "a").reference_problems == []


def test_a_kind_that_cannot_be_read_is_reported_as_such_not_as_not_found() -> None:
    inventory = _inventory()
    inventory.reference_unavailable(
        "trainer.kubeflow.org", "ClusterTrainingRuntime", "forbidden", "cannot list"
    )
    entry = _entry(inventory, "a")
    assert [(r.found, r.reason) for r in entry.references] == [(0, "forbidden")]
    assert "cannot list" in entry.reference_problems[0]
    inventory.reference_unavailable("trainer.kubeflow.org", "ClusterTrainingRuntime", None)
    assert _numbers(inventory, "a") == (3, 6)


def test_a_runtime_changed_during_an_evaluation_is_not_memoised_stale() -> None:
    inventory = _inventory()
    inventory.apply_referenced("MODIFIED", runtime("torch", 3, 2, version="2"))
    seen: list[int] = []
    original = inventory.resolver

    def racing(reads: Any = None) -> Any:
        resolve = original(reads)

        def answer(request: Any) -> Any:
            found = copy.deepcopy(resolve(request))
            if not seen:  # the runtime changes while the first evaluation reads it
                seen.append(1)
                inventory.apply_referenced("MODIFIED", runtime("torch", 7, 2, version="3"))
            return found

        return answer

    inventory.resolver = racing  # type: ignore[method-assign]
    first = _numbers(inventory, "a")
    assert first == (3, 6)  # that reader saw the runtime as it was
    assert _numbers(inventory, "a") == (7, 14)  # the next one is not served the stale memo
