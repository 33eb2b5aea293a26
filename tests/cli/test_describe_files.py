"""``describe -f`` on real-shaped files: several objects, Lists, picking one, namespaces, a
``--definition`` of another kind, and engine errors made visible (QA findings 4, 5, 9, 10, 16)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from tests.cli.fake_cluster import obj, owner_ref, pod


def _job(name: str, namespace: str | None = None, **container: Any) -> dict[str, Any]:
    spec = {
        "template": {"spec": {"containers": [{"name": "c", "image": "x", **container}]}},
    }
    return obj("batch/v1", "Job", name, namespace, spec=spec)


def _write(tmp_path: Path, name: str, *docs: dict[str, Any]) -> str:
    path = tmp_path / name
    path.write_text(yaml.safe_dump_all(list(docs)))
    return str(path)


def _service(name: str) -> dict[str, Any]:
    return obj("v1", "Service", name, spec={"ports": [{"port": 80}]})


def test_picks_the_covered_object_of_a_stream(wlmap, tmp_path: Path) -> None:
    path = _write(tmp_path, "app.yaml", _service("front"), _job("work"), _service("back"))
    r = wlmap(["describe", "-f", path, "-o", "json"])
    assert r.code == 0, r.err
    view = json.loads(r.out)
    assert (view["kind"], view["name"]) == ("Job", "work")


def test_several_covered_objects_name_them_and_one_is_picked(wlmap, tmp_path: Path) -> None:
    path = _write(tmp_path, "two.yaml", _job("a"), _service("s"), _job("b"))
    r = wlmap(["describe", "-f", path])
    assert r.code == 2 and r.out == ""
    assert "holds 2 workloads a definition covers (Job/a, Job/b)" in r.err
    assert f"wlmap describe -f {path} job/a" in r.err
    for words in (["job/b"], ["jobs", "b"], ["b"], ["job.batch/b"], ["job.v1.batch/b"]):
        r = wlmap(["describe", "-f", path, *words, "-o", "json"])
        assert r.code == 0, (words, r.err)
        assert json.loads(r.out)["name"] == "b"
    r = wlmap(["describe", "-f", path, "job/zzz"])
    assert r.code == 2 and "no object matches job/zzz" in r.err
    assert "Job/a, Service/s, Job/b" in r.err
    r = wlmap(["describe", "-f", path, "job"])  # a TYPE naming several objects
    assert r.code == 2 and "2 objects match job: Job/a, Job/b" in r.err


def test_a_controlled_object_is_a_part_not_the_workload(wlmap, tmp_path: Path) -> None:
    deploy = obj(
        "apps/v1",
        "Deployment",
        "web",
        spec={"replicas": 2, "template": {"spec": {"containers": [{"name": "c", "image": "x"}]}}},
    )
    rs = obj("apps/v1", "ReplicaSet", "web-5d9", owner=owner_ref(deploy), spec={"replicas": 2})
    path = _write(tmp_path, "dump.yaml", rs, deploy)
    r = wlmap(["describe", "-f", path, "-o", "json"])
    assert r.code == 0, r.err
    assert json.loads(r.out)["kind"] == "Deployment"


def test_other_objects_link_owner_chains_of_pods(wlmap, tmp_path: Path) -> None:
    """A ReplicaSet in the -f file owned by another Deployment takes its pods away."""
    template = {"spec": {"containers": [{"name": "c", "image": "x"}]}}
    web = obj("apps/v1", "Deployment", "web", spec={"replicas": 1, "template": template})
    other = obj("apps/v1", "Deployment", "other", spec={"replicas": 1, "template": template})
    other_rs = obj("apps/v1", "ReplicaSet", "other-7f", owner=owner_ref(other))
    web_rs = obj("apps/v1", "ReplicaSet", "web-5d", owner=owner_ref(web))
    path = _write(tmp_path, "w.yaml", web, other_rs)
    pods = _write(
        tmp_path,
        "pods.yaml",
        pod("web-5d-a", web_rs),
        web_rs,
        pod("other-7f-b", other_rs),
    )
    r = wlmap(["describe", "-f", path, "--pods", pods, "-o", "json"])
    assert r.code == 0, r.err
    view = json.loads(r.out)
    assert view["unattributedPods"] == ["other-7f-b"]
    assert "owned by another Deployment: other" in view["unattributedReasons"]["other-7f-b"]
    assert view["pods"]["current"] == 1


def test_list_is_unwrapped_and_core_gvk_reads_v1(wlmap, tmp_path: Path) -> None:
    listed = {"apiVersion": "v1", "kind": "List", "items": [_job("in-list")]}
    path = _write(tmp_path, "list.yaml", listed)
    r = wlmap(["describe", "-f", path, "-o", "json"])
    assert r.code == 0, r.err
    assert json.loads(r.out)["name"] == "in-list"
    lone = _write(tmp_path, "svc.yaml", _service("s"))
    r = wlmap(["describe", "-f", lone, "-o", "json"])
    assert r.code == 4
    assert "no definition covers v1, Kind=Service" in r.err and "/v1" not in r.err
    assert json.loads(r.out)["gvk"] == "v1, Kind=Service"
    both = _write(
        tmp_path,
        "cm.yaml",
        {"apiVersion": "v1", "kind": "List", "items": [_service("s"), _service("t")]},
    )
    r = wlmap(["describe", "-f", both, "-o", "json"])
    assert r.code == 4
    assert "no definition covers any object in" in r.err
    assert "Service/s (v1, Kind=Service)" in r.err
    assert json.loads(r.out)["error"] == "no_definition_for_type"


def test_namespace_of_the_file_must_match_n(wlmap, tmp_path: Path) -> None:
    path = _write(tmp_path, "d.yaml", _job("j", namespace="d"))
    r = wlmap(["describe", "-f", path, "-n", "other"])
    assert r.code == 2
    assert (
        'error: the namespace from the provided object "d" does not match the namespace "other"'
        in r.err
    )
    assert wlmap(["describe", "-f", path, "-n", "d"]).code == 0
    assert wlmap(["describe", "-f", path]).code == 0


def _karta_for(wlmap, tmp_path: Path, group: str, kind: str) -> str:
    karta = yaml.safe_load(wlmap(["definitions", "batch-job-v1", "-o", "yaml"]).out)
    karta["metadata"] = {"name": "mine"}
    root = karta["spec"]["structureDefinition"]["rootComponent"]
    root["kind"] = {"group": group, "version": "v1", "kind": kind}
    path = tmp_path / f"karta-{kind}.yaml"
    path.write_text(yaml.safe_dump(karta))
    return str(path)


def test_definition_of_another_kind_is_refused(wlmap, tmp_path: Path) -> None:
    job = _write(tmp_path, "job.yaml", _job("pi"))
    other = _karta_for(wlmap, tmp_path, "batch", "NotJob")
    r = wlmap(["describe", "-f", job, "--definition", other, "-o", "json"])
    assert r.code == 1 and r.out == ""
    assert "describes batch/v1, Kind=NotJob, but Job/pi is batch/v1, Kind=Job" in r.err
    core = _karta_for(wlmap, tmp_path, "", "Job")  # same kind, core group: still another type
    r = wlmap(["describe", "-f", job, "--definition", core])
    assert r.code == 1 and "describes v1, Kind=Job, but Job/pi is batch/v1, Kind=Job" in r.err
    same = _karta_for(wlmap, tmp_path, "batch", "Job")
    r = wlmap(["describe", "-f", job, "--definition", same, "-o", "json"])
    assert r.code == 0, r.err
    assert json.loads(r.out)["definition"] == {"name": "mine", "origin": "file"}


def test_definition_picks_its_kind_out_of_a_stream(wlmap, tmp_path: Path) -> None:
    deploy = obj(
        "apps/v1",
        "Deployment",
        "web",
        spec={"template": {"spec": {"containers": [{"name": "c", "image": "x"}]}}},
    )
    path = _write(tmp_path, "mixed.yaml", deploy, _job("pi"))
    karta = _karta_for(wlmap, tmp_path, "batch", "Job")
    r = wlmap(["describe", "-f", path, "--definition", karta, "-o", "json"])
    assert r.code == 0, r.err
    assert json.loads(r.out)["name"] == "pi"


def test_extraction_errors_are_shown_and_warned(wlmap, tmp_path: Path) -> None:
    bad = _job("j", resources={"requests": {"cpu": "abc"}})
    bad["spec"]["parallelism"] = 2
    path = _write(tmp_path, "bad.yaml", bad)
    table = wlmap(["describe", "-f", path])
    assert table.code == 0  # warnings do not fail the command (kubectl-like)
    assert "Errors (1):" in table.out
    assert "invalid quantity 'abc'" in table.out.split("Errors (1):")[1]
    assert "warning: component 'job': resource 'cpu': invalid quantity 'abc'" in table.err
    as_json = wlmap(["describe", "-f", path, "-o", "json"])
    assert as_json.code == 0
    view = json.loads(as_json.out)  # stdout stays one parseable document
    assert view["errors"] == ["component 'job': resource 'cpu': invalid quantity 'abc'"]
    assert "warning: component 'job'" in as_json.err
    good = wlmap(["describe", "-f", _write(tmp_path, "good.yaml", _job("ok"))])
    assert "Errors" not in good.out and "warning" not in good.err


def test_unattributed_pods_show_their_reason(wlmap, tmp_path: Path) -> None:
    job = _job("j")
    stranger_owner = _job("other")
    pods = _write(tmp_path, "pods.yaml", pod("other-x", stranger_owner), stranger_owner)
    r = wlmap(["describe", "-f", _write(tmp_path, "j.yaml", job), "--pods", pods])
    assert r.code == 0, r.err
    assert "other-x  (owned by another Job: other)" in r.out
    assert "warning: 1 pod not attributed (owned by another Job: other): other-x" in r.err


def test_a_karta_given_as_the_workload_gets_a_hint(wlmap, tmp_path: Path) -> None:
    karta = _karta_for(wlmap, tmp_path, "batch", "Job")
    r = wlmap(["describe", "-f", karta])
    assert r.code == 4
    assert "no definition covers run.ai/v1alpha1, Kind=Karta" in r.err
    assert "this is a Karta (a definition), not a workload" in r.err


def test_definition_matching_no_object_of_a_stream(wlmap, tmp_path: Path) -> None:
    path = _write(tmp_path, "svc.yaml", _service("a"), _service("b"))
    karta = _karta_for(wlmap, tmp_path, "batch", "Job")
    r = wlmap(["describe", "-f", path, "--definition", karta, "-o", "json"])
    assert r.code == 1 and r.out == ""
    assert "describes batch/v1, Kind=Job, and no object in" in r.err
    assert "it holds: Service/a (v1, Kind=Service), Service/b (v1, Kind=Service)" in r.err
