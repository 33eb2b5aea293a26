"""The gang room's watch side, on every replica (``gangs-watch``): the caches the pod webhook
reads (Kartas, namespaces, pods, PriorityClasses, the intermediate owners and every workload
kind a Karta with gang instructions covers), the webhook route, the room's metrics in the
process's registry, and the ``GenericWorkload`` probe.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from workload_map.engine.references import referenced_kinds
from workload_map.errors import WlmapError
from workload_map.gangs.cache import trim_owner, trim_workload
from workload_map.gangs.definitions import has_gangs
from workload_map.gangs.jobs import probe_workload_with_job
from workload_map.gangs.probe import probe_composite, probe_generic_workload, probe_topology
from workload_map.gangs.runtime import (
    INTERMEDIATES,
    PRIORITY_CLASSES,
    SCHEDULING_KINDS,
    TRIM_PRIORITY_CLASS,
    GangRuntime,
)
from workload_map.gangs.topology import KAI_TOPOLOGY_API
from workload_map.gangs.webhook import WEBHOOK_PATH
from workload_map.kube.discovery import discover
from workload_map.kube.trim import trim_pod

if TYPE_CHECKING:
    from workload_map.operator.controllers import OperatorConfig, OperatorContext

__all__ = ["GangWatcher"]

log = logging.getLogger("workload_map.gangs")


def _whole(obj: dict[str, Any]) -> dict[str, Any]:
    """A referenced object is kept whole: definitions read any of its fields."""
    return obj


class GangWatcher:
    """Every replica: caches, the pod webhook, the GenericWorkload probe."""

    name = "gangs-watch"
    needs_leader = False

    def __init__(self, runtime: GangRuntime, cfg: OperatorConfig) -> None:
        self.runtime = runtime
        self.cfg = cfg
        self.ctx: OperatorContext | None = None
        self._stop = threading.Event()
        #: the Karta generation the watched kinds last followed (None: not yet)
        self._kinds_for: int | None = None
        self._kinds_wanted = threading.Event()
        self._ready_once = False

    def start(self, ctx: OperatorContext) -> None:
        self.ctx = ctx
        rt = self.runtime
        ctx.add_webhook(WEBHOOK_PATH, rt.webhook.admit)
        rt.metrics.register(ctx.registry)
        kartas = ctx.informer(
            "/apis/run.ai/v1alpha1/kartas", kind="Karta", api_version="run.ai/v1alpha1"
        )
        kartas.add_handler(rt.on_karta)
        namespaces = ctx.informer(
            "/api/v1/namespaces", transform=trim_owner, kind="Namespace", api_version="v1"
        )
        namespaces.add_handler(rt.on_object)
        pods = ctx.informer("/api/v1/pods", transform=trim_pod, kind="Pod", api_version="v1")
        pods.add_handler(rt.on_object)
        classes = ctx.informer(
            PRIORITY_CLASSES,
            transform=TRIM_PRIORITY_CLASS,
            kind="PriorityClass",
            api_version="scheduling.k8s.io/v1",
        )
        classes.add_handler(rt.on_priority_class)
        # before any workload is cached: a Job the Job controller takes over must never see
        # a plan made without knowing it (our objects would be written, then removed)
        self._probe_workload_with_job()
        # workload kinds first: a kind that is both (a batch Job) is then listed once with the
        # workload's fields, not listed as a link and re-listed wider
        self.refresh_kinds()
        for group, version, kind in INTERMEDIATES:
            plural = kind.lower() + "s"
            api_version = f"{group}/{version}"
            path = f"/apis/{api_version}/{plural}"
            if path in rt.watched:
                continue  # watched as a workload kind already (one handler per path)
            rt.watched.add(path)
            inf = ctx.informer(path, transform=trim_owner, kind=kind, api_version=api_version)
            inf.add_handler(rt.on_object)
        ctx.add_readiness("gangs-caches", self.synced)
        ctx.spawn(self._probe, "gangs-probe")
        ctx.spawn(self._rediscover, "gangs-discovery")

    def synced(self) -> bool:
        # once every replica check passes, the operator collects and freezes what the caches
        # hold (operator.gcpauses.settle_when), so 100k cached pods are not walked again
        assert self.ctx is not None
        if self._ready_once:
            return True
        if not all(i.synced for i in self.ctx.informers.all()):
            return False
        # The kinds were chosen at start, before the Karta watch had listed anything: not ready
        # until they follow every Karta the first list brought (else the pods of a kind known
        # only through a cluster Karta, created right after start, would miss the webhook).
        # Only the first readiness waits: a Karta added later must not take a serving replica
        # out of the webhook's endpoints.
        if self._kinds_for != self.runtime.kartas.generation:
            self._kinds_wanted.set()
            return False
        self._ready_once = True
        return True

    def refresh_kinds(self) -> None:
        """Watch every served workload kind a Karta with gang instructions covers."""
        assert self.ctx is not None
        ctx, rt = self.ctx, self.runtime
        generation = rt.kartas.generation
        try:
            resources = discover(ctx.api.transport())
        except WlmapError as err:
            log.warning("discovery failed: %s", err)
            return
        rt.resources = resources
        served = {
            (r.api_version, r.kind): r for r in resources if "watch" in r.verbs or not r.verbs
        }
        for api, kind in SCHEDULING_KINDS:
            res = served.get((api, kind))
            if res is not None:
                rt.scheduling_paths[(api, kind)] = res.path()
        # KAI's Topology objects, where served: the aliases of placement levels (gangs.topology)
        kai = served.get((KAI_TOPOLOGY_API, "Topology"))
        if kai is not None and kai.path() not in rt.watched:
            rt.watched.add(kai.path())
            topologies = ctx.informer(kai.path(), kind="Topology", api_version=KAI_TOPOLOGY_API)
            topologies.add_handler(rt.on_kai_topology)
        wanted: dict[str, tuple[str, str, Callable[[dict[str, Any]], dict[str, Any]]]] = {}
        for karta in rt.kartas.kartas():
            gvk = karta.root_gvk
            if gvk is None or not has_gangs(karta):
                continue
            res = served.get((gvk.api_version, gvk.kind))
            if res is not None and (gvk.group, gvk.kind) != ("", "Pod"):
                # bare pods as workloads come from the pod informer (a workload trim there
                # would keep 100k whole pods)
                wanted[res.path()] = (res.api_version, res.kind, trim_workload)
            for comp in karta.components():
                ck = comp.kind
                if ck is None or (ck.group, ck.kind) in (("", "Pod"), (gvk.group, gvk.kind)):
                    continue
                link = served.get((ck.api_version, ck.kind))
                if link is not None and link.path() not in wanted:
                    wanted[link.path()] = (link.api_version, link.kind, trim_owner)
            # the objects its references read (a TrainJob's runtime), whole: their templates
            # decide the gangs; a kind served at another version is watched at that one
            for ref_kind in referenced_kinds(karta):
                rt.referenced.add((ref_kind.group, ref_kind.kind))
                found = served.get((ref_kind.api_version, ref_kind.kind)) or next(
                    (
                        r
                        for r in resources
                        if (r.group, r.kind) == (ref_kind.group, ref_kind.kind)
                        and ("watch" in r.verbs or not r.verbs)
                    ),
                    None,
                )
                if found is not None and found.path() not in wanted:
                    wanted[found.path()] = (found.api_version, found.kind, _whole)
        for path, (api_version, kind, transform) in sorted(wanted.items()):
            if path in rt.watched:
                continue
            rt.watched.add(path)
            inf = ctx.informer(path, transform=transform, kind=kind, api_version=api_version)
            inf.add_handler(rt.on_object)
        self._kinds_for = generation

    def _rediscover(self) -> None:
        assert self.ctx is not None
        while not self.ctx.stopping.is_set() and not self._stop.is_set():
            # every 10 s, or at once when the first readiness check waits for the kinds
            for _ in range(40):
                if self._kinds_wanted.wait(0.25) or self.ctx.stopping.is_set():
                    break
            self._kinds_wanted.clear()
            if self.ctx.stopping.is_set() or self._stop.is_set():
                return
            self.refresh_kinds()

    def _probe(self) -> None:
        assert self.ctx is not None
        namespace = self.cfg.args.gang_probe_namespace or self.cfg.namespace or "default"
        state, detail = probe_generic_workload(self.ctx.api, namespace)
        self.runtime.set_generic_workload(state, detail)
        level = logging.INFO if state == "works" else logging.WARNING
        log.log(level, "GenericWorkload: %s (%s)", state, detail)
        state, detail = probe_topology(self.ctx.api, namespace)
        self.runtime.set_topology(state, detail)
        log.info("TopologyAwareWorkloadScheduling (API server): %s (%s)", state, detail)
        state, detail = probe_composite(self.ctx.api, namespace)
        self.runtime.set_composite(state, detail)
        log.info("CompositePodGroup (API server): %s (%s)", state, detail)

    def _probe_workload_with_job(self) -> None:
        assert self.ctx is not None
        if getattr(self.cfg.args, "gang_workload_with_job", "auto") != "auto":
            return
        namespace = self.cfg.args.gang_probe_namespace or self.cfg.namespace or "default"
        state, detail = probe_workload_with_job(self.ctx.api, namespace)
        if state == "on":
            self.runtime.learn_workload_with_job(detail)
        level = logging.WARNING if state == "error" else logging.INFO
        log.log(level, "WorkloadWithJob: %s (%s)", state, detail)

    def stop(self) -> None:
        self._stop.set()
