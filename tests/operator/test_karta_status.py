"""The Karta controller's pure part: conditions, labels, messages (REFERENCE.md §5)."""

from __future__ import annotations

import copy
from typing import Any

from workload_map.catalog import catalog
from workload_map.catalog.stamps import (
    CATALOG_DIGEST_ANNOTATION,
    CATALOG_VERSION_ANNOTATION,
    catalog_digest,
    derived_labels,
)
from workload_map.operator.karta_status import (
    ClusterTypes,
    CrdInfo,
    conditions_equal,
    evaluate,
    merge_conditions,
    trim_crd,
)

JOB = catalog.as_cluster_objects()
BATCH_JOB = next(o for o in JOB if o["metadata"]["name"] == "batch-job-v1")
JOBSET = next(o for o in JOB if o["metadata"]["name"] == "jobset-x-k8s-io-jobset-v1alpha2")


def by_type(conditions: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {c["type"]: c for c in conditions}


def test_builtin_kind_is_found_and_ready() -> None:
    types = ClusterTypes(builtins={("batch", "v1", "Job")})
    result = evaluate(BATCH_JOB, types)
    c = by_type(result.conditions)
    assert c["Validated"]["status"] == "True" and c["Validated"]["reason"] == "ValidationSucceeded"
    assert c["CRDExists"] == {
        "type": "CRDExists",
        "status": "True",
        "reason": "CRDFound",
        "message": "batch/v1, Kind=Job is a built-in type",
    }
    assert c["Ready"]["status"] == "True"
    assert c["SchemaCompatible"]["status"] == "Unknown"
    assert result.labels == {
        "run.ai/karta-group": "batch",
        "run.ai/karta-version": "v1",
        "run.ai/karta-kind": "Job",
    }
    assert result.warnings == []


def test_missing_crd_has_the_reference_message_and_a_warning() -> None:
    result = evaluate(JOBSET, ClusterTypes())
    c = by_type(result.conditions)
    assert c["CRDExists"]["status"] == "False"
    assert c["CRDExists"]["reason"] == "CRDNotFound"
    assert c["CRDExists"]["message"] == (
        "CRD for jobset.x-k8s.io/JobSet not found or does not serve version v1alpha2"
    )
    assert c["Ready"] == {
        "type": "Ready",
        "status": "False",
        "reason": "NotReady",
        "message": "Validated and CRDExists must both be True",
    }
    assert ("CRDExists", "CRDNotFound", "CheckingCRD", c["CRDExists"]["message"]) in result.warnings


def test_crd_serving_another_version_is_not_found() -> None:
    crd = CrdInfo("jobsets.jobset.x-k8s.io", "jobset.x-k8s.io", "JobSet", ("v1",))
    c = by_type(
        evaluate(JOBSET, ClusterTypes(crds={("jobset.x-k8s.io", "JobSet"): crd})).conditions
    )
    assert c["CRDExists"]["status"] == "False"
    crd = CrdInfo("jobsets.jobset.x-k8s.io", "jobset.x-k8s.io", "JobSet", ("v1", "v1alpha2"))
    c = by_type(
        evaluate(JOBSET, ClusterTypes(crds={("jobset.x-k8s.io", "JobSet"): crd})).conditions
    )
    assert c["CRDExists"]["message"] == "CRD jobsets.jobset.x-k8s.io serves version v1alpha2"
    assert c["SchemaCompatible"]["reason"] == "NoSchema"  # no full_crd reader given


def test_validation_lists_every_finding_with_its_path() -> None:
    bad = copy.deepcopy(BATCH_JOB)
    root = bad["spec"]["structureDefinition"]["rootComponent"]
    root["statusDefinition"]["phaseDefinition"] = {"path": ".x[["}
    bad["spec"]["structureDefinition"]["childComponents"] = [{"name": "orphan"}]
    result = evaluate(bad, ClusterTypes(builtins={("batch", "v1", "Job")}))
    v = by_type(result.conditions)["Validated"]
    assert v["status"] == "False" and v["reason"] == "ValidationFailed"
    lines = v["message"].splitlines()
    assert lines[0].endswith("problem(s):")
    assert any(
        line.startswith(
            "- spec.structureDefinition.rootComponent.statusDefinition.phaseDefinition.path"
        )
        for line in lines
    )
    assert any(
        line.startswith("- spec.structureDefinition.childComponents[0].ownerRef") for line in lines
    )
    assert by_type(result.conditions)["Ready"]["status"] == "False"
    assert result.warnings[0][:3] == ("Validated", "ValidationFailed", "Validating")


def test_no_kind_is_false_with_the_default_message() -> None:
    obj = copy.deepcopy(BATCH_JOB)
    del obj["spec"]["structureDefinition"]["rootComponent"]["kind"]
    result = evaluate(obj, ClusterTypes())
    c = by_type(result.conditions)["CRDExists"]
    assert (c["status"], c["message"]) == ("False", "Condition has not been evaluated yet")
    assert result.labels is None


def test_schema_condition_uses_the_full_crd() -> None:
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "jobsets.jobset.x-k8s.io"},
        "spec": {
            "group": "jobset.x-k8s.io",
            "names": {"kind": "JobSet", "plural": "jobsets"},
            "scope": "Namespaced",
            "versions": [
                {
                    "name": "v1alpha2",
                    "served": True,
                    "storage": True,
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "properties": {
                                "spec": {
                                    "type": "object",
                                    "properties": {"other": {"type": "string"}},
                                },
                                "status": {"type": "object"},
                            },
                        }
                    },
                }
            ],
        },
    }
    info = CrdInfo("jobsets.jobset.x-k8s.io", "jobset.x-k8s.io", "JobSet", ("v1alpha2",))
    types = ClusterTypes(crds={("jobset.x-k8s.io", "JobSet"): info}, full_crd=lambda name: crd)
    result = evaluate(JOBSET, types)
    s = by_type(result.conditions)["SchemaCompatible"]
    assert s["status"] == "False" and s["reason"] == "SchemaMismatch"
    assert "replicatedJobs" in s["message"]
    assert any(w[0] == "SchemaCompatible" for w in result.warnings)


