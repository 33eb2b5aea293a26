"""``wlmap verify``: a definition proved against workload files, with a prediction, for CI."""

from __future__ import annotations

import copy
from pathlib import Path

import yaml

from tests.cli.conftest import EXAMPLES

JOBSET = EXAMPLES / "jobset" / "jobset.yaml"
LWS = EXAMPLES / "leaderworkerset" / "lws.yaml"


def _definition(wlmap, tmp_path: Path, name: str) -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(wlmap(["definitions", name, "-o", "yaml"]).out)
    return path


def test_dump_then_verify_round_trip(wlmap, tmp_path: Path) -> None:
    karta = _definition(wlmap, tmp_path, "jobset-x-k8s-io-jobset-v1alpha2")
    dumped = wlmap(["verify", "--definition", str(karta), str(JOBSET), "--dump"])
    assert dumped.code == 0, dumped.err
    expected = yaml.safe_load(dumped.out)
    # what the example JobSet implies: a driver and 4 GPU workers, one gang of all 5 pods
    assert expected["pods"] == 5 and expected["gpus"] == 32
    assert expected["components"]["replicatedjob"]["instances"] == ["driver", "workers"]
    assert expected["components"]["replicatedjob[workers]"] == {"replicas": 4, "gpus": 32}
    assert expected["gangs"] == [{"minMember": 5, "definition": "jobset"}]
    predict = tmp_path / "expected.yaml"
    predict.write_text(dumped.out)
    r = wlmap(["verify", "--definition", str(karta), str(JOBSET), "--predict", str(predict)])
    assert r.code == 0, r.err
    assert r.out.startswith("OK: JobSet/llm-pretrain") and "prediction check(s) passed" in r.out


def test_mismatch_exits_6_naming_each_difference(wlmap, tmp_path: Path) -> None:
    karta = _definition(wlmap, tmp_path, "jobset-x-k8s-io-jobset-v1alpha2")
    predict = tmp_path / "expected.yaml"
    predict.write_text(
        yaml.safe_dump(
            {
                "phases": ["Completed"],
                "components": {
                    "replicatedjob[workers]": {"replicas": 3},
                    "replicatedjob": {"instances": ["workers", "driver"]},  # order-insensitive
                    "nope": {"replicas": 1},
                },
                "gangs": [4],
            }
        )
    )
    r = wlmap(["verify", "--definition", str(karta), str(JOBSET), "--predict", str(predict)])
    assert r.code == 6
    assert 'phases: expected ["Completed"], got ["Running"]' in r.out
    assert "components.replicatedjob[workers].replicas: expected 3, got 4" in r.out
    assert "components.nope: no such component or instance" in r.out
    assert "gangs: expected" in r.out
    assert "instances" not in r.out  # the ids matched
    assert "1 workload(s) differ from the prediction" in r.err


def test_nested_keys_and_several_workloads(wlmap, tmp_path: Path) -> None:
    karta = _definition(wlmap, tmp_path, "leaderworkerset-x-k8s-io-leaderworkerset-v1")
    dumped = yaml.safe_load(wlmap(["verify", "--definition", str(karta), str(LWS), "--dump"]).out)
    comps = dumped["components"]
    assert comps["group[0]/leader"] == {"replicas": 1, "gpus": 8}
    assert comps["leader"]["replicas"] == 2  # one leader per group, summed
    second = tmp_path / "lws2.yaml"
    doc = yaml.safe_load(LWS.read_text())
    other = copy.deepcopy(doc)
    other["metadata"]["name"] = "other"
    other["spec"]["replicas"] = 3
    second.write_text(yaml.safe_dump(other))
    predict = tmp_path / "expected.yaml"
    predict.write_text(
        yaml.safe_dump(
            {
                "workloads": {
                    f"LeaderWorkerSet/{doc['metadata']['name']}": {
                        "components": {"group[1]/worker": {"replicas": 1}}
                    },
                    "other": {"components": {"leader": {"replicas": 3}}, "pods": 6},
                }
            }
        )
    )
    r = wlmap(
        ["verify", "--definition", str(karta), str(LWS), str(second), "--predict", str(predict)]
    )
    assert r.code == 0, r.out + r.err
    assert r.out.count("OK: ") == 2
    # a single unkeyed prediction is ambiguous with several workloads
    flat = tmp_path / "flat.yaml"
    flat.write_text("pods: 4\n")
    r = wlmap(["verify", "--definition", str(karta), str(LWS), str(second), "--predict", str(flat)])
    assert r.code == 1 and "key the prediction by workload" in r.err


def test_strict_warnings_exit_7(wlmap, tmp_path: Path) -> None:
    karta = yaml.safe_load(
        wlmap(["definitions", "jobset-x-k8s-io-jobset-v1alpha2", "-o", "yaml"]).out
    )
    root = karta["spec"]["structureDefinition"]["rootComponent"]
    # only "completed" is mapped, and the running example matches nothing
    root["statusDefinition"]["statusMappings"] = {
        "completed": [{"byConditions": [{"type": "Completed", "status": "True"}]}]
    }
    path = tmp_path / "nostatus.yaml"
    path.write_text(yaml.safe_dump(karta))
    job = yaml.safe_load(JOBSET.read_text())
    job["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["containers"] = []
    workload = tmp_path / "job.yaml"
    workload.write_text(yaml.safe_dump(job))
    r = wlmap(["verify", "--definition", str(path), str(workload)])
    assert r.code == 0, r.err
    assert "status unresolved: no status mapping matches the object" in r.err
    assert "replicatedjob[driver]: the pod spec from" in r.err and "has no containers" in r.err
    r = wlmap(["verify", "--definition", str(path), str(workload), "--strict"])
    assert r.code == 7 and "warning(s) under --strict" in r.err


def test_load_errors_exit_1_and_usage_2(wlmap, tmp_path: Path) -> None:
    karta = _definition(wlmap, tmp_path, "jobset-x-k8s-io-jobset-v1alpha2")
    broken = tmp_path / "broken.yaml"
    broken.write_text(
        "apiVersion: run.ai/v1alpha1\nkind: Karta\nmetadata: {name: b}\n"
        "spec: {structureDefinition: {}}\n"
    )
    r = wlmap(["verify", "--definition", str(broken), str(JOBSET)])
    assert r.code == 1
    r = wlmap(["verify", "--definition", str(karta), str(LWS)])
    assert r.code == 1 and "no JobSet object for definition" in r.err
    r = wlmap(["verify", "--definition", str(karta), str(tmp_path / "missing.yaml")])
    assert r.code == 1
    bad = tmp_path / "bad.yaml"
    bad.write_text("pods: 5\nreplicas: 3\n")
    r = wlmap(["verify", "--definition", str(karta), str(JOBSET), "--predict", str(bad)])
    assert r.code == 1 and "unknown field replicas" in r.err
    assert wlmap(["verify", str(JOBSET)]).code == 2  # --definition is required
    assert wlmap(["verify", "--definition", str(karta)]).code == 2  # no workload file
