"""Dynamic completion (types, names, namespaces) and the small things around commands:
bare names in describe, the progress indicator, the console entry point."""

from __future__ import annotations

import io
import json
import subprocess
import sys

from tests.cli.fake_cluster import JOBSET, FakeAPI, obj
from workload_map import __version__


def _api() -> FakeAPI:
    api = FakeAPI(namespace="ml").serve(JOBSET)
    spec = {
        "replicatedJobs": [
            {
                "name": "w",
                "template": {
                    "spec": {"template": {"spec": {"containers": [{"name": "c", "image": "x"}]}}}
                },
            }
        ]
    }
    api.add(
        obj("jobset.x-k8s.io/v1alpha2", "JobSet", "train", "ml", spec=spec),
        obj("jobset.x-k8s.io/v1alpha2", "JobSet", "tune", "ml", spec=spec),
        obj("v1", "Namespace", "ml", None),
        obj("v1", "Namespace", "dev", None),
    )
    return api


def test_complete_types_offline(wlmap) -> None:
    r = wlmap(["__complete", "get", ""])
    types = r.out.splitlines()
    assert "jobset" in types and "pytorchjob" in types
    # a kind covered at several versions is offered qualified
    assert "mpijob.v2beta1.kubeflow.org" in types and "mpijob" not in types


def test_complete_names_and_namespaces(wlmap) -> None:
    api = _api()
    assert wlmap(["__complete", "describe", "jobset/"], api=api).out.splitlines() == [
        "jobset/train",
        "jobset/tune",
    ]
    assert wlmap(["__complete", "get", "jobset", ""], api=api).out.splitlines() == ["train", "tune"]
    assert wlmap(["__complete", "get", "-n", ""], api=api).out.splitlines() == ["dev", "ml"]
    api.unreachable = True
    r = wlmap(["__complete", "get", "jobset", ""], api=api)
    assert (r.code, r.out, r.err) == (0, "", "")


def test_complete_definition_names(wlmap) -> None:
    r = wlmap(["__complete", "definitions", "job"])
    assert "batch-job-v1" in r.out.splitlines()


def test_describe_bare_name(wlmap) -> None:
    api = _api()
    r = wlmap(["describe", "train", "-o", "json"], api=api)
    assert r.code == 0, r.err
    assert json.loads(r.out)["name"] == "train"
    r = wlmap(["describe", "nothing"], api=api)
    assert r.code == 3, r.err
    assert 'no workload named "nothing" found in namespace ml' in r.err
    assert "TYPE/NAME" not in r.err.split("error:")[1].splitlines()[0]
    r = wlmap(["describe", "jobset", "-o", "name"], api=api)  # a TYPE alone: all of them
    assert r.code == 0 and r.out.splitlines() == [
        "jobset.jobset.x-k8s.io/train",
        "jobset.jobset.x-k8s.io/tune",
    ]
    api.add(obj("batch/v1", "Job", "train", "ml"))
    r = wlmap(["describe", "train"], api=api)
    assert r.code == 5 and "matches several workloads" in r.err


class _TtyOut(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_only_on_a_terminal() -> None:
    from types import SimpleNamespace

    from workload_map.cli.get_cmd import Progress

    err = io.StringIO()
    progress = Progress(SimpleNamespace(stdout=_TtyOut(), stderr=err), delay=0)  # type: ignore[arg-type]
    progress.update("jobsets", 1200)
    progress.done()
    assert "listing jobsets... 1200" in err.getvalue()
    quiet = io.StringIO()
    progress = Progress(SimpleNamespace(stdout=io.StringIO(), stderr=quiet), delay=0)  # type: ignore[arg-type]
    progress.update("jobsets", 5)
    progress.done()
    assert quiet.getvalue() == ""


def test_entry_point_runs() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "workload_map.cli", "--version"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert (done.returncode, done.stdout) == (0, f"{__version__}\n")
    done = subprocess.run(
        [sys.executable, "-m", "workload_map.cli", "nope"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2 and done.stderr.startswith("error: ")
