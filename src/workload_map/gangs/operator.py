"""Gang enforcement inside ``wlmap operator`` (``--enable-gang-scheduling``).

Two controllers share one :class:`GangRuntime` per process:

- ``gangs-watch`` (every replica): the watch caches the pod webhook reads (Kartas, namespaces,
  pods, the intermediate owners and every workload kind a Karta with gang instructions
  covers), the webhook itself at :data:`WEBHOOK_PATH`, and the ``GenericWorkload`` probe;
- ``gangs`` (the leader only): :class:`~workload_map.gangs.controller.GangController`, which
  keeps each workload's scheduling objects in step.

Nothing is ever written to a workload object or to the pods' owners; pods are deleted only in
the opt-in ``delete-unbound`` mode.
"""

from __future__ import annotations

import argparse
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from workload_map.errors import WlmapError
from workload_map.gangs.admission import PodAdmitter, json_patch
from workload_map.gangs.cache import (
    ObjectCache,
    trim_owner,
    trim_workload,
)
from workload_map.gangs.config import (
    GangConfig,
)
from workload_map.gangs.definitions import KartaIndex, has_gangs
from workload_map.gangs.planner import (
    COSCHEDULING_API,
    NATIVE_API,
    VOLCANO_API,
    SpecMemo,
)
from workload_map.gangs.reconcile import (
    DELETE_UNBOUND,
    LOWER_MINIMUM,
)
from workload_map.kube.trim import ALL, Trim

if TYPE_CHECKING:
    from workload_map.gangs.controller import GangController
    from workload_map.operator.controllers import OperatorConfig, OperatorContext

__all__ = [
    "SCHEDULING_KINDS",
    "WEBHOOK_PATH",
    "GangRuntime",
    "GangWatcher",
    "add_flags",
    "config_from_args",
    "pod_webhook",
    "probe_generic_workload",
]

log = logging.getLogger("workload_map.gangs")

WEBHOOK_PATH = "/mutate-v1-pod-gangs"
FIELD_MANAGER = "workload-map-gangs"
#: seconds a pod event waits for the rest of its burst before its workload is reconciled
POD_DEBOUNCE = 0.2
_INTERMEDIATES = (
    ("apps", "v1", "ReplicaSet"),
    ("batch", "v1", "Job"),
    ("apps", "v1", "StatefulSet"),
)
SCHEDULING_KINDS = (
    (NATIVE_API, "Workload"),
    (NATIVE_API, "PodGroup"),
    (COSCHEDULING_API, "PodGroup"),
    (VOLCANO_API, "PodGroup"),
)


def _split(text: str) -> frozenset[str]:
    return frozenset(s.strip() for s in text.split(",") if s.strip())


def add_flags(parser: argparse.ArgumentParser) -> None:
    g = parser.add_argument_group("gang scheduling (docs/gangs.md)")
    g.add_argument(
        "--enable-gang-scheduling",
        action="store_true",
        help="run the gang controller and pod webhook",
    )
    g.add_argument(
        "--gang-default-enabled",
        action="store_true",
        help="handle every workload (default: only opted-in namespaces or workloads)",
    )
    g.add_argument("--gang-native-schedulers", default="default-scheduler")
    g.add_argument("--gang-coscheduling-schedulers", default="scheduler-plugins-scheduler")
    g.add_argument("--gang-volcano-schedulers", default="volcano")
    g.add_argument("--gang-kai-schedulers", default="kai-scheduler")
    g.add_argument("--gang-excluded-namespaces", default="kube-system,kube-public,kube-node-lease")
    g.add_argument(
        "--gang-missed-member-mode",
        choices=(LOWER_MINIMUM, DELETE_UNBOUND),
        default=LOWER_MINIMUM,
        help="what to do with gang members created without their group reference",
    )
    g.add_argument("--gang-webhook-miss-wait", type=float, default=1.0, help="seconds")
    g.add_argument("--gang-schedule-timeout-seconds", type=int, default=60)
    g.add_argument("--gang-volcano-queue", default="default")
    g.add_argument("--gang-resync-period", type=float, default=300.0, help="seconds")
    g.add_argument("--gang-workers", type=int, default=2)
    g.add_argument(
        "--gang-probe-namespace",
        default="",
        help="namespace of the GenericWorkload dry-run probe (default: the operator's)",
    )


