"""The leader's gang controller: every covered workload's scheduling objects kept in step.

It plans each workload with :func:`~workload_map.gangs.planner.plan`, applies the difference with
:func:`~workload_map.gangs.reconcile.reconcile`, records every decision as an event on the
workload and counts what it did; the caches, the webhook and the process plumbing it shares
with every replica are in :mod:`workload_map.gangs.runtime` and :mod:`workload_map.gangs.watcher`.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from workload_map.engine.evaluations import Evaluations
from workload_map.engine.owners import OwnerRef, has_covered_owner, top_covered
from workload_map.errors import WlmapError
from workload_map.gangs.cache import cache_resolver, group_of, key_of
from workload_map.gangs.config import LABEL_MANAGED_BY, LABEL_WORKLOAD_UID, MANAGED_BY
from workload_map.gangs.definitions import has_gangs
from workload_map.gangs.jobs import foreign_group, is_job_controllers
from workload_map.gangs.objects import template_names
from workload_map.gangs.planner import EVALUATIONS_CONSUMER, plan
from workload_map.gangs.plans import Decision, Plan, workload_ref
from workload_map.gangs.reconcile import Actions, object_path, reconcile
from workload_map.gangs.runtime import FIELD_MANAGER, POD_DEBOUNCE, SCHEDULING_KINDS, GangRuntime
from workload_map.kube.errors import ApiError, NotFound
from workload_map.kube.workqueue import WorkQueue

if TYPE_CHECKING:
    from workload_map.operator.controllers import OperatorConfig, OperatorContext

__all__ = ["GangController"]

log = logging.getLogger("workload_map.gangs")


class GangController:
    """The leader: every covered workload's scheduling objects kept in step."""

    name = "gangs"
    needs_leader = True

    def __init__(self, runtime: GangRuntime, cfg: OperatorConfig) -> None:
        self.runtime = runtime
        self.cfg = cfg
        self.mode = str(cfg.args.gang_missed_member_mode)
        self.resync = float(cfg.args.gang_resync_period)
        self.ctx: OperatorContext | None = None
        self.queue: WorkQueue | None = None
        self._lock = threading.Lock()
        self._pod_owner: dict[tuple[str, str], str] = {}  # (ns, pod) → workload key
        self._pods_of: dict[str, set[tuple[str, str]]] = {}
        self._by_uid: dict[str, str] = {}  # workload uid → key
        self._ours: dict[str, dict[tuple[str, str, str], dict[str, Any]]] = {}  # uid → objects
        self._foreign: dict[
            tuple[str, str, str, str], dict[str, Any]
        ] = {}  # controllerRef → Workload
        self._emitted: dict[str, set[tuple[str, str]]] = {}
        #: pods whose owner chain broke at an object not cached yet, by that object's key
        self._waiting: dict[tuple[str, str, str, str], set[tuple[str, str]]] = {}
        self._broken_at: dict[tuple[str, str], tuple[str, str, str, str]] = {}
        self._soon: set[str] = set()  # keys with a debounced reconcile pending
        #: per workload key, the inputs of its last reconcile that wrote nothing
        self._settled: dict[str, tuple[Any, ...]] = {}

    # -- keys -----------------------------------------------------------------------------
    @staticmethod
    def _key(obj: Mapping[str, Any]) -> str:
        g, k, ns, name = key_of(obj)
        return f"{g}|{k}|{ns}|{name}"

    def _read(self, ref: OwnerRef) -> Mapping[str, Any] | None:
        """The owner ``ref`` names, from the cache without waiting (an owner is in the
        namespace of the object whose reference names it: ``ref.namespace``)."""
        return self.runtime.cache.get(
            group_of(ref.api_version), ref.kind, ref.namespace or "", ref.name
        )

    def _owner_has_gangs(self, owner: Mapping[str, Any]) -> bool:
        return self.runtime.kartas.covers(str(owner.get("apiVersion")), str(owner.get("kind")))

    def workload_of(
        self, pod: Mapping[str, Any]
    ) -> tuple[str | None, tuple[str, str, str, str] | None]:
        """The key (``group|kind|namespace|name``) of the top-most owner with gangs the cache
        holds up the pod's controller chain (the engine's one owner rule,
        :func:`~workload_map.engine.owners.top_covered`), and the key of the owner at which
        the chain broke (not cached yet), if it did."""
        owner, missing = top_covered(pod, self._read, self._owner_has_gangs)
        found = self._key(owner) if owner is not None else None
        if missing is None:
            return found, None
        ns = str((pod.get("metadata") or {}).get("namespace") or "")
        return found, (group_of(missing.api_version), missing.kind, ns, missing.name)

    def _link(self, pod: Mapping[str, Any], deleted: bool = False) -> tuple[str | None, str | None]:
        """Index one pod under its workload; (old workload key, new workload key)."""
        meta = pod.get("metadata") or {}
        pod_key = (str(meta.get("namespace")), str(meta.get("name")))
        new, broken = (None, None) if deleted else self.workload_of(pod)
        with self._lock:
            old = self._pod_owner.pop(pod_key, None)
            if old:
                self._pods_of.get(old, set()).discard(pod_key)
            was = self._broken_at.pop(pod_key, None)
            if was is not None:
                self._waiting.get(was, set()).discard(pod_key)
            if new:
                self._pod_owner[pod_key] = new
                self._pods_of.setdefault(new, set()).add(pod_key)
            if broken is not None:
                self._waiting.setdefault(broken, set()).add(pod_key)
                self._broken_at[pod_key] = broken
        return old, new

    # -- events ---------------------------------------------------------------------------
    def on_event(self, event: str, obj: dict[str, Any]) -> None:
        kind = obj.get("kind")
        meta = obj.get("metadata") or {}
        if kind == "Pod":
            old, new = self._link(obj, deleted=event == "DELETED")
            for key in {old, new} - {None}:
                self._enqueue_soon(str(key))
            if event != "DELETED":
                self._relink(obj)  # a leader pod owns its group's StatefulSet
            return
        if kind in ("Karta", "PriorityClass", "SchedulingProbe"):
            self.enqueue_all()
            return
        api_group = str(obj.get("apiVersion") or "").rpartition("/")[0]
        if (api_group, kind) in self.runtime.referenced:
            # an object definitions reference (a TrainJob's runtime): every workload replans,
            # the reference generation in each fingerprint telling it something changed
            self.enqueue_all()
            return
        if kind == "Namespace":
            name = meta.get("name")
            for key in list(self._by_uid.values()):
                if key.split("|")[2] == name:
                    self._enqueue(key)
            return
        api = str(obj.get("apiVersion"))
        if (api, kind) in SCHEDULING_KINDS:
            self._on_scheduling_object(event, obj)
            return
        karta = self.runtime.kartas.resolve(api, str(kind))
        if has_gangs(karta):
            key = self._key(obj)
            uid = meta.get("uid")
            if isinstance(uid, str):
                with self._lock:
                    if event == "DELETED":
                        self._by_uid.pop(uid, None)
                    else:
                        self._by_uid[uid] = key
            self._enqueue(key)
        if event != "DELETED":
            self._relink(obj)  # pods whose chain broke at this object

    def _relink(self, obj: Mapping[str, Any]) -> None:
        """Pods seen before this owner (their chain broke at it): link them now."""
        with self._lock:
            waiting = self._waiting.pop(key_of(obj), set())
        for namespace, name in waiting:
            pod = self.runtime.cache.get("", "Pod", namespace, name)
            if pod is None:
                continue
            _, new = self._link(pod)
            if new:
                self._enqueue(new)

    def _on_scheduling_object(self, event: str, obj: dict[str, Any]) -> None:
        meta = obj.get("metadata") or {}
        labels = meta.get("labels") or {}
        ours = labels.get(LABEL_MANAGED_BY) == MANAGED_BY
        ident = (str(obj.get("apiVersion")), str(obj.get("kind")), str(meta.get("name")))
        if ours:
            uid = str(labels.get(LABEL_WORKLOAD_UID) or "")
            with self._lock:
                objects = self._ours.setdefault(uid, {})
                if event == "DELETED":
                    objects.pop(ident, None)
                else:
                    objects[ident] = obj
                key = self._by_uid.get(uid)
            if key:
                self._enqueue(key)
            return
        if obj.get("kind") == "Workload":
            if event != "DELETED" and is_job_controllers(obj):
                self._learn(f"the Job controller made Workload {meta.get('name')}")
            ref = (obj.get("spec") or {}).get("controllerRef") or {}
            fkey = (
                str(meta.get("namespace")),
                str(ref.get("apiGroup") or ""),
                str(ref.get("kind")),
                str(ref.get("name")),
            )
            with self._lock:
                if event == "DELETED":
                    self._foreign.pop(fkey, None)
                else:
                    self._foreign[fkey] = obj
            self._enqueue(f"{fkey[1]}|{fkey[2]}|{fkey[0]}|{fkey[3]}")

    def _learn(self, detail: str) -> None:
        """The Job controller runs ``WorkloadWithJob``: replan every workload, so the Jobs it
        takes over are left alone (``--gang-workload-with-job=auto`` only)."""
        if str(getattr(self.cfg.args, "gang_workload_with_job", "auto")) != "auto":
            return
        if self.runtime.learn_workload_with_job(detail):
            log.info("gangs: WorkloadWithJob on (%s)", detail)
            self.enqueue_all()

    def _enqueue(self, key: str) -> None:
        if self.queue is not None:
            self.queue.add(key)

    def _enqueue_soon(self, key: str) -> None:
        """Pod events come in bursts (a JobSet's pods at once): one reconcile per burst."""
        if self.queue is None:
            return
        with self._lock:
            if key in self._soon:
                return
            self._soon.add(key)
        self.queue.add_after(key, POD_DEBOUNCE)

    def enqueue_all(self) -> None:
        with self._lock:
            keys = list(self._by_uid.values())
        for key in keys:
            self._enqueue(key)

    # -- start ----------------------------------------------------------------------------
    def start(self, ctx: OperatorContext) -> None:
        self.ctx = ctx
        self.queue = WorkQueue("gangs", self.reconcile_key, workers=int(self.cfg.args.gang_workers))
        self.queue.start()
        rt = self.runtime
        shared = getattr(ctx, "evaluations", None)  # the operator's (operator/main.py)
        if isinstance(shared, Evaluations):
            rt.evaluations = shared
        if rt.evaluations is not None:
            # the leader plans every workload whose definition has gangs: an evaluation the
            # inventory made of one is kept until the plan takes it
            rt.evaluations.join(EVALUATIONS_CONSUMER, has_gangs)
        rt.listeners.append(self.on_event)
        for obj in list(rt.cache):  # what the watches already hold
            self.on_event("ADDED", obj)
        for (api, kind), path in sorted(rt.scheduling_paths.items()):
            inf = ctx.informer(path, kind=kind, api_version=api)
            inf.add_handler(self._on_scheduling_object)
        ctx.spawn(self._resync_loop, "gangs-resync")

    def _resync_loop(self) -> None:
        assert self.ctx is not None
        while not self.ctx.stopping.wait(self.resync):
            self.enqueue_all()

    def stop(self) -> None:
        if self.queue is not None:
            self.queue.stop()
        if self.on_event in self.runtime.listeners:
            self.runtime.listeners.remove(self.on_event)

    # -- reconcile ------------------------------------------------------------------------
    def inputs(self, key: str) -> tuple[Any, ...] | None:
        """(karta, workload, pods, namespace labels, existing, foreign) for one key."""
        rt = self.runtime
        cache = rt.cache
        group, kind, ns, name = key.split("|", 3)
        workload = cache.get(group, kind, ns, name)
        if workload is None:
            return None
        karta = rt.kartas.with_gangs(str(workload.get("apiVersion")), kind)
        uid = str((workload.get("metadata") or {}).get("uid") or "")
        if karta is None or self.nested(workload):
            with self._lock:
                held = list(self._ours.get(uid, {}).values())
            if not held:
                return None
            # its definition lost its gang instructions (or went): what we made goes
            karta = None
        with self._lock:
            pod_keys = list(self._pods_of.get(key, ()))
            existing = list(self._ours.get(uid, {}).values())
            foreign = self._foreign.get((ns, group, kind, name))
        pods = cache.get_many("", "Pod", pod_keys)
        namespace = cache.get("", "Namespace", "", ns)
        labels = ((namespace or {}).get("metadata") or {}).get("labels") or {}
        return karta, workload, pods, labels, existing, foreign

    def nested(self, workload: Mapping[str, Any]) -> bool:
        """Whether an owner with gangs is up this workload's controller chain (a JobSet's
        Jobs, a RayJob's RayCluster, also when that owner is not cached yet): the top-most one's
        gangs count its pods (:meth:`workload_of`), so it gets none of its own."""
        meta = workload.get("metadata")
        if type(meta) is dict and not meta.get("ownerReferences"):
            return False  # no reference, no controller: asked per workload of every resync
        return has_covered_owner(workload, self._read, self.runtime.kartas.covers)

    @staticmethod
    def _fingerprint(
        found: tuple[Any, ...], generation: object, priorities: object = ()
    ) -> tuple[Any, ...]:
        karta, workload, pods, labels, existing, foreign = found
        # a periodic resync builds this per workload and mostly stops at it: no call per
        # object (comprehensions, reads inline; every cached object has metadata) and no sort
        # where a dict compares the same regardless of order
        return (
            id(karta),
            generation,
            priorities,
            _rv(workload),
            # by name alone: a workload's pods are in its namespace (owners are namespace-local)
            {p["metadata"].get("name"): p["metadata"].get("resourceVersion") for p in pods},
            dict(labels),
            sorted(
                [
                    (
                        str(o["metadata"].get("name")),
                        str(o["metadata"].get("resourceVersion") or ""),
                    )
                    for o in existing
                ]
            ),
            _rv(foreign),
        )

    def reconcile_key(self, key: str) -> float | None:
        if key in self._soon:  # one added meanwhile has its own reconcile coming to drop it
            with self._lock:
                self._soon.discard(key)
        found = self.inputs(key)
        if found is None:
            return None
        config = self.runtime.config
        fingerprint = self._fingerprint(
            found,
            (self.runtime.kartas.generation, self.runtime.references_generation),
            # every setting the cluster feeds (classes, probes, KAI Topologies) replans
            config,
        )
        if self._settled.get(key) == fingerprint:
            return None  # nothing changed since a reconcile that had nothing to do
        karta, workload, pods, labels, existing, foreign = found
        # in the inventory's order (by uid), so that a plan reads the evaluation the exporter
        # made of the same pods (engine.evaluations matches them in order); sorted only here,
        # past the fingerprint (which does not depend on the order), as a resync mostly stops above
        pods.sort(key=_pod_uid)
        name = str((workload.get("metadata") or {}).get("name"))
        rt = self.runtime
        if karta is None:
            gone = Plan(
                workload=workload_ref(workload), handled=False, reason="no gang instructions"
            )
            gone.decisions.append(
                Decision(
                    "GangsRemoved", "the workload's definition has no gang instructions any more"
                )
            )
            self.execute(workload, reconcile(gone, [], existing))
            return None
        templates = next(
            (
                template_names(o)
                for o in existing
                if o.get("kind") == "Workload"
                and not (o.get("metadata") or {}).get("deletionTimestamp")
            ),
            None,
        )
        the_plan = plan(
            karta,
            workload,
            pods,
            namespace_labels=labels,
            config=rt.config,
            existing_templates=templates,
            memo=rt.memo,
            references=cache_resolver(rt.cache),
            evaluations=rt.evaluations,
        )
        stamped = foreign_group(workload, pods) if foreign is None and the_plan.handled else None
        if stamped is not None:
            # the Job controller took the Job over (WorkloadWithJob) before we knew it runs
            # the gate: its pods joined its group, ours can never be joined
            self._learn(f"the Job controller stamped pod group {stamped} on Job {name}'s pods")
            the_plan = Plan(
                workload=workload_ref(workload),
                handled=False,
                reason="left alone: the Job controller's pod group",
            )
            the_plan.decisions.append(
                Decision(
                    "LeftAlone",
                    f"left alone: its pods arrived with the Job controller's pod group {stamped} "
                    "(WorkloadWithJob): ours removed, its gang is spec.scheduling's",
                )
            )
            pods = []  # none of them joins ours: nothing of ours is kept for them
        actions = reconcile(the_plan, pods, existing, mode=self.mode, foreign_workload=foreign)
        self._drop_unserved(actions)
        rt.metrics.reconciled()
        try:
            self.execute(workload, actions)
        except WlmapError as err:
            rt.metrics.reconcile_failed()
            log.warning("gangs: reconcile of %s failed: %s", key, err)
            raise
        if actions.writes == 0 and not actions.waiting:
            self._settled[key] = fingerprint
        else:
            self._settled.pop(key, None)
        return None

    def _drop_unserved(self, actions: Actions) -> None:
        """Objects of an API the cluster does not serve are not written (one event says so)."""
        if not self.runtime.resources:
            return
        served = {api for api, _ in self.runtime.scheduling_paths}
        dropped = sorted(
            {str(o["apiVersion"]) for o in actions.create if o["apiVersion"] not in served}
        )
        if not dropped:
            return
        actions.create = [o for o in actions.create if o["apiVersion"] in served]
        actions.patch = [(t, p) for t, p in actions.patch if t["apiVersion"] in served]
        actions.decisions.append(
            Decision(
                "SchedulingApiAbsent",
                f"{', '.join(dropped)} is not served by this cluster (for the native backend: "
                "GenericWorkload off): no gang objects written",
                warning=True,
            )
        )

    def execute(self, workload: dict[str, Any], actions: Actions) -> None:
        assert self.ctx is not None
        ctx, rt = self.ctx, self.runtime
        done: list[Decision] = []
        for obj in actions.create:
            try:
                ctx.api.request(
                    "POST",
                    object_path(obj, collection=True),
                    obj,
                    query=[("fieldManager", FIELD_MANAGER)],
                )
            except ApiError as err:
                if err.status != 409:
                    raise
                continue  # our informer will show it (or a NameTaken decision next round)
            done.append(
                Decision(
                    "Created", f"created {obj['kind']} {obj['metadata']['name']} ({_minimum(obj)})"
                )
            )
        for target, patch in actions.patch:
            ctx.api.merge_patch(object_path(target), patch, manager=FIELD_MANAGER)
            if "spec" in patch:
                done.append(
                    Decision(
                        "Updated",
                        f"updated {target['kind']} {target['metadata']['name']}: {patch['spec']}",
                    )
                )
        for obj in actions.delete:
            try:
                ctx.api.request("DELETE", object_path(obj))
            except NotFound:
                pass
            done.append(Decision("Deleted", f"deleted {obj['kind']} {obj['metadata']['name']}"))
        for pod in actions.delete_pods:
            meta = pod["metadata"]
            body = {
                "apiVersion": "v1",
                "kind": "DeleteOptions",
                "preconditions": {"uid": meta.get("uid")},
            }
            try:
                ctx.api.request(
                    "DELETE", f"/api/v1/namespaces/{meta['namespace']}/pods/{meta['name']}", body
                )
            except NotFound:
                pass
        rt.metrics.executed(
            actions.writes,
            sum(len(v) for v in actions.missed.values()),
            len(actions.delete_pods),
        )
        self._events(workload, [*actions.decisions, *done])

    def _events(self, workload: dict[str, Any], decisions: list[Decision]) -> None:
        """One event per new decision (the same decision is not repeated every resync)."""
        assert self.ctx is not None
        uid = str((workload.get("metadata") or {}).get("uid") or "")
        current = {(d.reason, d.message) for d in decisions}
        with self._lock:
            before = self._emitted.get(uid, set())
            self._emitted[uid] = {
                c for c in current if c[0] not in ("Created", "Updated", "Deleted")
            }
        for d in decisions:
            if (d.reason, d.message) in before:
                continue
            emit = self.ctx.events.warning if d.warning else self.ctx.events.normal
            emit(workload, d.reason, "GangScheduling", d.message)


def _rv(obj: Mapping[str, Any] | None) -> str:
    return str(((obj or {}).get("metadata") or {}).get("resourceVersion") or "")


def _pod_uid(pod: Mapping[str, Any]) -> str:
    return str(pod["metadata"].get("uid") or "")  # every cached pod has metadata


def _minimum(obj: Mapping[str, Any]) -> str:
    spec = obj.get("spec") or {}
    if "minMember" in spec:
        return f"minMember {spec['minMember']}"
    gang = (spec.get("schedulingPolicy") or {}).get("gang")
    if gang:
        return f"minCount {gang.get('minCount')}"
    templates = spec.get("podGroupTemplates") or []
    return f"{len(templates)} pod-group template(s)"
