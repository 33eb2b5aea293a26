"""Gang enforcement end to end: the operator, its pod webhook called by the API server over TLS,
the real kube-scheduler and fake nodes (v1.37.2, GenericWorkload on).

For each kind the pods are created the way its operator creates them (owner references,
labels, ``generateName``): with room for one pod fewer than a gang, no pod of it is bound; with
room added, all are. The same pods in a namespace that is not opted in are bound one by one,
which proves the gang came from us.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.gangs import custom
from tests.gangs.e2e import (
    KINDS,
    NODE,
    NODE_LABEL,
    bound,
    make_namespace,
    podgroups,
    pods_in,
    prepare_plane,
    wait,
)
from tests.operator.live import OperatorProcess, delete
from workload_map.gangs.config import ANNOTATION_DECISION
from workload_map.kube.api import Api

from .harness import FakeNodes, Kube

REALWORLD_CRDS = (
    "jobset/jobset.x-k8s.io_jobsets.yaml.gz",
    "lws/leaderworkerset.x-k8s.io_leaderworkersets.yaml.gz",
    "kubeflow-training-v1/kubeflow.org_pytorchjobs.yaml.gz",
    "ray/ray.io_rayclusters.yaml.gz",
    # the coscheduling and Volcano PodGroups, which carry minResources (the missed-member test)
    "podgroup-gang-scheduling/scheduling.x-k8s.io_podgroups.yaml",
    "podgroup-gang-scheduling/scheduling.volcano.sh_podgroups.yaml",
)

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def plane(module_kube: Kube, shared_dir: Path) -> Kube:
    return prepare_plane(module_kube, *(shared_dir / "realworld" / rel for rel in REALWORLD_CRDS))


def _nodes(nodes: FakeNodes, pool: str, count: int) -> None:
    if count > 0:
        nodes.add(count, NODE, labels={NODE_LABEL: pool})


def _unschedulable(api: Api, ns: str) -> int:
    """How many of the namespace's pods the scheduler has tried and found no place for."""
    return sum(
        any(
            c.get("type") == "PodScheduled"
            and c.get("status") == "False"
            and c.get("reason") == "Unschedulable"
            for c in (p.get("status") or {}).get("conditions") or []
        )
        for p in pods_in(api, ns)
    )


def test_gangs_bind_all_or_nothing_for_every_kind(
    plane: Kube, api: Api, op: OperatorProcess, tok: str, module_kube: Kube, fake_nodes: FakeNodes
) -> None:
    cases: dict[str, tuple[str, str, list[int], list[Any]]] = {}
    for kind, (make, gangs) in KINDS.items():
        ns = make_namespace(api, tok)
        pool = f"{tok}-{kind}"
        _, create_pods = make(api, ns, pool)
        pods = create_pods()  # owner first, pods right after, as the operators do
        cases[kind] = (ns, pool, gangs, pods)
        # room for one pod fewer than the smallest gang (the LWS: one node for two gangs of 2)
        _nodes(fake_nodes, pool, (min(gangs) - 1) if len(gangs) == 1 else 1)
    try:
        for kind, (ns, _, gangs, pods) in cases.items():
            assert all(p["spec"].get("schedulingGroup") for p in pods), (kind, op.log_tail())
            groups = wait(
                f"{kind} PodGroups",
                lambda ns=ns, n=len(gangs): len(podgroups(api, ns)) == n and podgroups(api, ns),  # noqa: B008
            )
            assert sorted(
                g["spec"]["schedulingPolicy"]["gang"]["minCount"] for g in groups
            ) == sorted(gangs)
            for g in groups:
                decision = json.loads(g["metadata"]["annotations"][ANNOTATION_DECISION])
                assert decision["backend"] == "native" and decision["rule"]
        # the scheduler's verdict on every pod, waited for (not a sleep: on a loaded machine a
        # sleep may end before the scheduler looked, and the check below would pass unexamined)
        for kind, (ns, _, _, pods) in cases.items():
            wait(
                f"the scheduler to find every {kind} pod unschedulable",
                lambda ns=ns, n=len(pods): _unschedulable(api, ns) == n,  # noqa: B008
                120,
            )
        for kind, (ns, _, _, _) in cases.items():
            assert bound(api, ns) == [], kind
        for _ns, pool, gangs, _ in cases.values():
            have = (min(gangs) - 1) if len(gangs) == 1 else 1
            _nodes(fake_nodes, pool, sum(gangs) - have)
        for kind, (ns, _, gangs, _) in cases.items():
            total = sum(gangs)
            wait(f"{kind} bound", lambda ns=ns, n=total: len(bound(api, ns)) == n, 90)
    finally:
        for ns, *_ in cases.values():
            delete(api, f"/api/v1/namespaces/{ns}")


