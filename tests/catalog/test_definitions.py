"""Every packaged definition loads, validates clean and follows the catalog's conventions."""

from __future__ import annotations

from importlib import resources

import pytest
import yaml

from workload_map import jq
from workload_map.catalog import CHECKED_AGAINST_ANNOTATION, catalog, slug
from workload_map.model import load_karta, validate
from workload_map.model.references import SELECTOR_KEYS, reference_names
from workload_map.model.shape import iter_jq_fields

DATA = resources.files("workload_map.catalog").joinpath("data")
FILES = sorted(p.name for p in DATA.iterdir() if p.name.endswith(".yaml"))

# The kinds the reference ships (REFERENCE.md §7) and those users still wait for (PEERS.md §1.5,
# §5b): the catalog must answer for every one of them.
REQUIRED = [
    ("", "v1", "Pod"),
    ("batch", "v1", "Job"),
    ("batch", "v1", "CronJob"),
    ("apps", "v1", "Deployment"),
    ("apps", "v1", "StatefulSet"),
    ("apps", "v1", "ReplicaSet"),
    ("apps", "v1", "DaemonSet"),
    ("jobset.x-k8s.io", "v1alpha2", "JobSet"),
    ("kubeflow.org", "v1", "PyTorchJob"),
    ("kubeflow.org", "v1", "TFJob"),
    ("kubeflow.org", "v1", "XGBoostJob"),
    ("kubeflow.org", "v1", "JAXJob"),
    ("kubeflow.org", "v1", "PaddleJob"),
    ("kubeflow.org", "v1", "MPIJob"),
    ("kubeflow.org", "v2beta1", "MPIJob"),
    ("kubeflow.org", "v1", "Notebook"),
    ("kubeflow.org", "v1beta1", "Notebook"),
    ("trainer.kubeflow.org", "v1alpha1", "TrainJob"),
    ("ray.io", "v1", "RayCluster"),
    ("ray.io", "v1", "RayJob"),
    ("ray.io", "v1", "RayService"),
    ("leaderworkerset.x-k8s.io", "v1", "LeaderWorkerSet"),
    ("serving.kserve.io", "v1beta1", "InferenceService"),
    ("serving.kserve.io", "v1alpha1", "LLMInferenceService"),
    ("serving.kserve.io", "v1alpha2", "LLMInferenceService"),
    ("serving.knative.dev", "v1", "Service"),
    ("apps.nvidia.com", "v1alpha1", "NIMService"),
    ("apps.nvidia.com", "v1alpha1", "NIMCache"),
    ("milvus.io", "v1beta1", "Milvus"),
    ("nvidia.com", "v1alpha1", "DynamoGraphDeployment"),
    ("nvidia.com", "v1beta1", "DynamoGraphDeployment"),
    ("grove.io", "v1alpha1", "PodCliqueSet"),
    ("agents.x-k8s.io", "v1beta1", "Sandbox"),
    ("batch.volcano.sh", "v1alpha1", "Job"),
    ("sparkoperator.k8s.io", "v1beta2", "SparkApplication"),
    ("sparkoperator.k8s.io", "v1beta2", "ScheduledSparkApplication"),
    ("workload.codeflare.dev", "v1beta2", "AppWrapper"),
    ("argoproj.io", "v1alpha1", "Workflow"),
    ("tekton.dev", "v1", "PipelineRun"),
    ("tekton.dev", "v1", "TaskRun"),
    ("kubevirt.io", "v1", "VirtualMachineInstance"),
    ("kubevirt.io", "v1", "VirtualMachine"),
    ("machinelearning.seldon.io", "v1", "SeldonDeployment"),
    ("slinky.slurm.net", "v1alpha1", "NodeSet"),
    ("kueue.x-k8s.io", "v1beta1", "Workload"),
    ("scheduling.x-k8s.io", "v1alpha1", "PodGroup"),
    ("scheduling.volcano.sh", "v1beta1", "PodGroup"),
    ("kueue.x-k8s.io", "v1beta2", "Workload"),
    ("scheduling.run.ai", "v2alpha2", "PodGroup"),
    ("kubeflow.org", "v1beta1", "ScheduledWorkflow"),
    ("workspace.devfile.io", "v1alpha2", "DevWorkspace"),
]


def test_at_least_forty_definition_files() -> None:
    assert len(FILES) >= 40


def test_every_definition_has_a_hand_written_manifest() -> None:
    """Our own fixtures cover every definition, so the suite means something without ../shared."""
    from tests.catalog.conftest import FIXTURES, iter_objects

    covered = {(o["apiVersion"], o["kind"]) for _, o in iter_objects(FIXTURES)}
    missing = [
        e.name
        for e in catalog.entries()
        if not e.derived and (e.api_version, e.kind) not in covered
    ]
    assert missing == []


@pytest.mark.parametrize(("group", "version", "kind"), REQUIRED, ids=lambda v: str(v))
def test_required_kind_is_covered(group: str, version: str, kind: str) -> None:
    assert catalog.get(group, version, kind) is not None, f"{group}/{version} {kind}"


@pytest.mark.parametrize("name", FILES)
def test_file_loads_validates_and_is_named_by_its_slug(name: str) -> None:
    text = DATA.joinpath(name).read_text(encoding="utf-8")
    raw = yaml.safe_load(text)
    karta = load_karta(text)
    gvk = karta.root_gvk
    assert gvk is not None
    assert (
        name == f"{slug(gvk.group, gvk.version, gvk.kind)}.yaml" == f"{karta.metadata['name']}.yaml"
    )
    assert raw["apiVersion"] == "run.ai/v1alpha1" and raw["kind"] == "Karta"
    findings = validate(karta)
    assert findings == [], "\n".join(f"{f.path}: {f.message}" for f in findings)
    # says what it was checked against (the docs page shows it)
    assert karta.metadata.get("annotations", {}).get(CHECKED_AGAINST_ANNOTATION)
    # the root always maps status
    assert karta.root.status_definition is not None


@pytest.mark.parametrize("name", catalog.names())
def test_every_expression_is_karta_safe_and_compiles(name: str) -> None:
    karta = catalog.by_name(name)
    assert karta is not None
    for field in iter_jq_fields(karta):
        assert jq.karta_violations(field.expression) == [], field.path
        # a path may use the definition's references ($runtime), never any other variable
        selector = field.target == "pod" and field.key in SELECTOR_KEYS
        jq.compile(field.expression, variables=() if selector else reference_names(karta))


@pytest.mark.parametrize("name", catalog.names())
def test_definition_round_trips_through_dump(name: str) -> None:
    from workload_map.model import dump_karta

    karta = catalog.by_name(name)
    assert karta is not None
    assert load_karta(dump_karta(karta)) == karta