def config_from_args(args: argparse.Namespace, operator_namespace: str = "") -> GangConfig:
    excluded = set(_split(args.gang_excluded_namespaces))
    if operator_namespace:
        excluded.add(operator_namespace)  # the operator's own pods never wait on it
    return GangConfig(
        native_schedulers=_split(args.gang_native_schedulers),
        coscheduling_schedulers=_split(args.gang_coscheduling_schedulers),
        volcano_schedulers=_split(args.gang_volcano_schedulers),
        kai_schedulers=_split(args.gang_kai_schedulers),
        default_enabled=bool(args.gang_default_enabled),
        schedule_timeout_seconds=int(args.gang_schedule_timeout_seconds),
        volcano_queue=str(args.gang_volcano_queue),
        excluded_namespaces=frozenset(excluded),
    )


def pod_webhook(
    *,
    url: str | None = None,
    service: tuple[str, str, int] | None = None,
    ca_bundle: str = "",
    excluded_namespaces: frozenset[str] = GangConfig().excluded_namespaces,
    timeout_seconds: int = 3,
    name: str = "gangs.pods.workload-map.run.ai",
) -> dict[str, Any]:
    """The pod CREATE entry of a MutatingWebhookConfiguration (``Ignore``, short timeout).

    ``service`` is (namespace, name, port); on the test harness ``url`` points at loopback.
    The operator's namespace belongs in ``excluded_namespaces``; pods labelled
    ``workload-map.run.ai/gang-scheduling: disabled`` are skipped by the object selector.
    """
    client: dict[str, Any] = {}
    if url is not None:
        client["url"] = url.rstrip("/") + WEBHOOK_PATH
    elif service is not None:
        client["service"] = {
            "namespace": service[0],
            "name": service[1],
            "port": service[2],
            "path": WEBHOOK_PATH,
        }
    if ca_bundle:
        client["caBundle"] = ca_bundle
    return {
        "name": name,
        "admissionReviewVersions": ["v1"],
        "clientConfig": client,
        "rules": [
            {
                "apiGroups": [""],
                "apiVersions": ["v1"],
                "operations": ["CREATE"],
                "resources": ["pods"],
                "scope": "Namespaced",
            }
        ],
        "failurePolicy": "Ignore",
        "sideEffects": "None",
        "timeoutSeconds": timeout_seconds,
        "reinvocationPolicy": "Never",
        "matchPolicy": "Equivalent",
        "namespaceSelector": {
            "matchExpressions": [
                {
                    "key": "kubernetes.io/metadata.name",
                    "operator": "NotIn",
                    "values": sorted(excluded_namespaces),
                }
            ]
        },
        "objectSelector": {
            "matchExpressions": [
                {
                    "key": "workload-map.run.ai/gang-scheduling",
                    "operator": "NotIn",
                    "values": ["disabled"],
                }
            ]
        },
    }


def probe_generic_workload(api: Any, namespace: str) -> tuple[str, str]:
    """Whether the cluster keeps a pod's ``spec.schedulingGroup``: (state, detail).

    ``works`` (a server-side dry-run pod kept it), ``dropped`` (the API server drops the field:
    ``GenericWorkload`` off), ``absent`` (no ``scheduling.k8s.io/v1beta1`` PodGroups served),
    ``error``.
    """
    from workload_map.kube.errors import ClusterError, NotFound

    try:
        api.get("/apis/scheduling.k8s.io/v1beta1")
    except NotFound:
        return "absent", "scheduling.k8s.io/v1beta1 is not served (GenericWorkload off?)"
    except ClusterError as err:
        return "error", f"discovery failed: {err}"
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "generateName": "wlmap-gang-probe-",
            "namespace": namespace,
            "labels": {"workload-map.run.ai/gang-scheduling": "disabled"},
        },
        "spec": {
            "schedulingGroup": {"podGroupName": "wlmap-gang-probe"},
            # admissible under PodSecurity "restricted" (the chart's namespace enforces it)
            "securityContext": {
                "runAsNonRoot": True,
                "runAsUser": 65532,
                "seccompProfile": {"type": "RuntimeDefault"},
            },
            "containers": [
                {
                    "name": "probe",
                    "image": "registry.k8s.io/pause:3.10",
                    "securityContext": {
                        "allowPrivilegeEscalation": False,
                        "capabilities": {"drop": ["ALL"]},
                    },
                }
            ],
        },
    }
    try:
        answer = api.request(
            "POST", f"/api/v1/namespaces/{namespace}/pods", pod, query=[("dryRun", "All")]
        )
    except ClusterError as err:
        return "error", f"dry-run pod create failed: {err}"
    kept = ((answer or {}).get("spec") or {}).get("schedulingGroup")
    if kept == {"podGroupName": "wlmap-gang-probe"}:
        return "works", "a dry-run pod kept spec.schedulingGroup"
    return "dropped", "the API server dropped spec.schedulingGroup (GenericWorkload off)"


