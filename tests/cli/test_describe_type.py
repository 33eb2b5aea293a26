"""``wlmap describe TYPE`` (all of a type, as kubectl) and ``describe -o name``."""

from __future__ import annotations

import json

from tests.cli.fake_cluster import KARTA
from tests.cli.test_get import _api


def test_describe_type_describes_each_in_name_order(wlmap) -> None:
    api = _api().serve(KARTA)
    r = wlmap(["describe", "jobsets"], api=api)
    assert r.code == 0, r.err
    headers = [line for line in r.out.splitlines() if line.startswith("JobSet/")]
    assert [h.split()[0] for h in headers] == ["JobSet/new", "JobSet/old"]
    # the same view as describe TYPE/NAME prints for one of them
    one = wlmap(["describe", "jobset/new"], api=api).out
    assert one in r.out
    doc = json.loads(wlmap(["describe", "jobset", "-o", "json"], api=api).out)
    assert doc["count"] == 2 and [i["name"] for i in doc["items"]] == ["new", "old"]
    assert doc["items"][0]["pods"]["current"] == 2  # pods attributed as for one workload
    r = wlmap(["describe", "jobsets", "-A", "-o", "name"], api=api)
    assert r.out.splitlines() == [
        "jobset.jobset.x-k8s.io/new",
        "jobset.jobset.x-k8s.io/old",
        "jobset.jobset.x-k8s.io/far",
    ]
    r = wlmap(["describe", "jobsets", "-l", "team=a", "-o", "name"], api=api)
    assert r.out == "jobset.jobset.x-k8s.io/new\n"


def test_describe_type_empty_and_not_served(wlmap) -> None:
    api = _api().serve(KARTA)
    r = wlmap(["describe", "jobsets", "-n", "empty"], api=api)
    assert r.code == 0 and r.out == "" and "No workloads found in namespace empty." in r.err
    r = wlmap(["describe", "pytorchjobs"], api=api)
    assert r.code == 3 and "PyTorchJob is not installed in this cluster" in r.err


def test_describe_one_as_name(wlmap) -> None:
    api = _api().serve(KARTA)
    r = wlmap(["describe", "jobset/old", "-o", "name"], api=api)
    assert (r.code, r.out) == (0, "jobset.jobset.x-k8s.io/old\n")
    r = wlmap(["describe", "-f", "examples/jobset/jobset.yaml", "-o", "name"])
    assert r.out == "jobset.jobset.x-k8s.io/llm-pretrain\n"


def test_describe_type_covered_only_by_a_cluster_karta(wlmap) -> None:
    import yaml

    from tests.cli.fake_cluster import FLINK, obj

    karta = yaml.safe_load(wlmap(["definitions", "batch-job-v1", "-o", "yaml"]).out)
    karta["metadata"] = {"name": "flink"}
    karta["spec"]["structureDefinition"]["rootComponent"]["kind"] = {
        "group": "flink.apache.org",
        "version": "v1beta1",
        "kind": "FlinkDeployment",
    }
    api = _api().serve(KARTA, FLINK)
    template = {"spec": {"containers": [{"name": "c", "image": "x"}]}}
    api.add(
        karta,
        obj(
            "flink.apache.org/v1beta1", "FlinkDeployment", "etl", "ml", spec={"template": template}
        ),
    )
    r = wlmap(["describe", "flinkdeployments", "-o", "name"], api=api)
    assert (r.code, r.out) == (0, "flinkdeployment.flink.apache.org/etl\n"), r.err
