"""The Karta controller: conditions, labels and events on every Karta (REFERENCE.md §5).

It watches Kartas and CRDs (never workloads) through the shared caches; a CRD event requeues
the Kartas of its group and kind. Writes are the ``run.ai/karta-*`` labels and the status
subresource, each only when it differs from what is stored, with the cached resourceVersion as
a precondition (a 409 means a newer copy is on its way: the key is retried).
"""

from __future__ import annotations

import logging
import threading
import time
from typing import TYPE_CHECKING, Any

from prometheus_client import Counter, Gauge

from workload_map import __version__
from workload_map.catalog import catalog
from workload_map.catalog.stamps import root_gvk
from workload_map.kube.discovery import discover
from workload_map.kube.errors import ApiError, ClusterError, Forbidden, NotFound
from workload_map.kube.workqueue import WorkQueue
from workload_map.operator import controllers
from workload_map.operator.karta_status import (
    ClusterTypes,
    CrdInfo,
    conditions_equal,
    crd_info,
    evaluate,
    merge_conditions,
    trim_crd,
)
from workload_map.operator.metrics import counter_value

if TYPE_CHECKING:
    from workload_map.kube.cache import Informer
    from workload_map.operator.controllers import OperatorConfig, OperatorContext

__all__ = ["CRDS_PATH", "KARTAS_PATH", "KartaController", "catalog_entry"]

log = logging.getLogger("workload_map.operator.karta")

KARTAS_PATH = "/apis/run.ai/v1alpha1/kartas"
CRDS_PATH = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"


def kartas_informer(ctx: OperatorContext) -> Informer:
    """The shared Karta cache (the webhooks read it too)."""
    return ctx.informer(KARTAS_PATH, kind="Karta", api_version="run.ai/v1alpha1")


def catalog_entry(group: str, version: str, kind: str) -> tuple[str, dict[str, Any]] | None:
    """(name, document) of the built-in definition of exactly this GVK, if any."""
    karta = catalog.get(group, version, kind)
    if karta is None or not karta.name:
        return None
    doc = catalog.document(karta.name)
    return (karta.name, doc) if doc is not None else None


