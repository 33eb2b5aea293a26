"""One workload's reconcile, as data: which objects to create, patch or delete, and why.

Pure: the plan (:func:`~workload_map.gangs.planner.plan`), the workload's pods and the
scheduling objects that exist in, the actions and events out; the operator executes them.
Rules beyond the planner's, from what the API and the webhook allow:

- A pod's group reference only counts when set at creation. A member that missed the webhook
  (timeout, operator down, cache miss) can never join, so by default the gang's minimum is
  lowered by the members that cannot join (never below 1), a Volcano group's task minimums
  each by its own missed pods (so the per-task guarantee stays), a coscheduling or Volcano
  group's ``minResources`` by the requests those pods were counted with (a gang that still
  demanded them could never be satisfied by the rest), and a Warning says so; in the
  opt-in ``delete-unbound`` mode such a member is deleted while it is still unbound, so that
  its own controller recreates it through the webhook (only pods with a controller owner).
- A group that pods still reference (created before a structure change, or while the webhook
  thought so) is kept, or created, with those pods as its minimum, until its last pod goes.
- An object being deleted (a PodGroup held by its protection finalizer) is neither patched nor
  recreated until it is gone: the name is taken, and a duplicate would split the gang.
- Objects of the same name that are not ours are never touched; a Workload that another
  controller made for this workload (``controllerRef``) means that controller gangs it: ours go.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from workload_map.engine.owners import controller_ref
from workload_map.engine.pods import Placement
from workload_map.engine.resources import Totals, pod_request
from workload_map.gangs.config import (
    ANNOTATION_DECISION,
    COSCHEDULING_LABEL,
    LABEL_MANAGED_BY,
    MANAGED_BY,
    VOLCANO_GROUP_ANNOTATION,
)
from workload_map.gangs.jobs import is_job_controllers
from workload_map.gangs.naming import dns_subdomain, label_value
from workload_map.gangs.objects import decision_text, owned_metadata
from workload_map.gangs.plans import (
    COSCHEDULING_API,
    NATIVE_API,
    VOLCANO_API,
    Decision,
    Gang,
    Plan,
)
from workload_map.gangs.tasks import quantities, totals_of

__all__ = [
    "DELETE_UNBOUND",
    "LOWER_MINIMUM",
    "Actions",
    "object_path",
    "pod_reference",
    "reconcile",
]

LOWER_MINIMUM = "lower-minimum"
DELETE_UNBOUND = "delete-unbound"

_PLURAL = {
    "Workload": "workloads",
    "PodGroup": "podgroups",
    "CompositePodGroup": "compositepodgroups",
}


def object_path(obj: Mapping[str, Any], *, collection: bool = False) -> str:
    """The REST path of one of our objects (or of its collection)."""
    meta = obj.get("metadata") or {}
    base = f"/apis/{obj['apiVersion']}/namespaces/{meta['namespace']}/{_PLURAL[obj['kind']]}"
    return base if collection else f"{base}/{meta['name']}"


_EMPTY: Mapping[str, Any] = {}


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    meta = obj.get("metadata")
    # dict first: a resync reads every pod's, and the Mapping check is an ABC lookup
    return meta if type(meta) is dict or isinstance(meta, Mapping) else _EMPTY


def pod_reference(pod: Mapping[str, Any]) -> tuple[str, str] | None:
    """(backend api, group name) the pod was joined to at creation, if any."""
    return _reference(pod, _meta(pod))


def _reference(pod: Mapping[str, Any], meta: Mapping[str, Any]) -> tuple[str, str] | None:
    """:func:`pod_reference` of a pod whose ``metadata`` the caller has read already: the one
    reader of a pod's reference (a resync reads every pod's). A pod without one (every pod
    of a workload without gangs) costs a lookup per place: no group, no label, no note."""
    spec = pod.get("spec")
    # type() first: the ABC check costs a Python call, and a resync asks it per pod
    if type(spec) is dict or isinstance(spec, Mapping):
        group = spec.get("schedulingGroup")
        if group is not None:
            if type(group) is dict or (group and isinstance(group, Mapping)):
                name = group.get("podGroupName")
                if type(name) is str or isinstance(name, str):
                    return NATIVE_API, name
    labels = meta.get("labels")
    if labels and COSCHEDULING_LABEL in labels:
        label = labels.get(COSCHEDULING_LABEL)
        if isinstance(label, str) and label:
            return COSCHEDULING_API, label
    notes = meta.get("annotations")
    if notes and VOLCANO_GROUP_ANNOTATION in notes:
        note = notes.get(VOLCANO_GROUP_ANNOTATION)
        if isinstance(note, str) and note:
            return VOLCANO_API, note
    return None


_DONE = ("Succeeded", "Failed")


def _live(pod: Mapping[str, Any], meta: Mapping[str, Any]) -> bool:
    """Not finished and not being deleted: a pod that still holds or waits for a place
    (``meta``: its metadata, read once by the caller)."""
    phase = (pod.get("status") or {}).get("phase")
    return phase not in _DONE and not meta.get("deletionTimestamp")


def _bound(pod: Mapping[str, Any]) -> bool:
    return bool((pod.get("spec") or {}).get("nodeName"))


def _ours(obj: Mapping[str, Any]) -> bool:
    return (_meta(obj).get("labels") or {}).get(LABEL_MANAGED_BY) == MANAGED_BY


_APIS = {"native": NATIVE_API, "coscheduling": COSCHEDULING_API, "volcano": VOLCANO_API}


def _api_of(backend: str) -> str:
    return _APIS[backend]


def _joined_as(gang: Gang) -> tuple[str, str]:
    """The reference a member of ``gang`` carries once joined (its :func:`pod_reference`):
    coscheduling's is the label value of the group's name."""
    api = _api_of(gang.backend)
    return api, label_value(gang.name) if api == COSCHEDULING_API else gang.name


@dataclass
class Actions:
    """What to do for one workload; ``decisions`` become events on the workload."""

    create: list[dict[str, Any]] = field(default_factory=list)
    patch: list[tuple[dict[str, Any], dict[str, Any]]] = field(default_factory=list)
    delete: list[dict[str, Any]] = field(default_factory=list)
    delete_pods: list[dict[str, Any]] = field(default_factory=list)
    decisions: list[Decision] = field(default_factory=list)
    missed: dict[str, list[str]] = field(default_factory=dict)  # gang → pods that missed it
    waiting: list[str] = field(default_factory=list)  # objects being deleted

    @property
    def writes(self) -> int:
        return len(self.create) + len(self.patch) + len(self.delete) + len(self.delete_pods)


def _key(obj: Mapping[str, Any]) -> tuple[str, str, str]:
    return (str(obj.get("apiVersion")), str(obj.get("kind")), str(_meta(obj).get("name")))


def _kept_group(plan: Plan, api: str, name: str, count: int) -> dict[str, Any]:
    """A PodGroup for pods that reference a group the plan no longer has."""
    decision = {"kept": True, "members": count, "reason": "pods still reference this group"}
    meta = owned_metadata(plan.workload, name, decision, {})
    if api == NATIVE_API:
        spec: dict[str, Any] = {"schedulingPolicy": {"gang": {"minCount": count}}}
    else:
        spec = {"minMember": count}
    return {"apiVersion": api, "kind": "PodGroup", "metadata": meta, "spec": spec}


def _set_min(
    obj: dict[str, Any], count: int, gang: Gang, missed: Sequence[str] = ()
) -> dict[str, int] | None:
    """Set the group's minimum to ``count``; a Volcano group's task minimums lose the
    ``missed`` pods, each from its own task, so the per-task guarantee stays. Returns the task
    minimums written (None: none)."""
    if obj["apiVersion"] == NATIVE_API:
        obj["spec"]["schedulingPolicy"] = {"gang": {"minCount": count}}
        return None
    obj["spec"]["minMember"] = count
    tasks = obj["spec"].get("minTaskMember")
    if not isinstance(tasks, dict):
        return None
    lowered = dict(tasks)
    for name in missed:
        task = gang.task_of_pod.get(name)
        if task in lowered:
            lowered[task] -= 1
    # a task left at 0 guarantees nothing: no entry (Volcano skips a 0 the same way)
    lowered = {task: n for task, n in lowered.items() if n > 0}
    if lowered and sum(lowered.values()) <= count:
        obj["spec"]["minTaskMember"] = lowered
        return lowered
    # a missed pod outside the task map, or task minimums above the gang's: they cannot hold
    obj["spec"].pop("minTaskMember")
    return None


def _placed(placements: Iterable[Placement]) -> dict[str, tuple[str, str]]:
    """pod -> (component, instance), keyed as the planner keys a gang's ``pod_requests``."""
    return {
        p.pod: (p.component, p.instance or "")
        for p in placements
        if p.attributed and p.component is not None
    }


