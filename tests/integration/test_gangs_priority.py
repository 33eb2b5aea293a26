"""Gangs whose pods carry a priority class, end to end with the real Job controller.

kube-scheduler v1.37.2 binds no member of a pod group whose priority differs from the group's
(``all pods in a single pod group should have the same priority as the pod group's priority``),
and the Priority admission plugin gives a group that names no class the cluster's
``globalDefault`` class, else priority 0. So a PodGroup made without its members' class held
every opted-in gang with a priority class forever. Here only the workload is created: the
in-tree Job controller makes the pods, our webhook groups them, the real scheduler binds them.

"Stays unbound" is observed, not timed: the test waits until the scheduler has reported the
gang's pods ``FailedScheduling`` (it tried and found no room) and then checks nothing is bound.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from tests.gangs.e2e import (
    NODE,
    NODE_LABEL,
    bound,
    create,
    failed_scheduling,
    make_namespace,
    pod_spec,
    podgroups,
    pods_in,
    ref,
    wait,
)
from tests.operator.live import OperatorProcess, delete
from workload_map.kube.api import Api

from .harness import FakeNodes, Kube
from .kubelet import FakeKubelet

ROOT = Path(__file__).resolve().parents[2]
PRIORITY_CLASSES = "/apis/scheduling.k8s.io/v1/priorityclasses"
Obj = dict[str, Any]

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def plane(kube_with_controllers: Kube) -> Kube:
    kube_with_controllers.install_crd(ROOT / "deploy/crds/kartas.run.ai.yaml")
    return kube_with_controllers


def _priority_class(api: Api, name: str, value: int, *, default: bool = False) -> None:
    delete(api, f"{PRIORITY_CLASSES}/{name}")
    body: Obj = {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": name},
        "value": value,
        "globalDefault": default,
    }
    api.request("POST", PRIORITY_CLASSES, body)


def _indexed_job(
    api: Api,
    ns: str,
    pool: str,
    *,
    size: int,
    priority_class: str | None,
    name: str = "train",
    grace: int = 0,
    node_labels: dict[str, str] | None = None,
    backoff_limit: int = 0,
) -> Obj:
    """An Indexed Job of ``size`` pods stating its gang minimum, as a user writes it."""
    spec = {**pod_spec(pool), "restartPolicy": "Never", "terminationGracePeriodSeconds": grace}
    spec["nodeSelector"] = {**spec["nodeSelector"], **(node_labels or {})}
    if priority_class:
        spec["priorityClassName"] = priority_class
    body = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": name,
            "annotations": {"kai.scheduler/batch-min-member": str(size)},
        },
        "spec": {
            "completionMode": "Indexed",
            "completions": size,
            "parallelism": size,
            "backoffLimit": backoff_limit,
            "template": {"spec": spec},
        },
    }
    return dict(api.request("POST", f"/apis/batch/v1/namespaces/{ns}/jobs", body))


def _messages(api: Api, ns: str, reason: str) -> list[str]:
    items = api.get(f"/api/v1/namespaces/{ns}/events").get("items") or []
    return [str(e.get("message")) for e in items if e.get("reason") == reason]


def _nodes(nodes: FakeNodes, pool: str, count: int) -> None:
    nodes.add(count, NODE, labels={NODE_LABEL: pool})


def _held_then_bound(
    api: Api, fake_nodes: FakeNodes, ns: str, pool: str, size: int
) -> tuple[list[Obj], float]:
    """With room for ``size - 1`` pods none binds; with room for all, all bind. Returns the
    pods and the seconds from the node added to the whole gang bound (reported, not asserted)."""
    _nodes(fake_nodes, pool, size - 1)
    pods = wait(f"{size} pods from the Job controller", lambda: len(pods_in(api, ns)) == size)
    pods = pods_in(api, ns)
    assert all(p["spec"].get("schedulingGroup") for p in pods), [p["metadata"] for p in pods]
    # the scheduler tried the gang and found no room for all: nothing is bound
    wait("the scheduler's FailedScheduling for the gang", lambda: failed_scheduling(api, ns))
    assert bound(api, ns) == []
    start = time.monotonic()
    _nodes(fake_nodes, pool, 1)
    wait("the whole gang bound", lambda: len(bound(api, ns)) == size, timeout=120)
    return pods_in(api, ns), time.monotonic() - start


def test_a_gang_with_a_priority_class_schedules_all_or_nothing(
    plane: Kube, api: Api, op: OperatorProcess, tok: str, fake_nodes: FakeNodes
) -> None:
    cls = f"wlmap-train-{tok}"
    _priority_class(api, cls, 1000)
    ns = make_namespace(api, tok)
    pool = f"{tok}-class"
    _indexed_job(api, ns, pool, size=4, priority_class=cls)
    (group,) = wait("the PodGroup", lambda: podgroups(api, ns))
    assert group["spec"]["priorityClassName"] == cls
    assert group["spec"]["priority"] == 1000  # filled by the Priority admission plugin
    pods, seconds = _held_then_bound(api, fake_nodes, ns, pool, 4)
    assert {p["spec"]["priority"] for p in pods} == {1000}
    # never the refusal this test exists for
    assert not [m for m in _messages(api, ns, "FailedScheduling") if "same priority" in m]
    print(f"gang of 4 with priority class: bound {seconds:.2f} s after the last node")


def test_a_gang_under_a_global_default_class_schedules(
    plane: Kube, api: Api, op: OperatorProcess, tok: str, fake_nodes: FakeNodes
) -> None:
    default = f"wlmap-default-{tok}"
    _priority_class(api, default, 500, default=True)
    try:
        ns = make_namespace(api, tok)
        pool = f"{tok}-default"
        _indexed_job(api, ns, pool, size=3, priority_class=None)
        (group,) = wait("the PodGroup", lambda: podgroups(api, ns))
        assert group["spec"]["priority"] == 500
        assert group["spec"]["priorityClassName"] == default
        pods, _ = _held_then_bound(api, fake_nodes, ns, pool, 3)
        assert {p["spec"]["priorityClassName"] for p in pods} == {default}
    finally:
        delete(api, f"{PRIORITY_CLASSES}/{default}")


def test_members_of_different_priority_are_not_grouped_and_bind_one_by_one(
    plane: Kube,
    api: Api,
    op: OperatorProcess,
    tok: str,
    fake_nodes: FakeNodes,
    shared_dir: Path,
) -> None:
    high, low = f"wlmap-high-{tok}", f"wlmap-low-{tok}"
    _priority_class(api, high, 2000)
    _priority_class(api, low, 10)
    ns = make_namespace(api, tok)
    pool = f"{tok}-mixed"
    # a JobSet as its controller would make it: two Jobs whose pods differ in class; the Job
    # controller makes the pods
    plane.install_crd(shared_dir / "realworld/jobset/jobset.x-k8s.io_jobsets.yaml.gz")
    jobset = create(
        api,
        f"/apis/jobset.x-k8s.io/v1alpha2/namespaces/{ns}/jobsets",
        {
            "apiVersion": "jobset.x-k8s.io/v1alpha2",
            "kind": "JobSet",
            "metadata": {"name": "mixed"},
            "spec": {
                "replicatedJobs": [
                    _replicated("driver", pool, high, 1),
                    _replicated("workers", pool, low, 2),
                ]
            },
        },
    )
    for rj in jobset["spec"]["replicatedJobs"]:
        labels = {
            "jobset.sigs.k8s.io/jobset-name": "mixed",
            "jobset.sigs.k8s.io/replicatedjob-name": rj["name"],
            "jobset.sigs.k8s.io/job-index": "0",
        }
        job_spec = rj["template"]["spec"]
        template = job_spec["template"]
        template.setdefault("metadata", {})["labels"] = labels
        create(
            api,
            f"/apis/batch/v1/namespaces/{ns}/jobs",
            {
                "apiVersion": "batch/v1",
                "kind": "Job",
                "metadata": {
                    "name": f"mixed-{rj['name']}-0",
                    "labels": labels,
                    "ownerReferences": [ref(jobset)],
                },
                "spec": {**job_spec, "template": template},
            },
        )
    _nodes(fake_nodes, pool, 2)  # room for two of the three pods
    wait("3 pods from the Job controller", lambda: len(pods_in(api, ns)) == 3)
    assert not any(p["spec"].get("schedulingGroup") for p in pods_in(api, ns))
    wait("two pods bound one by one", lambda: len(bound(api, ns)) == 2, timeout=120)
    assert podgroups(api, ns) == []
    said = wait("the MixedPriorities event", lambda: _messages(api, ns, "MixedPriorities"))
    assert "priority classes differ" in said[0]


def _replicated(name: str, pool: str, priority_class: str, pods: int) -> Obj:
    return {
        "name": name,
        "replicas": 1,
        "template": {
            "spec": {
                "parallelism": pods,
                "completions": pods,
                "backoffLimit": 0,
                "template": {
                    "spec": {
                        **pod_spec(pool),
                        "restartPolicy": "Never",
                        "priorityClassName": priority_class,
                    }
                },
            }
        },
    }


def test_a_higher_gang_preempts_a_lower_gang_whole(
    plane: Kube,
    api: Api,
    op: OperatorProcess,
    tok: str,
    fake_nodes: FakeNodes,
    kubelet: FakeKubelet,
) -> None:
    """A low gang of four holds four nodes; a high gang of two that may only use two of them
    arrives. With the groups' classes and disruptionMode all, the scheduler preempts every
    member of the low gang, also the two on nodes the high gang cannot use (a gang left with
    half its members would hold its nodes for nothing), and the high gang binds. Pods keep
    the default grace period, so only the stand-in kubelet ends their termination."""
    low, high = f"wlmap-low-{tok}", f"wlmap-high-{tok}"
    _priority_class(api, low, 100)
    _priority_class(api, high, 1000)
    pool, half = f"{tok}-preempt", f"{NODE_LABEL}-half"
    fake_nodes.add(2, NODE, labels={NODE_LABEL: pool, half: "a"})
    fake_nodes.add(2, NODE, labels={NODE_LABEL: pool, half: "b"})
    low_ns, high_ns = make_namespace(api, tok), make_namespace(api, tok)
    # a backoff limit, so that the Job controller does not end the whole Job (and delete the
    # members the scheduler left) when it counts its first preempted pod as failed
    _indexed_job(
        api, low_ns, pool, size=4, priority_class=low, name="low", grace=30, backoff_limit=20
    )
    wait("the low gang bound", lambda: len(bound(api, low_ns)) == 4, timeout=120)
    (low_group,) = podgroups(api, low_ns)
    assert low_group["spec"]["disruptionMode"] == {"all": {}}
    victims = {(p["metadata"]["name"], p["metadata"]["uid"]) for p in pods_in(api, low_ns)}
    _indexed_job(
        api,
        high_ns,
        pool,
        size=2,
        priority_class=high,
        name="high",
        grace=30,
        node_labels={half: "a"},
    )
    wait("the high gang bound", lambda: len(bound(api, high_ns)) == 2, timeout=180)
    # every member of the low gang went, not only the two on the nodes the high gang took
    wait(
        "the whole low gang preempted",
        lambda: victims <= {(n, uid) for ns, n, uid in kubelet.finished if ns == low_ns},
        timeout=60,
    )
    alive = {(p["metadata"]["name"], p["metadata"]["uid"]) for p in pods_in(api, low_ns)}
    assert not (victims & alive), kubelet.errors


def test_a_single_pod_of_middling_priority_does_not_preempt_a_higher_gang(
    plane: Kube,
    api: Api,
    op: OperatorProcess,
    tok: str,
    fake_nodes: FakeNodes,
    kubelet: FakeKubelet,
) -> None:
    high, middle = f"wlmap-top-{tok}", f"wlmap-middle-{tok}"
    _priority_class(api, high, 1000)
    _priority_class(api, middle, 500)
    pool = f"{tok}-middle"
    _nodes(fake_nodes, pool, 2)
    gang_ns, single_ns = make_namespace(api, tok), make_namespace(api, tok)
    _indexed_job(api, gang_ns, pool, size=2, priority_class=high, name="gang", grace=30)
    wait("the high gang bound", lambda: len(bound(api, gang_ns)) == 2, timeout=120)
    members = {p["metadata"]["uid"] for p in pods_in(api, gang_ns)}
    single = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "single"},
        "spec": {**pod_spec(pool), "priorityClassName": middle},
    }
    create(api, f"/api/v1/namespaces/{single_ns}/pods", single)
    # the scheduler tried it, preemption included (PostFilter runs before the event)
    wait("the single pod's FailedScheduling", lambda: failed_scheduling(api, single_ns))
    (pod,) = pods_in(api, single_ns)
    assert not pod["spec"].get("nodeName") and not pod["status"].get("nominatedNodeName")
    assert {p["metadata"]["uid"] for p in pods_in(api, gang_ns)} == members
    assert not [uid for ns, _, uid in kubelet.finished if ns == gang_ns]
