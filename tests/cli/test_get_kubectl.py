"""The kubectl habits of ``wlmap get``: several types and names, columns, templates, sorting,
``--stuck``, and ``-w``/``--watch-only`` (through the in-memory API)."""

from __future__ import annotations

import copy
import json
import threading

import yaml

from tests.cli.fake_cluster import KARTA, PYTORCHJOB, FakeAPI, obj, owner_ref, pod
from tests.cli.test_get import _api


def _rows(out: str) -> list[list[str]]:
    return [line.split() for line in out.splitlines()]


def test_several_types_and_names(wlmap) -> None:
    api = _api()
    r = wlmap(["get", "jobsets,jobs"], api=api)
    assert r.code == 0, r.err
    rows = _rows(r.out)
    assert rows[0] == ["NAME", "TYPE", "PHASE", "PODS", "GPUS", "AGE"]
    # every row, whatever its type, in namespace/name order
    assert [(row[0], row[1]) for row in rows[1:]] == [
        ("lone", "Job"),
        ("new", "JobSet"),
        ("new-w-0", "Job"),
        ("old", "JobSet"),
    ]
    r = wlmap(["get", "jobset", "old", "new"], api=api)
    assert [row[0] for row in _rows(r.out)[1:]] == ["new", "old"]
    r = wlmap(["get", "jobset/old", "job/lone", "-o", "name"], api=api)
    assert r.out == "job.batch/lone\njobset.jobset.x-k8s.io/old\n"
    # one missing name: the others are still printed, then exit 3 naming it
    r = wlmap(["get", "jobset", "old", "nope"], api=api)
    assert r.code == 3 and "old" in r.out and '"nope" not found' in r.err
    r = wlmap(["get", "jobset/old", "lone"], api=api)
    assert r.code == 2 and "TYPE/NAME form" in r.err
    # several names in JSON: a list, one name: the bare object (as before)
    doc = json.loads(wlmap(["get", "jobset", "old", "new", "-o", "json"], api=api).out)
    assert doc["count"] == 2
    assert json.loads(wlmap(["get", "jobset/old", "-o", "json"], api=api).out)["name"] == "old"


def test_type_not_served_exits_3_alone_or_named(wlmap) -> None:
    api = _api().serve(KARTA)
    for argv in (
        ["get", "pytorchjobs"],
        ["get", "pytorchjob", "x"],
        ["get", "jobsets,pytorchjobs"],
    ):
        r = wlmap(argv, api=api)
        assert r.code == 3, (argv, r.err)
        assert "PyTorchJob is not installed in this cluster" in r.err
    # --all-types skips types the cluster does not serve without a word
    r = wlmap(["get", "--all-types"], api=api)
    assert r.code == 0 and "PyTorchJob" not in r.err and "warning" not in r.err


def test_all_types_one_line_for_forbidden_types(wlmap) -> None:
    api = _api().serve(PYTORCHJOB, KARTA)
    api.forbidden.update(
        {
            "/apis/jobset.x-k8s.io/v1alpha2/namespaces/ml/jobsets",
            "/apis/kubeflow.org/v1/namespaces/ml/pytorchjobs",
        }
    )
    r = wlmap(["get", "--all-types"], api=api)
    assert r.code == 0, r.err
    warnings = [line for line in r.err.splitlines() if line.startswith("warning:")]
    assert warnings == [
        "warning: not allowed to list 2 types in namespace ml (left out): "
        "jobsets.jobset.x-k8s.io, pytorchjobs.kubeflow.org"
    ]
    assert "lone" in r.out


def test_headers_labels_and_label_columns(wlmap) -> None:
    api = _api()
    r = wlmap(["get", "jobsets", "--no-headers"], api=api)
    assert [row[0] for row in _rows(r.out)] == ["new", "old"]
    r = wlmap(["get", "jobsets", "--show-labels", "-L", "team,absent"], api=api)
    rows = _rows(r.out)
    assert rows[0][-3:] == ["TEAM", "ABSENT", "LABELS"]
    assert rows[1][0] == "new" and rows[1][-2:] == ["a", "team=a"]
    assert rows[2][0] == "old" and rows[2][-1] == "<none>"


