"""CRDs on a real API server: our Karta CRD's schema and CEL rules, and upstream workload CRDs."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes.client.exceptions import ApiException

from .harness import Kube, load_objects, random_suffix

ROOT = Path(__file__).resolve().parents[2]
KARTA_CRD = ROOT / "deploy" / "crds" / "kartas.run.ai.yaml"


@pytest.fixture(scope="module")
def karta_crd(kube: Kube) -> dict[str, Any]:
    if not KARTA_CRD.is_file():
        pytest.fail(f"{KARTA_CRD.relative_to(ROOT)} is missing (generate it with `make crd`)")
    crd: dict[str, Any] = kube.install_crd(KARTA_CRD)
    return crd


def karta(name: str, selector: dict[str, Any] | None = None) -> dict[str, Any]:
    """A small two-level Karta (a Job-like root with one pod-bearing child)."""
    child: dict[str, Any] = {
        "name": "worker",
        "ownerRef": "trainer",
        "specDefinition": {"podTemplateSpecPath": ".spec.worker.template"},
        "scaleDefinition": {"replicasPath": ".spec.worker.replicas"},
    }
    if selector is not None:
        child["podSelector"] = {"componentTypeSelector": selector}
    return {
        "apiVersion": "run.ai/v1alpha1",
        "kind": "Karta",
        "metadata": {"name": name},
        "spec": {
            "structureDefinition": {
                "rootComponent": {
                    "name": "trainer",
                    "kind": {"group": "example.com", "version": "v1", "kind": "Trainer"},
                    "statusDefinition": {
                        "phaseDefinition": {"path": ".status.phase"},
                        "statusMappings": {
                            "running": [{"byPhase": "Running"}],
                            "failed": [{"byConditions": [{"type": "Failed", "status": "True"}]}],
                        },
                    },
                },
                "childComponents": [child],
            }
        },
    }


@pytest.fixture
def karta_names(kube: Kube) -> Iterator[list[str]]:
    """Kartas are cluster-scoped: track what a test creates and delete it afterwards."""
    names: list[str] = []
    yield names
    for name in names:
        try:
            kube.delete("run.ai/v1alpha1", "Karta", name)
        except ApiException as err:
            if err.status != 404:
                raise


VALID_SELECTORS: dict[str, dict[str, Any]] = {
    "key-path": {"keyPath": '.metadata.labels["role"]'},
    "key-path-and-value": {"keyPath": '.metadata.labels["role"]', "value": "worker"},
    "match-labels": {"matchLabels": {"app.kubernetes.io/component": "worker"}},
    "both": {"keyPath": ".metadata.labels.role", "matchLabels": {"tier": ""}},
}
INVALID_SELECTORS: dict[str, dict[str, Any]] = {
    "neither-key-path-nor-match-labels": {},
    "value-without-key-path": {"value": "worker", "matchLabels": {"app": "x"}},
    "only-value": {"value": "worker"},
    "empty-match-labels": {"matchLabels": {}},
    "empty-key-path": {"keyPath": ""},
}


def test_karta_crd_is_established_with_the_reference_identity(karta_crd: dict[str, Any]) -> None:
    spec = karta_crd["spec"]
    assert karta_crd["metadata"]["name"] == "kartas.run.ai"
    assert spec["scope"] == "Cluster"
    assert spec["names"]["kind"] == "Karta"
    assert "krt" in spec["names"].get("shortNames", [])
    served = [v for v in spec["versions"] if v["served"]]
    assert [v["name"] for v in served] == ["v1alpha1"]
    assert served[0].get("subresources", {}).get("status") == {}


@pytest.mark.parametrize("case", sorted(VALID_SELECTORS))
def test_karta_crd_accepts_valid_component_type_selectors(
    kube: Kube, karta_crd: dict[str, Any], karta_names: list[str], case: str
) -> None:
    name = f"valid-{case}-{random_suffix()}"
    karta_names.append(name)
    stored = kube.apply(karta(name, VALID_SELECTORS[case]), field_validation="Strict")
    child = stored["spec"]["structureDefinition"]["childComponents"][0]
    assert child["podSelector"]["componentTypeSelector"] == VALID_SELECTORS[case]


@pytest.mark.parametrize("case", sorted(INVALID_SELECTORS))
def test_karta_crd_rejects_invalid_component_type_selectors(
    kube: Kube, karta_crd: dict[str, Any], karta_names: list[str], case: str
) -> None:
    name = f"invalid-{case}-{random_suffix()}"
    karta_names.append(name)
    with pytest.raises(ApiException) as err:
        kube.apply(karta(name, INVALID_SELECTORS[case]))
    assert err.value.status == 422, err.value.body
    assert "componentTypeSelector" in str(err.value.body)


@pytest.mark.parametrize(
    ("case", "expected"),
    [("neither-key-path-nor-match-labels", "matchLabels"), ("value-without-key-path", "keyPath")],
)
def test_karta_cel_messages_name_the_missing_field(
    kube: Kube, karta_crd: dict[str, Any], karta_names: list[str], case: str, expected: str
) -> None:
    name = f"msg-{case}-{random_suffix()}"
    karta_names.append(name)
    with pytest.raises(ApiException) as err:
        kube.apply(karta(name, INVALID_SELECTORS[case]))
    message = str(err.value.body)
    assert expected in message and "keyPath" in message


def test_karta_status_conditions_through_the_status_subresource(
    kube: Kube, karta_crd: dict[str, Any], karta_names: list[str]
) -> None:
    name = f"status-{random_suffix()}"
    karta_names.append(name)
    stored = kube.apply(karta(name, VALID_SELECTORS["key-path"]))
    condition = {
        "type": "Valid",
        "status": "True",
        "reason": "Validated",
        "message": "ok",
        "lastTransitionTime": "2026-01-01T00:00:00Z",
    }
    kube.set_status({**stored, "status": {"conditions": [condition]}})
    read = kube.get("run.ai/v1alpha1", "Karta", name)
    assert read["status"]["conditions"] == [condition]
    assert read["spec"] == stored["spec"]


def test_karta_crd_stores_a_full_definition_without_pruning(
    kube: Kube, karta_crd: dict[str, Any], karta_names: list[str]
) -> None:
    """Every field we write survives Strict field validation and reads back unchanged."""
    name = f"full-{random_suffix()}"
    karta_names.append(name)
    obj = karta(name, VALID_SELECTORS["key-path-and-value"])
    structure = obj["spec"]["structureDefinition"]
    child = structure["childComponents"][0]
    child["kind"] = {"group": "batch", "version": "v1", "kind": "Job"}
    child["instanceIdPath"] = ".spec.worker.names"
    child["podSelector"]["componentInstanceSelector"] = {"idPath": ".metadata.labels.instance"}
    child["podSelector"]["replicaSelector"] = {"keyPath": ".metadata.labels.index"}
    child["scaleDefinition"].update(minReplicasPath=".spec.min", maxReplicasPath=".spec.max")
    structure["rootComponent"]["statusDefinition"]["conditionsDefinition"] = {
        "path": ".status.conditions",
        "typeFieldName": "type",
        "statusFieldName": "status",
        "messageFieldName": "message",
        "reasonFieldName": "reason",
    }
    structure["rootComponent"]["statusDefinition"]["statusMappings"]["completed"] = [
        {"byExpression": {"expression": ".status.done", "expectedResult": "true"}}
    ]
    structure["additionalChildKinds"] = [{"group": "", "version": "v1", "kind": "Service"}]
    obj["spec"]["optimizationInstructions"] = {
        "gangScheduling": {
            "podGroup": {
                "name": "trainer",
                "subGroups": [{"componentName": "worker"}],
            }
        }
    }
    stored = kube.apply(copy.deepcopy(obj), field_validation="Strict")
    assert stored["spec"] == obj["spec"]


# --------------------------------------------------------------------------- upstream CRDs

# (CRD file, sample manifest) under ../shared/realworld; the sample must be accepted as written.
UPSTREAM = {
    "JobSet": ("jobset/jobset.x-k8s.io_jobsets.yaml.gz", "jobset/paralleljobs.yaml"),
    "LeaderWorkerSet": ("lws/leaderworkerset.x-k8s.io_leaderworkersets.yaml.gz", "lws/lws.yaml"),
    "PyTorchJob": (
        "kubeflow-training-v1/kubeflow.org_pytorchjobs.yaml.gz",
        "kubeflow-training-v1/pytorch-simple.yaml",
    ),
    "RayCluster": ("ray/ray.io_rayclusters.yaml.gz", "ray/ray-cluster.sample.yaml"),
    "MPIJob": (
        "kubeflow-mpi-operator-v2beta1/kubeflow.org_mpijobs.yaml.gz",
        "kubeflow-mpi-operator-v2beta1/tensorflow-benchmarks.yaml",
    ),
}


@pytest.mark.parametrize("kind", sorted(UPSTREAM))
def test_upstream_crd_installs_and_accepts_its_sample(
    kube: Kube, namespace: str, shared_dir: Path, kind: str
) -> None:
    crd_file, sample_file = (shared_dir / "realworld" / p for p in UPSTREAM[kind])
    if not crd_file.exists() or not sample_file.exists():
        pytest.skip(f"{crd_file.name} or {sample_file.name} not in this ../shared")
    crd = kube.install_crd(crd_file)
    assert crd["spec"]["names"]["kind"] == kind
    samples = [d for d in load_objects(sample_file) if d.get("kind") == kind]
    assert samples, f"{sample_file} holds no {kind}"
    for sample in samples:
        stored = kube.apply(sample, namespace=namespace)
        assert stored["kind"] == kind
        assert stored["metadata"]["namespace"] == namespace
        assert stored["spec"], f"{kind} spec pruned to nothing"


def test_jobset_status_set_through_subresource_reads_back(
    kube: Kube, namespace: str, shared_dir: Path
) -> None:
    realworld = shared_dir / "realworld" / "jobset"
    kube.install_crd(realworld / "jobset.x-k8s.io_jobsets.yaml.gz")
    [obj] = load_objects(realworld / "with-status" / "sleep-job-x5ffx.jobset.status.yaml")
    assert obj["status"], "fixture lost its status"
    stored = kube.create_with_status(obj, namespace=namespace)
    read = kube.get(obj["apiVersion"], "JobSet", obj["metadata"]["name"], namespace)
    assert read["status"] == obj["status"] == stored["status"]
    assert read["metadata"]["uid"] != obj["metadata"]["uid"]  # server-assigned, not copied
    assert read["spec"]["replicatedJobs"][1]["name"] == "driver"


def test_jobset_built_by_hand_gets_status(kube: Kube, namespace: str, shared_dir: Path) -> None:
    """No ../shared object involved beyond the CRD: a minimal JobSet and a hand-written status."""
    kube.install_crd(shared_dir / "realworld" / "jobset" / "jobset.x-k8s.io_jobsets.yaml.gz")
    job_template = {
        "spec": {
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [{"name": "c", "image": "busybox"}],
                }
            }
        }
    }
    obj = {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {"name": "hand"},
        "spec": {"replicatedJobs": [{"name": "w", "replicas": 2, "template": job_template}]},
    }
    status = {
        "conditions": [
            {
                "type": "Completed",
                "status": "True",
                "reason": "AllJobsCompleted",
                "message": "jobset completed successfully",
                "lastTransitionTime": "2026-01-01T00:00:00Z",
            }
        ],
        "replicatedJobsStatus": [
            {"name": "w", "ready": 0, "succeeded": 2, "failed": 0, "active": 0, "suspended": 0}
        ],
        "terminalState": "Completed",
    }
    stored = kube.create_with_status({**obj, "status": status}, namespace=namespace)
    assert stored["status"] == status


# --------------------------------------------------------------------------- hand-written CRDs


def widget_crd(plural: str, *, status_subresource: bool) -> dict[str, Any]:
    """A small namespaced CRD of our own, so the CRD path is covered without ../shared."""
    version: dict[str, Any] = {
        "name": "v1",
        "served": True,
        "storage": True,
        "schema": {
            "openAPIV3Schema": {
                "type": "object",
                "properties": {
                    "spec": {
                        "type": "object",
                        "properties": {"replicas": {"type": "integer", "minimum": 0}},
                    },
                    "status": {
                        "type": "object",
                        "properties": {
                            "phase": {"type": "string"},
                            "ready": {"type": "integer"},
                        },
                    },
                },
            }
        },
    }
    if status_subresource:
        version["subresources"] = {"status": {}}
    kind = plural.capitalize().removesuffix("s")
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.wlmap-test.example.com"},
        "spec": {
            "group": "wlmap-test.example.com",
            "scope": "Namespaced",
            "names": {"plural": plural, "singular": plural[:-1], "kind": kind},
            "versions": [version],
        },
    }


@pytest.mark.parametrize("subresource", [True, False], ids=["status-subresource", "plain"])
def test_own_crd_status_is_set_and_pruned_by_schema(
    kube: Kube, namespace: str, subresource: bool
) -> None:
    plural = "gadgets" if subresource else "widgets"
    crd = kube.install_crd(widget_crd(plural, status_subresource=subresource))
    kind = crd["spec"]["names"]["kind"]
    api_version = "wlmap-test.example.com/v1"
    applied = kube.apply(
        {
            "apiVersion": api_version,
            "kind": kind,
            "metadata": {"name": "one"},
            "spec": {"replicas": 2},
            "status": {"phase": "Ignored"},
        },
        namespace=namespace,
    )
    if subresource:  # the main resource ignores status when the subresource exists
        assert "status" not in applied
    stored = kube.set_status({**applied, "status": {"phase": "Running", "ready": 2, "x": 1}})
    assert stored["status"] == {"phase": "Running", "ready": 2}  # unknown field pruned
    assert kube.get(api_version, kind, "one", namespace)["spec"] == {"replicas": 2}
    with pytest.raises(ApiException) as err:
        kube.apply(
            {
                "apiVersion": api_version,
                "kind": kind,
                "metadata": {"name": "bad"},
                "spec": {"replicas": -1},
            },
            namespace=namespace,
        )
    assert err.value.status == 422 and "replicas" in str(err.value.body)
