"""Components the object does not describe imply no pods (INTERFACES.md: pod-bearing instances).

A definition names every component a kind can have; one object uses some of them (a Milvus in
cluster mode has no ``standalone``, a PyTorchJob may have no ``Worker``). Such an instance counts
0 desired pods, requests nothing, is not a gang member, and its node is shown only when pods of
it are known. An instance the object holds with ``replicas: 0`` is there, with 0 pods.
"""

from __future__ import annotations

import copy
from typing import Any

from tests.engine.conftest import karta_dict, load_fixture, root
from workload_map.engine import Workload

GI = 2**30


def _fragmented(name: str, key: str) -> dict[str, Any]:
    base = f".spec.components.{key}"
    return {
        "name": name,
        "ownerRef": "thing",
        "kind": {"group": "apps", "version": "v1", "kind": "Deployment"},
        "specDefinition": {
            "fragmentedPodSpecDefinition": {
                "schedulerNamePath": f"{base}.schedulerName",
                "labelsPath": f"{base}.podLabels",
                "resourcesPath": f"{base}.resources",
                "nodeAffinityPath": f"{base}.affinity.nodeAffinity",
            }
        },
        "scaleDefinition": {"replicasPath": f"{base}.replicas"},
        "podSelector": {
            "componentTypeSelector": {
                "keyPath": '.metadata.labels["app.kubernetes.io/component"]',
                "value": name,
            }
        },
    }


MILVUS_LIKE = karta_dict(
    root(),
    _fragmented("standalone", "standalone"),
    _fragmented("proxy", "proxy"),
    _fragmented("datanode", "dataNode"),
    _fragmented("indexnode", "indexNode"),
    gang={
        "podGroups": [
            {
                "name": "db",
                "members": [
                    {"componentName": "thing", "groupByKeyPaths": [".metadata.labels.app"]}
                ],
            }
        ]
    },
)

CLUSTER = {
    "apiVersion": "example.com/v1",
    "kind": "Thing",
    "metadata": {"name": "vec", "uid": "u-1"},
    "spec": {
        "mode": "cluster",
        "components": {
            "proxy": {"replicas": 1, "serviceType": "LoadBalancer"},  # no fragment set
            "dataNode": {"replicas": 2, "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}},
            "indexNode": {"replicas": 0, "resources": {"requests": {"cpu": "8"}}},
        },
    },
}


def _pod(name: str, component: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "labels": {"app.kubernetes.io/component": component, "app": "vec"},
        },
        "spec": {"containers": [{"name": "c"}]},
        "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]},
    }


def _names(nodes: list[dict[str, Any]]) -> list[str]:
    return [n["name"] for n in nodes]


def test_milvus_like_cluster_mode_counts_only_what_the_object_holds() -> None:
    wl = Workload(MILVUS_LIKE, CLUSTER)
    d = wl.describe()
    # standalone is not in the object; proxy is (no fragment set, but its entry is there);
    # indexNode is there with replicas 0
    assert d["pods"]["desired"] == 1 + 2
    assert wl.desired_pods() == 3
    assert _names(d["components"]) == ["proxy", "datanode", "indexnode"]
    replicas = {n["name"]: n["replicas"]["desired"] for n in d["components"]}
    assert replicas == {"proxy": 1, "datanode": 2, "indexnode": 0}
    assert d["resources"]["cpuMillis"] == 2000 and d["resources"]["memoryBytes"] == 2 * GI
    assert wl.instances("standalone")[""].describes_pods is False
    assert wl.instances("proxy")[""].describes_pods is True
    res = wl.resources()["components"]
    assert res["standalone"]["desiredPods"] == 0 and res["standalone"]["desired"]["cpuMillis"] == 0


def test_milvus_like_pods_of_an_absent_component_keep_its_node() -> None:
    pods = [_pod("vec-proxy-0", "proxy"), _pod("vec-standalone-0", "standalone")]
    d = Workload(MILVUS_LIKE, CLUSTER, pods).describe()
    nodes = {n["name"]: n for n in d["components"]}
    assert list(nodes) == ["standalone", "proxy", "datanode", "indexnode"]
    assert nodes["standalone"]["replicas"]["desired"] == 0
    assert nodes["standalone"]["replicas"]["current"] == 1
    assert nodes["standalone"]["resources"]["cpuMillis"] == 0
    # the fixture's pods name no node: active and unbound, so pending
    assert d["pods"] == {"desired": 3, "current": 2, "ready": 2, "pending": 2, "held": 0}
    # the root's group needs the pods the object implies: proxy 1 + datanode 2 (+ indexnode 0)
    [group] = d["podGroups"]
    assert group["minMember"] == 3 and len(group["pods"]) == 2