def test_catalog_condition_override_current_and_stale() -> None:
    lookup = lambda g, v, k: ("batch-job-v1", BATCH_JOB)  # noqa: E731
    types = ClusterTypes(builtins={("batch", "v1", "Job")})
    c = by_type(evaluate(BATCH_JOB, types, catalog_lookup=lookup).conditions)["Catalog"]
    assert c["reason"] == "OverridesBuiltIn" and "batch-job-v1" in c["message"]
    copy_ = copy.deepcopy(BATCH_JOB)
    copy_["metadata"]["annotations"] = {
        CATALOG_DIGEST_ANNOTATION: catalog_digest(BATCH_JOB),
        CATALOG_VERSION_ANNOTATION: "0.1.0",
    }
    c = by_type(evaluate(copy_, types, catalog_lookup=lookup).conditions)["Catalog"]
    assert (c["status"], c["reason"]) == ("True", "CatalogCurrent")
    copy_["metadata"]["annotations"][CATALOG_DIGEST_ANNOTATION] = "0" * 16
    result = evaluate(copy_, types, catalog_lookup=lookup, catalog_version="0.2.0")
    c = by_type(result.conditions)["Catalog"]
    assert (c["status"], c["reason"]) == ("False", "StaleCatalogCopy")
    assert "wlmap definitions install batch-job-v1" in c["message"]
    assert any(w[1] == "StaleCatalogCopy" for w in result.warnings)