def test_jsonpath_and_custom_columns(wlmap) -> None:
    api = _api()
    r = wlmap(
        ["get", "jobsets", "-o", 'jsonpath={range .items[*]}{.name}={.pods.ready}{"\\n"}{end}'],
        api=api,
    )
    assert r.code == 0, r.err
    assert r.out == "new=1\nold=0\n"
    r = wlmap(["get", "jobset/new", "-o", "jsonpath={.metadata.labels.team}"], api=api)
    assert r.out == "a"
    r = wlmap(
        ["get", "jobsets", "-o", "custom-columns=N:.metadata.name,PH:.phases[*],X:.nothing"],
        api=api,
    )
    lines = r.out.splitlines()
    assert lines[0].split() == ["N", "PH", "X"]
    assert lines[1].split()[0] == "new" and lines[1].split()[-1] == "<none>"
    # kubectl's tabwriter: at least 6 wide, 3 spaces of padding
    assert lines[0].startswith("N     PH")
    r = wlmap(["get", "jobsets", "-o", "custom-columns=N:.name", "--no-headers"], api=api)
    assert r.out == "new\nold\n"
    r = wlmap(["get", "jobsets", "-o", "jsonpath={.items[0"], api=api)
    assert r.code == 2 and "error parsing jsonpath" in r.err
    r = wlmap(["get", "jobsets", "-o", "custom-columns=bad"], api=api)
    assert r.code == 2 and "<header>:<json-path-expr>" in r.err


def test_sort_by(wlmap) -> None:
    api = _api()
    r = wlmap(["get", "jobsets", "--sort-by", ".createdAt", "--no-headers"], api=api)
    assert [row[0] for row in _rows(r.out)] == ["old", "new"]
    r = wlmap(["get", "jobsets", "--sort-by", "{.pods.ready}", "--no-headers"], api=api)
    assert [row[0] for row in _rows(r.out)] == ["old", "new"]
    r = wlmap(["get", "jobsets", "--sort-by", ".phases[*]", "--no-headers"], api=api)
    assert r.code == 0  # one phase each here
    r = wlmap(["get", "jobsets", "--sort-by", ".metadata.name", "-o", "name"], api=api)
    assert r.out.splitlines() == ["jobset.jobset.x-k8s.io/new", "jobset.jobset.x-k8s.io/old"]


def _stuck_api() -> FakeAPI:
    api = _api()
    spec = {
        "replicatedJobs": [
            {
                "name": "w",
                "replicas": 1,
                "template": {
                    "spec": {
                        "parallelism": 2,
                        "template": {"spec": {"containers": [{"name": "c", "image": "x"}]}},
                    }
                },
            }
        ]
    }
    js = obj("jobset.x-k8s.io/v1alpha2", "JobSet", "pending", "ml", spec=spec)
    job = obj("batch/v1", "Job", "pending-w-0", "ml", owner=owner_ref(js))
    p = pod("pending-w-0-0", job, namespace="ml", ready=False, phase="Pending", node=None)
    p["metadata"]["labels"] = {"jobset.sigs.k8s.io/replicatedjob-name": "w"}
    p["status"]["conditions"].append(
        {
            "type": "PodScheduled",
            "status": "False",
            "reason": "Unschedulable",
            "message": "0/3 nodes are available: 3 Insufficient nvidia.com/gpu",
        }
    )
    api.add(js, job, p)
    return api


def test_stuck_filter(wlmap) -> None:
    api = _stuck_api()
    r = wlmap(["get", "jobsets", "--stuck"], api=api)
    assert r.code == 0, r.err
    assert [row[0] for row in _rows(r.out)[1:]] == ["pending"]
    # phases stay the reference's: --stuck filters, it adds no phase
    assert "Stuck" not in r.out
    doc = json.loads(wlmap(["get", "jobsets", "-o", "json"], api=api).out)
    stuck = {i["name"]: i["stuck"] for i in doc["items"]}
    assert stuck["pending"] == "1 pod Unschedulable"
    assert stuck["old"] is None
    wide = wlmap(["get", "jobsets", "-o", "wide"], api=api)
    assert "STUCK" in wide.out and "1 pod Unschedulable" in wide.out