class KartaController:
    name = "karta"
    needs_leader = True

    def __init__(self, *, workers: int = 2) -> None:
        self.workers = workers
        self.queue: WorkQueue | None = None
        self.ctx: OperatorContext | None = None
        self.kartas: Informer | None = None
        self.crds: Informer | None = None
        self._builtins: set[tuple[str, str, str]] = set()
        self._plurals: dict[tuple[str, str, str], str] = {}
        self._access: dict[tuple[str, str], tuple[float, bool | None, str]] = {}
        self._full_crds: dict[str, tuple[str, dict[str, Any]]] = {}
        self._lock = threading.Lock()
        self.label_writes = 0
        # registered in the process's registry when this replica starts the controller (a
        # standby exports none of them)
        self.status_writes_total = Counter(
            "workloadmap_operator_karta_status_writes_total",
            "Karta status writes.",
            registry=None,
        )
        self.conflicts_total = Counter(
            "workloadmap_operator_karta_conflicts_total",
            "409 answers to Karta writes.",
            registry=None,
        )
        self.reconciles_total = Counter(
            "workloadmap_operator_karta_reconciles_total", "Karta reconciles.", registry=None
        )
        self.evaluate_seconds = Counter(
            "workloadmap_operator_karta_evaluate_seconds_total",
            "Time computing conditions.",
            registry=None,
        )
        self.write_seconds = Counter(
            "workloadmap_operator_karta_write_seconds_total",
            "Time in label and status writes.",
            registry=None,
        )
        # the observable "idle" signal (tests wait for it rather than sleep): 0 once every
        # Karta event taken so far has been reconciled
        self.queue_pending = Gauge(
            "workloadmap_operator_karta_queue_pending",
            "Karta keys queued, due or being reconciled (0: the controller is idle).",
            registry=None,
        )
        self.queue_pending.set_function(self._pending)
        self.started_at = 0.0

    # -- lifecycle ------------------------------------------------------------------------

    def start(self, ctx: OperatorContext) -> None:
        self.ctx = ctx
        self.started_at = time.monotonic()
        self.kartas = kartas_informer(ctx)
        self.crds = ctx.informer(CRDS_PATH, transform=trim_crd)
        self.queue = WorkQueue("karta", self.reconcile, workers=self.workers)
        for counter in self.counters():
            ctx.registry.register(counter)
        ctx.spawn(self._run, "karta-controller")

    def stop(self) -> None:
        if self.queue is not None:
            self.queue.stop()

    def _run(self) -> None:
        assert self.ctx is not None and self.kartas is not None and self.crds is not None
        ctx = self.ctx
        while not self.kartas.wait_synced(1.0):
            if ctx.stopping.is_set():
                return
        # CRDs may be unreadable (RBAC): go on after a while and say so in CRDExists
        deadline = time.monotonic() + 10
        while not self.crds.wait_synced(1.0) and time.monotonic() < deadline:
            if ctx.stopping.is_set():
                return
        self._discover()
        assert self.queue is not None
        self.kartas.add_handler(self._on_karta)
        self.crds.add_handler(self._on_crd)
        self.queue.start()

    def _discover(self) -> None:
        """Built-in kinds: served, listable and watchable, and not from a CRD."""
        assert self.ctx is not None and self.crds is not None
        crd_kinds = {(c.group, c.kind) for c in self._crd_infos()}
        try:
            resources = discover(self.ctx.api.transport())
        except ClusterError as exc:
            log.warning("discovery failed, no built-in kinds known: %s", exc)
            return
        builtin = [
            r
            for r in resources
            if "list" in r.verbs and "watch" in r.verbs and (r.group, r.kind) not in crd_kinds
        ]
        self._builtins = {(r.group, r.version, r.kind) for r in builtin}
        self._plurals = {(r.group, r.version, r.kind): r.plural for r in builtin}

    # -- event handlers -------------------------------------------------------------------

    def _on_karta(self, event: str, obj: dict[str, Any]) -> None:
        name = (obj.get("metadata") or {}).get("name")
        if name and event != "DELETED" and self.queue is not None:
            self.queue.add(str(name))

    def _on_crd(self, event: str, obj: dict[str, Any]) -> None:
        info = crd_info(obj)
        with self._lock:
            self._full_crds.pop(info.name, None)
        if self.kartas is None or self.queue is None:
            return
        for karta in self.kartas.list():
            gvk = root_gvk(karta)
            if gvk is not None and (gvk[0], gvk[2]) == (info.group, info.kind):
                self.queue.add(str(karta["metadata"]["name"]))

    # -- reconcile ------------------------------------------------------------------------

    def _crd_infos(self) -> list[CrdInfo]:
        assert self.crds is not None
        return [crd_info(c) for c in self.crds.list()]

    def _types(self) -> ClusterTypes:
        assert self.crds is not None
        error = None
        if not self.crds.synced:
            err = self.crds.last_error
            error = str(err) if err is not None else "the CRD cache is not ready yet"
        return ClusterTypes(
            crds={(c.group, c.kind): c for c in self._crd_infos()},
            builtins=self._builtins,
            crd_error=error,
            full_crd=self._full_crd,
            plurals=self._plurals,
            can_watch=self._can_watch,
        )

    def _can_watch(self, group: str, resource: str) -> tuple[bool | None, str]:
        """SelfSubjectAccessReviews for list and watch, remembered for five minutes."""
        assert self.ctx is not None
        key = (group, resource)
        now = time.monotonic()
        with self._lock:
            hit = self._access.get(key)
        if hit is not None and now - hit[0] < 300:
            return hit[1], hit[2]
        allowed: bool | None = True
        why = ""
        try:
            for verb in ("list", "watch"):
                review = self.ctx.api.request(
                    "POST",
                    "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
                    {
                        "apiVersion": "authorization.k8s.io/v1",
                        "kind": "SelfSubjectAccessReview",
                        "spec": {
                            "resourceAttributes": {
                                "group": group,
                                "resource": resource,
                                "verb": verb,
                            }
                        },
                    },
                )
                status = review.get("status") or {}
                if not status.get("allowed"):
                    allowed = False
                    why = str(status.get("reason") or f"no {verb} permission")
                    break
        except ClusterError as exc:
            allowed, why = None, f"cannot check permissions: {exc}"
        with self._lock:
            self._access[key] = (now, allowed, why)
        return allowed, why

    def _full_crd(self, name: str) -> dict[str, Any] | None:
        """The CRD with its schemas, fetched once per resourceVersion."""
        assert self.ctx is not None and self.crds is not None
        cached = self.crds.get(name)
        rv = str((cached or {}).get("metadata", {}).get("resourceVersion") or "")
        with self._lock:
            hit = self._full_crds.get(name)
        if hit is not None and hit[0] == rv:
            return hit[1]
        try:
            full = self.ctx.api.get(f"{CRDS_PATH}/{name}")
        except ClusterError as exc:
            log.info("cannot read CRD %s: %s", name, exc)
            return None
        with self._lock:
            self._full_crds[name] = (rv, full)
        return dict(full)

    def reconcile(self, name: str) -> float | None:
        """One Karta; returns seconds until it should be looked at again, or None."""
        assert self.ctx is not None and self.kartas is not None
        obj = self.kartas.get(name)
        if obj is None:
            return None
        meta = obj.get("metadata") or {}
        if meta.get("deletionTimestamp"):
            return None
        began = time.perf_counter()
        types = self._types()
        result = evaluate(obj, types, catalog_lookup=catalog_entry, catalog_version=__version__)
        self.evaluate_seconds.inc(time.perf_counter() - began)
        self.reconciles_total.inc()
        api = self.ctx.api
        path = f"{KARTAS_PATH}/{name}"
        rv = meta.get("resourceVersion")
        labels = meta.get("labels") or {}
        if result.labels is not None and any(labels.get(k) != v for k, v in result.labels.items()):
            wrote = time.perf_counter()
            try:
                stored = api.merge_patch(
                    path,
                    {"metadata": {"resourceVersion": rv, "labels": result.labels}},
                )
            except ApiError as exc:
                if exc.status not in (400, 403, 422):
                    return self._write_failed(name, exc)
                # refused (an admission webhook or RBAC): say so, still write the status
                log.warning("cannot set the labels of Karta %s: %s", name, exc)
                stored = None
            else:
                self.label_writes += 1
            self.write_seconds.inc(time.perf_counter() - wrote)
            if stored is not None:
                rv = (stored.get("metadata") or {}).get("resourceVersion", rv)
        existing = (obj.get("status") or {}).get("conditions") or []
        merged = merge_conditions(existing, result.conditions, meta.get("generation"))
        if not conditions_equal(existing, merged):
            wrote = time.perf_counter()
            try:
                api.merge_patch(
                    f"{path}/status",
                    {"metadata": {"resourceVersion": rv}, "status": {"conditions": merged}},
                )
            except ApiError as exc:
                return self._write_failed(name, exc)
            self.status_writes_total.inc()
            self.write_seconds.inc(time.perf_counter() - wrote)
            self._events(obj, existing, result.warnings)
        return 30.0 if types.crd_error else None

    def _write_failed(self, name: str, exc: ApiError) -> float | None:
        if isinstance(exc, NotFound):
            return None  # deleted meanwhile
        if exc.status == 409:
            self.conflicts_total.inc()
            log.info("Karta %s changed while being reconciled; retrying", name)
            return 0.2
        if isinstance(exc, Forbidden):
            log.error("not allowed to update Karta %s: %s", name, exc)
            return 60.0
        raise exc

    def _events(
        self,
        obj: dict[str, Any],
        existing: list[Any],
        warnings: list[tuple[str, str, str, str]],
    ) -> None:
        """A Warning event per finding condition whose status or message just changed."""
        assert self.ctx is not None
        before = {c.get("type"): c for c in existing if isinstance(c, dict)}
        for ctype, reason, action, message in warnings:
            prev = before.get(ctype) or {}
            if prev.get("reason") == reason and prev.get("message") == message[:32768]:
                continue
            self.ctx.events.warning(obj, reason, action, message)

    def idle(self) -> bool:
        return self.queue is not None and self.queue.idle()

    def _pending(self) -> float:
        return float(self.queue.pending()) if self.queue is not None else 0.0

    def counters(self) -> tuple[Counter | Gauge, ...]:
        """What :meth:`start` registers in the process's registry."""
        return (
            self.status_writes_total,
            self.conflicts_total,
            self.reconciles_total,
            self.evaluate_seconds,
            self.write_seconds,
            self.queue_pending,
        )

    @property
    def status_writes(self) -> int:
        return int(counter_value(self.status_writes_total))

    @property
    def conflicts(self) -> int:
        return int(counter_value(self.conflicts_total))

    @property
    def reconciles(self) -> int:
        return int(counter_value(self.reconciles_total))


def _factory(config: OperatorConfig) -> KartaController | None:
    if getattr(config.args, "disable_karta_controller", False):
        return None
    return KartaController(workers=int(getattr(config.args, "karta_workers", 8)))


controllers.register(_factory, name="karta")