def test_without_opt_in_the_same_pods_bind_one_by_one(
    plane: Kube, api: Api, op: OperatorProcess, tok: str, fake_nodes: FakeNodes
) -> None:
    ns = make_namespace(api, tok, opted_in=False)
    pool = f"{tok}-plain"
    try:
        make, (size,) = KINDS["pytorchjob"]
        _, create_pods = make(api, ns, pool)
        pods = create_pods()
        assert not any(p["spec"].get("schedulingGroup") for p in pods)
        _nodes(fake_nodes, pool, size - 1)
        wait("pods bound one by one", lambda: len(bound(api, ns)) == size - 1, 60)
        assert podgroups(api, ns) == []
    finally:
        delete(api, f"/api/v1/namespaces/{ns}")


# -- lifecycle --------------------------------------------------------------------------------
PARTSETS = f"/apis/{custom.GROUP}/v1/namespaces/{{ns}}/partsets"


def _min_counts(api: Api, ns: str) -> list[int]:
    return sorted(g["spec"]["schedulingPolicy"]["gang"]["minCount"] for g in podgroups(api, ns))


def _workloads(api: Api, ns: str) -> list[dict[str, Any]]:
    return list(
        api.get(f"/apis/scheduling.k8s.io/v1beta1/namespaces/{ns}/workloads").get("items") or []
    )


def _events(api: Api, ns: str, reason: str) -> list[dict[str, Any]]:
    items = api.get(f"/api/v1/namespaces/{ns}/events").get("items") or []
    return [e for e in items if e.get("reason") == reason]


def _partset(
    api: Api,
    ns: str,
    replicas: int,
    pool: str,
    *,
    name: str = "parts",
    scheduler: str | None = None,
    requests: dict[str, str] | None = None,
) -> dict[str, Any]:
    body = custom.partset(name, [replicas], namespace=ns)
    spec = body["spec"]["p0"]["template"]["spec"]
    spec["containers"][0]["resources"] = {
        "requests": {"nvidia.com/gpu": "8", **(requests or {})},
        "limits": {"nvidia.com/gpu": "8"},
    }
    spec["nodeSelector"] = {NODE_LABEL: pool}
    if scheduler:
        spec["schedulerName"] = scheduler
    return dict(api.request("POST", PARTSETS.format(ns=ns), body))


def test_scale_suspend_resume_and_delete_move_the_objects(
    plane: Kube, api: Api, op: OperatorProcess, tok: str
) -> None:
    ns = make_namespace(api, tok)
    try:
        obj = _partset(api, ns, 3, f"{tok}-life")
        path = f"{PARTSETS.format(ns=ns)}/parts"
        wait("PodGroup of 3", lambda: _min_counts(api, ns) == [3])
        (workload,) = _workloads(api, ns)
        assert workload["spec"]["controllerRef"]["name"] == "parts"
        (group,) = podgroups(api, ns)
        assert group["metadata"]["ownerReferences"][0]["uid"] == obj["metadata"]["uid"]
        api.merge_patch(path, {"spec": {"p0": {"replicas": 5}}})
        wait("minCount follows scale up", lambda: _min_counts(api, ns) == [5])
        api.merge_patch(path, {"spec": {"p0": {"replicas": 2}}})
        wait("minCount follows scale down", lambda: _min_counts(api, ns) == [2])
        assert podgroups(api, ns)[0]["metadata"]["uid"] == group["metadata"]["uid"]  # updated
        api.merge_patch(path, {"spec": {"suspend": True}})
        wait("suspend releases", lambda: podgroups(api, ns) == [] and _workloads(api, ns) == [])
        api.merge_patch(path, {"spec": {"suspend": False}})
        wait("resume restores", lambda: _min_counts(api, ns) == [2])
        api.merge_patch(path, {"spec": {"p0": {"replicas": 1}}})
        wait("a group of one has no object", lambda: podgroups(api, ns) == [])
        api.merge_patch(path, {"spec": {"p0": {"replicas": 3}}})
        wait("back to 3", lambda: _min_counts(api, ns) == [3])
        api.request("DELETE", path)
        wait(
            "GC removes ours with the workload",
            lambda: podgroups(api, ns) == [] and _workloads(api, ns) == [],
            90,
        )
        assert _events(api, ns, "Created") and _events(api, ns, "GangsReleased")
    finally:
        delete(api, f"/api/v1/namespaces/{ns}")


def _part_pod(
    api: Api, ns: str, owner: dict[str, Any], pool: str, timeout: float | None = None
) -> dict[str, Any]:
    from tests.gangs.e2e import create_pod

    return create_pod(
        api,
        ns,
        owner,
        generate="parts-p0-",
        labels={"example.wlmap.io/part": "p0"},
        pool=pool,
        timeout=timeout,
    )


