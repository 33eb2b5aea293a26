"""``wlmap describe``: offline on the bundled examples (golden table and JSON), the file-mode
error rules, the no-definition payload, and live through the in-memory API."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tests.cli.conftest import EXAMPLES, GOLDEN
from tests.cli.fake_cluster import FLINK, JOBSET, FakeAPI, obj, owner_ref, pod

CASES = {
    "jobset": ["-f", "jobset/jobset.yaml", "--pods", "jobset/pods.yaml"],
    "pytorchjob": ["-f", "pytorchjob/pytorchjob.yaml", "--pods", "pytorchjob/pods.yaml"],
    "leaderworkerset": ["-f", "leaderworkerset/lws.yaml", "--pods", "leaderworkerset/pods.yaml"],
    "raycluster": ["-f", "raycluster/raycluster.yaml"],
}


def _args(case: str) -> list[str]:
    return [a if a.startswith("-") else str(EXAMPLES / a) for a in CASES[case]]


def _check_golden(name: str, text: str, update: bool) -> None:
    path = GOLDEN / name
    if update:
        path.write_text(text)
    assert path.exists(), f"{name} missing; create it with pytest tests/cli --update-golden"
    assert text == path.read_text(), f"{name} changed; review, then rerun with --update-golden"


@pytest.mark.parametrize("case", sorted(CASES))
def test_examples_table_golden(wlmap, case: str, update_golden: bool) -> None:
    r = wlmap(["describe", *_args(case)])
    assert r.code == 0, r.err
    assert "Traceback" not in r.err
    _check_golden(f"describe-{case}.txt", r.out, update_golden)


@pytest.mark.parametrize("case", sorted(CASES))
def test_examples_json_golden(wlmap, case: str, update_golden: bool) -> None:
    r = wlmap(["describe", *_args(case), "-o", "json"])
    assert r.code == 0, r.err
    view = json.loads(r.out)
    for key in (
        "apiVersion",
        "kind",
        "name",
        "definition",
        "fileMode",
        "phases",
        "pods",
        "resources",
        "components",
        "podGroups",
        "unattributedPods",
    ):
        assert key in view, key
    assert view["definition"]["origin"] == "catalog"
    _check_golden(f"describe-{case}.json", r.out, update_golden)


def test_yaml_equals_json(wlmap) -> None:
    as_json = json.loads(wlmap(["describe", *_args("jobset"), "-o", "json"]).out)
    as_yaml = yaml.safe_load(wlmap(["describe", *_args("jobset"), "-o", "yaml"]).out)
    assert as_json == as_yaml


def test_jobset_example_facts(wlmap) -> None:
    view = json.loads(wlmap(["describe", *_args("jobset"), "-o", "json"]).out)
    assert view["pods"] == {"desired": 5, "current": 5, "ready": 3, "pending": 1, "held": 4}
    assert view["resources"]["gpus"] == 32
    assert [p if isinstance(p, str) else p["name"] for p in view["unattributedPods"]] == [
        "eval-sweep-eval-0-0-zz9kq"
    ]
    r = wlmap(["describe", *_args("jobset")])
    assert "Unschedulable" in r.out and "|-- " in r.out and "`-- " in r.out
    assert "TOTAL" in r.out and "Gangs:" in r.out


def test_stdin_and_namespace(wlmap) -> None:
    text = (EXAMPLES / "raycluster" / "raycluster.yaml").read_text()
    r = wlmap(["describe", "-f", "-", "-n", "analytics", "-o", "json"], stdin=text)
    assert r.code == 0, r.err
    assert json.loads(r.out)["namespace"] == "analytics"
    # a different -n is refused, as kubectl does, instead of being ignored
    r = wlmap(["describe", "-f", "-", "-n", "other", "-o", "json"], stdin=text)
    assert r.code == 2 and r.out == ""
    assert (
        'the namespace from the provided object "analytics" does not match the namespace "other"'
        in r.err
    )
    no_ns = text.replace("namespace: analytics", "")
    assert no_ns != text
    r = wlmap(["describe", "-f", "-", "-n", "other", "-o", "json"], stdin=no_ns)
    assert r.code == 0, r.err
    assert json.loads(r.out)["namespace"] == "other"  # -n fills a missing namespace


def test_pod_limit_keeps_unhealthy(wlmap) -> None:
    r = wlmap(["describe", *_args("jobset"), "--pod-limit", "1"])
    assert r.code == 0
    assert "llm-pretrain-workers-1-0-b2n6r" in r.out  # the first unhealthy pod is kept
    assert "llm-pretrain-workers-0-0-m4d9s" not in r.out.split("Resources:")[0]
    assert "... and 3 more (1 of 2 unhealthy shown)" in r.out


def test_component_limit(wlmap) -> None:
    r = wlmap(["describe", *_args("jobset"), "--component-limit", "1"])
    assert r.code == 0
    assert "... and 1 more components" in r.out
    assert "workers" in r.out  # the component with problems is the one kept


def test_explain(wlmap) -> None:
    r = wlmap(["describe", *_args("pytorchjob"), "--explain"])
    assert r.code == 0, r.err
    assert "Explain:" in r.out
    j = wlmap(["describe", *_args("pytorchjob"), "--explain", "-o", "json"])
    assert isinstance(json.loads(j.out)["explain"], list)


def test_explain_shows_workload_notes_without_a_pod(wlmap, tmp_path: Path) -> None:
    # A RayJob that submits to an existing cluster: the gang would need no pods, which the
    # engine notes for the workload as a whole rather than for a pod.
    rayjob = {
        "apiVersion": "ray.io/v1",
        "kind": "RayJob",
        "metadata": {"name": "reuse", "namespace": "ml", "uid": "u-1"},
        "spec": {"entrypoint": "python run.py", "clusterSelector": {"ray.io/cluster": "shared"}},
    }
    path = tmp_path / "rayjob.yaml"
    path.write_text(yaml.safe_dump(rayjob))
    r = wlmap(["describe", "-f", str(path), "--explain"])
    assert r.code == 0, r.err
    assert "None ->" not in r.out
    assert "(workload)" in r.out


def test_definition_from_file(wlmap, tmp_path: Path) -> None:
    r = wlmap(["definitions", "batch-job-v1", "-o", "yaml"])
    karta = yaml.safe_load(r.out)
    karta["metadata"] = {"name": "my-job"}
    path = tmp_path / "karta.yaml"
    path.write_text(yaml.safe_dump(karta))
    job = tmp_path / "job.yaml"
    job.write_text(
        yaml.safe_dump(
            obj(
                "batch/v1",
                "Job",
                "j",
                spec={"template": {"spec": {"containers": [{"name": "c", "image": "x"}]}}},
            )
        )
    )
    out = wlmap(["describe", "-f", str(job), "--definition", str(path), "-o", "json"])
    assert out.code == 0, out.err
    assert json.loads(out.out)["definition"] == {"name": "my-job", "origin": "file"}


@pytest.mark.parametrize(
    ("content", "code", "needle"),
    [
        ("", 2, "no object found"),
        ("a: [1\n", 2, "not valid YAML or JSON (line 2"),
        ("kind: JobSet\nmetadata: {name: x}\n", 2, "has no apiVersion"),
        (
            "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\n---\n"
            "apiVersion: v1\nkind: Pod\nmetadata: {name: b}\n",
            2,
            "holds 2 workloads a definition covers (Pod/a, Pod/b)",
        ),
        ("apiVersion: v1\nkind: Pod\nmetadata: ...\n", 2, "metadata must be a mapping"),
        ("apiVersion: v1\nkind: [Pod]\n", 2, "kind must be a string"),
        ("- 1\n- 2\n", 2, "document 1 is a number, not a Kubernetes object"),
        (
            '{"apiVersion": "flink.apache.org/v1beta1", "kind": "FlinkDeployment", '
            '"metadata": {"name": "etl"}}',
            4,
            "no definition covers",
        ),
    ],
)
def test_file_mode_errors(wlmap, tmp_path: Path, content: str, code: int, needle: str) -> None:
    path = tmp_path / "w.yaml"
    path.write_text(content)
    r = wlmap(["describe", "-f", str(path)])
    assert r.code == code, r.err
    assert needle in r.err
    assert "Traceback" not in r.err


def test_unreadable_files(wlmap, tmp_path: Path) -> None:
    r = wlmap(["describe", "-f", str(tmp_path / "missing.yaml")])
    assert r.code == 2 and "no such file" in r.err
    r = wlmap(["describe", "-f", str(tmp_path)])
    assert r.code == 2 and "directory" in r.err
    ok = str(EXAMPLES / "raycluster" / "raycluster.yaml")
    r = wlmap(["describe", "-f", ok, "--pods", str(tmp_path / "nope")])
    assert r.code == 2 and "nope" in r.err
    r = wlmap(["describe", "-f", "-", "--pods", "-"])
    assert r.code == 2 and "stdin" in r.err


def test_no_definition_payload(wlmap, tmp_path: Path) -> None:
    path = tmp_path / "flink.yaml"
    path.write_text(
        "apiVersion: flink.apache.org/v1beta1\nkind: FlinkDeployment\nmetadata: {name: etl}\n"
    )
    for fmt, load in (("json", json.loads), ("yaml", yaml.safe_load)):
        r = wlmap(["describe", "-f", str(path), "-o", fmt])
        assert r.code == 4
        payload = load(r.out)
        assert payload["error"] == "no_definition_for_type"
        assert payload["gvk"] == "flink.apache.org/v1beta1, Kind=FlinkDeployment"
        assert payload["message"] and payload["hint"]
    table = wlmap(["describe", "-f", str(path)])
    assert table.out == ""


# -- live, through the in-memory API ---------------------------------------------------------------


def _jobset_api() -> FakeAPI:
    api = FakeAPI().serve(JOBSET, FLINK)
    js = obj(
        "jobset.x-k8s.io/v1alpha2",
        "JobSet",
        "train",
        "ml",
        spec={
            "replicatedJobs": [
                {
                    "name": "workers",
                    "replicas": 1,
                    "template": {
                        "spec": {
                            "parallelism": 2,
                            "template": {
                                "spec": {
                                    "containers": [
                                        {
                                            "name": "c",
                                            "image": "x",
                                            "resources": {"requests": {"nvidia.com/gpu": "8"}},
                                        }
                                    ]
                                }
                            },
                        }
                    },
                }
            ]
        },
    )
    job = obj("batch/v1", "Job", "train-workers-0", "ml", owner=owner_ref(js))
    labels = {"jobset.sigs.k8s.io/replicatedjob-name": "workers"}
    api.add(
        js,
        job,
        pod("train-workers-0-0", job, namespace="ml", labels=labels, gpus=8),
        pod(
            "train-workers-0-1",
            job,
            namespace="ml",
            labels=labels,
            gpus=8,
            ready=False,
            node=None,
            phase="Pending",
        ),
        pod("stranger", None, namespace="ml"),
    )
    return api


def test_live_describe(wlmap) -> None:
    api = _jobset_api()
    for target in (["jobset/train"], ["jobsets", "train"], ["js/train"]):
        r = wlmap(["describe", *target, "-n", "ml", "-o", "json"], api=api)
        assert r.code == 0, r.err
        view = json.loads(r.out)
        assert view["pods"] == {
            "desired": 2,
            "current": 2,
            "ready": 1,
            "pending": 1,
            "held": 1,
        }
        assert view["fileMode"] is False
    r = wlmap(["describe", "jobset/train", "-n", "ml"], api=api)
    assert r.code == 0
    assert r.out.startswith("JobSet/train   namespace: ml   definition: ")
    assert "age: " in r.out.splitlines()[0]
    # said by the first call on this cluster only; -v says it every time
    assert "CRD is not installed" not in r.err
    r = wlmap(["describe", "jobset/train", "-n", "ml", "-v"], api=api)
    assert "warning: the kartas.run.ai CRD is not installed" in r.err
    assert "`wlmap crd apply`" in r.err


def test_missing_crd_notice_once_per_machine_and_cluster(wlmap, home) -> None:
    api = _jobset_api()
    argv = ["get", "jobsets", "-n", "ml"]
    first = wlmap(argv, api=api)
    assert first.code == 0
    assert first.err.count("the kartas.run.ai CRD is not installed") == 1, first.err
    assert "`wlmap crd apply`" in first.err and "-v" in first.err
    assert "CRD is not installed" not in wlmap(argv, api=api).err
    assert "CRD is not installed" in wlmap([*argv, "--verbose"], api=api).err
    # remembered under the user's cache directory: another one says it again
    assert (
        "CRD is not installed" in wlmap(argv, api=api, env={"XDG_CACHE_HOME": str(home / "c")}).err
    )
    markers = list((home / ".cache" / "workload-map" / "notices").iterdir())
    assert len(markers) == 1


def test_live_exit_codes(wlmap) -> None:
    api = _jobset_api()
    r = wlmap(["describe", "jobset/nope", "-n", "ml"], api=api)
    assert r.code == 3 and 'JobSet "nope" not found in namespace ml' in r.err
    r = wlmap(["describe", "flinkdeployment/etl", "-n", "ml", "-o", "json"], api=api)
    assert r.code == 4
    assert json.loads(r.out)["error"] == "no_definition_for_type"
    r = wlmap(["describe", "pytorchjob/x", "-n", "ml"], api=api)
    assert r.code == 3 and "PyTorchJob is not installed in this cluster" in r.err
    r = wlmap(["describe", "jobsett/train", "-n", "ml"], api=api)
    assert r.code == 4 and '"jobset"' in r.err  # did you mean
    api.unreachable = True
    r = wlmap(["describe", "jobset/train"], api=api)
    assert r.code == 1 and "cannot reach the cluster" in r.err


def test_live_without_cluster(wlmap) -> None:
    r = wlmap(["describe", "jobset/train"])
    assert r.code == 1
    assert "no cluster configured" in r.err


def test_live_definition_of_another_kind_is_refused(wlmap, tmp_path: Path) -> None:
    karta = yaml.safe_load(wlmap(["definitions", "batch-job-v1", "-o", "yaml"]).out)
    karta["metadata"] = {"name": "job-karta"}
    path = tmp_path / "karta.yaml"
    path.write_text(yaml.safe_dump(karta))
    r = wlmap(
        ["describe", "jobset/train", "-n", "ml", "--definition", str(path)], api=_jobset_api()
    )
    assert r.code == 1, r.err
    assert "describes batch/v1, Kind=Job, but jobset/train is jobset.x-k8s.io/v1alpha2" in r.err
