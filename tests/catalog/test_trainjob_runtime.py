"""Kubeflow Trainer v2: every upstream TrainJob read with its runtime (the ``$runtime`` reference).

The pool of referenced objects is every object of ``realworld/kubeflow-trainer-v2`` (the
runtimes are shipped apart from the examples, as in a cluster). One golden per upstream file
under ``golden_references/`` holds, per TrainJob, what the runtime decides: pods, resources,
the component tree, the gangs and what the reference resolved to. Regenerate after a reviewed
change with ``WLMAP_UPDATE_GOLDEN=1``. Gang parity with Trainer's own coscheduling and Volcano
plugins (``minMember`` = the sum of every replicated job's pods, ``minResources`` = their
requests) is checked on the same objects.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.catalog.conftest import HERE, objects_in, realworld
from tests.catalog.test_golden import _component, _resources
from tests.catalog.trainjobs import ANCESTOR_LABEL, runtime, trainjob
from workload_map.catalog import catalog
from workload_map.engine import Workload
from workload_map.engine.quantities import to_millis
from workload_map.engine.references import ReferenceRequest, ReferenceUnavailable

UPDATE = os.environ.get("WLMAP_UPDATE_GOLDEN") == "1"
GOLDEN = HERE / "golden_references" / "kubeflow-trainer-v2"
KARTA = catalog.get("trainer.kubeflow.org", "v1alpha1", "TrainJob")


def _folder() -> Path | None:
    root = realworld()
    path = None if root is None else root / "kubeflow-trainer-v2"
    return path if path is not None and path.is_dir() else None


def _pool() -> list[dict[str, Any]]:
    folder = _folder()
    assert folder is not None
    return [o for p in sorted(folder.glob("*.yaml")) for o in objects_in(p)]


def _sources() -> list[Path]:
    folder = _folder()
    if folder is None:
        return []
    return [
        p
        for p in sorted(folder.glob("*.yaml"))
        if any(o.get("kind") == "TrainJob" for o in objects_in(p))
    ]


def _project(obj: dict[str, Any], pool: list[dict[str, Any]]) -> dict[str, Any]:
    view = Workload(KARTA, obj, references=pool).describe()
    return {
        "object": f"TrainJob {view['name']}",
        "pods": view["pods"]["desired"],
        "resources": _resources(view["resources"]),
        "components": [_component(c) for c in view["components"]],
        "podGroups": [
            {
                "minMember": g["minMember"],
                "subGroups": [(s["name"], s["minMember"]) for s in g.get("subGroups") or []],
            }
            for g in view["podGroups"]
        ],
        "references": view.get("references"),
        "errors": view["errors"],
    }


SOURCES = _sources()


@pytest.mark.parametrize("path", SOURCES, ids=[p.name for p in SOURCES])
def test_trainjob_with_its_runtime_matches_golden(path: Path) -> None:
    pool = _pool()
    got = [_project(o, pool) for o in objects_in(path) if o.get("kind") == "TrainJob"]
    golden = GOLDEN / f"{path.stem}.json"
    text = json.dumps(got, indent=1, sort_keys=True) + "\n"
    if UPDATE:
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_text(text)
        return
    assert golden.exists(), f"no golden yet: run with WLMAP_UPDATE_GOLDEN=1 and review {golden}"
    assert json.loads(golden.read_text()) == json.loads(json.dumps(got))
    for entry in got:  # every upstream TrainJob finds its runtime
        assert entry["errors"] == [] and entry["references"][0]["found"] == 1


def _trainer_gang(obj: dict[str, Any], runtime: dict[str, Any]) -> tuple[int, dict[str, int]]:
    """What Trainer's coscheduling and Volcano plugins put on their PodGroup (written here from
    their documented rule, not from our definition): minMember = the sum of the pod-set counts
    (numNodes for the node job, replicas x parallelism for the others), minResources = each
    pod-set's requests (the TrainJob's resourcesPerNode on the trainer's node) x its count."""
    jobs = runtime["spec"]["template"]["spec"]["replicatedJobs"]
    nodes = (obj["spec"].get("trainer") or {}).get("numNodes") or runtime["spec"]["mlPolicy"].get(
        "numNodes", 1
    )
    total = 0
    cpu = 0
    for job in jobs:
        count = (
            nodes
            if job["name"] == "node"
            else job.get("replicas", 1) * (job["template"]["spec"].get("parallelism", 1))
        )
        total += count
        containers = job["template"]["spec"]["template"]["spec"]["containers"]
        for c in containers:
            requests = (c.get("resources") or {}).get("requests") or {}
            if job["name"] == "node" and c["name"] == "node":
                per_node = (obj["spec"].get("trainer") or {}).get("resourcesPerNode") or {}
                requests = per_node.get("requests") or per_node.get("limits") or requests
            cpu += count * to_millis(requests.get("cpu", "0"))
    return total, {"cpuMillis": cpu}


