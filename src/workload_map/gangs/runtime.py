"""What the watch side and the leader side of one operator process share: :class:`GangRuntime`.

One per process (``gangs.operator`` makes it for the first of its two controllers): the caches
the pod webhook and the controller read, the Karta index, the PriorityClass values, the spec
memo, the pod webhook's adapter and the room's metrics. Nothing here watches or writes: the
watcher (``gangs.watcher``) feeds it, the controller (``gangs.controller``) acts on it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from workload_map.engine.evaluations import Evaluations
from workload_map.gangs.admission import PodAdmitter
from workload_map.gangs.cache import ObjectCache
from workload_map.gangs.config import GangConfig
from workload_map.gangs.definitions import KartaIndex
from workload_map.gangs.metrics import GangMetrics
from workload_map.gangs.planner import SpecMemo
from workload_map.gangs.plans import COMPOSITE_API, COSCHEDULING_API, NATIVE_API, VOLCANO_API
from workload_map.gangs.topology import kai_levels
from workload_map.gangs.webhook import PodWebhook
from workload_map.kube.trim import ALL, Trim

__all__ = [
    "FIELD_MANAGER",
    "INTERMEDIATES",
    "POD_DEBOUNCE",
    "PRIORITY_CLASSES",
    "SCHEDULING_KINDS",
    "TRIM_PRIORITY_CLASS",
    "GangRuntime",
]

FIELD_MANAGER = "workload-map-gangs"
#: seconds a pod event waits for the rest of its burst before its workload is reconciled
POD_DEBOUNCE = 0.2
#: the owners between a pod and its workload that every replica caches (owners only)
INTERMEDIATES = (
    ("apps", "v1", "ReplicaSet"),
    ("batch", "v1", "Job"),
    ("apps", "v1", "StatefulSet"),
)
SCHEDULING_KINDS = (
    (NATIVE_API, "Workload"),
    (NATIVE_API, "PodGroup"),
    (COMPOSITE_API, "CompositePodGroup"),
    (COSCHEDULING_API, "PodGroup"),
    (VOLCANO_API, "PodGroup"),
)
PRIORITY_CLASSES = "/apis/scheduling.k8s.io/v1/priorityclasses"
#: a PriorityClass is read for its value and whether it is the cluster's default (cluster-scoped)
TRIM_PRIORITY_CLASS = Trim(
    {
        "apiVersion": ALL,
        "kind": ALL,
        "metadata": {"name": ALL},
        "value": ALL,
        "globalDefault": ALL,
    },
    consumers=("gangs",),
)


class GangRuntime:
    """What the watch side and the leader side of one process share."""

    def __init__(
        self,
        config: GangConfig,
        *,
        miss_wait: float = 1.0,
        evaluations: Evaluations | None = None,
    ) -> None:
        self.config = config
        self.cache = ObjectCache()
        #: (group, kind) of the objects gang definitions reference, and a counter of their
        #: changes (part of each plan's fingerprint: a runtime edited replans its TrainJobs)
        self.referenced: set[tuple[str, str]] = set()
        self.references_generation = 0
        self.kartas = KartaIndex()
        # the webhook and the leader plan the same workloads: one memo of spec-only results
        self.memo = SpecMemo()
        #: the process's shared evaluations (the operator's, also the inventory's), if any:
        #: the leader's plans read what the exporter evaluated of the same objects
        self.evaluations: Evaluations | None = evaluations
        self.admitter = PodAdmitter(
            self.cache, self.kartas.resolve, config, miss_wait=miss_wait, memo=self.memo
        )
        self.metrics = GangMetrics(lambda: len(self._classes))
        #: the pod webhook's admission handler (``webhook.admit``), served on every replica
        self.webhook = PodWebhook(self.admitter, self.metrics, self.native_served)
        self.generic_workload = ("unknown", "not probed yet")
        #: how we know the cluster runs WorkloadWithJob ("": not known to)
        self.workload_with_job = "--gang-workload-with-job=on" if config.workload_with_job else ""
        self.topology = ("unknown", "not probed yet")
        self.composite = ("unknown", "not probed yet")
        #: KAI Topology objects seen by their watch, by name
        self._topologies: dict[str, dict[str, Any]] = {}
        self.listeners: list[Callable[[str, dict[str, Any]], None]] = []
        self.watched: set[str] = set()
        self.scheduling_paths: dict[tuple[str, str], str] = {}
        self.resources: list[Any] = []
        #: PriorityClass values seen by the watch (name -> value), beyond the configured ones
        self._configured = dict(config.priority_values)
        self._classes: dict[str, int] = {}
        self._defaults: set[str] = set()
        self._classes_lock = threading.Lock()

    def set_generic_workload(self, state: str, detail: str) -> None:
        """The GenericWorkload probe's answer (``gangs.probe``), kept and exported."""
        self.generic_workload = (state, detail)
        self.metrics.set_generic_workload(state)

    def learn_workload_with_job(self, detail: str) -> bool:
        """The cluster runs ``WorkloadWithJob`` (``detail`` says how we know): Jobs the Job
        controller takes over are left alone from now on (gangs/jobs.py). True if new."""
        with self._classes_lock:
            if self.config.workload_with_job:
                return False
            self.config = replace(self.config, workload_with_job=True)
            self.admitter.config = self.config
        self.workload_with_job = detail
        return True

    def set_topology(self, state: str, detail: str) -> None:
        """The TopologyAwareWorkloadScheduling probe's answer (``gangs.probe``): required
        placement levels are written as constraints only where it works; a change replans
        every workload."""
        self.topology = (state, detail)
        self._set_probed("native_topology", state == "works")

    def set_composite(self, state: str, detail: str) -> None:
        """The CompositePodGroup probe's answer (``gangs.probe``): gangs with subgroups are
        written as composite groups only where it works; a change replans every workload."""
        self.composite = (state, detail)
        self._set_probed("composite_groups", state == "works")

    def on_kai_topology(self, event: str, obj: dict[str, Any]) -> None:
        """Keep KAI ``Topology`` levels (``GangConfig.kai_topologies``: the aliases a required
        placement level may use); a change replans every workload."""
        name = (obj.get("metadata") or {}).get("name")
        if not isinstance(name, str):
            return
        with self._classes_lock:
            if event == "DELETED":
                self._topologies.pop(name, None)
            else:
                self._topologies[name] = obj
            levels = kai_levels(list(self._topologies.values()))
            if levels == self.config.kai_topologies:
                return
            self.config = replace(self.config, kai_topologies=levels)
            self.admitter.config = self.config
        for listener in list(self.listeners):
            listener("MODIFIED", {"kind": "SchedulingProbe", "metadata": {"name": name}})

    def _set_probed(self, name: str, value: bool) -> None:
        with self._classes_lock:
            if getattr(self.config, name) == value:
                return
            if name == "native_topology":
                self.config = replace(self.config, native_topology=value)
            else:
                self.config = replace(self.config, composite_groups=value)
            self.admitter.config = self.config
        for listener in list(self.listeners):
            listener("MODIFIED", {"kind": "SchedulingProbe", "metadata": {"name": name}})

    def native_served(self) -> bool:
        """Whether ``scheduling.k8s.io/v1beta1`` PodGroups are served (unknown: assumed)."""
        return not self.resources or (NATIVE_API, "PodGroup") in self.scheduling_paths

    # -- feeding the cache ----------------------------------------------------------------
    def on_object(self, event: str, obj: dict[str, Any]) -> None:
        if event == "DELETED":
            self.cache.remove(obj)
        else:
            self.cache.upsert(obj)
        group = str(obj.get("apiVersion") or "").rpartition("/")[0]
        if (group, obj.get("kind")) in self.referenced:
            self.references_generation += 1
        for listener in list(self.listeners):
            listener(event, obj)

    def on_priority_class(self, event: str, obj: dict[str, Any]) -> None:
        """Keep the PriorityClass values (they order a stated minimum's ``minResources`` fill)
        and the ``globalDefault`` class (native pod groups name their members' class); a
        change replans every workload (it may change the objects we wrote)."""
        name = (obj.get("metadata") or {}).get("name")
        value = obj.get("value")
        if not isinstance(name, str):
            return
        with self._classes_lock:
            before = (dict(self._classes), set(self._defaults))
            if event == "DELETED" or type(value) is not int:
                self._classes.pop(name, None)
                self._defaults.discard(name)
            else:
                self._classes[name] = value
                if obj.get("globalDefault") is True:
                    self._defaults.add(name)
                else:
                    self._defaults.discard(name)
            if (self._classes, self._defaults) == before:
                return
            # the configured values (flags, callers) win over what the cluster says
            values = {**self._classes, **self._configured}
            # several defaults (a race the API allows): the plugin takes the lowest value
            default = min(self._defaults, key=lambda n: (self._classes[n], n), default=None)
            self.config = replace(
                self.config,
                priority_values=tuple(sorted(values.items())),
                default_priority_class=default,
            )
            self.admitter.config = self.config
        for listener in list(self.listeners):
            listener(event, obj)

    def on_karta(self, event: str, obj: dict[str, Any]) -> None:
        self.kartas.apply(event, obj)
        for listener in list(self.listeners):
            listener(event, obj)
