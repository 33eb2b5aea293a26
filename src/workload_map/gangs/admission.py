"""What a new pod must carry to join its gang, decided at admission from caches only.

At pod CREATE the webhook walks the pod's controller owner references through the
:class:`~workload_map.gangs.cache.ObjectCache` (never the API server) to the top-most owner
whose kind has a Karta with gang instructions, then asks the planner which gang of that
workload the pod joins. The answer is a JSON patch: ``spec.schedulingGroup.podGroupName``
(native), the ``scheduling.x-k8s.io/pod-group`` label (coscheduling) or the
``scheduling.k8s.io/group-name`` / ``volcano.sh/task-spec`` annotations (Volcano), plus the
``workload-map.run.ai/{workload,component,instance}`` attribution labels.

An owner missing from the cache (created a moment before its pod, its watch event not yet
here) is waited for, at most ``miss_wait`` seconds per request in total (default 1 s, inside
the webhook's 3 s timeout); after that the pod is admitted unchanged and the controller's
missed-member detection takes over. Any failure admits the pod unchanged: the webhook never
blocks a pod.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from workload_map.engine import EngineError, Workload
from workload_map.engine.owners import OwnerRef, is_owner, top_covered
from workload_map.errors import WlmapError
from workload_map.gangs.cache import ObjectCache, cache_resolver, group_of
from workload_map.gangs.config import (
    ANNOTATION_DECISION,
    ANNOTATION_GANG,
    COSCHEDULING,
    COSCHEDULING_LABEL,
    LABEL_COMPONENT,
    LABEL_INSTANCE,
    LABEL_WORKLOAD,
    NATIVE,
    VOLCANO,
    VOLCANO_GROUP_ANNOTATION,
    VOLCANO_TASK_ANNOTATION,
    GangConfig,
)
from workload_map.gangs.definitions import KartaIndex
from workload_map.gangs.jobs import foreign_group
from workload_map.gangs.naming import label_value
from workload_map.gangs.objects import decision_text
from workload_map.gangs.planner import SpecMemo, plan
from workload_map.gangs.plans import WorkloadRef, workload_ref
from workload_map.model import Karta

__all__ = [
    "ADMITTING",
    "PodAdmitter",
    "PodDecision",
    "Resolver",
    "catalog_resolver",
    "json_patch",
    "pod_decisions",
]

#: the name the engine sees for a pod that has none yet (``generateName`` only)
ADMITTING = "(admitting)"
Resolver = Callable[[str, str], Karta | None]


def catalog_resolver() -> Resolver:
    """Kartas of the built-in catalog with gang instructions, by (apiVersion, kind)."""
    return KartaIndex().resolve


@dataclass
class PodDecision:
    """What the webhook sets on one pod, and why."""

    reason: str
    workload: WorkloadRef | None = None
    component: str | None = None
    instance: str | None = None
    group: str | None = None  # describe's group name
    pod_group: str | None = None  # the object the pod joins
    backend: str | None = None
    task: str | None = None
    labels: dict[str, str] = field(default_factory=dict)
    annotations: dict[str, str] = field(default_factory=dict)
    scheduling_group: str | None = None
    waited_seconds: float = 0.0
    cache_miss: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "reason": self.reason,
            "workload": self.workload.to_dict() if self.workload else None,
            "component": self.component,
            "instance": self.instance,
            "group": self.group,
            "podGroup": self.pod_group,
            "backend": self.backend,
            "task": self.task,
            "labels": dict(self.labels),
            "annotations": dict(self.annotations),
            "schedulingGroup": (
                {"podGroupName": self.scheduling_group} if self.scheduling_group else None
            ),
        }


def _escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def json_patch(pod: Mapping[str, Any], decision: PodDecision) -> list[dict[str, Any]]:
    """RFC 6902 operations adding the decision's labels, annotations and scheduling group."""
    ops: list[dict[str, Any]] = []
    meta = pod.get("metadata") or {}
    for section, values in (("labels", decision.labels), ("annotations", decision.annotations)):
        if not values:
            continue
        current = meta.get(section)
        if not isinstance(current, Mapping):
            ops.append({"op": "add", "path": f"/metadata/{section}", "value": dict(values)})
            continue
        for key, value in values.items():
            ops.append({"op": "add", "path": f"/metadata/{section}/{_escape(key)}", "value": value})
    if decision.scheduling_group:
        ops.append(
            {
                "op": "add",
                "path": "/spec/schedulingGroup",
                "value": {"podGroupName": decision.scheduling_group},
            }
        )
    return ops


