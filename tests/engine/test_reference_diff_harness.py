"""The reference harness itself: wlmap-refgo reports what the reference library computes.

Hand-written definitions and objects, with answers worked out by hand from the reference's
documented rules (REFERENCE.md §2.3 to §2.8, §8). These pin the harness (and the reference's
quirks the differential test relies on) without ``../shared`` and without our engine.
Skipped, with the reason, where the Go toolchain or the module proxy is unavailable.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from tests.engine.refgo_harness import refgo_client, start_refgo

# A fresh machine builds the harness first (module downloads and a compile: minutes).
pytestmark = pytest.mark.timeout(900)


@pytest.fixture(scope="module")
def refgo() -> Any:
    return start_refgo()


def _status_definition() -> dict[str, Any]:
    return {
        "phaseDefinition": {"path": ".status.phase"},
        "conditionsDefinition": {
            "path": ".status.conditions",
            "typeFieldName": "type",
            "statusFieldName": "status",
            "messageFieldName": "message",
            "reasonFieldName": "reason",
        },
        "statusMappings": {
            "running": [{"byPhase": "Running"}],
            "degraded": [{"byConditions": [{"type": "Degraded", "status": "True"}]}],
            "failed": [{"byPhase": "Failed"}],
        },
    }


TRAINER_KARTA: dict[str, Any] = {
    "apiVersion": "run.ai/v1alpha1",
    "kind": "Karta",
    "metadata": {"name": "example-com-trainer-v1"},
    "spec": {
        "structureDefinition": {
            "rootComponent": {
                "name": "trainer",
                "kind": {"group": "example.com", "version": "v1", "kind": "Trainer"},
                "statusDefinition": _status_definition(),
            },
            "childComponents": [
                {
                    "name": "master",
                    "ownerRef": "trainer",
                    "specDefinition": {"podTemplateSpecPath": ".spec.master.template"},
                    "scaleDefinition": {"replicasPath": ".spec.master.replicas"},
                    "podSelector": {
                        "componentTypeSelector": {
                            "keyPath": ".metadata.labels.role",
                            "value": "master",
                        }
                    },
                },
                {
                    "name": "worker",
                    "ownerRef": "trainer",
                    "specDefinition": {"podTemplateSpecPath": ".spec.worker.template"},
                    "scaleDefinition": {
                        "replicasPath": ".spec.worker.replicas",
                        "minReplicasPath": ".spec.worker.minReplicas",
                    },
                    "podSelector": {
                        "componentTypeSelector": {
                            "keyPath": ".metadata.labels.role",
                            "value": "worker",
                        }
                    },
                },
            ],
        },
        "optimizationInstructions": {
            "gangScheduling": {
                "podGroups": [
                    {
                        "name": "all",
                        "members": [{"componentName": "master"}, {"componentName": "worker"}],
                    }
                ]
            }
        },
    },
}


def _template(image: str) -> dict[str, Any]:
    return {"spec": {"containers": [{"name": "main", "image": image}]}}


TRAINER: dict[str, Any] = {
    "apiVersion": "example.com/v1",
    "kind": "Trainer",
    "metadata": {"name": "t1", "namespace": "ml", "uid": "abc"},
    "spec": {
        "master": {"replicas": 1, "template": _template("m:1")},
        "worker": {"replicas": 3, "template": _template("w:1")},
    },
    "status": {
        "phase": "Running",
        "conditions": [{"type": "Degraded", "status": "True", "reason": "Slow"}],
    },
}


def _pod(name: str, labels: dict[str, str]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": labels}}


def _component(report: dict[str, Any], name: str) -> dict[str, Any]:
    return next(c for c in report["components"] if c["name"] == name)


def test_version_is_the_pinned_reference(refgo: Any) -> None:
    report = refgo.describe(TRAINER_KARTA, TRAINER)
    assert report["reference"] == {
        "module": refgo_client.REFERENCE_MODULE,
        "version": refgo_client.REFERENCE_VERSION,
    }


def test_extraction_status_and_subtree_scale(refgo: Any) -> None:
    report = refgo.describe(TRAINER_KARTA, TRAINER)
    assert report["validation"] == {"valid": True, "errors": []}
    root = _component(report, "trainer")
    # Both matched statuses, in the fixed order (Running before Degraded).
    assert root["status"]["matchedStatuses"] == ["Running", "Degraded"]
    assert root["status"]["phase"] == "Running"
    assert root["status"]["conditions"] == [
        {"type": "Degraded", "status": "True", "reason": "Slow"}
    ]
    worker = _component(report, "worker")
    assert worker["instanceIds"] == [""]
    # A missing minReplicas stays absent.
    assert worker["instances"][0]["scale"] == {"replicas": 3}
    assert worker["instances"][0]["extractedInstanceParts"] == ["podTemplateSpec", "scale"]
    assert worker["instances"][0]["podTemplateSpec"]["spec"]["containers"][0]["image"] == "w:1"
    # By definition: the root has no scale, so it carries its children's sum, 1 + 3.
    assert root["subtreeScale"] == 4
    assert worker["subtreeScale"] == 3


def test_pinned_reference_rejects_numeric_string_scale(refgo: Any) -> None:
    # Newer generations parse "3" as 3; the version KAI pins fails the conversion.
    obj = copy.deepcopy(TRAINER)
    obj["spec"]["worker"]["replicas"] = "3"
    worker = _component(refgo.describe(TRAINER_KARTA, obj), "worker")
    assert worker["extractionErrors"]["scale"].endswith(
        "json: cannot unmarshal string into Go value of type int32"
    )
    assert worker["instances"][0]["scale"] is None
    assert worker["subtreeScaleError"] is not None


def test_group_minimum_is_whichever_pod_comes_first(refgo: Any) -> None:
    pods = [
        _pod("t1-master-0", {"role": "master"}),
        *(_pod(f"t1-worker-{i}", {"role": "worker"}) for i in range(3)),
    ]
    report = refgo.describe(TRAINER_KARTA, TRAINER, pods)
    assert [p["component"] for p in report["pods"]] == ["master", "worker", "worker", "worker"]
    (group,) = report["podGroups"]
    assert group["name"] == "pg-abc"
    # KAI takes the first pod's subtree scale: the master's 1, though the group needs 4.
    assert group["minMember"] == 1
    assert group["minMembersSeen"] == [1, 3]
    assert len(group["pods"]) == 4

    workers_first = refgo.describe(TRAINER_KARTA, TRAINER, list(reversed(pods)))
    assert workers_first["podGroups"][0]["minMember"] == 3


def test_unmatched_pod_and_map_instances(refgo: Any) -> None:
    karta = copy.deepcopy(TRAINER_KARTA)
    worker = karta["spec"]["structureDefinition"]["childComponents"][1]
    worker["instanceIdPath"] = ".spec.pools | keys[]"
    worker["specDefinition"] = {"podTemplateSpecPath": ".spec.pools[].template"}
    worker["scaleDefinition"] = {"replicasPath": ".spec.pools[].replicas"}
    worker["podSelector"]["componentInstanceSelector"] = {"idPath": ".metadata.labels.pool"}
    obj = copy.deepcopy(TRAINER)
    obj["spec"]["pools"] = {
        "b": {"replicas": 2, "template": _template("b:1")},
        "a": {"replicas": 5, "template": _template("a:1")},
    }
    pods = [
        _pod("w-a", {"role": "worker", "pool": "a"}),
        _pod("w-z", {"role": "worker", "pool": "z"}),
        _pod("stray", {"role": "driver"}),
    ]
    report = refgo.describe(karta, obj, pods)
    component = _component(report, "worker")
    assert component["instanceIds"] == ["a", "b"]  # map keys in sorted order
    assert [i["scale"]["replicas"] for i in component["instances"]] == [5, 2]
    assert [i["subtreeScale"] for i in component["instances"]] == [5, 2]
    by_name = {p["name"]: p for p in report["pods"]}
    assert by_name["w-a"]["instance"] == "a"
    assert by_name["w-z"]["instanceError"] == (
        'could not match instance id "z". existing instance ids [a b]'
    )
    assert by_name["stray"]["componentError"] == "no component found for pod stray"


def test_v2_pod_group_with_subgroups(refgo: Any) -> None:
    karta = copy.deepcopy(TRAINER_KARTA)
    karta["spec"]["optimizationInstructions"] = {
        "gangScheduling": {
            "podGroup": {
                "name": "job",
                "subGroups": [{"componentName": "master"}, {"componentName": "worker"}],
            }
        }
    }
    pods = [_pod("m", {"role": "master"}), _pod("w", {"role": "worker"})]
    report = refgo.describe(karta, TRAINER, pods)
    (group,) = report["podGroups"]
    assert group["name"] == "pg-abc-job"
    # KAI: the group's own minimum is 0 and minSubGroup counts the subgroups.
    assert (group["minMember"], group["minSubGroup"]) == (0, 2)
    assert [(s["name"], s["minMember"], s["pods"]) for s in group["subGroups"]] == [
        ("master", 1, ["m"]),
        ("worker", 3, ["w"]),
    ]


def test_validation_errors_and_tree(refgo: Any) -> None:
    karta = copy.deepcopy(TRAINER_KARTA)
    structure = karta["spec"]["structureDefinition"]
    del structure["rootComponent"]["statusDefinition"]
    structure["childComponents"][1]["ownerRef"] = "nobody"
    report = refgo.describe(karta, TRAINER)
    assert report["validation"]["valid"] is False
    assert report["validation"]["errors"] == [
        "root component must have status definition",
        "child component 'worker' has owner ref to non-existing component 'nobody'",
    ]
    assert report["tree"] is None
    assert report["treeError"].startswith("invalid karta: ")

    valid = refgo.describe(TRAINER_KARTA, TRAINER)
    assert valid["tree"]["phases"] == ["Running", "Degraded"]
    assert [n["name"] for n in valid["tree"]["children"]] == ["master", "worker"]


def test_newer_schema_fields_are_reported_as_ignored(refgo: Any) -> None:
    karta = copy.deepcopy(TRAINER_KARTA)
    selector = karta["spec"]["structureDefinition"]["childComponents"][0]["podSelector"]
    selector["componentTypeSelector"]["matchLabels"] = {"role": "master"}
    report = refgo.describe(karta, TRAINER)
    assert report["ignoredKartaFields"] == [
        'unknown field "spec.structureDefinition.childComponents[0].podSelector'
        '.componentTypeSelector.matchLabels"'
    ]


def test_bench_counts_the_same_work(refgo: Any) -> None:
    pods = [_pod(f"p{i}", {"role": "worker" if i else "master"}) for i in range(4)]
    result = refgo.bench({"trainer": TRAINER_KARTA}, [("trainer", TRAINER, pods)] * 3, repeat=2)
    assert result["workloads"] == 3 and result["pods"] == 12
    sections = result["sections"]
    assert sections["attribution"]["counts"] == {
        "attributed": 12,
        "grouped": 12,
        "groups": 3,
        "unattributed": 0,
    }
    assert sections["status"]["counts"] == {"Running": 3, "Degraded": 3}
    assert sections["tree"]["counts"] == {"built": 3, "failed": 0}
    assert len(sections["tree"]["allSeconds"]) == 2
