"""Live ``wlmap get`` reads a definition's references: a TrainJob's row counts the pods and GPUs
its runtime gives, each referenced object is read once per run however many rows name it, and a
reference that cannot be read is a warning naming it, the row still shown."""

from __future__ import annotations

import json

from tests.cli.fake_cluster import FakeAPI, Res
from tests.cluster.test_inventory_references import runtime, trainjob

TRAINJOB = Res("trainer.kubeflow.org", "v1alpha1", "TrainJob", "trainjobs")
RUNTIME = Res(
    "trainer.kubeflow.org",
    "v1alpha1",
    "ClusterTrainingRuntime",
    "clustertrainingruntimes",
    namespaced=False,
)
RUNTIME_PATH = "/apis/trainer.kubeflow.org/v1alpha1/clustertrainingruntimes"


def _api(*, serve_runtimes: bool = True) -> FakeAPI:
    api = FakeAPI(namespace="ml").serve(TRAINJOB)
    if serve_runtimes:
        api.serve(RUNTIME)
    api.add(
        runtime("torch", 3, 2),
        trainjob("a", "torch"),
        trainjob("b", "torch", nodes=2),
        trainjob("c", "gone"),
    )
    return api


def _rows(out: str) -> dict[str, list[str]]:
    return {line.split()[0]: line.split() for line in out.splitlines()[1:]}


def test_trainjob_rows_count_the_runtimes_pods_and_gpus_read_once(wlmap) -> None:
    api = _api()
    r = wlmap(["get", "trainjobs"], api=api)
    assert r.code == 0, r.err
    rows = _rows(r.out)
    # NAME PHASE PODS GPUS AGE: the runtime's 3 nodes of 2 GPUs; b's numNodes overrides it
    assert rows["a"][2:4] == ["0/3", "6"]
    assert rows["b"][2:4] == ["0/2", "4"]
    # one read per referenced object for the whole run: torch once for a and b, gone once
    reads = [path for path in api.requests if path.startswith(RUNTIME_PATH)]
    assert sorted(reads) == [f"{RUNTIME_PATH}/gone", f"{RUNTIME_PATH}/torch"]


def test_a_missing_runtime_is_a_warning_naming_it_and_the_row_is_shown(wlmap) -> None:
    r = wlmap(["get", "trainjobs"], api=_api())
    assert r.code == 0, r.err
    assert "c" in _rows(r.out)
    warnings = [line for line in r.err.splitlines() if "reference" in line]
    assert warnings == [
        "warning: TrainJob ml/c: reference 'runtime': ClusterTrainingRuntime/gone in namespace ml not found; "
        "shown with what the TrainJob alone says"
    ]
    doc = json.loads(wlmap(["get", "trainjobs", "-o", "json"], api=_api()).out)
    assert [item["name"] for item in doc["items"]] == ["a", "b", "c"]


def test_a_forbidden_runtime_is_a_warning_per_row_with_the_rows_shown(wlmap) -> None:
    api = _api()
    api.forbidden.add(RUNTIME_PATH)
    r = wlmap(["get", "trainjobs"], api=api)
    assert r.code == 0, r.err
    assert set(_rows(r.out)) == {"a", "b", "c"}
    # without the runtime, a TrainJob alone gives its own numNodes (1 by default) and no GPUs
    assert _rows(r.out)["b"][2:4] == ["0/2", "0"]
    warned = [line for line in r.err.splitlines() if "reference 'runtime'" in line]
    assert len(warned) == 3 and all("forbidden" in line for line in warned), r.err
    assert "TrainJob ml/a:" in warned[0] and "ClusterTrainingRuntime/torch" in warned[0]


def test_an_unserved_runtime_kind_is_a_warning_with_the_rows_shown(wlmap) -> None:
    r = wlmap(["get", "trainjobs"], api=_api(serve_runtimes=False))
    assert r.code == 0, r.err
    assert set(_rows(r.out)) == {"a", "b", "c"}
    assert "the cluster serves no ClusterTrainingRuntime" in r.err, r.err


def test_get_all_types_and_a_bare_name_read_references_too(wlmap) -> None:
    r = wlmap(["get", "--all-types"], api=_api())
    assert r.code == 0, r.err
    row = next(line.split() for line in r.out.splitlines() if line.startswith("a "))
    assert row[1:5] == ["TrainJob", "Initializing", "0/3", "6"]
    r = wlmap(["get", "b"], api=_api())
    assert r.code == 0, r.err
    assert r.out.splitlines()[1].split()[3:5] == ["0/2", "4"]