class PodAdmitter:
    """Decides pod patches from an :class:`ObjectCache` and a Karta resolver (no API calls)."""

    def __init__(
        self,
        cache: ObjectCache,
        resolve: Resolver | None = None,
        config: GangConfig | None = None,
        *,
        miss_wait: float = 1.0,
        memo: SpecMemo | None = None,
    ) -> None:
        self.cache = cache
        self.resolve = resolve or catalog_resolver()
        self.config = config or GangConfig()
        self.miss_wait = miss_wait
        self.memo = memo

    # -- the chain --------------------------------------------------------------------------
    def _owners(
        self, pod: Mapping[str, Any], namespace: str
    ) -> tuple[tuple[Mapping[str, Any], Karta] | None, str | None, float]:
        """The pod's top-most owner whose definition has gang instructions, with that
        definition (the engine's one owner rule: :func:`~workload_map.engine.owners.top_covered`);
        why the walk stopped at an owner the cache lacks (or None); time waited."""
        budget = self.miss_wait
        waited = 0.0
        get, resolve = self.cache.get, self.resolve

        def fetch(ref: OwnerRef) -> Mapping[str, Any] | None:
            nonlocal budget, waited
            key = (group_of(ref.api_version), ref.kind, namespace, ref.name)
            found = get(*key)
            if is_owner(ref, found):
                return found
            # not here yet, or a namesake of another uid: the owner may arrive in a moment
            found, spent = self.cache.wait_for(key, budget, uid=ref.uid)
            budget -= spent
            waited += spent
            return found

        def covered(owner: Mapping[str, Any]) -> bool:
            karta = resolve(str(owner.get("apiVersion") or ""), str(owner.get("kind") or ""))
            return karta is not None and karta.gang_scheduling is not None

        owner, missing = top_covered(pod, fetch, covered)
        if missing is not None:
            return (
                None,
                f"owner {missing.kind}/{missing.name} is not in the cache (waited {waited:.2f}s)",
                waited,
            )
        if owner is None:
            return None, None, waited
        karta = resolve(str(owner.get("apiVersion") or ""), str(owner.get("kind") or ""))
        assert karta is not None  # covered(owner) held
        return (owner, karta), None, waited

    def _namespace_labels(self, namespace: str) -> dict[str, str]:
        found = self.cache.get("", "Namespace", "", namespace)
        if found is None and self.miss_wait > 0:
            # a namespace created a moment ago: its opt-in label decides, so wait for it too
            found, _ = self.cache.wait_for(("", "Namespace", "", namespace), self.miss_wait)
        labels = (found or {}).get("metadata", {}).get("labels") if found else None
        return dict(labels) if isinstance(labels, Mapping) else {}

    # -- the decision -----------------------------------------------------------------------
    def decide(self, pod: Mapping[str, Any], namespace: str | None = None) -> PodDecision:
        """What ``pod`` (a CREATE request's object) must carry; never raises for bad input."""
        meta = pod.get("metadata") if isinstance(pod.get("metadata"), Mapping) else {}
        assert isinstance(meta, Mapping)
        ns = namespace or str(meta.get("namespace") or "default")
        if ns in self.config.excluded_namespaces:
            return PodDecision(reason=f"namespace {ns} is excluded")
        top, stopped, waited = self._owners(pod, ns)
        if stopped is not None:
            return PodDecision(
                reason=stopped, waited_seconds=waited, cache_miss="not in the cache" in stopped
            )
        if top is None:
            return PodDecision(
                reason="no owner of the pod has a definition with gang instructions",
                waited_seconds=waited,
            )
        workload, karta = top
        try:
            return self._decide_for(pod, ns, workload, karta, waited)
        except (EngineError, WlmapError) as err:
            return PodDecision(
                reason=f"the engine failed on {workload.get('kind')}: {err}",
                workload=workload_ref(workload),
                waited_seconds=waited,
            )

    def _decide_for(
        self,
        pod: Mapping[str, Any],
        namespace: str,
        workload: Mapping[str, Any],
        karta: Karta,
        waited: float,
    ) -> PodDecision:
        named = _named(pod, namespace)
        ref = workload_ref(workload)
        decision = PodDecision(reason="", workload=ref, waited_seconds=waited)
        the_plan = plan(
            karta,
            workload,
            [named],
            namespace_labels=self._namespace_labels(namespace),
            config=self.config,
            memo=self.memo,
            references=cache_resolver(self.cache),
            objects=False,  # which gang the pod joins, not what the gang's objects hold
        )
        # the plan's engine view holds the pod: its placement costs no second evaluation
        view = the_plan.view or Workload(karta, workload, pods=[named])
        placements = view.placements
        if not placements:
            decision.reason = f"the pod is not one of {ref.kind}/{ref.name}'s (its owner labels)"
            return decision
        placement = placements[0]
        if not the_plan.handled:
            decision.reason = the_plan.reason
            if self.config.workload_with_job and any(
                d.reason == "LeftAlone" for d in the_plan.decisions
            ):
                # the Job controller's pod (WorkloadWithJob): nothing of ours, the reason only
                _note_left_alone(decision, pod, the_plan.reason)
            return decision
        if placement.attributed:
            decision.component, decision.instance = placement.component, placement.instance
            decision.labels[LABEL_WORKLOAD] = label_value(ref.name)
            decision.labels[LABEL_COMPONENT] = label_value(placement.component or "")
            if placement.instance:
                decision.labels[LABEL_INSTANCE] = label_value(placement.instance)
        pod_name = str((named.get("metadata") or {}).get("name"))
        gang = next((g for g in the_plan.gangs if pod_name in g.pods), None)
        if gang is None:
            why = [d.message for d in the_plan.decisions] or ["the pod joins no gang"]
            decision.reason = "; ".join(why)
            return decision
        decision.group, decision.pod_group, decision.backend = gang.group, gang.name, gang.backend
        spec = pod.get("spec") if isinstance(pod.get("spec"), Mapping) else {}
        assert isinstance(spec, Mapping)
        labels = (pod.get("metadata") or {}).get("labels") or {}
        if gang.backend == NATIVE:
            if spec.get("schedulingGroup") is not None:
                decision.reason = "the pod already sets spec.schedulingGroup: left as is"
                stamped = foreign_group(workload, [pod])
                if stamped is not None:
                    # a Job the Job controller took over before we knew the cluster runs
                    # WorkloadWithJob: its group is not ours, the annotation says so
                    _note_left_alone(
                        decision,
                        pod,
                        f"left alone: the pod arrived with the Job controller's pod group {stamped} "
                        "(WorkloadWithJob)",
                    )
                return decision
            decision.scheduling_group = gang.name
        elif gang.backend == COSCHEDULING:
            if COSCHEDULING_LABEL not in labels:
                decision.labels[COSCHEDULING_LABEL] = label_value(gang.name)
        elif gang.backend == VOLCANO:
            decision.annotations[VOLCANO_GROUP_ANNOTATION] = gang.name
            task = gang.task_of_pod.get(pod_name)
            if task:
                decision.task = task
                decision.annotations[VOLCANO_TASK_ANNOTATION] = task
        decision.reason = (
            f"joins {gang.backend} gang {gang.name} (minimum {gang.min_count}: {gang.rule})"
        )
        return decision


