"""Gang enforcement inside ``wlmap operator`` (``--enable-gang-scheduling``).

Two controllers share one :class:`GangRuntime` per process:

- ``gangs-watch`` (every replica): the watch caches the pod webhook reads (Kartas, namespaces,
  pods, the intermediate owners and every workload kind a Karta with gang instructions
  covers), the webhook itself at :data:`WEBHOOK_PATH`, and the ``GenericWorkload`` probe;
- ``gangs`` (the leader only): keeps each workload's scheduling objects in step through
  :func:`~workload_map.gangs.planner.plan` and :func:`~workload_map.gangs.reconcile.reconcile`,
  records every decision as an event on the workload, and counts what it did on ``/metrics``.

Nothing is ever written to a workload object or to the pods' owners; pods are deleted only in
the opt-in ``delete-unbound`` mode.
"""

from __future__ import annotations

import argparse
import logging
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from workload_map.cluster.trim import ALL, Trim
from workload_map.errors import WlmapError
from workload_map.gangs.admission import PodAdmitter, json_patch
from workload_map.gangs.cache import (
    ObjectCache,
    group_of,
    key_of,
    trim_owner,
    trim_workload,
)
from workload_map.gangs.config import (
    LABEL_MANAGED_BY,
    LABEL_WORKLOAD_UID,
    MANAGED_BY,
    GangConfig,
)
from workload_map.gangs.definitions import KartaIndex, has_gangs
from workload_map.gangs.planner import (
    COSCHEDULING_API,
    NATIVE_API,
    VOLCANO_API,
    Decision,
    Plan,
    SpecMemo,
    plan,
    workload_ref,
)
from workload_map.gangs.reconcile import (
    DELETE_UNBOUND,
    LOWER_MINIMUM,
    Actions,
    object_path,
    reconcile,
)

if TYPE_CHECKING:
    from workload_map.operator.controllers import OperatorConfig, OperatorContext

