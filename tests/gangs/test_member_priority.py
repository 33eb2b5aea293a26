"""Native pod groups carry their members' priority class, and are preempted whole.

kube-scheduler binds no member of a pod group whose priority differs from the group's
(``validatePodGroup`` in v1.37.2), and the Priority admission plugin gives a group that names no
class the cluster's ``globalDefault`` (else 0): a PodGroup without the members' class never
schedules a gang of pods that have one. The end-to-end proof is
``tests/integration/test_gangs_priority.py``.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from tests.gangs.cases import example, karta_of, opted
from tests.gangs.owners import jobset_chain
from tests.gangs.test_admission import cache_with
from workload_map.gangs import plan
from workload_map.gangs.admission import PodAdmitter
from workload_map.gangs.config import ANNOTATION_DECISION, ANNOTATION_DISRUPTION, GangConfig
from workload_map.gangs.controller import GangController
from workload_map.gangs.plans import NATIVE_API
from workload_map.gangs.reconcile import reconcile
from workload_map.gangs.runtime import GangRuntime

Obj = dict[str, Any]


def _jobset(**classes: str) -> Obj:
    """The example JobSet, opted in, with ``priorityClassName`` per replicated job."""
    jobset, _ = example("jobset")
    jobset = opted(copy.deepcopy(jobset))
    for rj in jobset["spec"]["replicatedJobs"]:
        if rj["name"] in classes:
            rj["template"]["spec"]["template"]["spec"]["priorityClassName"] = classes[rj["name"]]
    return jobset


def _groups(p: Any) -> list[Obj]:
    return [o for o in p.objects if o["kind"] == "PodGroup"]


def _class_of(group: Obj) -> str | None:
    value = group["spec"].get("priorityClassName")
    assert value is None or isinstance(value, str)
    return value


def test_the_group_names_the_class_its_members_run_with() -> None:
    jobset = _jobset(driver="train", workers="train")
    (group,) = _groups(plan(karta_of(jobset), jobset))
    assert _class_of(group) == "train"
    assert "priority" not in group["spec"]  # the admission plugin fills the value


def test_no_class_and_no_default_leaves_the_field_out() -> None:
    jobset = _jobset()
    (group,) = _groups(plan(karta_of(jobset), jobset))
    assert _class_of(group) is None


def test_members_without_a_class_take_the_clusters_global_default() -> None:
    jobset = _jobset()
    config = GangConfig(priority_values=(("std", 100),), default_priority_class="std")
    (group,) = _groups(plan(karta_of(jobset), jobset, config=config))
    assert _class_of(group) == "std"
    # one template naming the default explicitly, one relying on it: the same priority
    jobset = _jobset(driver="std")
    (group,) = _groups(plan(karta_of(jobset), jobset, config=config))
    assert _class_of(group) == "std"


def test_classes_of_different_priority_get_no_group_and_say_why() -> None:
    jobset = _jobset(driver="high", workers="low")
    config = GangConfig(priority_values=(("high", 1000), ("low", 10)))
    out = plan(karta_of(jobset), jobset, config=config)
    assert _groups(out) == [] and out.gangs == []
    (mixed,) = [d for d in out.decisions if d.reason == "MixedPriorities"]
    assert mixed.warning
    assert "high=1000" in mixed.message and "low=10" in mixed.message
    assert "one by one" in mixed.message


def test_a_class_and_no_class_differ_unless_the_default_has_its_value() -> None:
    jobset = _jobset(driver="high")
    config = GangConfig(priority_values=(("high", 1000),))
    out = plan(karta_of(jobset), jobset, config=config)
    assert out.gangs == [] and "(none)=0" in out.decisions[-1].message
    # the default class has the same value: the members agree
    config = GangConfig(
        priority_values=(("high", 1000), ("std", 1000)), default_priority_class="std"
    )
    (group,) = _groups(plan(karta_of(jobset), jobset, config=config))
    assert _class_of(group) in {"high", "std"}


def test_classes_of_unknown_value_are_not_assumed_equal() -> None:
    jobset = _jobset(driver="a", workers="b")
    out = plan(karta_of(jobset), jobset)
    assert out.gangs == [] and "a=unknown" in out.decisions[-1].message
    # equal known values share one group; the class most members name wins
    config = GangConfig(priority_values=(("a", 5), ("b", 5)))
    (group,) = _groups(plan(karta_of(jobset), jobset, config=config))
    assert _class_of(group) in {"a", "b"}


def test_a_pod_naming_another_class_than_its_template_is_a_conflict() -> None:
    jobset = _jobset(driver="train", workers="train")
    _, pods = jobset_chain(jobset)
    for i, pod in enumerate(pods):
        pod["metadata"]["name"] = f"p{i}"
        pod["spec"]["priorityClassName"] = "train"
    config = GangConfig(priority_values=(("train", 1000), ("other", 1)))
    assert _groups(plan(karta_of(jobset), jobset, pods, config=config))
    pods[0]["spec"]["priorityClassName"] = "other"
    out = plan(karta_of(jobset), jobset, pods, config=config)
    assert out.gangs == [] and out.decisions[-1].reason == "MixedPriorities"
    # a pod that names none is taken as its template's (files abbreviate pods)
    del pods[0]["spec"]["priorityClassName"]
    (group,) = _groups(plan(karta_of(jobset), jobset, pods, config=config))
    assert _class_of(group) == "train"


def test_the_webhook_gives_no_group_to_pods_of_a_gang_that_cannot_share_one() -> None:
    jobset = _jobset(driver="high", workers="low")
    jobs, pods = jobset_chain(jobset)
    config = GangConfig(priority_values=(("high", 1000), ("low", 10)))
    admitter = PodAdmitter(cache_with(jobset, *jobs), config=config, miss_wait=0.0)
    for pod in pods:
        decision = admitter.decide(pod)
        assert decision.scheduling_group is None and decision.pod_group is None
        assert "priority classes differ" in decision.reason
    # the same JobSet with one class: every pod joins the group, which names the class
    jobset = _jobset(driver="high", workers="high")
    jobs, pods = jobset_chain(jobset)
    admitter = PodAdmitter(cache_with(jobset, *jobs), config=config, miss_wait=0.0)
    (group,) = _groups(plan(karta_of(jobset), jobset, config=config))
    for pod in pods:
        pod["spec"]["priorityClassName"] = "high"  # as the Priority admission plugin leaves it
        assert admitter.decide(pod).scheduling_group == group["metadata"]["name"]


def _class(name: str, value: int, *, default: bool = False) -> Obj:
    obj: Obj = {"metadata": {"name": name}, "value": value}
    if default:
        obj["globalDefault"] = True
    return obj


def test_the_runtime_follows_the_clusters_global_default() -> None:
    runtime = GangRuntime(GangConfig(), miss_wait=0.0)
    runtime.on_priority_class("ADDED", _class("std", 100, default=True))
    assert runtime.config.default_priority_class == "std"
    assert runtime.admitter.config.default_priority_class == "std"
    # two defaults (a race the API allows): the lowest value, as the admission plugin picks
    runtime.on_priority_class("ADDED", _class("low-default", 5, default=True))
    assert runtime.config.default_priority_class == "low-default"
    runtime.on_priority_class("DELETED", _class("low-default", 5, default=True))
    assert runtime.config.default_priority_class == "std"
    runtime.on_priority_class("MODIFIED", _class("std", 100))  # no longer the default
    assert runtime.config.default_priority_class is None
    assert dict(runtime.config.priority_values) == {"std": 100}


def test_a_new_default_replans_settled_workloads() -> None:
    found: tuple[Any, ...] = (None, {"metadata": {"resourceVersion": "1"}}, [], {}, [], None)
    before = GangController._fingerprint(found, 1, ((), None))
    assert GangController._fingerprint(found, 1, ((), "std")) != before


def _existing(group: Obj, cls: str | None) -> Obj:
    out = copy.deepcopy(group)
    out["metadata"]["resourceVersion"] = "7"
    if cls is None:
        out["spec"].pop("priorityClassName", None)
    else:
        out["spec"]["priorityClassName"] = cls
    return out


def _member(group: Obj) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "m-0", "namespace": group["metadata"]["namespace"]},
        "spec": {"schedulingGroup": {"podGroupName": group["metadata"]["name"]}},
        "status": {"phase": "Pending"},
    }


def test_a_group_made_with_another_class_is_replaced_while_no_pod_joined_it() -> None:
    jobset = _jobset(driver="train", workers="train")
    desired = plan(karta_of(jobset), jobset)
    (group,) = _groups(desired)
    stale = _existing(group, None)  # made before the members' class was known
    actions = reconcile(desired, [], [stale])
    assert [o["metadata"]["name"] for o in actions.delete] == [group["metadata"]["name"]]
    assert any(d.reason == "ImmutableFieldChanged" for d in actions.decisions)
    assert not actions.patch  # nothing patched into an immutable field


def test_a_group_with_members_is_kept_and_reported_but_still_resized() -> None:
    jobset = _jobset(driver="train", workers="train")
    desired = plan(karta_of(jobset), jobset)
    (group,) = _groups(desired)
    stale = _existing(group, "old")
    stale["spec"]["schedulingPolicy"] = {"gang": {"minCount": 1}}
    actions = reconcile(desired, [_member(group)], [stale])
    assert actions.delete == []
    (kept,) = [d for d in actions.decisions if d.reason == "ImmutableFieldKept"]
    assert kept.warning and "old" in kept.message and "train" in kept.message
    ((_, patch),) = actions.patch
    assert "priorityClassName" not in patch.get("spec", {})
    assert patch["spec"]["schedulingPolicy"] == group["spec"]["schedulingPolicy"]


def test_a_group_the_admission_plugin_gave_the_default_is_not_replaced() -> None:
    jobset = _jobset()
    desired = plan(karta_of(jobset), jobset)
    (group,) = _groups(desired)
    # we named no class (none known); the plugin filled the cluster's default
    actions = reconcile(desired, [], [_existing(group, "cluster-default")])
    assert actions.delete == [] and not any(
        d.reason.startswith("ImmutableField") for d in actions.decisions
    )
    assert json.loads(group["metadata"]["annotations"][ANNOTATION_DECISION])["backend"] == (
        "native"
    )
    assert group["apiVersion"] == NATIVE_API


def test_a_gang_is_one_unit_in_preemption_unless_the_workload_asks_otherwise() -> None:
    jobset = _jobset(driver="train", workers="train")
    out = plan(karta_of(jobset), jobset)
    (group,) = _groups(out)
    assert group["spec"]["disruptionMode"] == {"all": {}}
    (workload,) = [o for o in out.objects if o["kind"] == "Workload"]
    (template,) = workload["spec"]["podGroupTemplates"]
    assert template["disruptionMode"] == {"all": {}}
    assert template["priorityClassName"] == "train"
    jobset["metadata"]["annotations"][ANNOTATION_DISRUPTION] = "single"
    (group,) = _groups(plan(karta_of(jobset), jobset))
    assert group["spec"]["disruptionMode"] == {"single": {}}
    jobset["metadata"]["annotations"][ANNOTATION_DISRUPTION] = "some"
    out = plan(karta_of(jobset), jobset)
    (group,) = _groups(out)
    assert group["spec"]["disruptionMode"] == {"all": {}}
    (bad,) = [d for d in out.decisions if d.reason == "BadAnnotation"]
    assert bad.warning and ANNOTATION_DISRUPTION in bad.message and "'some'" in bad.message


def test_a_group_made_single_is_replaced_while_empty_and_kept_with_members() -> None:
    jobset = _jobset()
    desired = plan(karta_of(jobset), jobset)
    (group,) = _groups(desired)
    stale = _existing(group, None)
    stale["spec"]["disruptionMode"] = {"single": {}}  # the API's default, before this rule
    actions = reconcile(desired, [], [stale])
    assert len(actions.delete) == 1
    (changed,) = [d for d in actions.decisions if d.reason == "ImmutableFieldChanged"]
    assert "disruption mode single -> all" in changed.message
    actions = reconcile(desired, [_member(group)], [stale])
    assert actions.delete == []
    (kept,) = [d for d in actions.decisions if d.reason == "ImmutableFieldKept"]
    assert not kept.warning  # the gang still schedules; it is only preempted pod by pod
    # a server that does not keep the field: never recreated over and over
    del stale["spec"]["disruptionMode"]
    assert reconcile(desired, [], [stale]).delete == []