def _template_pod(api: Api, ns: str, owner: dict[str, Any]) -> dict[str, Any]:
    """A pod of ``owner``'s part as its controller makes it: the template's spec and labels."""
    from tests.gangs.e2e import create, ref

    template = owner["spec"]["p0"]["template"]
    meta = {
        "generateName": f"{owner['metadata']['name']}-p0-",
        "ownerReferences": [ref(owner)],
        "labels": dict(template["metadata"]["labels"]),
    }
    body = {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": template["spec"]}
    return create(api, f"/api/v1/namespaces/{ns}/pods", body)


#: the backends whose PodGroups carry minResources: (their API, the scheduler name)
RESOURCE_BACKENDS = {
    "volcano": ("scheduling.volcano.sh/v1beta1", "volcano"),
    "coscheduling": ("scheduling.x-k8s.io/v1alpha1", "scheduler-plugins-scheduler"),
}
#: one member's requests in the missed-member test (GPUs, CPU and memory)
MEMBER = {"cpu": "1500m", "memory": "2Gi"}


def _their_groups(api: Api, ns: str, group_api: str) -> list[dict[str, Any]]:
    items = api.get(f"/apis/{group_api}/namespaces/{ns}/podgroups").get("items") or []
    return list(items)


def _min_resources(api: Api, ns: str, group_api: str) -> list[tuple[int, dict[str, str]]]:
    return [
        (g["spec"]["minMember"], g["spec"].get("minResources") or {})
        for g in _their_groups(api, ns, group_api)
    ]


def _joined_to(pod: dict[str, Any], backend: str) -> str | None:
    from workload_map.gangs.config import COSCHEDULING_LABEL, VOLCANO_GROUP_ANNOTATION

    meta = pod["metadata"]
    if backend == "volcano":
        return (meta.get("annotations") or {}).get(VOLCANO_GROUP_ANNOTATION)
    return (meta.get("labels") or {}).get(COSCHEDULING_LABEL)


def _part_pod_dry_run(api: Api, ns: str, owner: dict[str, Any], pool: str) -> dict[str, Any]:
    """What the API server would make of one more member now (``dryRun=All``: the mutating
    webhooks run, declared side-effect free; nothing is stored)."""
    from tests.gangs.e2e import pod_spec, ref

    meta = {
        "generateName": "parts-p0-",
        "ownerReferences": [ref(owner)],
        "labels": {"example.wlmap.io/part": "p0"},
    }
    body = {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": pod_spec(pool)}
    path = f"/api/v1/namespaces/{ns}/pods"
    return dict(api.request("POST", path, body, query=[("dryRun", "All")]))


def test_a_podgroup_deleted_by_hand_waits_on_its_finalizer_and_comes_back(
    plane: Kube, api: Api, op: OperatorProcess, tok: str
) -> None:
    ns = make_namespace(api, tok)
    pool = f"{tok}-fin"
    try:
        obj = _partset(api, ns, 3, pool)
        wait("PodGroup", lambda: _min_counts(api, ns) == [3])
        pods = [_part_pod(api, ns, obj, pool) for _ in range(2)]
        (group,) = podgroups(api, ns)
        name = group["metadata"]["name"]
        assert all(p["spec"]["schedulingGroup"]["podGroupName"] == name for p in pods)
        api.request("DELETE", f"/apis/scheduling.k8s.io/v1beta1/namespaces/{ns}/podgroups/{name}")
        held = wait(
            "held by its protection finalizer",
            lambda: [g for g in podgroups(api, ns) if g["metadata"].get("deletionTimestamp")],
        )
        assert held[0]["metadata"]["finalizers"]
        # the operator has reconciled the workload since and chose to wait (its event), not a
        # sleep: on a loaded machine a sleep can end before the operator looked
        wait(
            "the operator's WaitingForDeletion",
            lambda: _events(api, ns, "WaitingForDeletion"),
        )
        assert [g["metadata"]["uid"] for g in podgroups(api, ns)] == [
            group["metadata"]["uid"]
        ]  # no duplicate
        for p in pods:
            api.request(
                "DELETE",
                f"/api/v1/namespaces/{ns}/pods/{p['metadata']['name']}",
                {"gracePeriodSeconds": 0},
            )
        back = wait(
            "recreated once gone",
            lambda: [
                g for g in podgroups(api, ns) if g["metadata"]["uid"] != group["metadata"]["uid"]
            ],
            90,
        )
        assert back[0]["metadata"]["name"] == name and not back[0]["metadata"].get(
            "deletionTimestamp"
        )
        late = _part_pod(api, ns, obj, pool)
        assert late["spec"]["schedulingGroup"]["podGroupName"] == name
    finally:
        delete(api, f"/api/v1/namespaces/{ns}")


def test_a_member_that_missed_the_webhook_does_not_block_the_gang(
    plane: Kube, api: Api, op: OperatorProcess, tok: str, fake_nodes: FakeNodes
) -> None:
    import socket

    from tests.operator.live import MUTATING

    ns = make_namespace(api, tok)
    pool = f"{tok}-miss"
    config = f"{MUTATING}/wlmap-gangs-{tok}-mutating"
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)  # accepts, never answers: the API server's call times out
    # per pod 1500m CPU, 2Gi and 8 GPUs: three members' worth, then two once one missed
    three = {"cpu": "4500m", "memory": str(6 * 2**30), "nvidia.com/gpu": "24"}
    two = {"cpu": "3", "memory": str(4 * 2**30), "nvidia.com/gpu": "16"}
    try:
        obj = _partset(api, ns, 3, pool)
        wait("PodGroup", lambda: _min_counts(api, ns) == [3])
        others = {
            backend: _partset(
                api, ns, 3, pool, name=f"{backend[:4]}-parts", scheduler=name, requests=MEMBER
            )
            for backend, (_, name) in RESOURCE_BACKENDS.items()
        }
        for backend, (group_api, _) in RESOURCE_BACKENDS.items():
            wait(
                f"the {backend} PodGroup with three members' resources",
                lambda a=group_api: _min_resources(api, ns, a) == [(3, three)],
            )
        joined = [_part_pod(api, ns, obj, pool) for _ in range(2)]
        for backend, other in others.items():
            group_name = _their_groups(api, ns, RESOURCE_BACKENDS[backend][0])[0]["metadata"]
            for _ in range(2):
                member = _template_pod(api, ns, other)
                assert _joined_to(member, backend) == group_name["name"], (backend, member)
        saved = api.get(config)
        broken = json.loads(json.dumps(saved))
        broken["webhooks"][0]["clientConfig"]["url"] = (
            f"https://127.0.0.1:{silent.getsockname()[1]}/x"
        )
        webhook_timeout = 2
        broken["webhooks"][0]["timeoutSeconds"] = webhook_timeout
        api.request("PUT", config, broken)
        # the API server's webhook configuration cache catches up: waited for with dry runs
        # (a fixed sleep is a guess on a loaded machine: too short, and the member would join)
        wait(
            "the broken webhook in force",
            lambda: "schedulingGroup" not in _part_pod_dry_run(api, ns, obj, pool)["spec"],
        )
        # failurePolicy Ignore: the API server gives up on the webhook after its timeoutSeconds
        # and creates the pod anyway. The request's own bound is many times that (a create
        # held past it fails here); what is asserted is the pod, not the seconds (issue 26)
        missed = _part_pod(api, ns, obj, pool, timeout=15 * webhook_timeout)
        stored = api.get(f"/api/v1/namespaces/{ns}/pods/{missed['metadata']['name']}")
        assert stored["metadata"]["uid"] == missed["metadata"]["uid"]
        assert "schedulingGroup" not in missed["spec"] and "schedulingGroup" not in stored["spec"]
        for backend, other in others.items():
            assert _joined_to(_template_pod(api, ns, other), backend) is None, backend
        fixed = api.get(config)
        fixed["webhooks"][0]["clientConfig"] = saved["webhooks"][0]["clientConfig"]
        fixed["webhooks"][0]["timeoutSeconds"] = saved["webhooks"][0]["timeoutSeconds"]
        api.request("PUT", config, fixed)
        wait("minimum lowered to the members that can join", lambda: _min_counts(api, ns) == [2])
        # where the group carries minResources, the missed member's requests leave it too
        for backend, (group_api, _) in RESOURCE_BACKENDS.items():
            wait(
                f"the {backend} minResources lowered to two members",
                lambda a=group_api: _min_resources(api, ns, a) == [(2, two)],
            )
            (group,) = _their_groups(api, ns, group_api)
            decision = json.loads(group["metadata"]["annotations"][ANNOTATION_DECISION])
            assert decision["minResourcesLoweredBy"] == {
                "cpu": "1500m",
                "memory": str(2 * 2**30),
                "nvidia.com/gpu": "8",
            }, backend
            assert decision["plannedMinResources"] == three, backend
        lowered = wait(
            "MissedWebhook events naming the resources",
            lambda: [
                e
                for e in _events(api, ns, "MissedWebhook")
                if "minResources lowered by" in e["message"]
            ],
        )
        assert lowered and all(e["type"] == "Warning" for e in lowered)
        assert wait("a MissedWebhook event", lambda: _events(api, ns, "MissedWebhook"))
        assert all(p["spec"]["schedulingGroup"] for p in joined)
        _nodes(fake_nodes, pool, 3)
        wait("the gang still binds", lambda: len(bound(api, ns)) == 3, 90)
        wait(
            "missed member counted",
            lambda: op.metric("workloadmap_gangs_missed_members_total") >= 1,
        )
    finally:
        silent.close()
        delete(api, f"/api/v1/namespaces/{ns}")
