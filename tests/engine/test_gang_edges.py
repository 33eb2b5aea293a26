"""Gang edge cases (QA #17): names without a uid, gangs that need no pods, negative counts,
and the gangs a spec implies when no pods are known.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.engine.conftest import karta_dict, root
from workload_map.engine import Workload
from workload_map.engine.gangs import is_dns1123_subdomain

JOB_LIKE = karta_dict(
    root(
        specDefinition={"podTemplateSpecPath": ".spec.template"},
        scaleDefinition={
            "replicasPath": ".spec.parallelism // 1",
            "minReplicasPath": '.metadata.annotations["min"] // "1" | tonumber',
        },
    ),
    gang={"podGroup": {"name": "job"}},
)


def _job(metadata: dict[str, Any], parallelism: int = 2) -> dict[str, Any]:
    return {
        "apiVersion": "example.com/v1",
        "kind": "Thing",
        "metadata": metadata,
        "spec": {"parallelism": parallelism, "template": {"spec": {"containers": [{"name": "c"}]}}},
    }


@pytest.mark.parametrize(
    ("metadata", "name"),
    [
        ({"uid": "u-1", "name": "a", "generateName": "g-"}, "pg-u-1-job"),
        ({"name": "a", "generateName": "g-"}, "pg-a-job"),
        ({"generateName": "train-"}, "pg-train-job"),
        ({"generateName": "-"}, "pg-unnamed-job"),
        ({}, "pg-unnamed-job"),
        ({"uid": "", "name": ""}, "pg-unnamed-job"),
    ],
)
def test_gang_names_never_have_an_empty_segment(metadata: dict[str, Any], name: str) -> None:
    groups = Workload(JOB_LIKE, _job(metadata)).pod_groups()
    assert [g.name for g in groups] == [name]
    assert "--" not in name and is_dns1123_subdomain(name) and groups[0].error is None


def test_a_negative_count_is_zero_everywhere_and_an_error() -> None:
    view = Workload(JOB_LIKE, _job({"name": "j"}, parallelism=-3)).describe()
    node = view["components"][0]
    assert view["pods"]["desired"] == 0
    assert node["replicas"]["desired"] == 0 and node["replicas"]["min"] == 0
    assert view["podGroups"] == []  # minMember 0: no gang
    assert any("replicas -3 is negative" in e for e in view["errors"])
    assert any("no gang" in n for n in view["podGroupNotes"])


def test_a_positive_count_keeps_its_gang_and_no_error() -> None:
    view = Workload(JOB_LIKE, _job({"name": "j"}, parallelism=3)).describe()
    assert view["errors"] == [] and "podGroupNotes" not in view
    assert [(g["name"], g["minMember"]) for g in view["podGroups"]] == [("pg-j-job", 1)]


RAY_LIKE = karta_dict(
    root(),
    {
        "name": "submitter",
        "ownerRef": "thing",
        "specDefinition": {"podTemplateSpecPath": ".spec.submitterPodTemplate"},
        "podSelector": {
            "componentTypeSelector": {"keyPath": '.metadata.labels["role"]', "value": "submit"}
        },
    },
    {
        "name": "head",
        "ownerRef": "thing",
        "specDefinition": {"podTemplateSpecPath": ".spec.cluster.head.template"},
        "podSelector": {
            "componentTypeSelector": {"keyPath": '.metadata.labels["role"]', "value": "head"}
        },
    },
    gang={"podGroup": {"name": "cluster", "subGroups": [{"componentName": "head"}]}},
)
RAY_OBJ = {
    "apiVersion": "example.com/v1",
    "kind": "Thing",
    "metadata": {"name": "r", "uid": "u-r"},
    "spec": {"submitterPodTemplate": {"spec": {"containers": [{"name": "s"}]}}},
}


@pytest.mark.parametrize("with_pods", [False, True])
def test_a_gang_that_needs_no_pods_is_not_listed(with_pods: bool) -> None:
    pods = [{"kind": "Pod", "metadata": {"name": "sub", "labels": {"role": "submit"}}}]
    wl = Workload(RAY_LIKE, RAY_OBJ, pods if with_pods else None)
    assert wl.pod_groups() == []
    assert any("minMember 0" in note for note in wl.gang_notes())
    explained = wl.explain()
    assert any(e["pod"] is None and "no gang" in e["gang"]["reason"] for e in explained)
    if with_pods:
        sub = next(e for e in explained if e["pod"] == "sub")
        assert sub["gang"]["group"] is None and "minMember 0" in sub["gang"]["reason"]
    with_cluster = copy.deepcopy(RAY_OBJ)
    with_cluster["spec"]["cluster"] = {"head": {"template": {"spec": {"containers": []}}}}
    groups = Workload(RAY_LIKE, with_cluster).pod_groups()
    assert [(g.name, g.min_member) for g in groups] == [("pg-u-r-cluster", 1)]


def test_realworld_rayjob_on_an_existing_cluster_has_no_gang(shared_dir: Path) -> None:
    from workload_map.catalog import catalog

    path = shared_dir / "realworld" / "ray" / "ray-job.use-existing-raycluster.yaml"
    obj = next(d for d in yaml.safe_load_all(path.read_text()) if d and d["kind"] == "RayJob")
    karta = catalog.for_api_version(obj["apiVersion"], obj["kind"])
    assert karta is not None
    view = Workload(karta, obj).describe()
    assert view["podGroups"] == [] and view["podGroupNotes"]


def test_realworld_generate_name_gives_a_named_gang(shared_dir: Path) -> None:
    from workload_map.catalog import catalog

    path = shared_dir / "realworld" / "ray" / "ray-job.kueue-toy-sample.yaml"
    obj = next(d for d in yaml.safe_load_all(path.read_text()) if d and d["kind"] == "RayJob")
    assert "name" not in obj["metadata"] and obj["metadata"]["generateName"]
    karta = catalog.for_api_version(obj["apiVersion"], obj["kind"])
    assert karta is not None
    names = [g["name"] for g in Workload(karta, obj).describe()["podGroups"]]
    prefix = obj["metadata"]["generateName"].rstrip("-")
    assert names == [f"pg-{prefix}-cluster"]


GROUPED = karta_dict(
    root(),
    {
        "name": "group",
        "ownerRef": "thing",
        "scaleDefinition": {"replicasPath": ".spec.size"},
        "podSelector": {"replicaSelector": {"keyPath": '.metadata.labels["idx"]'}},
    },
    {
        "name": "member",
        "ownerRef": "group",
        "specDefinition": {"podTemplateSpecPath": ".spec.template"},
        "scaleDefinition": {"replicasPath": ".spec.replicas * .spec.size"},
    },
    gang={
        "podGroups": [
            {
                "name": "g",
                "members": [
                    {
                        "componentName": "group",
                        "groupByKeyPaths": ['.metadata.labels["app"]', '.metadata.labels["idx"]'],
                    }
                ],
            }
        ]
    },
)


def _grouped(app_label: bool, replicas: int = 3) -> dict[str, Any]:
    labels = {"app": "web"} if app_label else {}
    return {
        "apiVersion": "example.com/v1",
        "kind": "Thing",
        "metadata": {"name": "w", "uid": "u-w"},
        "spec": {
            "size": 2,
            "replicas": replicas,
            "template": {"metadata": {"labels": labels}, "spec": {"containers": []}},
        },
    }


def test_offline_gangs_take_their_keys_from_the_template_and_the_replica_indexes() -> None:
    view = Workload(GROUPED, _grouped(app_label=True)).describe()
    groups = [(g["name"], g["minMember"], g["pods"]) for g in view["podGroups"]]
    assert groups == [(f"pg-u-w-web-{i}", 2, []) for i in range(3)]
    assert [n["name"] for n in view["components"]] == ["group[0]", "group[1]", "group[2]"]
    assert [n["replicas"]["desired"] for n in view["components"]] == [2, 2, 2]


def test_offline_gangs_show_a_key_only_pods_carry_as_a_placeholder() -> None:
    view = Workload(GROUPED, _grouped(app_label=False)).describe()
    names = [g["name"] for g in view["podGroups"]]
    assert names == [f"pg-u-w-<app>-{i}" for i in range(3)]
    assert all(g["unresolvedKeys"] == ['.metadata.labels["app"]'] for g in view["podGroups"])
    assert all("error" not in g for g in view["podGroups"])


def test_offline_gangs_are_not_guessed_when_the_replica_count_is_unknown() -> None:
    # 3 pods over groups of 4: the spec does not say how many groups there are
    odd = _grouped(app_label=True)
    odd["spec"]["size"] = 4
    odd["spec"]["replicas"] = 1
    odd["spec"]["template"]["metadata"]["labels"]["x"] = "y"
    karta = copy.deepcopy(GROUPED)
    member = karta["spec"]["structureDefinition"]["childComponents"][1]
    member["scaleDefinition"]["replicasPath"] = ".spec.replicas * 3"
    wl = Workload(karta, odd)
    assert wl.pod_groups() == []
    assert any("does not say how many replicas of group" in n for n in wl.gang_notes())
    explained = wl.explain()
    assert explained and explained[-1]["pod"] is None


def test_offline_placeholders_of_two_definitions_say_whose() -> None:
    karta = copy.deepcopy(GROUPED)
    children = karta["spec"]["structureDefinition"]["childComponents"]
    other = copy.deepcopy(children[1])
    other.update(name="solo", ownerRef="thing", scaleDefinition={"replicasPath": "1"})
    other["specDefinition"] = {"podTemplateSpecPath": ".spec.template"}
    other["podSelector"] = {"componentTypeSelector": {"keyPath": ".metadata.labels.solo"}}
    children[1]["podSelector"] = {"componentTypeSelector": {"keyPath": ".metadata.labels.m"}}
    children.append(other)
    karta["spec"]["optimizationInstructions"]["gangScheduling"]["podGroups"].append(
        {"name": "s", "members": [{"componentName": "solo", "groupByKeyPaths": [".metadata.name"]}]}
    )
    view = Workload(karta, _grouped(app_label=False)).describe()
    names = sorted(g["name"] for g in view["podGroups"])
    assert names == [f"pg-u-w-<g:app>-{i}" for i in range(3)] + ["pg-u-w-<s:name>"]
