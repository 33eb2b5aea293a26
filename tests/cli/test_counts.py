"""Counts as kubectl shows them (issue 12 item 6) and memory columns in one unit."""

from __future__ import annotations

import json

from tests.cli.fake_cluster import FakeAPI, pod
from workload_map.cli.humanize import memory_column


def test_get_pods_counts_a_ready_bare_pod_as_ready(wlmap) -> None:
    api = FakeAPI(namespace="ml").add(
        pod("solo", None, namespace="ml"), pod("sleepy", None, namespace="ml", ready=False)
    )
    r = wlmap(["get", "pods", "-o", "json"], api=api)
    assert r.code == 0, r.err
    counts = {i["name"]: i["pods"] for i in json.loads(r.out)["items"]}
    assert counts["solo"] == {"desired": 1, "current": 1, "ready": 1, "pending": 0, "held": 1}
    assert counts["sleepy"]["current"] == 1 and counts["sleepy"]["ready"] == 0
    table = wlmap(["get", "pods"], api=api)
    row = next(line.split() for line in table.out.splitlines() if line.startswith("solo"))
    assert "1/1" in row


def test_memory_column_uses_one_unit() -> None:
    assert memory_column([2**41, 2056 * 2**30, 0, None]) == ["2048Gi", "2056Gi", "0", "0"]
    assert memory_column([512 * 2**20, 2**30]) == ["512Mi", "1024Mi"]
    assert memory_column([1500 * 10**6, 2 * 10**9]) == ["1500M", "2000M"]
    assert memory_column([1500 * 10**6, 2**30]) == ["1500M", "1Gi"]  # no common exact unit


def test_forbidden_pod_list_shows_unknown_not_zero(wlmap) -> None:
    from tests.cli.fake_cluster import JOBSET, obj

    api = FakeAPI(namespace="ml").serve(JOBSET)
    template = {"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "x"}]}}}}
    spec = {"replicatedJobs": [{"name": "w", "replicas": 2, "template": template}]}
    api.add(obj("jobset.x-k8s.io/v1alpha2", "JobSet", "train", "ml", spec=spec))
    api.forbidden.add("/api/v1/namespaces/ml/pods")
    unknown = {"desired": 2, "current": None, "ready": None, "pending": None, "held": None}
    listed = wlmap(["get", "--all-types", "-o", "json"], api=api)
    assert [i["pods"] for i in json.loads(listed.out)["items"]] == [unknown]
    described = wlmap(["describe", "jobset/train", "-o", "json"], api=api)
    assert json.loads(described.out)["pods"] == unknown
    assert "forbidden" in described.err
    table = wlmap(["get", "--all-types"], api=api)
    assert "-/2" in table.out


def test_oom_killed_container_shows_as_kubectl_shows_it(wlmap) -> None:
    from tests.cli.conftest import EXAMPLES
    from workload_map.engine.pod_status import pod_reason

    r = wlmap(
        [
            "describe",
            "-f",
            str(EXAMPLES / "pytorchjob/pytorchjob.yaml"),
            "--pods",
            str(EXAMPLES / "pytorchjob/pods.yaml"),
        ]
    )
    assert r.code == 0, r.err
    line = next(x for x in r.out.splitlines() if "resnet-ddp-worker-2" in x)
    assert "OOMKilled" in line and "PodFailed" not in line

    def ended(**terminated: object) -> dict[str, object]:
        state = {"terminated": terminated}
        return {"status": {"phase": "Failed", "containerStatuses": [{"state": state}]}}

    assert pod_reason(ended(exitCode=137, reason="OOMKilled")) == "OOMKilled"
    assert pod_reason(ended(exitCode=1)) == "ExitCode:1"
    assert pod_reason(ended(exitCode=0, signal=9)) == "Signal:9"
    done = ended(exitCode=0, reason="Completed")
    done["status"]["phase"] = "Succeeded"  # type: ignore[index]
    assert pod_reason(done) is None
