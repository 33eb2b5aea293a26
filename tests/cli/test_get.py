"""``wlmap get`` and ``wlmap definitions`` through the in-memory API."""

from __future__ import annotations

import json

import yaml

from tests.cli.fake_cluster import (
    CORE_SERVICE,
    JOBSET,
    KARTA,
    KNATIVE,
    FakeAPI,
    obj,
    owner_ref,
    pod,
)


def _api() -> FakeAPI:
    api = FakeAPI(namespace="ml").serve(JOBSET)
    spec = {
        "replicatedJobs": [
            {
                "name": "w",
                "replicas": 2,
                "template": {
                    "spec": {
                        "template": {
                            "spec": {
                                "containers": [
                                    {
                                        "name": "c",
                                        "image": "x",
                                        "resources": {"limits": {"nvidia.com/gpu": "4"}},
                                    }
                                ]
                            }
                        }
                    }
                },
            }
        ]
    }
    old = obj(
        "jobset.x-k8s.io/v1alpha2",
        "JobSet",
        "old",
        "ml",
        created="2026-01-01T00:00:00Z",
        spec=spec,
        status={"conditions": [{"type": "Completed", "status": "True"}]},
    )
    new = obj(
        "jobset.x-k8s.io/v1alpha2",
        "JobSet",
        "new",
        "ml",
        created="2026-11-01T00:00:00Z",
        spec=spec,
        labels={"team": "a"},
        status={"replicatedJobsStatus": [{"name": "w", "ready": 1}]},
    )
    other_ns = obj("jobset.x-k8s.io/v1alpha2", "JobSet", "far", "other", spec=spec)
    job = obj("batch/v1", "Job", "new-w-0", "ml", owner=owner_ref(new))
    lone_job = obj(
        "batch/v1",
        "Job",
        "lone",
        "ml",
        spec={"template": {"spec": {"containers": [{"name": "c", "image": "x"}]}}},
    )
    labels = {"jobset.sigs.k8s.io/replicatedjob-name": "w"}
    api.add(
        old,
        new,
        other_ns,
        job,
        lone_job,
        pod("new-w-0-0", job, namespace="ml", labels=labels, gpus=4),
        pod("new-w-0-1", job, namespace="ml", labels=labels, gpus=4, ready=False),
    )
    return api


def test_get_table_sorted_by_namespace_and_name(wlmap) -> None:
    # kubectl's order and columns (the reference sorts newest first and always shows NAMESPACE;
    # docs/reference-differences.md)
    api = _api()
    api.add(obj("jobset.x-k8s.io/v1alpha2", "JobSet", "aaa", "ml", created="2026-06-01T00:00:00Z"))
    r = wlmap(["get", "jobsets"], api=api)
    assert r.code == 0, r.err
    lines = r.out.splitlines()
    assert lines[0].split() == ["NAME", "PHASE", "PODS", "GPUS", "AGE"]
    assert [line.split()[0] for line in lines[1:]] == ["aaa", "new", "old"]
    new = lines[2].split()
    assert new[2] == "1/2" and new[3] == "8"
    # a finished workload reads as completed, not as 0/2 pods
    assert lines[3].split()[1:3] == ["Completed", "completed"]
    r = wlmap(["get", "jobsets", "-A"], api=api)
    lines = r.out.splitlines()
    assert lines[0].split()[:2] == ["NAMESPACE", "NAME"]
    assert [line.split()[:2] for line in lines[1:]] == [
        ["ml", "aaa"],
        ["ml", "new"],
        ["ml", "old"],
        ["other", "far"],
    ]


def test_get_wide_json_yaml_name(wlmap) -> None:
    api = _api()
    wide = wlmap(["get", "jobsets", "-o", "wide"], api=api)
    assert "ORIGIN" in wide.out and "catalog" in wide.out
    doc = json.loads(wlmap(["get", "jobsets", "-o", "json"], api=api).out)
    assert doc["count"] == 2 and doc["items"][0]["name"] == "new"
    assert doc["items"][0]["pods"] == {
        "desired": 2,
        "current": 2,
        "ready": 1,
        "pending": 0,
        "held": 2,
    }
    assert yaml.safe_load(wlmap(["get", "jobsets", "-o", "yaml"], api=api).out) == doc
    names = wlmap(["get", "jobsets", "-o", "name"], api=api).out
    assert names == "jobset.jobset.x-k8s.io/new\njobset.jobset.x-k8s.io/old\n"