@dataclass
class Stats:
    webhook_requests: int = 0
    webhook_patched: int = 0
    webhook_cache_misses: int = 0
    webhook_errors: int = 0
    webhook_seconds_total: float = 0.0
    reconciles: int = 0
    reconcile_errors: int = 0
    writes: int = 0
    missed_members: int = 0
    pods_deleted: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)


PRIORITY_CLASSES = "/apis/scheduling.k8s.io/v1/priorityclasses"
#: a PriorityClass is read for its value only (cluster-scoped, name -> value)
TRIM_PRIORITY_CLASS = Trim(
    {"apiVersion": ALL, "kind": ALL, "metadata": {"name": ALL}, "value": ALL},
    consumers=("gangs",),
)


def _trim_pod_function() -> Callable[[dict[str, Any]], dict[str, Any]]:
    """The shared pod trim (one per informer path: the first caller's wins)."""
    from workload_map.kube.trim import trim_pod

    return trim_pod


class GangRuntime:
    """What the watch side and the leader side of one process share."""

    def __init__(self, config: GangConfig, *, miss_wait: float = 1.0) -> None:
        self.config = config
        self.cache = ObjectCache()
        self.kartas = KartaIndex()
        # the webhook and the leader plan the same workloads: one memo of spec-only results
        self.memo = SpecMemo()
        self.admitter = PodAdmitter(
            self.cache, self.kartas.resolve, config, miss_wait=miss_wait, memo=self.memo
        )
        self.stats = Stats()
        self.generic_workload = ("unknown", "not probed yet")
        self.listeners: list[Callable[[str, dict[str, Any]], None]] = []
        self.watched: set[str] = set()
        self.scheduling_paths: dict[tuple[str, str], str] = {}
        self.resources: list[Any] = []
        #: PriorityClass values seen by the watch (name -> value), beyond the configured ones
        self._configured = dict(config.priority_values)
        self._classes: dict[str, int] = {}
        self._defaults: set[str] = set()
        self._classes_lock = threading.Lock()

    def native_served(self) -> bool:
        """Whether ``scheduling.k8s.io/v1beta1`` PodGroups are served (unknown: assumed)."""
        return not self.resources or (NATIVE_API, "PodGroup") in self.scheduling_paths

    # -- feeding the cache ----------------------------------------------------------------
    def on_object(self, event: str, obj: dict[str, Any]) -> None:
        if event == "DELETED":
            self.cache.remove(obj)
        else:
            self.cache.upsert(obj)
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

    # -- the webhook ----------------------------------------------------------------------
    def admit(self, request: dict[str, Any]) -> dict[str, Any]:
        start = time.perf_counter()
        answer: dict[str, Any] = {"allowed": True}
        pod = request.get("object")
        try:
            if request.get("operation") == "CREATE" and isinstance(pod, dict):
                decision = self.admitter.decide(pod, request.get("namespace"))
                if decision.scheduling_group and not self.native_served():
                    decision.scheduling_group = None  # the server would drop it anyway
                ops = json_patch(pod, decision)
                if ops:
                    answer["patch"] = ops
                with self.stats.lock:
                    self.stats.webhook_patched += bool(ops)
                    self.stats.webhook_cache_misses += decision.cache_miss
        except Exception:  # never block a pod on our fault
            log.exception("gang webhook failed; the pod is admitted unchanged")
            with self.stats.lock:
                self.stats.webhook_errors += 1
        with self.stats.lock:
            self.stats.webhook_requests += 1
            self.stats.webhook_seconds_total += time.perf_counter() - start
        return answer

    def metrics(self) -> str:
        s = self.stats
        state = self.generic_workload[0]
        lines = [
            "# HELP workloadmap_gangs_webhook_requests_total Pod admissions seen by the gang webhook.",
            "# TYPE workloadmap_gangs_webhook_requests_total counter",
            f"workloadmap_gangs_webhook_requests_total {s.webhook_requests}",
            "# HELP workloadmap_gangs_webhook_patched_total Pods the gang webhook patched.",
            "# TYPE workloadmap_gangs_webhook_patched_total counter",
            f"workloadmap_gangs_webhook_patched_total {s.webhook_patched}",
            "# HELP workloadmap_gangs_webhook_cache_misses_total Admissions whose owner was not cached in time.",
            "# TYPE workloadmap_gangs_webhook_cache_misses_total counter",
            f"workloadmap_gangs_webhook_cache_misses_total {s.webhook_cache_misses}",
            "# HELP workloadmap_gangs_webhook_errors_total Admissions that failed (admitted unchanged).",
            "# TYPE workloadmap_gangs_webhook_errors_total counter",
            f"workloadmap_gangs_webhook_errors_total {s.webhook_errors}",
            "# HELP workloadmap_gangs_webhook_seconds_total Time spent deciding admissions.",
            "# TYPE workloadmap_gangs_webhook_seconds_total counter",
            f"workloadmap_gangs_webhook_seconds_total {s.webhook_seconds_total:.6f}",
            "# HELP workloadmap_gangs_reconciles_total Workload reconciles by the gang controller.",
            "# TYPE workloadmap_gangs_reconciles_total counter",
            f"workloadmap_gangs_reconciles_total {s.reconciles}",
            "# HELP workloadmap_gangs_reconcile_errors_total Reconciles that failed (retried).",
            "# TYPE workloadmap_gangs_reconcile_errors_total counter",
            f"workloadmap_gangs_reconcile_errors_total {s.reconcile_errors}",
            "# HELP workloadmap_gangs_writes_total Creates, patches and deletes of scheduling objects.",
            "# TYPE workloadmap_gangs_writes_total counter",
            f"workloadmap_gangs_writes_total {s.writes}",
            "# HELP workloadmap_gangs_missed_members_total Gang members found created without their group reference.",
            "# TYPE workloadmap_gangs_missed_members_total counter",
            f"workloadmap_gangs_missed_members_total {s.missed_members}",
            "# HELP workloadmap_gangs_pods_deleted_total Unbound missed members deleted (delete-unbound mode).",
            "# TYPE workloadmap_gangs_pods_deleted_total counter",
            f"workloadmap_gangs_pods_deleted_total {s.pods_deleted}",
            "# HELP workloadmap_gangs_priority_classes PriorityClasses watched (their values order the minResources fill).",
            "# TYPE workloadmap_gangs_priority_classes gauge",
            f"workloadmap_gangs_priority_classes {len(self._classes)}",
            "# HELP workloadmap_gangs_generic_workload Whether pods keep spec.schedulingGroup (probe at start).",
            "# TYPE workloadmap_gangs_generic_workload gauge",
        ]
        for name in ("works", "dropped", "absent", "error", "unknown"):
            lines.append(
                f'workloadmap_gangs_generic_workload{{state="{name}"}} {int(state == name)}'
            )
        return "\n".join(lines) + "\n"


