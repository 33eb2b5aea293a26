"""The pod webhook's logic: owner chains through caches only, bounded waits, JSON patches."""

from __future__ import annotations

import base64
import copy
import json
import threading
from typing import Any

import pytest
from prometheus_client import CollectorRegistry

import workload_map as wm
from tests.gangs import custom
from tests.gangs.cases import example, karta_of, opted, set_scheduler
from tests.gangs.owners import jobset_chain, lws_chain, new_pod, owned
from workload_map.gangs import plan
from workload_map.gangs.admission import PodAdmitter, catalog_resolver, json_patch, pod_decisions
from workload_map.gangs.cache import ObjectCache, trim_owner, trim_pod, trim_workload
from workload_map.gangs.config import (
    COSCHEDULING_LABEL,
    LABEL_COMPONENT,
    LABEL_INSTANCE,
    LABEL_NAMESPACE_OPT_IN,
    LABEL_WORKLOAD,
    VOLCANO_GROUP_ANNOTATION,
    VOLCANO_TASK_ANNOTATION,
)
from workload_map.gangs.metrics import GangMetrics
from workload_map.gangs.webhook import PodWebhook
from workload_map.operator.server import admission_review


def apply_patch(pod: dict[str, Any], ops: list[dict[str, Any]]) -> dict[str, Any]:
    """RFC 6902 ``add`` as the API server applies it (the only op the webhook uses)."""
    out = copy.deepcopy(pod)
    for op in ops:
        assert op["op"] == "add"
        parts = [p.replace("~1", "/").replace("~0", "~") for p in op["path"].split("/")[1:]]
        target = out
        for part in parts[:-1]:
            target = target[part]  # a missing parent is an error, as on the server
        target[parts[-1]] = op["value"]
    return out


class StepClock:
    """A clock that moves ``step`` seconds at each look and never otherwise: the cache's waits
    measured in looks, the same on any machine under any load."""

    def __init__(self, step: float) -> None:
        self.step = step
        self.now = 0.0

    def __call__(self) -> float:
        self.now += self.step
        return self.now


