"""A workload whose gang instances must start together, end to end: two or none.

``CompositePodGroup`` (alpha in v1.37.2; needs ``GenericWorkload`` and
``TopologyAwareWorkloadScheduling``) on every component and ``scheduling.k8s.io/v1alpha3``
served. A custom kind's Karta has one component with an instance per part (``instanceIdPath``) and
one alpha gang definition keyed by the part label, so the workload has one gang instance per
part, each of its part's replicas; the workload's annotation
``workload-map.run.ai/gang-min-groups: "2"`` asks for two of them together. The operator writes
a Workload whose composite template holds the definition's one pod-group template, a
``CompositePodGroup`` with ``minGroupCount: 2`` and one child PodGroup per instance. The test
creates the workload and its Jobs as the kind's controller would; the in-tree Job controller
makes the pods. "Stays unbound" is observed: the test waits for the scheduler's
``FailedScheduling`` and then checks nothing is bound.
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
    create,
    failed_scheduling,
    gang_operator,
    make_namespace,
    part_jobs,
    pod_spec,
    podgroups,
    pods_in,
    wait,
)
from tests.operator.live import KARTAS, OperatorProcess, delete
from workload_map.gangs.config import ANNOTATION_MIN_GROUPS
from workload_map.kube.api import Api
from workload_map.kube.errors import ApiError

from .harness import FakeNodes, Kube

ROOT = Path(__file__).resolve().parents[2]
COMPOSITES = "/apis/scheduling.k8s.io/v1alpha3/namespaces/{ns}/compositepodgroups"
PART = custom.PART_LABEL
Obj = dict[str, Any]

pytestmark = pytest.mark.integration

PLANE_OPTIONS = {
    "extra_gates": ("TopologyAwareWorkloadScheduling", "CompositePodGroup"),
    "extra_apis": ("scheduling.k8s.io/v1alpha3",),
    "workload_controllers": True,
}


@pytest.fixture(scope="module")
def plane(kube_with_gates: Kube) -> Kube:
    kube_with_gates.install_crd(ROOT / "deploy/crds/kartas.run.ai.yaml")
    kube_with_gates.install_crd(PARTSET_CRD)
    return kube_with_gates


@pytest.fixture(scope="module")
def op(
    plane: Kube, api: Api, tok: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[OperatorProcess]:
    karta = custom.karta_instances()
    delete(api, f"{KARTAS}/{karta['metadata']['name']}")
    api.request("POST", KARTAS, karta)  # before the operator: its first list brings it
    ns = make_namespace(api, tok, opted_in=False)
    with gang_operator(api, plane.kubeconfig, ns, tmp_path_factory.mktemp("gangs"), tok) as proc:
        wait(
            "the operator's composite probe",
            lambda: "CompositePodGroup (API server): works" in proc.log.read_text(errors="replace"),
        )
        yield proc
    delete(api, f"/api/v1/namespaces/{ns}")
    delete(api, f"{KARTAS}/{karta['metadata']['name']}")


def _composites(api: Api, ns: str) -> list[Obj]:
    try:
        return list(api.get(COMPOSITES.format(ns=ns)).get("items") or [])
    except ApiError:
        return []


def _partset_with_jobs(api: Api, ns: str, pool: str, sizes: list[int], minimum: int) -> float:
    """The PartSet asking for ``minimum`` of its gangs together and, as its controller would
    make them, one Job per part; returns when the workload was created."""
    body = custom.partset_instances("parts", sizes, namespace=ns)
    body["metadata"]["annotations"] = {ANNOTATION_MIN_GROUPS: str(minimum)}
    for part in body["spec"]["parts"]:
        part["template"]["spec"] = pod_spec(pool)
    partset = create(api, f"/apis/{custom.GROUP}/v1/namespaces/{ns}/partsets", body)
    created = time.monotonic()
    part_jobs(api, ns, partset, pool, sizes)
    return created


def test_two_instances_with_minimum_two_bind_both_or_neither(
    plane: Kube, api: Api, op: OperatorProcess, tok: str, fake_nodes: FakeNodes
) -> None:
    ns = make_namespace(api, tok)
    pool = f"{tok}-instances"
    fake_nodes.add(2, NODE, labels={NODE_LABEL: pool})  # room for one instance of two pods
    created = _partset_with_jobs(api, ns, pool, [2, 2], minimum=2)
    (composite,) = wait("the CompositePodGroup", lambda: _composites(api, ns))
    assert composite["spec"]["schedulingPolicy"] == {"gang": {"minGroupCount": 2}}
    children = wait(
        "two child PodGroups", lambda: len(podgroups(api, ns)) == 2 and podgroups(api, ns)
    )
    name = composite["metadata"]["name"]
    assert {c["spec"]["parentCompositePodGroupName"] for c in children} == {name}
    # both instances come from the one definition's template
    assert {c["spec"]["workloadRef"]["templateName"] for c in children} == {"gang"}
    (workload,) = api.get(f"/apis/scheduling.k8s.io/v1beta1/namespaces/{ns}/workloads")["items"]
    (template,) = workload["spec"]["compositePodGroupTemplates"]
    assert [t["name"] for t in template["podGroupTemplates"]] == ["gang"]
    assert not workload["spec"].get("podGroupTemplates")
    wait("4 pods from the Job controller", lambda: len(pods_in(api, ns)) == 4)
    pods = pods_in(api, ns)
    assert {p["spec"]["schedulingGroup"]["podGroupName"] for p in pods} == {
        c["metadata"]["name"] for c in children
    }
    # only one instance fits: the scheduler tried and bound nothing
    wait("the scheduler's FailedScheduling for the gang", lambda: failed_scheduling(api, ns))
    assert bound(api, ns) == []
    start = time.monotonic()
    fake_nodes.add(2, NODE, labels={NODE_LABEL: pool})  # both instances fit
    wait("both instances bound", lambda: len(bound(api, ns)) == 4, timeout=120)
    done = time.monotonic()
    print(
        f"2 gang instances of 2 (gang-min-groups 2): unbound with room for one; bound "
        f"{done - start:.2f} s after the room was added ({done - created:.2f} s after creation)"
    )
