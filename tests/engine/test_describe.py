"""``Workload.describe()`` over the hand-written fixtures: every number checked by hand."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.engine.conftest import FIXTURE_NAMES, workload

GI = 2**30
TOP_KEYS = {
    "apiVersion",
    "kind",
    "name",
    "namespace",
    "uid",
    "definition",
    "fileMode",
    "phases",
    "pods",
    "resources",
    "components",
    "podGroups",
    "unattributedPods",
}
NODE_KEYS = {"name", "component", "instance", "kind", "replicas", "resources", "pods", "children"}


def _nodes(d: dict[str, Any]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}

    def walk(nodes: list[dict[str, Any]], prefix: str) -> None:
        for node in nodes:
            key = f"{prefix}{node['name']}"
            out[key] = node
            walk(node["children"], key + "/")

    walk(d["components"], "")
    return out


@pytest.mark.parametrize("name", FIXTURE_NAMES)
def test_shape_is_the_interface(name: str) -> None:
    d = workload(name).describe()
    assert TOP_KEYS <= set(d)
    assert set(d["pods"]) == {"desired", "current", "ready", "pending", "held"}
    assert {"gpus", "cpuMillis", "memoryBytes", "byResource"} <= set(d["resources"])
    for node in _nodes(d).values():
        assert NODE_KEYS <= set(node)
        assert set(node["replicas"]) == {
            "desired",
            "current",
            "ready",
            "min",
            "max",
            "pending",
            "held",
        }
        for pod in node["pods"]:
            assert {"name", "phase", "ready", "node", "gpus"} <= set(pod)
    for group in d["podGroups"]:
        assert {"name", "minMember", "pods", "subGroups"} <= set(group)


@pytest.mark.parametrize("name", FIXTURE_NAMES)
def test_file_mode_has_null_counts_and_same_desired(name: str) -> None:
    live = workload(name).describe()
    offline = workload(name, with_pods=False).describe()
    assert offline["fileMode"] is True and live["fileMode"] is False
    assert offline["pods"] == {
        "desired": live["pods"]["desired"],
        "current": None,
        "ready": None,
        "pending": None,
        "held": None,
    }
    assert offline["resources"] == live["resources"]
    assert offline["unattributedPods"] == []

    # the spec's gangs are listed without pods (also those no pod has joined yet), with the
    # minimums the live view has; a key only pods carry (a label the controller sets) stands
    # as <label> in the name
    def pattern(group: dict[str, Any]) -> str:
        text = re.escape(group["name"])
        for key in group["keys"] if "unresolvedKeys" in group else ():
            if key.startswith("<"):
                text = text.replace(re.escape(key), ".+", 1)
        return text

    for group in offline["podGroups"]:
        assert group["pods"] == []
        assert ("unresolvedKeys" in group) == any(k.startswith("<") for k in group["keys"])
    for live_group in live["podGroups"]:
        matches = [
            g
            for g in offline["podGroups"]
            if g["definition"] == live_group["definition"]
            and re.fullmatch(pattern(g), live_group["name"])
        ]
        assert [g["minMember"] for g in matches] == [live_group["minMember"]], live_group["name"]
    for node in _nodes(offline).values():
        assert node["replicas"]["current"] is None and node["replicas"]["ready"] is None


def test_array_of_jobs() -> None:
    d = workload("jobgroup", definition_name="jg", origin="cluster").describe()
    assert (d["apiVersion"], d["kind"], d["name"], d["namespace"], d["uid"]) == (
        "example.com/v1",
        "JobGroup",
        "train",
        "ml",
        "1111-aaaa",
    )
    assert d["definition"] == {"name": "jg", "origin": "cluster"}
    assert d["phases"] == ["Running"]
    assert d["pods"] == {"desired": 5, "current": 5, "ready": 4, "pending": 1, "held": 4}
    # driver: max(init 2 CPU / 1Gi, main 500m + sidecar 100m) = 2 CPU, 1Gi
    # workers: 4 x (4 CPU + 250m overhead, 16Gi, 8 GPUs)
    assert d["resources"]["gpus"] == 32
    assert d["resources"]["cpuMillis"] == 2000 + 4 * 4250
    assert d["resources"]["memoryBytes"] == GI + 4 * 16 * GI
    assert d["resources"]["byResource"] == {"nvidia.com/gpu": 32}
    nodes = _nodes(d)
    assert list(nodes) == ["driver", "workers"]
    workers = nodes["workers"]
    assert workers["component"] == "job" and workers["instance"] == "workers"
    assert workers["kind"] == {"group": "batch", "version": "v1", "kind": "Job"}
    assert workers["replicas"] == {
        "desired": 4,
        "current": 4,
        "ready": 3,
        "min": None,
        "max": None,
        "pending": 1,
        "held": 3,
    }
    assert workers["pendingResources"]["gpus"] == 8 and workers["heldResources"]["gpus"] == 24
    assert workers["resources"]["gpus"] == 32
    pending = next(p for p in workers["pods"] if p["name"] == "train-workers-1-1-ddddd")
    assert pending == {
        "name": "train-workers-1-1-ddddd",
        "phase": "Pending",
        "ready": False,
        "node": None,
        "gpus": 8,
        "reason": "Unschedulable",
        "instance": "workers",
        "message": "0/3 nodes",  # the scheduler's, from the PodScheduled condition
    }
    assert d["unattributedPods"] == ["other-workers-0-0-zzzzz", "train-ghost-0-0-qqqqq"]
    assert "another JobGroup" in d["unattributedReasons"]["other-workers-0-0-zzzzz"]
    assert (
        'could not match instance id "ghost"' in d["unattributedReasons"]["train-ghost-0-0-qqqqq"]
    )
    groups = {g["name"]: g for g in d["podGroups"]}
    assert groups["pg-1111-aaaa-workers"]["minMember"] == 4
    assert len(groups["pg-1111-aaaa-workers"]["pods"]) == 4
    assert groups["pg-1111-aaaa-driver"]["minMember"] == 1


def test_map_of_services_with_replica_split() -> None:
    d = workload("reactor").describe()
    assert d["phases"] == ["Running", "Degraded"]
    assert d["pods"] == {"desired": 6, "current": 5, "ready": 4, "pending": 0, "held": 5}
    assert d["resources"]["byResource"] == {"amd.com/gpu": 1, "nvidia.com/gpu": 16}
    assert d["resources"]["cpuMillis"] == 1000 + 500 + 4 * 8000
    assert d["resources"]["memoryBytes"] == (1 + 2 + 4 * 64) * GI
    assert d["resources"]["resourceClaims"] == 4
    nodes = _nodes(d)
    assert list(nodes) == ["api", "cache", "worker[0]", "worker[1]"]
    assert nodes["cache"]["replicas"] == {
        "desired": 1,
        "current": 0,
        "ready": 0,
        "min": 2,
        "max": 5,
        "pending": 0,
        "held": 0,
    }
    assert nodes["worker[1]"]["replicas"]["desired"] == 2
    assert nodes["worker[1]"]["replicas"]["ready"] == 1
    crash = next(p for p in nodes["worker[1]"]["pods"] if not p["ready"])
    assert crash["reason"] == "CrashLoopBackOff" and crash["replica"] == "1"
    assert d["unattributedPods"] == ["chat-unlabelled-0"]
    assert {g["name"]: g["minMember"] for g in d["podGroups"]} == {
        "pg-3333-cccc-api": 1,
        "pg-3333-cccc-worker": 4,
    }


def test_leader_worker_groups() -> None:
    d = workload("leaderworker").describe()
    assert d["pods"] == {"desired": 6, "current": 5, "ready": 5, "pending": 0, "held": 5}
    nodes = _nodes(d)
    assert list(nodes) == [
        "group[0]",
        "group[0]/leader",
        "group[0]/worker",
        "group[1]",
        "group[1]/leader",
        "group[1]/worker",
    ]
    assert nodes["group[1]"]["replicas"]["desired"] == 3
    assert nodes["group[1]"]["replicas"]["current"] == 2
    assert nodes["group[1]/worker"]["replicas"]["desired"] == 2
    assert nodes["group[0]"]["kind"] is None
    # one gang per group index, each of `size` pods (the reference would say 3 x 6 = 18)
    assert [(g["name"], g["minMember"], len(g["pods"])) for g in d["podGroups"]] == [
        ("pg-4444-dddd-vllm-0", 3, 3),
        ("pg-4444-dddd-vllm-1", 3, 2),
    ]


def test_leader_worker_without_pods_shows_the_groups_the_spec_implies() -> None:
    """Offline, one ``group[i]`` node and one gang per replica, as with pods (QA #17)."""
    d = workload("leaderworker", with_pods=False).describe()
    nodes = _nodes(d)
    assert list(nodes) == [
        "group[0]",
        "group[0]/leader",
        "group[0]/worker",
        "group[1]",
        "group[1]/leader",
        "group[1]/worker",
    ]
    assert [nodes[f"group[{i}]"]["replicas"]["desired"] for i in (0, 1)] == [3, 3]
    assert d["pods"]["desired"] == 6
    groups = [(g["name"], g["minMember"], g["pods"], g["keys"]) for g in d["podGroups"]]
    assert groups == [
        ("pg-4444-dddd-<lw.example.com/name>-0", 3, [], ["<lw.example.com/name>", "0"]),
        ("pg-4444-dddd-<lw.example.com/name>-1", 3, [], ["<lw.example.com/name>", "1"]),
    ]
    assert d["podGroups"][0]["unresolvedKeys"] == ['.metadata.labels["lw.example.com/name"]']
    assert "error" not in d["podGroups"][0]


def test_multi_statefulset() -> None:
    d = workload("vectordb").describe()
    assert d["phases"] == ["Running"]
    assert d["pods"]["desired"] == 2 + 1 + 3 + 2 + 1
    nodes = _nodes(d)
    assert list(nodes) == ["querynode", "datanode", "etcd", "minio", "proxy"]
    assert nodes["etcd"]["replicas"]["current"] == 2  # etcd-2 lacks a matchLabels label
    assert nodes["datanode"]["resources"]["cpuMillis"] == 2100
    assert nodes["minio"]["resources"]["memoryBytes"] == 4 * GI
    assert nodes["querynode"]["resources"]["gpus"] == 2
    assert sorted(d["unattributedPods"]) == ["vec-etcd-2", "vec-proxy-a"]
    assert "proxy cannot claim pods" in d["unattributedReasons"]["vec-proxy-a"]
    groups = {g["name"]: g for g in d["podGroups"]}
    assert groups["pg-5555-eeee-vec"]["pods"] == ["vec-datanode-a", "vec-querynode-a"]
    assert groups["pg-5555-eeee-vec"]["minMember"] == 3  # querynode 2 + datanode 1
    assert "vec-querynode-b" in groups["pg-5555-eeee-vec-all"]["pods"]  # ancestor fallback


def test_v2_pod_group_with_subgroups() -> None:
    d = workload("trainer").describe()
    assert d["phases"] == ["Running", "Initializing"]
    assert d["status"]["conditions"][1] == {
        "type": "Running",
        "status": "True",
        "reason": "Running",
        "message": "job running",
    }
    [group] = d["podGroups"]
    assert group["name"] == "pg-6666-ffff-trainer"
    assert group["minMember"] == 4
    assert group["topology"] == {
        "topologyName": "cluster-topology",
        "preferredTopologyLevel": None,
        "requiredTopologyLevel": "rack",
    }
    subs = {s["name"]: s for s in group["subGroups"]}
    assert subs["master"]["minMember"] == 1 and subs["master"]["pods"] == ["mnist-master-0"]
    assert subs["worker"]["minMember"] == 3 and len(subs["worker"]["pods"]) == 3
    assert subs["worker"]["topology"]["preferredTopologyLevel"] == "host"


def test_pod_bearing_root_is_a_component_and_empty_groupings_are_dropped() -> None:
    from tests.engine.conftest import karta_dict, root
    from workload_map.engine import Workload

    karta = karta_dict(
        root(
            specDefinition={"podTemplateSpecPath": ".spec.template"},
            scaleDefinition={"replicasPath": ".spec.replicas // 1"},
        ),
        {
            "name": "replicaset",
            "ownerRef": "thing",
            "kind": {"group": "apps", "version": "v1", "kind": "ReplicaSet"},
        },
    )
    obj = {
        "apiVersion": "example.com/v1",
        "kind": "Thing",
        "metadata": {"name": "d"},
        "spec": {"replicas": 3, "template": {"spec": {"containers": [{"name": "c"}]}}},
    }
    d = Workload(karta, obj, []).describe()
    assert [n["name"] for n in d["components"]] == ["thing"]
    assert d["components"][0]["children"] == []
    assert d["components"][0]["replicas"]["desired"] == 3
    assert d["pods"] == {"desired": 3, "current": 0, "ready": 0, "pending": 0, "held": 0}
    assert d["phases"] == ["Undefined"]


def test_pods_without_a_replica_key_stay_visible() -> None:
    from tests.engine.conftest import load_fixture
    from workload_map.engine import Workload

    karta, obj, pods = load_fixture("leaderworker")
    del pods[-1]["metadata"]["labels"]["lw.example.com/group-index"]  # vllm-1-1
    d = Workload(karta, obj, pods).describe()
    nodes = _nodes(d)
    assert "group[?]/worker" in nodes
    assert [p["name"] for p in nodes["group[?]/worker"]["pods"]] == ["vllm-1-1"]
    assert d["pods"]["current"] == 5