_runtime: GangRuntime | None = None
_runtime_lock = threading.Lock()


def runtime_for(cfg: OperatorConfig) -> GangRuntime:
    global _runtime
    with _runtime_lock:
        if _runtime is None:
            args = cfg.args
            _runtime = GangRuntime(
                config_from_args(args, cfg.namespace), miss_wait=args.gang_webhook_miss_wait
            )
        return _runtime


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
        ctx.add_webhook(WEBHOOK_PATH, rt.admit)
        ctx.add_metrics(rt.metrics)
        kartas = ctx.informer(
            "/apis/run.ai/v1alpha1/kartas", kind="Karta", api_version="run.ai/v1alpha1"
        )
        kartas.add_handler(rt.on_karta)
        namespaces = ctx.informer(
            "/api/v1/namespaces", transform=trim_owner, kind="Namespace", api_version="v1"
        )
        namespaces.add_handler(rt.on_object)
        pods = ctx.informer(
            "/api/v1/pods", transform=_trim_pod_function(), kind="Pod", api_version="v1"
        )
        pods.add_handler(rt.on_object)
        classes = ctx.informer(
            PRIORITY_CLASSES,
            transform=TRIM_PRIORITY_CLASS,
            kind="PriorityClass",
            api_version="scheduling.k8s.io/v1",
        )
        classes.add_handler(rt.on_priority_class)
        # workload kinds first: a kind that is both (a batch Job) is then listed once with the
        # workload's fields, not listed as a link and re-listed wider
        self.refresh_kinds()
        for group, version, kind in _INTERMEDIATES:
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
        from workload_map.kube.discovery import discover

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
        self.runtime.generic_workload = (state, detail)
        level = logging.INFO if state == "works" else logging.WARNING
        log.log(level, "GenericWorkload: %s (%s)", state, detail)

    def stop(self) -> None:
        self._stop.set()


def _register() -> None:
    from workload_map.operator import controllers

    controllers.register_flags(add_flags)

    def watcher(cfg: OperatorConfig) -> GangWatcher | None:
        if not getattr(cfg.args, "enable_gang_scheduling", False):
            return None
        return GangWatcher(runtime_for(cfg), cfg)

    def leader(cfg: OperatorConfig) -> GangController | None:
        if not getattr(cfg.args, "enable_gang_scheduling", False):
            return None
        from workload_map.gangs.controller import GangController  # it builds on this module

        return GangController(runtime_for(cfg), cfg)

    controllers.register(watcher, name="gangs-watch")
    controllers.register(leader, name="gangs")


_register()
