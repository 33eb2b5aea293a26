"""Admission decisions for Kartas, offline (the API server round trip is in tests/integration)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from workload_map.catalog import catalog
from workload_map.operator.karta_webhooks import (
    IMMUTABLE_MESSAGE,
    GvkIndex,
    mutate,
    validate_admission,
)

JOB = next(o for o in catalog.as_cluster_objects() if o["metadata"]["name"] == "batch-job-v1")


def fresh(name: str = "job", labels: dict[str, str] | None = None) -> dict[str, Any]:
    obj = copy.deepcopy(JOB)
    obj["metadata"] = {"name": name}
    if labels is not None:
        obj["metadata"]["labels"] = labels
    return obj


def req(op: str, obj: dict[str, Any], old: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "uid": "u",
        "operation": op,
        "object": obj,
        "oldObject": old,
        "name": obj["metadata"]["name"],
    }


def test_mutate_adds_labels_on_create_only() -> None:
    out = mutate(req("CREATE", fresh()))
    assert out["allowed"] is True
    assert out["patch"] == [
        {
            "op": "add",
            "path": "/metadata/labels",
            "value": {
                "run.ai/karta-group": "batch",
                "run.ai/karta-version": "v1",
                "run.ai/karta-kind": "Job",
            },
        }
    ]
    out = mutate(req("CREATE", fresh(labels={"a": "b", "run.ai/karta-kind": "Wrong"})))
    assert {"op": "replace", "path": "/metadata/labels/run.ai~1karta-kind", "value": "Job"} in out[
        "patch"
    ]
    assert {"op": "add", "path": "/metadata/labels/run.ai~1karta-group", "value": "batch"} in out[
        "patch"
    ]
    assert "patch" not in mutate(req("UPDATE", fresh(), fresh()))


def test_validate_rejects_invalid_definitions_with_every_finding() -> None:
    bad = fresh()
    bad["spec"]["structureDefinition"]["childComponents"] = [{"name": "a"}, {"name": "b"}]
    out = validate_admission(req("CREATE", bad), lambda: [])
    assert out["allowed"] is False
    msg = out["status"]["message"]
    assert msg.startswith("the Karta definition is invalid:")
    assert "childComponents[0].ownerRef" in msg and "childComponents[1].ownerRef" in msg


def test_one_karta_per_gvk_but_other_versions_allowed() -> None:
    existing = [fresh("first")]
    out = validate_admission(req("CREATE", fresh("second")), lambda: existing)
    assert out["allowed"] is False
    assert out["status"]["message"] == (
        'a Karta for group "batch" version "v1" kind "Job" already exists (first); '
        "only one Karta per group/version/kind is allowed"
    )
    other = fresh("v2")
    other["spec"]["structureDefinition"]["rootComponent"]["kind"]["version"] = "v2"
    assert validate_admission(req("CREATE", other), lambda: existing)["allowed"] is True
    # updating the one that exists is not a clash with itself
    labels = {
        "run.ai/karta-group": "batch",
        "run.ai/karta-version": "v1",
        "run.ai/karta-kind": "Job",
    }
    same = fresh("first", labels)
    assert validate_admission(req("UPDATE", same, fresh("first", labels)), lambda: existing)[
        "allowed"
    ]


def test_root_gvk_immutable_and_labels_managed() -> None:
    labels = {
        "run.ai/karta-group": "batch",
        "run.ai/karta-version": "v1",
        "run.ai/karta-kind": "Job",
    }
    old = fresh("k", labels)
    new = fresh("k", labels)
    new["spec"]["structureDefinition"]["rootComponent"]["kind"]["version"] = "v2"
    out = validate_admission(req("UPDATE", new, old), lambda: [old])
    assert IMMUTABLE_MESSAGE in out["status"]["message"]
    edited = fresh("k", {**labels, "run.ai/karta-kind": "Pod"})
    out = validate_admission(req("UPDATE", edited, old), lambda: [old])
    assert out["status"]["message"] == (
        'label "run.ai/karta-kind" is managed by the operator and must equal "Job"; '
        "it cannot be edited or removed"
    )
    removed = fresh("k", {"run.ai/karta-group": "batch", "run.ai/karta-version": "v1"})
    assert validate_admission(req("UPDATE", removed, old), lambda: [old])["allowed"] is False


def test_delete_always_allowed() -> None:
    bad = fresh()
    bad["spec"] = {}
    assert validate_admission(req("DELETE", bad), lambda: [fresh("x")]) == {"allowed": True}


def test_an_old_clash_does_not_block_updates() -> None:
    labels = {
        "run.ai/karta-group": "batch",
        "run.ai/karta-version": "v1",
        "run.ai/karta-kind": "Job",
    }
    mine, theirs = fresh("mine", labels), fresh("theirs", labels)  # both predate the webhook
    edited = fresh("mine", {**labels, "team": "ml"})
    assert (
        validate_admission(req("UPDATE", edited, mine), lambda: [mine, theirs])["allowed"] is True
    )
    assert (
        validate_admission(req("CREATE", fresh("third")), lambda: [mine, theirs])["allowed"]
        is False
    )


def _retarget(obj: dict[str, Any], group: str) -> dict[str, Any]:
    obj["spec"]["structureDefinition"]["rootComponent"]["kind"]["group"] = group
    return obj


def test_gvk_index_follows_the_cache_events() -> None:
    index = GvkIndex()
    first, other = fresh("first"), _retarget(fresh("other"), "example.com")
    for obj in (first, other):
        index.on_event("ADDED", obj)
    assert index.holders(("batch", "v1", "Job")) == ["first"]
    # a changed root GVK moves the name (the webhook forbids it, the index must not care)
    index.on_event("MODIFIED", _retarget(copy.deepcopy(first), "moved.example.com"))
    assert index.holders(("batch", "v1", "Job")) == []
    assert index.holders(("moved.example.com", "v1", "Job")) == ["first"]
    # a Karta being deleted no longer holds its GVK; a DELETED event removes it for good
    deleting = copy.deepcopy(other)
    deleting["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    index.on_event("MODIFIED", deleting)
    assert index.holders(("example.com", "v1", "Job")) == []
    index.on_event("ADDED", other)
    index.on_event("DELETED", other)
    assert index.holders(("example.com", "v1", "Job")) == []


def test_validate_with_the_index_decides_as_the_scan_does() -> None:
    existing = [fresh("first"), _retarget(fresh("elsewhere"), "example.com")]
    deleting = _retarget(fresh("going"), "going.example.com")
    deleting["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    existing.append(deleting)
    index = GvkIndex()
    for obj in existing:
        index.on_event("ADDED", obj)
    cases = [
        fresh("second"),  # clashes with "first"
        _retarget(fresh("new"), "new.example.com"),  # no clash
        _retarget(fresh("again"), "going.example.com"),  # the clash is being deleted
        fresh("first"),  # itself
    ]
    for obj in cases:
        scanned = validate_admission(req("CREATE", obj), lambda: existing)
        indexed = validate_admission(
            req("CREATE", obj), lambda: pytest.fail("the index must answer"), index=index
        )
        assert indexed == scanned, obj["metadata"]["name"]
    assert (
        validate_admission(req("CREATE", fresh("second")), lambda: [], index=index)["allowed"]
        is False
    )