def cache_with(*objects: dict[str, Any], clock: StepClock | None = None) -> ObjectCache:
    """The objects, and their namespaces as the namespace watch would hold them."""
    cache = ObjectCache(clock=clock) if clock is not None else ObjectCache()
    for ns in {str((o.get("metadata") or {}).get("namespace")) for o in objects} - {"None"}:
        if not any(o["kind"] == "Namespace" and o["metadata"]["name"] == ns for o in objects):
            cache.upsert({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    for obj in objects:
        if obj["kind"] == "Pod":
            cache.upsert(trim_pod(obj))
        elif obj["kind"] in ("Job", "StatefulSet", "ReplicaSet", "Namespace"):
            cache.upsert(trim_owner(obj))
        else:
            cache.upsert(trim_workload(obj))
    return cache


def test_jobset_pods_join_the_planned_gang_through_their_jobs() -> None:
    jobset, _ = example("jobset")
    jobset = opted(jobset)
    jobs, pods = jobset_chain(jobset)
    admitter = PodAdmitter(cache_with(jobset, *jobs))
    gang = plan(karta_of(jobset), jobset).gangs[0]
    for pod in pods:
        assert "name" not in pod["metadata"] and "uid" not in pod["metadata"]
        decision = admitter.decide(pod)
        assert decision.pod_group == gang.name, decision.reason
        patched = apply_patch(pod, json_patch(pod, decision))
        assert patched["spec"]["schedulingGroup"] == {"podGroupName": gang.name}
        labels = patched["metadata"]["labels"]
        assert labels[LABEL_WORKLOAD] == "llm-pretrain"
        assert labels[LABEL_COMPONENT] == "replicatedjob"
        assert labels[LABEL_INSTANCE] == labels["jobset.sigs.k8s.io/replicatedjob-name"]
        assert labels["jobset.sigs.k8s.io/job-index"]  # the pod's own labels are kept


def test_lws_workers_reach_their_group_through_the_leader_pod() -> None:
    lws, _ = example("leaderworkerset")
    lws = opted(lws)
    owners, pods = lws_chain(lws)
    admitter = PodAdmitter(cache_with(lws, *owners))
    uid = lws["metadata"]["uid"]
    seen: dict[str, list[str]] = {}
    for pod in pods:
        decision = admitter.decide(pod)
        assert decision.scheduling_group, decision.reason
        seen.setdefault(decision.scheduling_group, []).append(pod["metadata"]["name"])
    assert sorted(seen) == [f"pg-{uid}-vllm-70b-0", f"pg-{uid}-vllm-70b-1"]
    assert all(len(members) == 2 for members in seen.values())
    # the controller's plan with those pods creates exactly those PodGroups
    named = [{**p, "metadata": {**p["metadata"], "uid": p["metadata"]["name"]}} for p in pods]
    groups = {g.name: g.min_count for g in plan(karta_of(lws), lws, named).gangs}
    assert groups == dict.fromkeys(seen, 2)


def test_custom_kind_through_a_replicaset() -> None:
    karta = wm.load_karta(custom.karta(1))
    partset = opted(custom.partset("parts", [3]))
    rs = owned("apps/v1", "ReplicaSet", "parts-p0-abc", partset, {"example.wlmap.io/part": "p0"})
    admitter = PodAdmitter(
        cache_with(partset, rs), lambda a, k: karta if k == custom.KIND else None
    )
    pod = new_pod(rs, generate_name="parts-p0-abc-", labels={"example.wlmap.io/part": "p0"})
    decision = admitter.decide(pod)
    assert decision.pod_group == plan(karta, partset).gangs[0].name
    assert decision.component == "p0"


def test_a_just_created_owner_is_waited_for() -> None:
    jobset, _ = example("jobset")
    jobset = opted(jobset)
    jobs, pods = jobset_chain(jobset)
    # a second per look at the clock, a budget of 60: the wait looks a handful of times, so
    # ending within the budget proves the arrival woke it (a budget spent is 60 looks or more)
    cache = cache_with(jobset, clock=StepClock(1.0))
    admitter = PodAdmitter(cache, miss_wait=60.0)
    waiting = threading.Event()
    wait_for = cache.wait_for

    def entered(*args: Any, **kwargs: Any) -> Any:
        waiting.set()
        return wait_for(*args, **kwargs)

    cache.wait_for = entered  # type: ignore[method-assign]

    def late() -> None:
        # the owner arrives while the admitter is waiting for it (not after a sleep: on a
        # loaded machine a sleep says nothing about who runs first)
        waiting.wait(30)
        cache.upsert(trim_owner(jobs[0]))

    thread = threading.Thread(target=late)
    thread.start()
    decision = admitter.decide(pods[0])
    thread.join()
    assert waiting.is_set() and not decision.cache_miss
    # waited (by the test's clock) and ended by the arrival, not by the budget
    assert decision.scheduling_group and 0 < decision.waited_seconds < 60.0


def test_the_wait_is_bounded_and_the_pod_admitted_unchanged() -> None:
    jobset, _ = example("jobset")
    jobset = opted(jobset)
    jobs, pods = jobset_chain(jobset)
    # 0.1 s per look: the 0.2 s budget is spent after two looks (one real wait of at most 0.1 s)
    clock = StepClock(0.1)
    admitter = PodAdmitter(cache_with(jobset, clock=clock), miss_wait=0.2)
    decision = admitter.decide(pods[0])
    # the whole budget was spent by the test's clock, then the pod was let through (a wait
    # that ignored its budget would never return: the test's timeout catches that)
    assert decision.waited_seconds >= 0.2 and clock.now >= 0.2
    assert decision.cache_miss and "not in the cache" in decision.reason
    assert json_patch(pods[0], decision) == []
    # an owner of the same name but another uid (deleted and recreated) is not taken
    stale = copy.deepcopy(jobs[0])
    stale["metadata"]["uid"] = "old-uid"
    admitter = PodAdmitter(cache_with(jobset, stale), miss_wait=0.1)
    assert admitter.decide(pods[0]).cache_miss


def test_not_opted_in_and_excluded_namespaces_get_nothing() -> None:
    jobset, _ = example("jobset")
    jobs, pods = jobset_chain(jobset)
    admitter = PodAdmitter(cache_with(jobset, *jobs))
    decision = admitter.decide(pods[0])
    assert json_patch(pods[0], decision) == [] and "not opted in" in decision.reason
    ns = {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {
            "name": jobset["metadata"]["namespace"],
            "labels": {LABEL_NAMESPACE_OPT_IN: "enabled"},
        },
    }
    admitter = PodAdmitter(cache_with(jobset, *jobs, ns))
    assert admitter.decide(pods[0]).scheduling_group
    system = copy.deepcopy(pods[0])
    system["metadata"]["namespace"] = "kube-system"
    assert "excluded" in admitter.decide(system).reason


def test_coscheduling_label_and_volcano_annotations() -> None:
    ray, _ = example("raycluster")
    for scheduler, check in (
        ("scheduler-plugins-scheduler", "label"),
        ("volcano", "annotations"),
        ("kai-scheduler", "nothing"),
    ):
        obj = opted(set_scheduler(ray, scheduler))
        gangs = plan(karta_of(obj), obj).gangs
        admitter = PodAdmitter(cache_with(obj))
        head = new_pod(
            obj,
            name=f"{obj['metadata']['name']}-head",
            labels={
                "ray.io/node-type": "head",
                "ray.io/group": "headgroup",
                "ray.io/cluster": obj["metadata"]["name"],
            },
            scheduler=scheduler,
        )
        decision = admitter.decide(head)
        patched = apply_patch(head, json_patch(head, decision))
        assert "schedulingGroup" not in patched["spec"]
        if check == "label":
            assert patched["metadata"]["labels"][COSCHEDULING_LABEL] == gangs[0].name
        elif check == "annotations":
            annotations = patched["metadata"]["annotations"]
            assert annotations[VOLCANO_GROUP_ANNOTATION] == gangs[0].name
            assert annotations[VOLCANO_TASK_ANNOTATION] == "head"
        else:
            assert gangs == [] and decision.pod_group is None
            assert COSCHEDULING_LABEL not in patched["metadata"]["labels"]


def test_a_pod_that_already_has_a_group_is_left_as_is() -> None:
    jobset, _ = example("jobset")
    jobset = opted(jobset)
    jobs, pods = jobset_chain(jobset)
    pod = copy.deepcopy(pods[0])
    pod["spec"]["schedulingGroup"] = {"podGroupName": "theirs"}
    decision = PodAdmitter(cache_with(jobset, *jobs)).decide(pod)
    assert decision.scheduling_group is None
    assert apply_patch(pod, json_patch(pod, decision))["spec"]["schedulingGroup"] == {
        "podGroupName": "theirs"
    }


def test_admission_review_round_trip_and_never_blocks() -> None:
    """Through the adapter the operator serves (PodWebhook.admit) and the operator's one
    AdmissionReview builder, as a request to /mutate-v1-pod-gangs goes."""
    jobset, _ = example("jobset")
    jobset = opted(jobset)
    jobs, pods = jobset_chain(jobset)

    def webhook(admitter: PodAdmitter) -> PodWebhook:
        return PodWebhook(admitter, GangMetrics(lambda: 0), native_served=lambda: True)

    served = webhook(PodAdmitter(cache_with(jobset, *jobs)))
    body = {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {"uid": "r1", "operation": "CREATE", "namespace": "ml-team", "object": pods[0]},
    }
    answer = admission_review(body, served.admit(body["request"]))
    response = answer["response"]
    assert answer["kind"] == "AdmissionReview" and answer["apiVersion"] == "admission.k8s.io/v1"
    assert response["uid"] == "r1" and response["allowed"] is True
    assert response["patchType"] == "JSONPatch"
    ops = json.loads(base64.b64decode(response["patch"]))
    assert apply_patch(pods[0], ops)["spec"]["schedulingGroup"]["podGroupName"].endswith("-jobset")
    assert counted(served.metrics) == {"requests": 1, "patched": 1, "misses": 0, "errors": 0}

    def broken(api_version: str, kind: str) -> wm.model.Karta:
        raise RuntimeError("boom")

    failing = webhook(PodAdmitter(cache_with(jobset, *jobs), broken))
    assert admission_review(body, failing.admit(body["request"]))["response"] == {
        "uid": "r1",
        "allowed": True,
    }
    assert counted(failing.metrics) == {"requests": 1, "patched": 0, "misses": 0, "errors": 1}
    update = {**body, "request": {**body["request"], "operation": "UPDATE"}}
    assert admission_review(update, served.admit(update["request"]))["response"] == {
        "uid": "r1",
        "allowed": True,
    }
    # where the API server does not serve the native API, the group is not asked for
    unserved = PodWebhook(served.admitter, GangMetrics(lambda: 0), native_served=lambda: False)
    patch = unserved.admit(body["request"]).get("patch") or []
    assert all(op["path"] != "/spec/schedulingGroup" for op in patch)


def counted(metrics: GangMetrics) -> dict[str, float]:
    registry = CollectorRegistry()
    metrics.register(registry)
    value = registry.get_sample_value
    return {
        "requests": value("workloadmap_gangs_webhook_requests_total") or 0,
        "patched": value("workloadmap_gangs_webhook_patched_total") or 0,
        "misses": value("workloadmap_gangs_webhook_cache_misses_total") or 0,
        "errors": value("workloadmap_gangs_webhook_errors_total") or 0,
    }


def test_pods_without_labels_get_a_labels_map() -> None:
    karta = wm.load_karta(custom.karta(1))
    partset = opted(custom.partset("bare", [2]))
    pod = new_pod(partset, name="bare-0")
    (shown,) = pod_decisions(karta, partset, [pod])
    # no part label: no component claims the pod (several components could), nothing joined
    assert shown["schedulingGroup"] is None
    pod["metadata"]["labels"] = {"example.wlmap.io/part": "p0"}
    decision = PodAdmitter(cache_with(partset), lambda a, k: karta).decide(pod)
    ops = json_patch(
        {**pod, "metadata": {k: v for k, v in pod["metadata"].items() if k != "labels"}}, decision
    )
    assert ops[0]["path"] == "/metadata/labels" and LABEL_WORKLOAD in ops[0]["value"]


@pytest.mark.parametrize("name", ["jobset", "leaderworkerset", "pytorchjob"])
def test_describe_view_matches_the_webhook(name: str) -> None:
    obj, pods = example(name)
    karta = karta_of(obj)
    only_pods = [p for p in pods or [] if p["kind"] == "Pod"]
    shown = pod_decisions(karta, obj, only_pods)
    assert len(shown) == len(only_pods)
    forced = plan(karta, obj, pods, force=True)
    by_pod = {p: g.name for g in forced.gangs for p in g.pods}
    for entry in shown:
        assert entry["podGroup"] == by_pod.get(entry["pod"]), entry
        if entry["podGroup"]:
            assert entry["schedulingGroup"] == {"podGroupName": entry["podGroup"]}


def test_catalog_resolver() -> None:
    resolve = catalog_resolver()
    assert resolve("jobset.x-k8s.io/v1alpha2", "JobSet") is not None
    assert resolve("example.invalid/v1", "Nothing") is None


def test_a_just_created_namespace_is_waited_for() -> None:
    jobset, _ = example("jobset")
    jobs, pods = jobset_chain(jobset)
    cache = ObjectCache()
    for obj in (trim_workload(jobset), *(trim_owner(j) for j in jobs)):
        cache.upsert(obj)
    # a budget no loaded machine outruns: the namespace arrives while the admitter waits
    admitter = PodAdmitter(cache, miss_wait=60.0)
    ns = jobset["metadata"]["namespace"]
    waiting = threading.Event()
    wait_for = cache.wait_for

    def entered(*args: Any, **kwargs: Any) -> Any:
        waiting.set()
        return wait_for(*args, **kwargs)

    cache.wait_for = entered  # type: ignore[method-assign]

    def late() -> None:
        waiting.wait(30)  # the admitter has found no namespace and waits for it
        cache.upsert(
            {
                "apiVersion": "v1",
                "kind": "Namespace",
                "metadata": {"name": ns, "labels": {LABEL_NAMESPACE_OPT_IN: "enabled"}},
            }
        )

    thread = threading.Thread(target=late)
    thread.start()
    decision = admitter.decide(pods[0])
    thread.join()
    assert decision.scheduling_group, decision.reason