def _requests(
    gang: Gang, missed: Sequence[Mapping[str, Any]], placed: Mapping[str, tuple[str, str]]
) -> Totals:
    """What the missed pods were counted with in the gang's ``minResources``: each one's
    (component, instance) request the planner summed, else (no template the planner read) the
    engine's effective request of the pod's own spec, which copies its template."""
    total: Totals = {}
    for pod in missed:
        where = placed.get(str(_meta(pod).get("name")))
        request = gang.pod_requests.get(where) if where is not None else None
        if request is None:
            request = pod_request(pod.get("spec"))
        for name, value in request.items():
            total[name] = total.get(name, 0) + value
    return total


def _lower_resources(
    obj: dict[str, Any], by: Mapping[str, int]
) -> tuple[dict[str, str], dict[str, str]] | None:
    """Take ``by`` out of the group's ``minResources``, never below zero; a resource left at
    zero has no entry, and no resource left no ``minResources`` (the planner writes none for
    an absent one). Returns (what was taken, what is left) as quantities; None: the group
    carries no ``minResources`` (a native PodGroup has no resource minimum)."""
    held = obj["spec"].get("minResources")
    if not isinstance(held, Mapping) or not held:
        return None
    have = totals_of(held)
    left = {name: max(0, value - by.get(name, 0)) for name, value in have.items()}
    taken = quantities({name: value - left[name] for name, value in have.items()})
    kept = quantities(left)
    if kept:
        obj["spec"]["minResources"] = kept
    else:
        obj["spec"].pop("minResources")
    return taken, kept


