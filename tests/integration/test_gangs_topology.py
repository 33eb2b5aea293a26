"""Topology end to end: a gang with a required rack level binds within one rack or not at all.

``TopologyAwareWorkloadScheduling`` (alpha in v1.37.2) on every component: the operator's
probe sees the API server keep ``schedulingConstraints``, and the workload's KAI placement
annotation becomes ``schedulingConstraints.topology: [{key: <rack label>}]`` on our PodGroup.
Only the workload is created: the in-tree Job controller makes the pods, our webhook groups
them, the real scheduler places the gang. The definition's own ``podGroup.topology`` required
level does the same for a custom kind (its Jobs created as its controller would). "Stays unbound" is observed, not timed: the test
waits for the scheduler's ``FailedScheduling`` for the gang and then checks nothing is bound.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.gangs import custom
from tests.gangs.e2e import (
    NODE,
    NODE_LABEL,
    PARTSET_CRD,
    bound,
    failed_scheduling,
    gang_operator,
    make_namespace,
    partset_with_jobs,
    pod_spec,
    podgroups,
    pods_in,
    wait,
)
from tests.operator.live import KARTAS, OperatorProcess, delete
from workload_map.gangs.topology import ANNOTATION_KAI_REQUIRED, ANNOTATION_KAI_TOPOLOGY
from workload_map.kube.api import Api

from .harness import FakeNodes, Kube

ROOT = Path(__file__).resolve().parents[2]
RACK = "wlmap-gangs-test/rack"
Obj = dict[str, Any]

pytestmark = pytest.mark.integration

PLANE_OPTIONS = {"extra_gates": ("TopologyAwareWorkloadScheduling",), "workload_controllers": True}


#: a stand-in for KAI's Topology CRD (its group, version and kind; the schema left open)
KAI_TOPOLOGY_CRD: Obj = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "topologies.kai.scheduler"},
    "spec": {
        "group": "kai.scheduler",
        "scope": "Cluster",
        "names": {"plural": "topologies", "singular": "topology", "kind": "Topology"},
        "versions": [
            {
                "name": "v1alpha1",
                "served": True,
                "storage": True,
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "x-kubernetes-preserve-unknown-fields": True,
                    }
                },
            }
        ],
    },
}
#: KAI's Topology with an alias per level, as in ../shared/realworld/podgroup-gang-scheduling/
#: kai-topology-aliases.yaml, on our rack label
KAI_TOPOLOGY: Obj = {
    "apiVersion": "kai.scheduler/v1alpha1",
    "kind": "Topology",
    "metadata": {"name": "wlmap-racks"},
    "spec": {
        "levels": [
            {"nodeLabel": RACK, "alias": "rack"},
            {"nodeLabel": "kubernetes.io/hostname", "alias": "node"},
        ]
    },
}


@pytest.fixture(scope="module")
def plane(kube_with_gates: Kube) -> Kube:
    kube_with_gates.install_crd(ROOT / "deploy/crds/kartas.run.ai.yaml")
    kube_with_gates.install_crd(KAI_TOPOLOGY_CRD)
    kube_with_gates.install_crd(PARTSET_CRD)
    return kube_with_gates


def _rack_karta() -> Obj:
    """The custom kind's Karta whose own v2 ``podGroup`` requires the rack level (a node-label
    key of Topology wlmap-racks; no preferred level)."""
    doc = custom.karta(2)
    doc["spec"]["optimizationInstructions"]["gangScheduling"] = {
        "podGroup": {
            "name": "parts",
            "topology": {
                "topologyName": "wlmap-racks",
                "requiredTopologyLevel": RACK,
                "preferredTopologyLevel": "",
            },
        }
    }
    return doc


@pytest.fixture(scope="module")
def op(
    plane: Kube, api: Api, tok: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[OperatorProcess]:
    topologies = "/apis/kai.scheduler/v1alpha1/topologies"
    delete(api, f"{topologies}/wlmap-racks")
    # before the operator: its first list of Topologies has it when the workloads come
    api.request("POST", topologies, KAI_TOPOLOGY)
    karta = _rack_karta()
    delete(api, f"{KARTAS}/{karta['metadata']['name']}")
    api.request("POST", KARTAS, karta)  # before the operator: its first list brings it
    ns = make_namespace(api, tok, opted_in=False)
    with gang_operator(api, plane.kubeconfig, ns, tmp_path_factory.mktemp("gangs"), tok) as proc:
        # the probe's answer decides whether constraints are written: the workloads come after
        wait(
            "the operator's topology probe",
            lambda: (
                "TopologyAwareWorkloadScheduling (API server): works"
                in proc.log.read_text(errors="replace")
            ),
        )
        yield proc
    delete(api, f"/api/v1/namespaces/{ns}")
    delete(api, f"{KARTAS}/{karta['metadata']['name']}")


def _indexed_job(
    api: Api, ns: str, pool: str, size: int, *, rack_level: bool, level: str = RACK
) -> float:
    """An Indexed Job of ``size`` pods stating its gang minimum (and, with ``rack_level``, the
    rack as KAI's required placement: ``level`` of Topology wlmap-racks), as a user writes it;
    returns when it was created."""
    annotations = {"kai.scheduler/batch-min-member": str(size)}
    if rack_level:
        annotations |= {ANNOTATION_KAI_TOPOLOGY: "wlmap-racks", ANNOTATION_KAI_REQUIRED: level}
    body = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "train", "annotations": annotations},
        "spec": {
            "completionMode": "Indexed",
            "completions": size,
            "parallelism": size,
            "backoffLimit": 0,
            "template": {"spec": {**pod_spec(pool), "restartPolicy": "Never"}},
        },
    }
    api.request("POST", f"/apis/batch/v1/namespaces/{ns}/jobs", body)
    return time.monotonic()


def _racks(api: Api, ns: str) -> set[str]:
    """The racks of the nodes the namespace's pods are bound to."""
    nodes = {p["spec"]["nodeName"] for p in pods_in(api, ns) if p["spec"].get("nodeName")}
    return {str(api.get(f"/api/v1/nodes/{n}")["metadata"]["labels"].get(RACK)) for n in nodes}


def _rack(nodes: FakeNodes, pool: str, rack: str, count: int) -> None:
    nodes.add(count, NODE, labels={NODE_LABEL: pool, RACK: rack})


def test_a_gang_binds_within_one_rack_or_not_at_all(
    plane: Kube, api: Api, op: OperatorProcess, tok: str, fake_nodes: FakeNodes
) -> None:
    ns = make_namespace(api, tok)
    pool = f"{tok}-racks"
    # room for 4 whole-node pods, but only 2 in each rack
    _rack(fake_nodes, pool, "a", 2)
    _rack(fake_nodes, pool, "b", 2)
    created = _indexed_job(api, ns, pool, 4, rack_level=True)
    (group,) = wait("the PodGroup", lambda: podgroups(api, ns))
    # the API server kept the field (the gate is on)
    assert group["spec"]["schedulingConstraints"] == {"topology": [{"key": RACK}]}
    assert group["spec"]["schedulingPolicy"] == {"gang": {"minCount": 4}}
    wait("4 pods from the Job controller", lambda: len(pods_in(api, ns)) == 4)
    assert all(p["spec"].get("schedulingGroup") for p in pods_in(api, ns))
    wait("the scheduler's FailedScheduling for the gang", lambda: failed_scheduling(api, ns))
    assert bound(api, ns) == []  # it fits only across two racks: nothing binds
    start = time.monotonic()
    _rack(fake_nodes, pool, "b", 2)  # rack b now holds the whole gang
    wait("the whole gang bound", lambda: len(bound(api, ns)) == 4, timeout=120)
    done = time.monotonic()
    assert _racks(api, ns) == {"b"}  # every member in that rack
    print(
        f"topology gang of 4: unbound across racks a+b; bound in rack b {done - start:.2f} s "
        f"after the room was added ({done - created:.2f} s after the Job's creation)"
    )


def test_the_same_gang_without_a_level_binds_across_racks(
    plane: Kube, api: Api, op: OperatorProcess, tok: str, fake_nodes: FakeNodes
) -> None:
    """The control: the constraint, not the room, held the gang above."""
    ns = make_namespace(api, tok)
    pool = f"{tok}-free"
    _rack(fake_nodes, pool, "a", 2)
    _rack(fake_nodes, pool, "b", 2)
    created = _indexed_job(api, ns, pool, 4, rack_level=False)
    (group,) = wait("the PodGroup", lambda: podgroups(api, ns))
    assert "schedulingConstraints" not in group["spec"]
    wait("the whole gang bound", lambda: len(bound(api, ns)) == 4, timeout=120)
    assert _racks(api, ns) == {"a", "b"}
    print(
        f"gang of 4 without a level: bound across racks {time.monotonic() - created:.2f} s "
        "after the Job's creation"
    )


def test_a_kai_alias_resolves_through_the_topology_object(
    plane: Kube, api: Api, op: OperatorProcess, tok: str, fake_nodes: FakeNodes
) -> None:
    """``kai.scheduler/topology-required-placement: rack`` names the level by its alias in
    KAI's Topology object, which the operator watches: the constraint is the label key."""
    ns = make_namespace(api, tok)
    pool = f"{tok}-alias"
    _rack(fake_nodes, pool, "a", 2)
    _rack(fake_nodes, pool, "b", 4)
    _indexed_job(api, ns, pool, 4, rack_level=True, level="rack")
    (group,) = wait("the PodGroup", lambda: podgroups(api, ns))
    assert group["spec"]["schedulingConstraints"] == {"topology": [{"key": RACK}]}
    wait("the whole gang bound", lambda: len(bound(api, ns)) == 4, timeout=120)
    assert _racks(api, ns) == {"b"}


def test_the_definitions_own_required_level_binds_within_one_rack(
    plane: Kube, api: Api, op: OperatorProcess, tok: str, fake_nodes: FakeNodes
) -> None:
    """No annotation on the workload: the rack comes from the Karta's
    ``podGroup.topology.requiredTopologyLevel``."""
    ns = make_namespace(api, tok)
    pool = f"{tok}-karta"
    _rack(fake_nodes, pool, "a", 2)
    _rack(fake_nodes, pool, "b", 2)
    created = partset_with_jobs(api, ns, pool, [2, 2])
    (group,) = wait("the PodGroup", lambda: podgroups(api, ns))
    assert group["spec"]["schedulingConstraints"] == {"topology": [{"key": RACK}]}
    assert group["spec"]["schedulingPolicy"] == {"gang": {"minCount": 4}}
    wait("4 pods from the Job controller", lambda: len(pods_in(api, ns)) == 4)
    assert all(p["spec"].get("schedulingGroup") for p in pods_in(api, ns))
    wait("the scheduler's FailedScheduling for the gang", lambda: failed_scheduling(api, ns))
    assert bound(api, ns) == []  # it fits only across two racks: nothing binds
    start = time.monotonic()
    _rack(fake_nodes, pool, "b", 2)  # rack b now holds the whole gang
    wait("the whole gang bound", lambda: len(bound(api, ns)) == 4, timeout=120)
    done = time.monotonic()
    assert _racks(api, ns) == {"b"}  # every member in that rack
    print(
        f"definition's podGroup.topology, gang of 4: unbound across racks a+b; bound in rack b "
        f"{done - start:.2f} s after the room was added ({done - created:.2f} s after creation)"
    )