@pytest.mark.parametrize(
    ("example", "policy"),
    [("04-volcano-integration.yaml", "volcano"), ("05-multi-step.yaml", None)],
)
def test_gang_parity_with_trainer_plugins(example: str, policy: str | None) -> None:
    folder = _folder()
    if folder is None:
        pytest.skip("no shared realworld folder")
    pool = _pool()
    (obj,) = [o for o in objects_in(folder / example) if o.get("kind") == "TrainJob"]
    name = obj["spec"]["runtimeRef"]["name"]
    (runtime,) = [
        o
        for o in pool
        if o.get("kind", "").endswith("TrainingRuntime") and o["metadata"]["name"] == name
    ]
    if policy is not None:
        assert policy in runtime["spec"]["podGroupPolicy"]
    want_members, want = _trainer_gang(obj, runtime)
    view = Workload(KARTA, obj, references=pool).describe()
    (group,) = view["podGroups"]
    assert group["minMember"] == want_members
    assert view["resources"]["cpuMillis"] == want["cpuMillis"]


def test_without_the_runtime_the_trainjob_alone_is_described_and_the_gap_reported() -> None:
    obj = trainjob(
        "t",
        {"name": "torch-distributed"},
        trainer={"numNodes": 2, "resourcesPerNode": {"limits": {"nvidia.com/gpu": 4}}},
    )
    view = Workload(KARTA, obj, references=[]).describe()
    assert view["pods"]["desired"] == 2 and view["resources"]["gpus"] == 8
    assert view["references"][0]["reason"] == "missing"
    assert "ClusterTrainingRuntime/torch-distributed" in view["errors"][0]

    def forbidden(request: ReferenceRequest) -> Any:
        raise ReferenceUnavailable("forbidden", "forbidden: cannot get clustertrainingruntimes")

    view = Workload(KARTA, obj, references=forbidden).describe()
    assert view["pods"]["desired"] == 2
    assert view["references"][0]["reason"] == "forbidden"


def test_a_resolver_sees_the_request_and_its_answer_is_bound() -> None:
    seen: list[ReferenceRequest] = []
    gpu_node = {"name": "node", "image": "img", "resources": {"limits": {"nvidia.com/gpu": 8}}}
    runtime_obj = runtime(
        "rt",
        3,
        kind="TrainingRuntime",
        container=gpu_node,
        job_labels={ANCESTOR_LABEL: "trainer"},
        namespace="ml",
    )

    def resolver(request: ReferenceRequest) -> Any:
        seen.append(request)
        return runtime_obj

    obj = trainjob("t", {"name": "rt", "kind": "TrainingRuntime"})
    view = Workload(KARTA, obj, references=resolver).describe()
    (request,) = seen
    assert (request.kind.kind, request.object_name, request.namespace) == (
        "TrainingRuntime",
        "rt",
        "ml",
    )
    assert view["pods"]["desired"] == 3 and view["resources"]["gpus"] == 24
    assert [g["minMember"] for g in view["podGroups"]] == [3]
