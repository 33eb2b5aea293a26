"""Coexistence with the in-tree Job controller under ``WorkloadWithJob``, end to end.

With the gate on (API server, scheduler and controller-manager), the v1.37.2 Job controller
makes a Workload and a PodGroup for every new root Job (Basic policy unless ``spec.scheduling``
asks for a gang) before it creates the pods, and stamps ``spec.schedulingGroup`` on them. The
operator probes the gate at start and leaves those Jobs alone: no object of ours, ever (not
even for a moment), a ``LeftAlone`` event on the Job and the decision annotation on its pods.
Only the Job is created here: the Job controller makes the pods, the real scheduler binds them.

"Stays unbound" is observed, not timed: the test waits until the scheduler has reported the
gang's pods ``FailedScheduling`` and then checks nothing is bound.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from tests.gangs.e2e import (
    NODE,
    NODE_LABEL,
    bound,
    failed_scheduling,
    make_namespace,
    pod_spec,
    podgroups,
    pods_in,
    wait,
)
from tests.operator.live import OperatorProcess
from workload_map.gangs.config import ANNOTATION_DECISION, LABEL_MANAGED_BY
from workload_map.kube.api import Api
from workload_map.operator.events import COMPONENT

from .harness import FakeNodes, Kube

ROOT = Path(__file__).resolve().parents[2]
WORKLOADS = "/apis/scheduling.k8s.io/v1beta1/namespaces/{ns}/workloads"
Obj = dict[str, Any]

#: the module's plane (conftest ``kube_with_gates``): the gate on every component
PLANE_OPTIONS = {"extra_gates": ("WorkloadWithJob",), "workload_controllers": True}

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def plane(kube_with_gates: Kube) -> Kube:
    kube_with_gates.install_crd(ROOT / "deploy/crds/kartas.run.ai.yaml")
    return kube_with_gates


def _job(api: Api, ns: str, pool: str, *, size: int, gang: bool) -> Obj:
    """An Indexed Job of ``size`` pods stating its minimum for us (the annotation) and, with
    ``gang``, for the Job controller (``spec.scheduling``)."""
    spec = {**pod_spec(pool), "restartPolicy": "Never"}
    body: Obj = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": "train",
            "annotations": {"kai.scheduler/batch-min-member": str(size)},
        },
        "spec": {
            "completionMode": "Indexed",
            "completions": size,
            "parallelism": size,
            "backoffLimit": 0,
            "template": {"spec": spec},
        },
    }
    if gang:
        body["spec"]["scheduling"] = {"schedulingPolicy": {"gang": {"minCount": size}}}
    return dict(api.request("POST", f"/apis/batch/v1/namespaces/{ns}/jobs", body))


def _events(api: Api, ns: str) -> list[Obj]:
    return list(api.get(f"/api/v1/namespaces/{ns}/events").get("items") or [])


def _ours(api: Api, ns: str, reason: str) -> list[str]:
    """Messages of our events of ``reason`` on the Job."""
    return [
        str(e.get("message"))
        for e in _events(api, ns)
        if e.get("reason") == reason
        and (e.get("source") or {}).get("component") == COMPONENT
        and e["involvedObject"].get("kind") == "Job"
    ]


def _scheduling_objects(api: Api, ns: str) -> tuple[list[Obj], list[Obj]]:
    workloads = list(api.get(WORKLOADS.format(ns=ns)).get("items") or [])
    return workloads, podgroups(api, ns)


def _only_the_job_controllers(api: Api, ns: str, job: Obj) -> tuple[Obj, Obj]:
    """Exactly one Workload and one PodGroup, both the Job controller's; none of ours."""
    workloads, groups = _scheduling_objects(api, ns)
    assert len(workloads) == 1 and len(groups) == 1, (workloads, groups)
    (workload,), (group,) = workloads, groups
    for obj in (workload, group):
        assert LABEL_MANAGED_BY not in (obj["metadata"].get("labels") or {})
        owners = obj["metadata"].get("ownerReferences") or []
        assert any(o["uid"] == job["metadata"]["uid"] and o.get("controller") for o in owners)
    assert workload["spec"]["controllerRef"] == {
        "apiGroup": "batch",
        "kind": "Job",
        "name": "train",
    }
    # never one of ours, not even for a moment: we would have said Created
    assert _ours(api, ns, "Created") == [] and _ours(api, ns, "Deleted") == []
    return workload, group


def _nodes(nodes: FakeNodes, pool: str, count: int) -> None:
    nodes.add(count, NODE, labels={NODE_LABEL: pool})


def test_a_job_with_a_gang_in_spec_scheduling_binds_all_or_nothing(
    plane: Kube, api: Api, op: OperatorProcess, tok: str, fake_nodes: FakeNodes
) -> None:
    ns = make_namespace(api, tok)
    pool = f"{tok}-gang"
    size = 3
    job = _job(api, ns, pool, size=size, gang=True)
    _nodes(fake_nodes, pool, size - 1)
    wait("the Job controller's pods", lambda: len(pods_in(api, ns)) == size)
    pods = pods_in(api, ns)
    names = {p["spec"]["schedulingGroup"]["podGroupName"] for p in pods}
    _, group = _only_the_job_controllers(api, ns, job)
    assert names == {group["metadata"]["name"]}
    assert group["spec"]["schedulingPolicy"] == {"gang": {"minCount": size}}
    wait("our LeftAlone event", lambda: _ours(api, ns, "LeftAlone"))
    assert any("spec.scheduling" in m for m in _ours(api, ns, "LeftAlone"))
    # held while one node short
    wait("the scheduler's FailedScheduling for the gang", lambda: failed_scheduling(api, ns))
    assert bound(api, ns) == []
    start = time.monotonic()
    _nodes(fake_nodes, pool, 1)
    wait("the whole gang bound", lambda: len(bound(api, ns)) == size, timeout=120)
    seconds = time.monotonic() - start
    _only_the_job_controllers(api, ns, job)  # still one group: never grouped twice
    print(f"WorkloadWithJob gang of {size}: bound {seconds:.2f} s after the last node")


def test_an_opted_in_job_without_a_gang_is_reported_and_never_grouped_twice(
    plane: Kube, api: Api, op: OperatorProcess, tok: str, fake_nodes: FakeNodes
) -> None:
    ns = make_namespace(api, tok)
    pool = f"{tok}-basic"
    size = 3
    job = _job(api, ns, pool, size=size, gang=False)
    wait("the Job controller's pods", lambda: len(pods_in(api, ns)) == size)
    _, group = _only_the_job_controllers(api, ns, job)
    assert "basic" in group["spec"]["schedulingPolicy"]
    messages = wait("our LeftAlone event", lambda: _ours(api, ns, "LeftAlone"))
    assert any("Basic policy" in m for m in messages), messages
    for pod in pods_in(api, ns):
        assert pod["spec"]["schedulingGroup"] == {"podGroupName": group["metadata"]["name"]}
        note = json.loads(pod["metadata"]["annotations"][ANNOTATION_DECISION])
        assert note["gate"] == "WorkloadWithJob" and note["podGroup"] == group["metadata"]["name"]
        assert "Basic policy" in note["leftAlone"]
    # the Job controller's Basic group: pods bind one by one (what the event warns about)
    _nodes(fake_nodes, pool, size - 1)
    wait("two of three pods bound", lambda: len(bound(api, ns)) == size - 1)
    # a resync later still nothing of ours
    _only_the_job_controllers(api, ns, job)
    assert len(_ours(api, ns, "LeftAlone")) == 1  # said once, not every resync
