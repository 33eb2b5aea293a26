"""ReferencedObjects: the referenced objects an inventory holds, answered to evaluations, and
which workloads read which object, so that a change re-evaluates exactly those."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from workload_map.cluster.inventory import Inventory
from workload_map.cluster.referenced import ReferencedObjects, referenced_kinds
from workload_map.engine.references import ReferenceRequest, ReferenceUnavailable
from workload_map.model import GVK

GROUP = "trainer.kubeflow.org"
CLUSTER_RT = GVK(GROUP, "v1alpha1", "ClusterTrainingRuntime")
RT = GVK(GROUP, "v1alpha1", "TrainingRuntime")


def runtime(
    name: str, *, namespace: str = "", labels: dict[str, str] | None = None
) -> dict[str, Any]:
    kind = "TrainingRuntime" if namespace else "ClusterTrainingRuntime"
    meta: dict[str, Any] = {"name": name, "labels": labels or {}}
    if namespace:
        meta["namespace"] = namespace
    return {"apiVersion": f"{GROUP}/v1alpha1", "kind": kind, "metadata": meta}


def request(kind: GVK, name: str | None, namespace: str = "ml", **labels: str) -> ReferenceRequest:
    return ReferenceRequest(
        name="runtime",
        kind=kind,
        namespace=namespace,
        object_name=name,
        match_labels=labels or None,
    )


def _book() -> ReferencedObjects:
    return ReferencedObjects(threading.RLock())


def test_a_named_read_finds_namespaced_then_cluster_scoped_objects_and_records_it() -> None:
    book = _book()
    assert book.apply("ADDED", runtime("torch")) == set()
    assert book.apply("ADDED", runtime("local", namespace="ml")) == set()
    reads: set[Any] = set()
    resolve = book.resolver(reads)
    assert resolve(request(CLUSTER_RT, "torch"))["metadata"]["name"] == "torch"
    assert resolve(request(RT, "local"))["metadata"]["namespace"] == "ml"
    assert resolve(request(RT, "local", namespace="other")) is None
    assert reads == {
        (GROUP, "ClusterTrainingRuntime", "torch"),
        (GROUP, "TrainingRuntime", "local"),
    }


def test_a_list_by_labels_matches_labels_and_namespace() -> None:
    book = _book()
    book.apply("ADDED", runtime("a", namespace="ml", labels={"team": "x"}))
    book.apply("ADDED", runtime("b", namespace="ml", labels={"team": "y"}))
    book.apply("ADDED", runtime("c", namespace="other", labels={"team": "x"}))
    reads: set[Any] = set()
    found = book.resolver(reads)(request(RT, None, team="x"))
    assert [o["metadata"]["name"] for o in found] == ["a"]
    assert reads == {(GROUP, "TrainingRuntime", None)}


def test_a_change_names_exactly_the_workloads_that_read_the_object_or_listed_its_kind() -> None:
    book = _book()
    book.apply("ADDED", runtime("torch"))
    book.apply("ADDED", runtime("jax"))
    book.record("tj-a", {(GROUP, "ClusterTrainingRuntime", "torch")})
    book.record("tj-b", {(GROUP, "ClusterTrainingRuntime", "jax")})
    book.record("tj-c", {(GROUP, "ClusterTrainingRuntime", None)})
    version = book.version
    assert book.apply("MODIFIED", runtime("torch")) == {"tj-a", "tj-c"}
    assert book.version == version + 1
    # the readers are forgotten until their next evaluation records its reads again
    assert book.apply("MODIFIED", runtime("torch")) == set()
    assert book.readers((GROUP, "ClusterTrainingRuntime", "jax")) == {"tj-b"}


def test_nothing_changes_for_an_unnamed_object_or_the_deletion_of_an_unknown_one() -> None:
    book = _book()
    book.record("tj-a", {(GROUP, "ClusterTrainingRuntime", "torch")})
    assert book.apply("DELETED", runtime("torch")) is None
    assert (
        book.apply("ADDED", {"apiVersion": f"{GROUP}/v1alpha1", "kind": "X", "metadata": {}})
        is None
    )
    assert book.version == 0
    book.apply("ADDED", runtime("torch"))
    assert book.apply("DELETED", runtime("torch")) == set()  # tj-a was named by the ADDED
    assert book.resolver()(request(CLUSTER_RT, "torch")) is None


def test_an_unavailable_kind_is_raised_to_readers_and_names_them_when_it_changes() -> None:
    book = _book()
    book.record("tj-a", {(GROUP, "ClusterTrainingRuntime", "torch")})
    book.record("tj-b", {(GROUP, "TrainingRuntime", "x")})
    assert book.set_unavailable(GROUP, "ClusterTrainingRuntime", "forbidden", "RBAC") == {"tj-a"}
    assert book.set_unavailable(GROUP, "ClusterTrainingRuntime", "forbidden", "RBAC") is None
    with pytest.raises(ReferenceUnavailable):
        book.resolver()(request(CLUSTER_RT, "torch"))
    book.record("tj-a", {(GROUP, "ClusterTrainingRuntime", "torch")})
    assert book.set_unavailable(GROUP, "ClusterTrainingRuntime", None) == {"tj-a"}
    assert book.resolver()(request(CLUSTER_RT, "torch")) is None


def test_a_new_record_replaces_the_last_and_forget_drops_a_workload() -> None:
    book = _book()
    torch, jax = (
        (GROUP, "ClusterTrainingRuntime", "torch"),
        (GROUP, "ClusterTrainingRuntime", "jax"),
    )
    book.record("tj-a", {torch})
    book.record("tj-a", {jax})  # its runtime was edited in the TrainJob
    assert book.readers(torch) == frozenset()
    assert book.readers(jax) == {"tj-a"}
    book.forget("tj-a")
    assert book.readers(jax) == frozenset()


def test_the_inventory_offers_the_same_kinds() -> None:
    definitions = Inventory().definitions()
    kinds = {(g.group, g.kind) for g in referenced_kinds(definitions)}
    assert {(GROUP, "ClusterTrainingRuntime"), (GROUP, "TrainingRuntime")} <= kinds