def _spec_patch(existing: Mapping[str, Any], desired: Mapping[str, Any]) -> dict[str, Any] | None:
    """The merge patch bringing the mutable parts of ``existing`` to ``desired``, or None."""
    patch: dict[str, Any] = {}
    old_note = (_meta(existing).get("annotations") or {}).get(ANNOTATION_DECISION)
    new_note = (_meta(desired).get("annotations") or {}).get(ANNOTATION_DECISION)
    if old_note != new_note:
        patch["metadata"] = {"annotations": {ANNOTATION_DECISION: new_note}}
    if desired["kind"] in ("Workload", "CompositePodGroup"):
        return patch or None  # templates, controllerRef and a composite's whole spec: immutable
    old, new = existing.get("spec") or {}, desired.get("spec") or {}
    if desired["apiVersion"] == NATIVE_API:
        if old.get("schedulingPolicy") != new.get("schedulingPolicy"):
            patch["spec"] = {"schedulingPolicy": new["schedulingPolicy"]}
    else:
        changed = {k: v for k, v in new.items() if old.get(k) != v}
        removed = {k: None for k in old if k not in new and k in ("minTaskMember", "minResources")}
        if changed or removed:
            patch["spec"] = {**changed, **removed}
    return patch or None


def reconcile(
    plan: Plan,
    pods: Iterable[Mapping[str, Any]],
    existing: Sequence[Mapping[str, Any]],
    *,
    mode: str = LOWER_MINIMUM,
    foreign_workload: Mapping[str, Any] | None = None,
) -> Actions:
    """The actions that bring ``existing`` (objects of this workload) to what the plan says.

    ``existing`` holds every scheduling object named by the plan or labelled with the
    workload's uid; ``foreign_workload`` a native Workload another controller made for it.
    """
    out = Actions(decisions=list(plan.decisions))
    ours = [o for o in existing if _ours(o)]
    if foreign_workload is not None:
        name = _meta(foreign_workload).get("name")
        removed = [dict(o) for o in ours if not _meta(o).get("deletionTimestamp")]
        said = any(d.reason == "LeftAlone" for d in plan.decisions)
        if removed or not said:  # a Job left alone for WorkloadWithJob is said once
            out.decisions.append(
                Decision(
                    "LeftAlone",
                    f"Workload {name} made by another controller gangs this workload: ours removed"
                    + (
                        " (the Job controller, WorkloadWithJob: its gang is spec.scheduling's)"
                        if is_job_controllers(foreign_workload)
                        else ""
                    ),
                )
            )
        out.delete.extend(removed)
        return out
    # each live pod's name and reference, its metadata read once (a resync reads every pod)
    pod_list: list[Mapping[str, Any]] = []
    refs: list[tuple[str, tuple[str, str] | None]] = []
    for p in pods:
        meta = p.get("metadata")
        if type(meta) is not dict:
            meta = _meta(p)
        status = p.get("status")
        if type(status) is dict:  # _live inlined for the common case: it runs per pod
            if status.get("phase") in _DONE or meta.get("deletionTimestamp"):
                continue
        elif not _live(p, meta):
            continue
        pod_list.append(p)
        name = meta.get("name")
        refs.append((name if type(name) is str else str(name), _reference(p, meta)))
    # copied only where changed below: a resync of an unchanged workload copies nothing
    desired: dict[tuple[str, str, str], dict[str, Any]] = {_key(o): o for o in plan.objects}
    gangs = {g.name: g for g in plan.gangs}

    # members that missed the webhook
    placed: dict[str, tuple[str, str]] | None = None  # read from the plan's view once, if needed
    for gang in plan.gangs:
        names_in = set(gang.pods)
        joined = _joined_as(gang)
        missed = [
            p
            for p, (name, ref) in zip(pod_list, refs, strict=True)
            if name in names_in and ref != joined
        ]
        if not missed:
            continue
        names = sorted(str(_meta(p).get("name")) for p in missed)
        out.missed[gang.name] = names
        gang_key = (_api_of(gang.backend), "PodGroup", gang.name)
        obj = desired.get(gang_key)
        if mode == DELETE_UNBOUND:
            doomed = [p for p in missed if not _bound(p) and _has_controller(p)]
            out.delete_pods.extend(dict(p) for p in doomed)
            out.decisions.append(
                Decision(
                    "MissedWebhook",
                    f"{len(missed)} pod(s) of gang {gang.name} were created without its group "
                    f"reference ({', '.join(names)}); {len(doomed)} unbound one(s) deleted so "
                    "that their controller recreates them through the webhook",
                    warning=True,
                )
            )
            continue
        lowered = max(1, gang.min_count - len(missed))
        tasks: dict[str, int] | None = None
        resources: tuple[dict[str, str], dict[str, str]] | None = None
        # a group of one that reserves for pods created after admission (Volcano) keeps its
        # minimum but not the requests of those that cannot join
        if obj is not None and (lowered != gang.min_count or obj["spec"].get("minResources")):
            obj = desired[gang_key] = copy.deepcopy(obj)
            tasks = _set_min(obj, lowered, gang, names)
            planned = dict(obj["spec"].get("minResources") or {})
            if planned:
                if placed is None:
                    placed = _placed(plan.view.placements) if plan.view is not None else {}
                resources = _lower_resources(obj, _requests(gang, missed, placed))
            note = json.loads(obj["metadata"]["annotations"][ANNOTATION_DECISION])
            note.update({"minCount": lowered, "plannedMinCount": gang.min_count, "missed": names})
            if gang.tasks:
                note["minTaskMember"] = tasks
            if resources is not None:
                note.update(
                    {
                        "minResources": resources[1],
                        "plannedMinResources": planned,
                        "minResourcesLoweredBy": resources[0],
                    }
                )
            obj["metadata"]["annotations"][ANNOTATION_DECISION] = decision_text(note)
        out.decisions.append(
            Decision(
                "MissedWebhook",
                f"{len(missed)} pod(s) of gang {gang.name} were created without its group "
                f"reference ({', '.join(names)}) and cannot join: "
                + (
                    f"minimum lowered from {gang.min_count} to {lowered}"
                    if lowered != gang.min_count
                    else f"minimum stays {lowered}"
                )
                + (f", task minimums {json.dumps(tasks, sort_keys=True)}" if tasks else "")
                + _resources_text(resources),
                warning=True,
            )
        )

    # groups that pods still reference
    referenced: dict[tuple[str, str], int] = {}
    for _, ref in refs:
        if ref is not None:
            referenced[ref] = referenced.get(ref, 0) + 1
    existing_by_key = {_key(o): o for o in existing}
    by_name = {(key[0], key[2]): o for key, o in existing_by_key.items()}
    ours_prefix: str | None = None  # the names we give, made only when a pod names another
    for (api, name), count in sorted(referenced.items()):
        if (api, "PodGroup", name) in desired or name in gangs:
            continue
        if ours_prefix is None:
            ours_prefix = dns_subdomain(f"pg-{plan.workload.uid or plan.workload.name}")[:40]
        if api == COSCHEDULING_API:
            continue  # a label value, maybe cut: only our own objects are kept below
        if (api, name) in by_name and not _ours(by_name[(api, name)]):
            continue  # the pods joined someone else's group
        if not plan.handled or _released(plan) or not name.startswith(ours_prefix):
            continue  # not a name we give: someone else's pods, someone else's group
        desired[(api, "PodGroup", name)] = _kept_group(plan, api, name, count)
        out.decisions.append(
            Decision(
                "KeptForMembers",
                f"{count} pod(s) still reference pod group {name}, which the workload no "
                "longer implies: kept until its last pod goes",
            )
        )
    for held in ours:
        key = _key(held)
        if key in desired or key[1] != "PodGroup":
            continue
        count = referenced.get((key[0], key[2]), 0)
        if count and not _released(plan):  # opted out later: ours stay while referenced
            desired[key] = _kept_group(plan, key[0], key[2], count)

    # the diff
    for key, obj in desired.items():
        found = existing_by_key.get(key)
        if found is None:
            out.create.append(obj)
            continue
        if not _ours(found):
            out.decisions.append(
                Decision(
                    "NameTaken",
                    f"{key[1]} {key[2]} exists and is not workload-map's: left as is",
                    warning=True,
                )
            )
            continue
        if _meta(found).get("deletionTimestamp"):
            out.waiting.append(key[2])
            out.decisions.append(
                Decision(
                    "WaitingForDeletion",
                    f"{key[1]} {key[2]} is being deleted (finalizers "
                    f"{', '.join(_meta(found).get('finalizers') or []) or 'none'}): "
                    "recreated once it is gone",
                )
            )
            continue
        if key[1] == "PodGroup" and key[0] == NATIVE_API:
            old_ref = (found.get("spec") or {}).get("workloadRef")
            new_ref = (obj.get("spec") or {}).get("workloadRef")
            if old_ref != new_ref:
                continue  # immutable: keep the old one while its pods run
            if _immutable_changed(found, obj, referenced.get((key[0], key[2]), 0), out):
                continue  # deleted: made again with the members' class once gone
        patch = _spec_patch(found, obj)
        if patch is not None:
            out.patch.append((dict(found), patch))
    templates_in_use: set[str] | None = None  # made only when a Workload of ours may go
    for held in ours:
        key = _key(held)
        if key in desired or _meta(held).get("deletionTimestamp"):
            continue
        if key[1] == "Workload":
            if templates_in_use is None:
                templates_in_use = _templates_in_use(desired, ours)
            if key[2] in templates_in_use:
                continue  # PodGroups made from its templates are still kept
        out.delete.append(dict(held))
    return out