def test_get_filters(wlmap) -> None:
    api = _api()
    r = wlmap(["get", "jobsets", "--phase", "completed"], api=api)
    assert [line.split()[0] for line in r.out.splitlines()[1:]] == ["old"]
    r = wlmap(["get", "jobsets", "--phase", "Failed,Suspended"], api=api)
    assert r.out == "" and "No workloads found in namespace ml." in r.err
    r = wlmap(["get", "jobsets", "-l", "team=a"], api=api)
    assert [line.split()[0] for line in r.out.splitlines()[1:]] == ["new"]
    r = wlmap(["get", "jobsets", "-A", "--chunk-size", "1"], api=api)
    assert len(r.out.splitlines()) == 4
    r = wlmap(["get", "jobsets", "-n", "empty"], api=api)
    assert "No workloads found in namespace empty." in r.err


def test_get_named(wlmap) -> None:
    api = _api()
    r = wlmap(["get", "jobset/new", "-o", "json"], api=api)
    assert r.code == 0 and json.loads(r.out)["name"] == "new"
    r = wlmap(["get", "jobset", "missing"], api=api)
    assert r.code == 3 and "not found" in r.err


def test_get_all_types_keeps_top_level(wlmap) -> None:
    r = wlmap(["get", "--all-types"], api=_api())
    assert r.code == 0, r.err
    rows = [line.split() for line in r.out.splitlines()]
    assert rows[0][:3] == ["NAME", "TYPE", "PHASE"]
    names = {(row[0], row[1]) for row in rows[1:]}
    # Job is covered in two groups (batch and batch.volcano.sh), so the TYPE names the group
    assert names == {("new", "JobSet"), ("old", "JobSet"), ("lone", "Job.batch")}


def test_bare_name(wlmap) -> None:
    api = _api()
    r = wlmap(["get", "lone"], api=api)
    assert r.code == 0, r.err
    assert "lone" in r.out and "Job" in r.out
    api.add(obj("batch/v1", "Job", "new", "ml"))
    r = wlmap(["get", "new"], api=api)
    assert r.code == 5
    assert "matches several workloads" in r.err and "jobset/new" in r.err and "job/new" in r.err
    r = wlmap(["get", "nothing-here"], api=api)
    assert r.code == 4


def test_ambiguous_type_is_usage_error(wlmap) -> None:
    api = _api().serve(KNATIVE, CORE_SERVICE)
    r = wlmap(["get", "services"], api=api)
    # only the Knative Service is covered by a definition, so it wins
    assert r.code == 0, r.err


def test_forbidden_list(wlmap) -> None:
    api = _api()
    api.forbidden.add("/apis/jobset.x-k8s.io/v1alpha2/namespaces/ml/jobsets")
    r = wlmap(["get", "jobsets"], api=api)
    assert r.code == 1
    assert "forbidden: cannot list jobsets.jobset.x-k8s.io in namespace ml" in r.err
    assert "ask for the list verb" in r.err


def test_forbidden_kartas_and_pods_degrade(wlmap) -> None:
    api = _api().serve(KARTA)
    api.forbidden.update({"/apis/run.ai/v1alpha1/kartas", "/api/v1/namespaces/ml/pods"})
    r = wlmap(["get", "jobsets"], api=api)
    assert r.code == 0, r.err
    assert "not allowed to list Karta definitions" in r.err
    assert "the PODS column shows desired counts only" in r.err
    assert "-/2" in r.out