def _note_left_alone(decision: PodDecision, pod: Mapping[str, Any], reason: str) -> None:
    """The decision annotation on a pod of a Job the Job controller groups (WorkloadWithJob):
    no object of ours says why nothing of ours applies, so the pod does."""
    group = ((pod.get("spec") or {}).get("schedulingGroup") or {}).get("podGroupName")
    note = {"leftAlone": reason, "podGroup": group, "gate": "WorkloadWithJob"}
    decision.reason = reason
    decision.annotations[ANNOTATION_DECISION] = decision_text(note)


def _named(pod: Mapping[str, Any], namespace: str) -> dict[str, Any]:
    """The pod as the engine sees it: a name (``generateName`` pods have none yet)."""
    out = {"apiVersion": "v1", "kind": "Pod", **pod}
    meta = dict(pod.get("metadata") or {})
    if not meta.get("name"):
        meta["name"] = f"{meta.get('generateName') or ''}{ADMITTING}"
    meta.setdefault("namespace", namespace)
    out["metadata"] = meta
    return out


def pod_decisions(
    karta: Karta,
    workload: Mapping[str, Any],
    pods: list[Mapping[str, Any]],
    *,
    config: GangConfig | None = None,
) -> list[dict[str, Any]]:
    """Offline (``describe``): per pod, what the webhook would set, shown as if opted in.

    The pods' owner chains are not walked: they are taken as the workload's. A workload
    annotated ``workload-map.run.ai/gang-scheduling: disabled`` stays opted out.
    """
    admitter = PodAdmitter(ObjectCache(), lambda _a, _k: karta, config, miss_wait=0.0)
    meta = dict(workload.get("metadata") or {})
    annotations = dict(meta.get("annotations") or {})
    if annotations.get(ANNOTATION_GANG) != "disabled":
        annotations[ANNOTATION_GANG] = "enabled"
    meta["annotations"] = annotations
    shown = {**workload, "metadata": meta}
    out = []
    for pod in pods:
        pod_meta = pod.get("metadata") or {}
        ns = str(pod_meta.get("namespace") or meta.get("namespace") or "default")
        try:
            decision = admitter._decide_for(pod, ns, shown, karta, 0.0)
        except (EngineError, WlmapError) as err:
            decision = PodDecision(reason=f"the engine failed: {err}")
        name = pod_meta.get("name") or pod_meta.get("generateName")
        out.append({"pod": name, **decision.to_dict()})
    return out