__all__ = [
    "WEBHOOK_PATH",
    "GangController",
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
_SCHEDULING = (
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
    from workload_map.cluster.errors import ClusterError, NotFound

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
    from workload_map.cluster.trim import trim_pod

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
        """Keep the PriorityClass values that order a stated minimum's ``minResources`` fill;
        a changed value replans every workload (it may change the objects we wrote)."""
        name = (obj.get("metadata") or {}).get("name")
        value = obj.get("value")
        if not isinstance(name, str):
            return
        with self._classes_lock:
            before = dict(self._classes)
            if event == "DELETED" or type(value) is not int:
                self._classes.pop(name, None)
            else:
                self._classes[name] = value
            if self._classes == before:
                return
            # the configured values (flags, callers) win over what the cluster says
            values = {**self._classes, **self._configured}
            self.config = replace(self.config, priority_values=tuple(sorted(values.items())))
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
        from workload_map.cluster.discovery import discover

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
        for api, kind in _SCHEDULING:
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
        self.queue: Any = None
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

    def _workload_of(
        self, pod: Mapping[str, Any]
    ) -> tuple[str | None, tuple[str, str, str, str] | None]:
        """The top-most covered owner of a pod through the cache (no waiting), and the owner
        at which the chain broke (not cached yet), if it did."""
        rt = self.runtime
        current: Mapping[str, Any] = pod
        found: str | None = None
        ns = str((pod.get("metadata") or {}).get("namespace") or "")
        for _ in range(16):
            refs = (current.get("metadata") or {}).get("ownerReferences") or []
            ref = next((r for r in refs if r.get("controller")), refs[0] if refs else None)
            if ref is None:
                break
            key = (
                group_of(str(ref.get("apiVersion"))),
                str(ref.get("kind")),
                ns,
                str(ref.get("name")),
            )
            owner = rt.cache.get(*key)
            if owner is None:
                return found, key
            karta = rt.kartas.resolve(str(owner.get("apiVersion")), str(owner.get("kind")))
            if has_gangs(karta):
                found = self._key(owner)
            current = owner
        return found, None

    def _link(self, pod: Mapping[str, Any], deleted: bool = False) -> tuple[str | None, str | None]:
        """Index one pod under its workload; (old workload key, new workload key)."""
        meta = pod.get("metadata") or {}
        pod_key = (str(meta.get("namespace")), str(meta.get("name")))
        new, broken = (None, None) if deleted else self._workload_of(pod)
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
        if kind in ("Karta", "PriorityClass"):
            self.enqueue_all()
            return
        if kind == "Namespace":
            name = meta.get("name")
            for key in list(self._by_uid.values()):
                if key.split("|")[2] == name:
                    self._enqueue(key)
            return
        api = str(obj.get("apiVersion"))
        if (api, kind) in _SCHEDULING:
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
        from workload_map.operator.workqueue import WorkQueue

        self.ctx = ctx
        self.queue = WorkQueue("gangs", self.reconcile_key, workers=int(self.cfg.args.gang_workers))
        self.queue.start()
        rt = self.runtime
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
        group, kind, ns, name = key.split("|", 3)
        workload = rt.cache.get(group, kind, ns, name)
        if workload is None:
            return None
        karta = rt.kartas.resolve(str(workload.get("apiVersion")), kind)
        uid = str((workload.get("metadata") or {}).get("uid") or "")
        if not has_gangs(karta) or self._nested(workload):
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
        pods = [p for p in (rt.cache.get("", "Pod", n, m) for n, m in pod_keys) if p is not None]
        namespace = rt.cache.get("", "Namespace", "", ns)
        labels = ((namespace or {}).get("metadata") or {}).get("labels") or {}
        return karta, workload, pods, labels, existing, foreign

    def _nested(self, workload: Mapping[str, Any]) -> bool:
        """Whether a covered workload with gangs controls this one (a JobSet's Jobs, a
        RayJob's RayCluster): the top owner's gangs count its pods, so it gets none of its own."""
        for ref in (workload.get("metadata") or {}).get("ownerReferences") or []:
            if isinstance(ref, Mapping) and ref.get("controller") is True:
                karta = self.runtime.kartas.resolve(
                    str(ref.get("apiVersion")), str(ref.get("kind"))
                )
                return has_gangs(karta)
        return False

    @staticmethod
    def _fingerprint(
        found: tuple[Any, ...], generation: int, priorities: tuple[tuple[str, int], ...] = ()
    ) -> tuple[Any, ...]:
        karta, workload, pods, labels, existing, foreign = found

        def rv(obj: Mapping[str, Any] | None) -> str:
            return str(((obj or {}).get("metadata") or {}).get("resourceVersion") or "")

        return (
            id(karta),
            generation,
            priorities,
            rv(workload),
            tuple(sorted((str(p["metadata"].get("name")), rv(p)) for p in pods)),
            tuple(sorted(labels.items())),
            tuple(sorted((str(o["metadata"].get("name")), rv(o)) for o in existing)),
            rv(foreign),
        )

    def reconcile_key(self, key: str) -> float | None:
        with self._lock:
            self._soon.discard(key)
        found = self.inputs(key)
        if found is None:
            return None
        fingerprint = self._fingerprint(
            found, self.runtime.kartas.generation, self.runtime.config.priority_values
        )
        if self._settled.get(key) == fingerprint:
            return None  # nothing changed since a reconcile that had nothing to do
        karta, workload, pods, labels, existing, foreign = found
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
                [t.get("name") for t in (o.get("spec") or {}).get("podGroupTemplates") or []]
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
        )
        actions = reconcile(the_plan, pods, existing, mode=self.mode, foreign_workload=foreign)
        self._drop_unserved(actions)
        with rt.stats.lock:
            rt.stats.reconciles += 1
        try:
            self.execute(workload, actions)
        except WlmapError as err:
            with rt.stats.lock:
                rt.stats.reconcile_errors += 1
            log.warning("gangs: reconcile of %s failed: %s", key, err)
            raise
        if actions.writes == 0 and not actions.waiting:
            self._settled[key] = fingerprint
        else:
            self._settled.pop(key, None)
        return None

    def _drop_unserved(self, actions: Actions) -> None:
        """Objects of an API the cluster does not serve are not written (one event says so)."""
        served = {api for api, _ in self.runtime.scheduling_paths}
        if not self.runtime.resources:
            return
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
        from workload_map.cluster.errors import ApiError, NotFound

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
        with rt.stats.lock:
            rt.stats.writes += actions.writes
            rt.stats.missed_members += sum(len(v) for v in actions.missed.values())
            rt.stats.pods_deleted += len(actions.delete_pods)
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


def _minimum(obj: Mapping[str, Any]) -> str:
    spec = obj.get("spec") or {}
    if "minMember" in spec:
        return f"minMember {spec['minMember']}"
    gang = (spec.get("schedulingPolicy") or {}).get("gang")
    if gang:
        return f"minCount {gang.get('minCount')}"
    templates = spec.get("podGroupTemplates") or []
    return f"{len(templates)} pod-group template(s)"


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
        return GangController(runtime_for(cfg), cfg)

    controllers.register(watcher, name="gangs-watch")
    controllers.register(leader, name="gangs")


_register()
