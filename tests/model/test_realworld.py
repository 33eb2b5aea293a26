"""Every upstream definition under ../shared/realworld/karta-upstream, with the reference verdict.

All parse and validate except ``mpijob.yaml``, which upstream published with a missing newline
(it is not YAML); the two CRDs there are not definitions at all. The only findings on the valid
ones are warnings (advice), never errors.
"""

from __future__ import annotations

import functools
import warnings
from pathlib import Path

import pytest
import yaml

from tests.catalog.conftest import read_yaml_docs
from workload_map.model import KartaLoadError, check_against_crd, dump_karta, load_karta, validate

pytestmark = pytest.mark.shared

NOT_DEFINITIONS = {
    "customjobs_crd.yaml",
    "optimization.nvidia.com_resourceinterfaces.yaml",
}
UNPARSEABLE = {"mpijob.yaml"}


def _definitions(shared: Path) -> list[Path]:
    root = shared / "realworld" / "karta-upstream"
    return sorted(p for p in root.rglob("*.yaml") if p.name not in NOT_DEFINITIONS)


def test_upstream_definitions_have_the_reference_verdict(shared_dir: Path) -> None:
    files = _definitions(shared_dir)
    assert len(files) >= 19
    loaded = 0
    for path in files:
        if path.name in UNPARSEABLE:
            with pytest.raises(KartaLoadError, match=r"not valid YAML or JSON: line 25"):
                load_karta(path)
            continue
        legacy = "ResourceInterface" in path.read_text()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            karta = load_karta(path)
        assert any(issubclass(w.category, DeprecationWarning) for w in caught) == legacy, path
        findings = validate(karta)
        assert [f for f in findings if f.is_error] == [], (path.name, findings)
        loaded += 1
    assert loaded == len(files) - len(UNPARSEABLE)


def test_upstream_karta_round_trip(shared_dir: Path) -> None:
    for path in _definitions(shared_dir):
        if path.name in UNPARSEABLE or "ResourceInterface" in path.read_text():
            continue
        karta = load_karta(path)
        assert load_karta(dump_karta(karta)) == karta, path.name


def test_kai_example_matches_its_crd(shared_dir: Path) -> None:
    root = shared_dir / "realworld" / "karta-upstream" / "kai-scheduler-e2e"
    karta = load_karta(root / "customjob_karta.yaml")
    crd = yaml.safe_load((root / "customjobs_crd.yaml").read_text())
    assert check_against_crd(karta, crd) == []
    gang = karta.gang_scheduling
    assert gang is not None and gang.pod_group is not None
    assert [s.component_name for s in gang.pod_group.sub_groups] == ["coordinator", "worker"]


def test_upstream_jobset_example_against_jobset_crd(shared_dir: Path) -> None:
    crd = _load_crd(shared_dir / "realworld" / "jobset" / "jobset.x-k8s.io_jobsets.yaml.gz")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        karta = load_karta(
            shared_dir / "realworld/karta-upstream/run-ai-karta-examples/jobset.yaml"
        )
    assert check_against_crd(karta, crd) == []


# Upstream definitions checked against the upstream CRDs kept beside them. The findings are real:
# the old Milvus example reads a `template` the Milvus CRD never had, the old RayJob example looks
# for `workerGroupSpecs` at the RayJob's top level (it lives under `rayClusterSpec`), and the
# KubeRay RayJob CRD at the stored commit has no `status.conditions` yet.
CRD_FOR = {
    "dynamo.yaml": "nvidia-dynamo/nvidia.com_dynamographdeployments.yaml.gz",
    "jobset.yaml": "jobset/jobset.x-k8s.io_jobsets.yaml.gz",
    "knative-serving.yaml": "knative-serving/service.crd.yaml",
    "serving-knative-dev-service-v1.yaml": "knative-serving/service.crd.yaml",
    "kserve.yaml": "kserve/serving.kserve.io_inferenceservices.yaml.gz",
    "lws.yaml": "lws/leaderworkerset.x-k8s.io_leaderworkersets.yaml.gz",
    "leaderworkerset-x-k8s-io-leaderworkerset-v1.yaml": (
        "lws/leaderworkerset.x-k8s.io_leaderworkersets.yaml.gz"
    ),
    "milvus.yaml": "milvus/milvus.io_milvuses.yaml.gz",
    "milvus-io-milvus-v1beta1.yaml": "milvus/milvus.io_milvuses.yaml.gz",
    "nimservice.yaml": "nvidia-nim/apps.nvidia.com_nimservices.yaml.gz",
    "pytorch.yaml": "kubeflow-training-v1/kubeflow.org_pytorchjobs.yaml.gz",
    "raycluster.yaml": "ray/ray.io_rayclusters.yaml.gz",
    "rayjob.yaml": "ray/ray.io_rayjobs.yaml.gz",
    "ray-io-rayjob-v1.yaml": "ray/ray.io_rayjobs.yaml.gz",
    "grove-podcliqueset.yaml": "nvidia-grove/grove.io_podcliquesets.yaml.gz",
    "serving-kserve-io-llminferenceservice-v1alpha1.yaml": (
        "kserve/serving.kserve.io_llminferenceservices.yaml.gz"
    ),
    "serving-kserve-io-llminferenceservice-v1alpha2.yaml": (
        "kserve/serving.kserve.io_llminferenceservices.yaml.gz"
    ),
}
_CONDITIONS = "spec.structureDefinition.rootComponent.statusDefinition.conditionsDefinition.path"
EXPECTED_SCHEMA_FINDINGS = {
    "milvus.yaml": {
        "spec.structureDefinition.childComponents[0].specDefinition.podTemplateSpecPath",
        "spec.structureDefinition.childComponents[1].specDefinition.podTemplateSpecPath",
    },
    "rayjob.yaml": {_CONDITIONS, "spec.structureDefinition.childComponents[1].instanceIdPath"},
    "ray-io-rayjob-v1.yaml": {_CONDITIONS},
}


@functools.cache
def _load_crd(path: Path) -> dict[str, object]:
    # through the catalog tests' JSON cache of parsed YAML: the kserve CRD alone is seconds of
    # CPU to parse, in every process that runs these tests
    return next(
        d
        for d in read_yaml_docs(path)
        if isinstance(d, dict) and d.get("kind") == "CustomResourceDefinition"
    )


@pytest.mark.parametrize("name", sorted(CRD_FOR))
def test_upstream_definitions_against_upstream_crds(shared_dir: Path, name: str) -> None:
    realworld = shared_dir / "realworld"
    (path,) = (realworld / "karta-upstream").rglob(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        karta = load_karta(path)
    findings = check_against_crd(karta, _load_crd(realworld / CRD_FOR[name]))
    assert {f.path for f in findings} == EXPECTED_SCHEMA_FINDINGS.get(name, set()), findings
    assert all(f.code == "schema-unknown-field" for f in findings)