def test_merge_keeps_transition_times_and_foreign_conditions() -> None:
    existing = [
        {
            "type": "Validated",
            "status": "True",
            "reason": "ValidationSucceeded",
            "message": "m",
            "lastTransitionTime": "2020-01-01T00:00:00Z",
            "observedGeneration": 1,
        },
        {
            "type": "Other",
            "status": "True",
            "reason": "X",
            "message": "",
            "lastTransitionTime": "t",
        },
    ]
    desired = [
        {"type": "Validated", "status": "True", "reason": "ValidationSucceeded", "message": "m"},
        {"type": "Ready", "status": "False", "reason": "NotReady", "message": "n"},
    ]
    merged = merge_conditions(existing, desired, 2, now="2030-01-01T00:00:00Z")
    got = by_type(merged)
    assert got["Validated"]["lastTransitionTime"] == "2020-01-01T00:00:00Z"
    assert got["Validated"]["observedGeneration"] == 2
    assert got["Ready"]["lastTransitionTime"] == "2030-01-01T00:00:00Z"
    assert got["Other"] == existing[1]
    assert conditions_equal(merged, list(reversed(merged)))
    assert not conditions_equal(merged, existing)
    # unchanged input gives an equal result: no status write
    again = merge_conditions(merged, desired, 2, now="2040-01-01T00:00:00Z")
    assert conditions_equal(again, merged)


def test_trim_crd_keeps_only_what_the_controller_reads() -> None:
    full = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {
            "name": "a.b",
            "resourceVersion": "5",
            "generation": 2,
            "uid": "u",
            "managedFields": [{}] * 10,
        },
        "spec": {
            "group": "b",
            "names": {"kind": "A", "plural": "as"},
            "versions": [{"name": "v1", "served": True, "schema": {"big": "x" * 1000}}],
        },
    }
    trimmed = trim_crd(full)
    assert trimmed["spec"] == {
        "group": "b",
        "names": {"kind": "A", "plural": "as"},
        "versions": [{"name": "v1", "served": True}],
    }
    assert "managedFields" not in trimmed["metadata"]


def test_core_group_labels() -> None:
    pod = next(o for o in JOB if o["metadata"]["name"] == "core-pod-v1")
    assert derived_labels(pod) == {
        "run.ai/karta-group": "",
        "run.ai/karta-version": "v1",
        "run.ai/karta-kind": "Pod",
    }


def test_workload_access_condition_when_the_kind_cannot_be_watched() -> None:
    asked: list[tuple[str, str]] = []

    def forbidden(group: str, resource: str) -> tuple[bool | None, str]:
        asked.append((group, resource))
        return False, "RBAC: no list"

    types = ClusterTypes(
        builtins={("batch", "v1", "Job")},
        plurals={("batch", "v1", "Job"): "jobs"},
        can_watch=forbidden,
    )
    c = by_type(evaluate(BATCH_JOB, types).conditions)["WorkloadAccess"]
    assert (c["status"], c["reason"]) == ("False", "Forbidden")
    assert c["message"].startswith("the operator may not list and watch jobs.batch (RBAC: no list)")
    assert asked == [("batch", "jobs")]
    types.can_watch = lambda g, r: (True, "")
    c = by_type(evaluate(BATCH_JOB, types).conditions)["WorkloadAccess"]
    assert c == {
        "type": "WorkloadAccess",
        "status": "True",
        "reason": "Permitted",
        "message": "the operator may list and watch jobs.batch",
    }
    # a type that is not served is not checked
    assert "WorkloadAccess" not in by_type(evaluate(JOBSET, types).conditions)


def test_pruned_references_are_reported_not_evaluated() -> None:
    """A Karta written with references, stored through a CRD that prunes them (the
    reference's): its paths use $runtime and nothing binds it."""
    from workload_map.catalog import catalog
    from workload_map.model import dump_karta

    doc = dump_karta(catalog.get("trainer.kubeflow.org", "v1alpha1", "TrainJob"))
    assert doc["spec"]["structureDefinition"].pop("references")  # what the API server drops
    crd = CrdInfo(
        "trainjobs.trainer.kubeflow.org", "trainer.kubeflow.org", "TrainJob", ("v1alpha1",)
    )
    result = evaluate(doc, ClusterTypes(crds={("trainer.kubeflow.org", "TrainJob"): crd}))
    v = by_type(result.conditions)["Validated"]
    assert v["status"] == "False" and v["reason"] == "UnboundVariables"
    assert "$runtime" in v["message"] and "pruned" in v["message"]
    assert result.warnings[0][:3] == ("Validated", "UnboundVariables", "Validating")
    assert by_type(result.conditions)["Ready"]["status"] == "False"