def _templates_in_use(
    desired: Mapping[tuple[str, str, str], Mapping[str, Any]], ours: Sequence[Mapping[str, Any]]
) -> set[str]:
    """The Workloads whose templates the desired PodGroups, or ours that stay, are made from."""
    return {
        str(((o.get("spec") or {}).get("workloadRef") or {}).get("workloadName"))
        for key, o in desired.items()
        if key[1] == "PodGroup"
    } | {
        str(((o.get("spec") or {}).get("workloadRef") or {}).get("workloadName"))
        for o in ours
        if o.get("kind") == "PodGroup" and _key(o) in desired
    }


def _immutable_changed(
    found: Mapping[str, Any], desired: Mapping[str, Any], members: int, out: Actions
) -> bool:
    """Whether a native group whose immutable ``priorityClassName``, ``disruptionMode`` or
    ``schedulingConstraints`` differs from what its members now need is deleted (True) rather
    than kept (False).

    A group no live pod references yet is deleted (and made again once gone); one with members
    is kept and reported, since deleting it would leave them without the group they must join.
    A field the server did not keep (``disruptionMode`` absent) is not compared, so a server
    without it never sees the group recreated over and over. ``schedulingConstraints`` (a
    topology level added, changed or removed) is compared both ways: the planner writes it only
    where the probe saw the server keep it.
    """
    want, have = desired.get("spec") or {}, found.get("spec") or {}
    changes = []
    want_class, have_class = want.get("priorityClassName"), have.get("priorityClassName") or ""
    if want_class and have_class != want_class:
        changes.append(f"priority class {have_class or '(none)'} -> {want_class}")
    want_mode, have_mode = want.get("disruptionMode"), have.get("disruptionMode")
    if want_mode and have_mode is not None and have_mode != want_mode:
        changes.append(f"disruption mode {_mode(have_mode)} -> {_mode(want_mode)}")
    want_topo, have_topo = _keys(want), _keys(have)
    if want_topo != have_topo:
        changes.append(f"topology {have_topo or '(none)'} -> {want_topo or '(none)'}")
    if not changes:
        return False
    name, what = _meta(found).get("name"), "; ".join(changes)
    if members == 0:
        out.delete.append(dict(found))
        out.decisions.append(
            Decision(
                "ImmutableFieldChanged",
                f"PodGroup {name}: {what}: the fields are immutable and no pod joined the "
                "group yet, so it is deleted and made again",
            )
        )
    else:
        out.decisions.append(
            Decision(
                "ImmutableFieldKept",
                f"PodGroup {name}: {what} wanted, but the fields are immutable and {members} "
                "pod(s) joined the group, so it is kept as it is"
                + (
                    "; kube-scheduler binds no member whose priority differs from the group's "
                    "(recreate the workload to change its class)"
                    if want_class and have_class != want_class
                    else ""
                ),
                warning=bool(want_class and have_class != want_class),
            )
        )
    return members == 0


