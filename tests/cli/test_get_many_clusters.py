"""``wlmap get --context A --context B`` / ``--all-contexts``: every cluster through its own
context, a CLUSTER column first, a cluster that fails said apart (issue 25 item 4)."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import yaml

from tests.cli.conftest import Result
from tests.cli.fake_cluster import JOBSET, FakeAPI, obj
from tests.cli.test_get import _api
from workload_map.cli.main import main
from workload_map.kube import ConnectionOptions


def _kubeconfig(tmp_path: Path, names: list[str]) -> Path:
    path = tmp_path / "kubeconfig"
    path.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "current-context": names[0],
                "clusters": [
                    {"name": n, "cluster": {"server": f"https://{n}.invalid"}} for n in names
                ],
                "users": [{"name": n, "user": {"token": f"token-{n}"}} for n in names],
                "contexts": [
                    {"name": n, "context": {"cluster": n, "user": n, "namespace": "ml"}}
                    for n in names
                ],
            }
        )
    )
    return path


def _second() -> FakeAPI:
    api = FakeAPI(namespace="ml").serve(JOBSET)
    api.add(obj("jobset.x-k8s.io/v1alpha2", "JobSet", "eval", "ml", spec={"replicatedJobs": []}))
    return api


class _Clusters:
    """One fake API per context; ``connect`` picks by the context the options name."""

    def __init__(self, apis: dict[str, FakeAPI]) -> None:
        self.apis = apis
        self.asked: list[str | None] = []

    def connect(self, options: ConnectionOptions) -> Any:
        self.asked.append(options.context)
        return self.apis[str(options.context)].connect(options)


def _run(home: Path, argv: list[str], clusters: _Clusters) -> Result:
    out, err = io.StringIO(), io.StringIO()
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin"}
    code = main(argv, io.StringIO(""), out, err, environ=env, connect=clusters.connect)
    return Result(code, out.getvalue(), err.getvalue())


def test_two_contexts_print_a_cluster_column_first(home: Path, tmp_path: Path) -> None:
    config = _kubeconfig(tmp_path, ["prod", "lab"])
    clusters = _Clusters({"prod": _api(), "lab": _second()})
    r = _run(
        home,
        ["get", "jobsets", "--kubeconfig", str(config), "--context", "prod", "--context", "lab"],
        clusters,
    )
    assert r.code == 0, r.err
    lines = r.out.splitlines()
    assert lines[0].split()[:3] == ["CLUSTER", "NAME", "PHASE"]
    assert [line.split()[:2] for line in lines[1:]] == [
        ["lab", "eval"],
        ["prod", "new"],
        ["prod", "old"],
    ]
    assert clusters.asked == ["prod", "lab"]  # each through its own context


def test_all_contexts_and_json_items_name_their_cluster(home: Path, tmp_path: Path) -> None:
    config = _kubeconfig(tmp_path, ["prod", "lab"])
    clusters = _Clusters({"prod": _api(), "lab": _second()})
    r = _run(
        home,
        ["get", "jobsets", "--kubeconfig", str(config), "--all-contexts", "-o", "json"],
        clusters,
    )
    assert r.code == 0, r.err
    doc = json.loads(r.out)
    assert [(i["cluster"], i["name"]) for i in doc["items"]] == [
        ("lab", "eval"),
        ("prod", "new"),
        ("prod", "old"),
    ]
    assert sorted(clusters.asked) == ["lab", "prod"]
    one = _run(
        home,
        ["get", "jobsets", "--kubeconfig", str(config), "--context", "lab", "-o", "json"],
        clusters,
    )
    assert all("cluster" not in i for i in json.loads(one.out)["items"])  # one cluster: no key


def test_a_failing_cluster_is_reported_apart_and_the_rest_printed(
    home: Path, tmp_path: Path
) -> None:
    config = _kubeconfig(tmp_path, ["prod", "lab", "down"])
    down = _second()
    down.unreachable = True
    no_jobsets = FakeAPI(namespace="ml")
    clusters = _Clusters({"prod": _api(), "lab": no_jobsets, "down": down})
    r = _run(home, ["get", "jobsets", "--kubeconfig", str(config), "--all-contexts"], clusters)
    assert r.code == 1
    assert [line.split()[:2] for line in r.out.splitlines()[1:]] == [
        ["prod", "new"],
        ["prod", "old"],
    ]
    assert "warning: context down: cannot reach the cluster" in r.err
    assert "warning: context lab: " in r.err and "not installed" in r.err
    prod_only = _Clusters({"down": down, "lab": no_jobsets})
    r = _run(
        home,
        ["get", "jobsets", "--kubeconfig", str(config), "--context", "down", "--context", "lab"],
        prod_only,
    )
    assert r.code == 1 and r.out == "" and "context down:" in r.err and "context lab:" in r.err


def test_watch_and_other_commands_take_one_context(home: Path, tmp_path: Path) -> None:
    config = _kubeconfig(tmp_path, ["prod", "lab"])
    clusters = _Clusters({"prod": _api(), "lab": _second()})
    base = ["--kubeconfig", str(config), "--context", "prod", "--context", "lab"]
    r = _run(home, ["get", "jobsets", "-w", *base], clusters)
    assert r.code == 2 and "watch follows one cluster" in r.err
    r = _run(home, ["describe", "jobset/new", *base], clusters)
    assert r.code == 2 and "talks to one cluster" in r.err