def _modified(api: FakeAPI, name: str, **status: object) -> dict:
    current = next(
        o for o in api.objects if o["metadata"]["name"] == name and o.get("kind") == "JobSet"
    )
    new = copy.deepcopy(current)
    new["status"] = status
    new["metadata"]["resourceVersion"] = "42"
    return {"type": "MODIFIED", "object": new}


def test_watch_prints_changes(wlmap) -> None:
    api = _api()
    api.events = [
        _modified(api, "new", replicatedJobsStatus=[{"name": "w", "ready": 1}]),  # no change
        _modified(api, "new", conditions=[{"type": "Failed", "status": "True"}]),
    ]
    r = wlmap(["get", "jobsets", "-w"], api=api)
    assert r.code == 130  # ended by the (simulated) Ctrl-C
    lines = r.out.splitlines()
    assert [line.split()[0] for line in lines] == ["NAME", "new", "old", "new"]
    assert "Failed" in lines[3]
    # the columns of the change line up with the first screen
    assert lines[3].index("Failed") == lines[1].index(lines[1].split()[1])
    path, query = api.streams[0]
    assert path == "/apis/jobset.x-k8s.io/v1alpha2/namespaces/ml/jobsets"
    assert query["watch"] == "true" and query["allowWatchBookmarks"] == "true"


def test_watch_follows_pods_too(wlmap) -> None:
    """A pod turning Ready refreshes its workload's row, though the JobSet itself is unchanged."""
    api = _api()
    ready = copy.deepcopy(next(o for o in api.objects if o["metadata"]["name"] == "new-w-0-1"))
    ready["status"]["conditions"] = [{"type": "Ready", "status": "True"}]
    api.pod_events = [{"type": "MODIFIED", "object": ready}]
    r = wlmap(["get", "jobsets", "-w"], api=api)
    assert r.code == 130, r.err
    lines = r.out.splitlines()
    assert [line.split()[:3] for line in lines[1:]] == [
        ["new", "Running", "1/2"],
        ["old", "Completed", "completed"],
        ["new", "Running", "2/2"],
    ]
    assert any(path == "/api/v1/namespaces/ml/pods" for path, _ in api.streams)


def test_watch_leaves_no_pump_running(wlmap) -> None:
    """The command's end stops both watches' threads (the pods' stream stays open until then):
    an in-process run leaves no thread reading a watch behind."""
    api = _api()
    api.events = [_modified(api, "old", conditions=[{"type": "Failed", "status": "True"}])]
    before = set(threading.enumerate())
    r = wlmap(["get", "jobsets", "-w"], api=api)
    assert r.code == 130, r.err
    assert any(path.endswith("/pods") for path, _ in api.streams)  # the pods' watch was open
    assert [t.name for t in set(threading.enumerate()) - before] == []


def test_watch_only_and_formats(wlmap) -> None:
    api = _api()
    api.events = [_modified(api, "old", conditions=[{"type": "Failed", "status": "True"}])]
    r = wlmap(["get", "jobsets", "--watch-only"], api=api)
    lines = r.out.splitlines()
    assert [line.split()[0] for line in lines] == ["NAME", "old"] and "Failed" in lines[1]
    api.events = [_modified(api, "old", conditions=[])]
    r = wlmap(["get", "jobset/old", "--watch-only", "-o", "yaml"], api=api)
    docs = [d for d in yaml.safe_load_all(r.out) if d]
    assert [d["name"] for d in docs] == ["old"]
    jobset_streams = [q for path, q in api.streams if path.endswith("/jobsets")]
    assert jobset_streams[-1]["fieldSelector"] == "metadata.name=old"
    assert wlmap(["get", "--all-types", "-w"], api=api).code == 2
    assert wlmap(["get", "jobsets,jobs", "-w"], api=api).code == 2


def test_serve_karta_list_does_not_break_templates(wlmap) -> None:
    api = _api().serve(KARTA)
    r = wlmap(["get", "jobsets", "-o", "jsonpath={.count}"], api=api)
    assert r.out == "2"


