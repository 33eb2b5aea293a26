"""One workload's reconcile: create, follow the minimum, remove, missed members, protections."""

from __future__ import annotations

import copy
import json
from typing import Any

import workload_map as wm
from tests.gangs import custom
from tests.gangs.cases import opted
from tests.gangs.owners import new_pod
from workload_map.gangs import plan
from workload_map.gangs.admission import PodAdmitter, json_patch
from workload_map.gangs.cache import ObjectCache, trim_workload
from workload_map.gangs.config import ANNOTATION_DECISION
from workload_map.gangs.reconcile import DELETE_UNBOUND, object_path, pod_reference, reconcile

KARTA = wm.load_karta(custom.karta(2))


def resolve(api_version: str, kind: str) -> wm.model.Karta | None:
    return KARTA if kind == custom.KIND else None


def admitted(
    workload: dict[str, Any], part: str, index: int, *, joined: bool = True
) -> dict[str, Any]:
    """A pod of ``part`` as created through the webhook (or, ``joined=False``, past it)."""
    pod = new_pod(
        workload,
        name=f"{workload['metadata']['name']}-{part}-{index}",
        labels={"example.wlmap.io/part": part},
    )
    if joined:
        cache = ObjectCache()
        cache.upsert(trim_workload(workload))
        decision = PodAdmitter(cache, resolve, miss_wait=0.0).decide(pod)
        for op in json_patch(pod, decision):
            if op["path"] == "/spec/schedulingGroup":
                pod["spec"]["schedulingGroup"] = op["value"]
    pod["metadata"]["uid"] = pod["metadata"]["name"]
    pod["status"] = {"phase": "Pending"}
    return pod


def pods_of(workload: dict[str, Any], counts: list[int], **kw: Any) -> list[dict[str, Any]]:
    return [admitted(workload, f"p{i}", k, **kw) for i, n in enumerate(counts) for k in range(n)]


