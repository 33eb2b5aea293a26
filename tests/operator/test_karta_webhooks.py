"""Admission decisions for Kartas, offline (the API server round trip is in tests/integration)."""

from __future__ import annotations

import copy
from typing import Any

from workload_map.catalog import catalog
from workload_map.operator.karta_webhooks import IMMUTABLE_MESSAGE, mutate, validate_admission

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