def test_cluster_karta_overrides_catalog(wlmap) -> None:
    api = _api().serve(KARTA)
    catalog = yaml.safe_load(
        wlmap(["definitions", "jobset-x-k8s-io-jobset-v1alpha2", "-o", "yaml"]).out
    )
    catalog["metadata"] = {"name": "team-jobset"}
    api.add(catalog)
    r = wlmap(["get", "jobsets", "-o", "json"], api=api)
    assert r.code == 0, r.err
    assert {(i["definition"], i["origin"]) for i in json.loads(r.out)["items"]} == {
        ("team-jobset", "cluster")
    }
    defs = wlmap(
        ["definitions", "--group", "jobset.x-k8s.io"], api=api, env={"KUBECONFIG": "/dev/null"}
    )
    assert "team-jobset" in defs.out
    broken = {
        "apiVersion": "run.ai/v1alpha1",
        "kind": "Karta",
        "metadata": {"name": "broken"},
        "spec": {"structureDefinition": {}},
    }
    api.add(broken, {**catalog, "metadata": {"name": "team-jobset-2"}})
    r = wlmap(["get", "jobsets"], api=api)
    assert 'cluster Karta "broken" cannot be loaded' in r.err
    assert "2 cluster Karta definitions claim" in r.err
    assert r.code == 1  # ambiguous definitions at resolve time


def test_definitions_catalog(wlmap) -> None:
    r = wlmap(["definitions"])
    assert r.code == 0, r.err
    lines = r.out.splitlines()
    assert lines[0].split() == ["NAME", "KIND", "APIVERSION", "ORIGIN", "COMPONENTS"]
    names = [line.split()[0] for line in lines[1:]]
    assert names == sorted(names) and "jobset-x-k8s-io-jobset-v1alpha2" in names
    assert all(line.split()[3] == "catalog" for line in lines[1:])
    doc = json.loads(wlmap(["definitions", "-o", "json"]).out)
    assert doc["count"] == len(names)
    one = wlmap(["definitions", "jobset-x-k8s-io-jobset-v1alpha2"])
    assert "Components:" in one.out and "replicatedjob" in one.out
    bare = yaml.safe_load(
        wlmap(["definitions", "jobset-x-k8s-io-jobset-v1alpha2", "-o", "yaml"]).out
    )
    assert bare["kind"] == "Karta"
    filtered = wlmap(["definitions", "--group", "kubeflow.org", "--kind", "pytorchjob"])
    assert len(filtered.out.splitlines()) == 2
    limited = wlmap(["definitions", "--component-limit", "1"])
    assert "more" in limited.out


def test_definitions_errors(wlmap) -> None:
    r = wlmap(["definitions", "jobset-x-k8s-io-jobset-v1alpha3"])
    assert r.code == 1 and '"jobset-x-k8s-io-jobset-v1alpha2"' in r.err
    r = wlmap(["definitions", "--group", "nope.io"])
    assert r.code == 4 and "no definition matches --group 'nope.io'" in r.err


def test_definitions_by_kind(wlmap) -> None:
    r = wlmap(["definitions", "rayclusters"])
    assert r.code == 0 and r.out.startswith("Name:       ray-io-raycluster-v1")
    r = wlmap(["definitions", "mpijob"])
    assert r.code == 1
    assert "kubeflow-org-mpijob-v1, kubeflow-org-mpijob-v2beta1" in r.err


def test_type_served_by_two_covered_groups_is_ambiguous(wlmap) -> None:
    from tests.cli.fake_cluster import Res

    api = _api().serve(Res("batch.volcano.sh", "v1alpha1", "Job", "jobs", short_names=("vcjob",)))
    r = wlmap(["get", "jobs"], api=api)
    assert r.code == 2
    assert 'the type "jobs" is ambiguous' in r.err
    assert "job.v1.batch" in r.err and "job.v1alpha1.batch.volcano.sh" in r.err
    assert wlmap(["get", "jobs.batch"], api=api).code == 0
    assert wlmap(["get", "vcjob"], api=api).code == 0


def test_definitions_core_group_and_suggestions(wlmap) -> None:
    for group in ("", "core"):
        r = wlmap(["definitions", "--group", group, "--kind", "Pod"])
        assert r.code == 0, (group, r.err)
        assert [line.split()[0] for line in r.out.splitlines()[1:]] == ["core-pod-v1"]
    r = wlmap(["definitions", "--group", "core"])
    assert r.code == 0 and "core-pod-v1" in r.out and "batch-job-v1" not in r.out
    r = wlmap(["definitions", "jobst"])
    assert r.code == 1 and 'did you mean "jobset"' in r.err
    r = wlmap(["definitions", "x", "--group", ""])
    assert r.code == 2 and "not both" in r.err