def test_cluster_karta_notice_can_be_turned_off(wlmap, home) -> None:
    api = _api().serve(KARTA)
    api.forbidden.add("/apis/run.ai/v1alpha1/kartas")
    r = wlmap(["get", "jobsets"], api=api)
    assert r.code == 0 and "not allowed to list Karta definitions" in r.err
    r = wlmap(["get", "jobsets"], api=api, env={"WLMAP_CLUSTER_KARTA_WARNING": "0"})
    assert r.code == 0 and r.err == "" and "new" in r.out
    config = home / "wlmap.yaml"
    config.write_text("clusterKartaWarning: false\n")
    r = wlmap(["get", "jobsets", "--config", str(config)], api=api)
    assert r.code == 0 and r.err == ""
    # the environment wins over the file, as for the output format
    r = wlmap(
        ["get", "jobsets", "--config", str(config)],
        api=api,
        env={"WLMAP_CLUSTER_KARTA_WARNING": "1"},
    )
    assert "not allowed to list Karta definitions" in r.err
    config.write_text("clusterKartaWarning: maybe\n")
    r = wlmap(["get", "jobsets", "--config", str(config)], api=api)
    assert r.code == 2 and "clusterKartaWarning: expected true or false" in r.err
    # other warnings stay
    api.forbidden.add("/api/v1/namespaces/ml/pods")
    r = wlmap(["get", "jobsets"], api=api, env={"WLMAP_CLUSTER_KARTA_WARNING": "off"})
    assert "Karta" not in r.err and "PODS column shows desired counts only" in r.err


def test_stuck_gang_short_of_its_minimum(wlmap) -> None:
    api = _api()
    api.objects = [o for o in api.objects if o["metadata"]["name"] != "new-w-0-1"]
    doc = json.loads(wlmap(["get", "jobset/new", "-o", "json"], api=api).out)
    assert doc["stuck"].startswith("gang ") and doc["stuck"].endswith("has 1 of 2 pods")
    r = wlmap(["get", "jobsets", "--stuck", "-o", "name"], api=api)
    assert r.out == "jobset.jobset.x-k8s.io/new\n"
    # a finished workload missing pods is not stuck
    assert json.loads(wlmap(["get", "jobset/old", "-o", "json"], api=api).out)["stuck"] is None


def test_watch_relists_when_its_version_is_gone(wlmap) -> None:
    api = _api()
    changed = _modified(api, "old", conditions=[{"type": "Failed", "status": "True"}])
    api.objects = [
        o if o["metadata"]["name"] != "old" or o.get("kind") != "JobSet" else changed["object"]
        for o in api.objects
    ]
    gone = {"kind": "Status", "code": 410, "reason": "Expired", "message": "too old"}
    api.events = [{"type": "ERROR", "object": gone}]
    r = wlmap(["get", "jobsets", "--watch-only"], api=api)
    assert r.code == 130, r.err
    lines = r.out.splitlines()
    # the re-list shows every workload once (the changed one with its new phase)
    assert sorted(line.split()[0] for line in lines[1:]) == ["new", "old"]
    assert "Failed" in next(line for line in lines if line.startswith("old"))


def test_watch_without_pod_access_follows_workloads_only(wlmap) -> None:
    api = _api()
    api.forbidden.add("/api/v1/namespaces/ml/pods")
    api.events = [_modified(api, "new", conditions=[{"type": "Failed", "status": "True"}])]
    r = wlmap(["get", "jobsets", "-w"], api=api)
    assert r.code == 130
    assert "Failed" in r.out.splitlines()[-1]
    assert "pod changes are not followed" in r.err
    assert not any(path.endswith("/pods") for path, _ in api.streams)


def test_watch_with_a_filter_prints_the_header_with_the_first_match(wlmap) -> None:
    api = _api()
    api.events = [_modified(api, "new", conditions=[{"type": "Failed", "status": "True"}])]
    r = wlmap(["get", "jobsets", "-w", "--phase", "Failed"], api=api)
    assert r.code == 130
    lines = r.out.splitlines()
    assert [line.split()[0] for line in lines] == ["NAME", "new"] and "Failed" in lines[1]