def test_nothing_described_is_an_empty_view_not_an_error() -> None:
    obj = copy.deepcopy(CLUSTER)
    obj["spec"] = {"mode": "cluster"}
    d = Workload(MILVUS_LIKE, obj).describe()
    assert d["components"] == [] and d["pods"]["desired"] == 0 and d["errors"] == []
    assert d["resources"]["cpuMillis"] == 0


def _trainer_without_workers() -> tuple[dict[str, Any], dict[str, Any], list[dict[str, Any]]]:
    karta, obj, pods = load_fixture("trainer")
    del obj["spec"]["replicaSpecs"]["Worker"]
    pods = [p for p in pods if "worker" not in p["metadata"]["name"]]
    return karta, obj, pods


def test_pytorchjob_without_worker_v2_subgroup_has_no_pods_and_no_error() -> None:
    karta, obj, pods = _trainer_without_workers()
    d = Workload(karta, obj, pods).describe()
    # the worker's scale path still says 1 (`.replicas // 1`), but there is no Worker template
    assert d["pods"]["desired"] == 1
    assert _names(d["components"]) == ["master"]
    assert d["resources"]["gpus"] == 1
    [group] = d["podGroups"]
    subs = {s["name"]: s for s in group["subGroups"]}
    assert subs["worker"]["minMember"] == 0 and "error" not in subs["worker"]
    assert "does not describe worker" in subs["worker"]["minMemberRule"]
    assert subs["master"]["minMember"] == 1 and group["minMember"] == 1


def test_pytorchjob_without_worker_alpha_group_counts_the_master_only() -> None:
    karta, obj, pods = _trainer_without_workers()
    gang = karta["spec"]["optimizationInstructions"]["gangScheduling"]
    gang.pop("podGroup")
    gang["podGroups"] = [
        {
            "name": "job",
            "members": [
                {"componentName": "master", "groupByKeyPaths": [".metadata.namespace"]},
                {"componentName": "worker", "groupByKeyPaths": [".metadata.namespace"]},
            ],
        }
    ]
    [group] = Workload(karta, obj, pods).pod_groups()
    assert group.min_member == 1


def test_explicit_zero_replicas_is_shown_with_zero() -> None:
    karta, obj, _ = load_fixture("trainer")
    obj["spec"]["replicaSpecs"]["Worker"]["replicas"] = 0
    d = Workload(karta, obj).describe()
    nodes = {n["name"]: n for n in d["components"]}
    assert nodes["worker"]["replicas"]["desired"] == 0
    assert nodes["worker"]["resources"]["gpus"] == 0
    assert d["pods"]["desired"] == 1


def test_map_shaped_instance_with_null_template() -> None:
    child = {
        "name": "replica",
        "ownerRef": "thing",
        "instanceIdPath": ".spec.specs | keys[]",
        "specDefinition": {"podTemplateSpecPath": ".spec.specs[] | .template"},
        "scaleDefinition": {"replicasPath": ".spec.specs[] | .replicas // 1"},
        "podSelector": {
            "componentTypeSelector": {"keyPath": ".metadata.labels.role"},
            "componentInstanceSelector": {"idPath": ".metadata.labels.role"},
        },
    }
    template = {"spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}}
    obj = {
        "apiVersion": "example.com/v1",
        "kind": "Thing",
        "metadata": {"name": "j"},
        "spec": {"specs": {"Master": {"template": template}, "Worker": {"replicas": 4}}},
    }
    wl = Workload(karta_dict(root(), child), obj)
    d = wl.describe()
    assert d["pods"]["desired"] == 1 and d["resources"]["cpuMillis"] == 1000
    assert _names(d["components"]) == ["Master"]
    # extraction itself keeps the reference's answers: both instances, Worker's template {}
    assert wl.pod_template_specs("replica") == {"Master": template, "Worker": {}}


def test_single_instance_path_with_no_result_is_absent_not_an_error() -> None:
    child = {
        "name": "extra",
        "ownerRef": "thing",
        "specDefinition": {"podSpecPath": ".spec.extra | select(. != null) | .pod"},
    }
    obj = {"apiVersion": "example.com/v1", "kind": "Thing", "metadata": {"name": "j"}, "spec": {}}
    wl = Workload(karta_dict(root(), child), obj)
    d = wl.describe()
    assert d["errors"] == [] and d["components"] == [] and d["pods"]["desired"] == 0
    present = dict(obj, spec={"extra": {"pod": {"containers": [{"name": "c"}]}}})
    assert Workload(karta_dict(root(), child), present).describe()["pods"]["desired"] == 1


def test_fixtures_describe_every_instance_they_define() -> None:
    from tests.engine.conftest import FIXTURE_NAMES, workload

    for name in FIXTURE_NAMES:
        wl = workload(name, with_pods=False)
        for comp in wl.structure.pod_bearing:
            for inst in wl.instances(comp).values():
                assert inst.describes_pods, (name, comp, inst.instance_id)