def _keys(spec: Mapping[str, Any]) -> str:
    """The topology keys of a native group's ``schedulingConstraints``, joined ("": none)."""
    held = spec.get("schedulingConstraints")
    if held is None:  # most groups (no ABC check for it)
        return ""
    topology = held.get("topology") if isinstance(held, Mapping) else None
    if not isinstance(topology, list):
        return ""
    return ",".join(str(t.get("key")) for t in topology if isinstance(t, Mapping))


def _mode(value: object) -> str:
    return ",".join(sorted(value)) if isinstance(value, Mapping) else str(value)


def _resources_text(resources: tuple[dict[str, str], dict[str, str]] | None) -> str:
    if resources is None:
        return ""
    taken, kept = resources
    if not taken:
        return ", minResources unchanged (the missed pods request none of them)"
    return (
        f", minResources lowered by {json.dumps(taken, sort_keys=True)} "
        f"to {json.dumps(kept, sort_keys=True)}"
    )


def _released(plan: Plan) -> bool:
    return any(d.reason in ("GangsReleased", "GangsRemoved") for d in plan.decisions)


def _has_controller(pod: Mapping[str, Any]) -> bool:
    """Whether a controller recreates the pod once deleted (the engine's one owner rule)."""
    return controller_ref(pod) is not None