def created(objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = copy.deepcopy(objects)
    for o in out:
        o["metadata"]["resourceVersion"] = "1"
    return out


def test_first_reconcile_creates_and_the_second_does_nothing() -> None:
    obj = opted(custom.partset("a", [2, 3]))
    pods = pods_of(obj, [2, 3])
    first = reconcile(plan(KARTA, obj, pods), pods, [])
    kinds = sorted(o["kind"] for o in first.create)
    assert kinds == ["PodGroup", "PodGroup", "Workload"] and first.writes == 3
    second = reconcile(plan(KARTA, obj, pods), pods, created(first.create))
    assert second.writes == 0 and second.missed == {}


def test_minimum_follows_scale_up_and_down() -> None:
    obj = opted(custom.partset("b", [2, 3]))
    existing = created(plan(KARTA, obj).objects)
    bigger = copy.deepcopy(obj)
    bigger["spec"]["p1"]["replicas"] = 5
    actions = reconcile(plan(KARTA, bigger), [], existing)
    ((target, patch),) = [(t, p) for t, p in actions.patch if t["kind"] == "PodGroup"]
    assert target["metadata"]["name"].endswith("-p1")
    assert patch["spec"] == {"schedulingPolicy": {"gang": {"minCount": 5}}}
    assert actions.create == [] and actions.delete == []
    # to one replica: a group of one needs no object
    one = copy.deepcopy(obj)
    one["spec"]["p1"]["replicas"] = 1
    actions = reconcile(plan(KARTA, one), [], existing)
    assert [o["metadata"]["name"] for o in actions.delete] == [existing[2]["metadata"]["name"]]


def test_suspend_and_zero_replicas_delete_everything() -> None:
    obj = opted(custom.partset("c", [2, 2]))
    existing = created(plan(KARTA, obj).objects)
    suspended = {**obj, "spec": {**obj["spec"], "suspend": True}}
    actions = reconcile(plan(KARTA, suspended), [], existing)
    assert sorted(o["kind"] for o in actions.delete) == ["PodGroup", "PodGroup", "Workload"]
    assert actions.create == []
    zero = copy.deepcopy(obj)
    zero["spec"]["p0"]["replicas"] = zero["spec"]["p1"]["replicas"] = 0
    assert len(reconcile(plan(KARTA, zero), [], existing).delete) == 3


def test_a_member_that_missed_the_webhook_lowers_the_minimum() -> None:
    obj = opted(custom.partset("d", [3]))
    karta = wm.load_karta(custom.karta(1))
    joined = pods_of(obj, [2])
    late = admitted(obj, "p0", 2, joined=False)
    assert pod_reference(late) is None and pod_reference(joined[0]) is not None
    pods = [*joined, late]
    actions = reconcile(plan(karta, obj, pods), pods, [])
    (group,) = [o for o in actions.create if o["kind"] == "PodGroup"]
    assert group["spec"]["schedulingPolicy"]["gang"]["minCount"] == 2
    (missed,) = actions.missed.values()
    assert missed == [late["metadata"]["name"]]
    assert any(d.reason == "MissedWebhook" and d.warning for d in actions.decisions)


def test_delete_unbound_mode_recreates_the_member_instead() -> None:
    obj = opted(custom.partset("e", [3]))
    karta = wm.load_karta(custom.karta(1))
    late, bound = admitted(obj, "p0", 1, joined=False), admitted(obj, "p0", 2, joined=False)
    bound["spec"]["nodeName"] = "node-1"
    pods = [admitted(obj, "p0", 0), late, bound]
    actions = reconcile(plan(karta, obj, pods), pods, [], mode=DELETE_UNBOUND)
    assert [p["metadata"]["name"] for p in actions.delete_pods] == [late["metadata"]["name"]]
    (group,) = [o for o in actions.create if o["kind"] == "PodGroup"]
    assert group["spec"]["schedulingPolicy"]["gang"]["minCount"] == 3


def test_a_group_pods_still_reference_is_kept_until_they_go() -> None:
    obj = opted(custom.partset("f", [2, 2]))
    pods = pods_of(obj, [2, 2])
    existing = created(plan(KARTA, obj, pods).objects)
    # the Karta changes: p1 is no longer a gang; its two pods still reference their group
    karta = wm.load_karta(custom.karta(1))
    actions = reconcile(plan(karta, obj, pods), pods, existing)
    kept = [o["metadata"]["name"] for o in existing if o["metadata"]["name"].endswith("-p1")]
    assert kept and all(o["metadata"]["name"] not in kept for o in actions.delete)
    assert any(d.reason == "KeptForMembers" for d in actions.decisions) or not actions.delete
    gone = [p for p in pods if not p["metadata"]["name"].startswith("f-p1")]
    actions = reconcile(plan(karta, obj, gone), gone, existing)
    assert [o["metadata"]["name"] for o in actions.delete] == kept


def test_a_podgroup_being_deleted_is_waited_for_not_duplicated() -> None:
    obj = opted(custom.partset("g", [2, 2]))
    existing = created(plan(KARTA, obj).objects)
    group = next(o for o in existing if o["kind"] == "PodGroup")
    group["metadata"]["deletionTimestamp"] = "2026-12-01T09:00:00Z"
    group["metadata"]["finalizers"] = ["scheduling.k8s.io/podgroup-protection"]
    actions = reconcile(plan(KARTA, obj), [], existing)
    assert actions.create == [] and actions.patch == [] and actions.delete == []
    assert actions.waiting == [group["metadata"]["name"]]
    # once gone it is created again
    rest = [o for o in existing if o is not group]
    again = reconcile(plan(KARTA, obj), [], rest)
    assert [o["metadata"]["name"] for o in again.create] == [group["metadata"]["name"]]


def test_names_taken_by_others_and_foreign_workloads_are_respected() -> None:
    obj = opted(custom.partset("h", [2, 2]))
    desired = plan(KARTA, obj).objects
    theirs = copy.deepcopy(desired[1])
    theirs["metadata"]["labels"] = {}
    actions = reconcile(plan(KARTA, obj), [], [theirs])
    assert all(o["metadata"]["name"] != theirs["metadata"]["name"] for o in actions.create)
    assert any(d.reason == "NameTaken" for d in actions.decisions)
    foreign = {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "Workload",
        "metadata": {"name": "x"},
    }
    actions = reconcile(plan(KARTA, obj), [], created(desired), foreign_workload=foreign)
    assert len(actions.delete) == 3 and actions.create == []


def test_object_paths() -> None:
    obj = opted(custom.partset("i", [2]))
    paths = sorted(object_path(o) for o in plan(KARTA, obj).objects)
    assert paths[0].startswith("/apis/scheduling.k8s.io/v1beta1/namespaces/default/podgroups/")
    assert paths[1] == "/apis/scheduling.k8s.io/v1beta1/namespaces/default/workloads/partset-i"


def test_groups_named_by_someone_else_are_never_created() -> None:
    obj = opted(custom.partset("j", [2]))
    theirs = admitted(obj, "p0", 0, joined=False)
    theirs["spec"]["schedulingGroup"] = {"podGroupName": "their-own-group"}
    karta = wm.load_karta(custom.karta(1))
    actions = reconcile(plan(karta, obj, [theirs]), [theirs], [])
    assert all(o["metadata"]["name"] != "their-own-group" for o in actions.create)
    # a workload opted out after its pods joined keeps our groups while they are referenced
    pods = pods_of(obj, [2])
    existing = created(plan(karta, obj, pods).objects)
    out = copy.deepcopy(obj)
    out["metadata"]["annotations"]["workload-map.run.ai/gang-scheduling"] = "disabled"
    actions = reconcile(plan(karta, out, pods), pods, existing)
    assert actions.delete == [] and actions.create == []
    assert reconcile(plan(karta, out, []), [], existing).delete  # they go with the pods


def test_missed_members_lower_their_own_volcano_tasks() -> None:
    """A Volcano gang of several tasks: each pod that missed the webhook lowers its own task's
    minimum, so minTaskMember still holds for the members that can join."""
    from tests.gangs.test_tasks import karta as task_karta
    from tests.gangs.test_tasks import pods_of as task_pods
    from tests.gangs.test_tasks import taskset
    from workload_map.gangs.config import VOLCANO_GROUP_ANNOTATION

    karta = wm.load_karta(task_karta())
    obj = taskset()
    pods = task_pods(obj)
    (group,) = plan(karta, obj, pods).objects
    name = group["metadata"]["name"]
    assert group["spec"]["minTaskMember"] == {"p0": 1, "multi-p0": 2, "gpu": 3}
    missed = {"t-multi-gpu-2"}
    for pod in pods:
        if pod["metadata"]["name"] not in missed:
            pod["metadata"]["annotations"] = {VOLCANO_GROUP_ANNOTATION: name}
    actions = reconcile(plan(karta, obj, pods), pods, [])
    (made,) = [o for o in actions.create if o["kind"] == "PodGroup"]
    assert made["spec"]["minMember"] == 5
    assert made["spec"]["minTaskMember"] == {"p0": 1, "multi-p0": 2, "gpu": 2}
    note = json.loads(made["metadata"]["annotations"][ANNOTATION_DECISION])
    assert note["minTaskMember"] == made["spec"]["minTaskMember"]
    (warning,) = [d for d in actions.decisions if d.reason == "MissedWebhook"]
    assert '"gpu": 2' in warning.message
    # the plain task's only pod missed too: its task goes, the others keep their guarantee
    missed.add("t-p0-x-0")
    pods[0]["metadata"].pop("annotations")
    assert pods[0]["metadata"]["name"] == "t-p0-x-0"
    existing = created([made])
    actions = reconcile(plan(karta, obj, pods), pods, existing)
    ((_, patch),) = [(t, p) for t, p in actions.patch if t["kind"] == "PodGroup"]
    assert patch["spec"]["minMember"] == 4
    assert patch["spec"]["minTaskMember"] == {"multi-p0": 2, "gpu": 2}
    assert sorted(json.loads(patch["metadata"]["annotations"][ANNOTATION_DECISION])["missed"]) == (
        sorted(missed)
    )


def test_a_missed_pod_outside_the_task_map_drops_task_minimums() -> None:
    """Without a task of its own (the planner could not place it), a missed pod leaves no task
    minimums that are sure to hold: minTaskMember goes, minMember is still lowered."""
    from tests.gangs.test_tasks import karta as task_karta
    from tests.gangs.test_tasks import pods_of as task_pods
    from tests.gangs.test_tasks import taskset
    from workload_map.gangs.config import VOLCANO_GROUP_ANNOTATION

    karta = wm.load_karta(task_karta())
    obj = taskset()
    pods = task_pods(obj)
    result = plan(karta, obj, pods)
    (gang,) = result.gangs
    name = result.objects[0]["metadata"]["name"]
    for pod in pods[1:]:
        pod["metadata"]["annotations"] = {VOLCANO_GROUP_ANNOTATION: name}
    gang.task_of_pod.pop(pods[0]["metadata"]["name"])  # as for a pod the planner cannot place
    actions = reconcile(result, pods, [])
    (made,) = [o for o in actions.create if o["kind"] == "PodGroup"]
    assert made["spec"]["minMember"] == 5
    assert "minTaskMember" not in made["spec"]
