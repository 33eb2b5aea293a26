"""Keeps an :class:`~workload_map.cluster.inventory.Inventory` current from watch caches.

Watches Kartas, then, for the definitions in force, every workload kind the cluster serves and
the intermediate kinds that link pods to workloads, plus pods. When definitions change (a Karta
added) or the cluster starts serving a kind (a CRD installed later), the set of watches grows;
rediscovery runs every ``rediscover_seconds``. A kind the cluster does not serve, or that this
identity may not list, is skipped and reported (:attr:`InventoryFeed.problems`, each a
:class:`FeedProblem` whose ``cause`` says what failed as data), never fatal.

With ``namespaces`` (an include list), workloads and pods are watched per namespace, so a user
with one namespace's permissions gets a working inventory; Kartas are cluster-scoped and fall
back to the built-in catalog when they cannot be listed.

The kinds the definitions' references read (a TrainJob's ``ClusterTrainingRuntime`` or
``TrainingRuntime``) are watched too: a cluster-scoped kind cluster-wide, a namespaced one like
the workloads. A referenced kind that is not served or may not be listed is told to the
inventory, which reports it on each workload that reads it.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from workload_map.cluster.definitions import KARTAS_PATH
from workload_map.cluster.inventory import Inventory, referenced_kinds, watched_kinds
from workload_map.kube.cache import Informer, InformerSet
from workload_map.kube.discovery import APIResource, discover
from workload_map.kube.errors import ApiError, ClusterError, Forbidden, NotFound
from workload_map.kube.transport import Transport
from workload_map.kube.trim import trim_intermediate, trim_pod, trim_workload
from workload_map.model import GVK

__all__ = ["FeedProblem", "InformerSource", "InventoryFeed", "ProblemCause"]

log = logging.getLogger("workload_map.feed")

_PODS = APIResource("", "v1", "Pod", "pods", "pod", True)

#: why a kind is not in the inventory: the cluster does not serve it, this identity may not
#: list it (403), the list path answered 404 (its CRD went away), 401, or anything else
ProblemCause = Literal["not-served", "forbidden", "not-found", "unauthorized", "error"]

_BY_STATUS: dict[int, ProblemCause] = {401: "unauthorized", 403: "forbidden", 404: "not-found"}


@dataclass(frozen=True)
class FeedProblem:
    """Why a kind (or path) is not watched: the text for people, the cause and the API
    server's status for code (callers decide on these, never on the text)."""

    message: str
    cause: ProblemCause
    status: int | None = None

    @classmethod
    def of(cls, err: BaseException) -> FeedProblem:
        """The problem a watch's last error stands for (its type, else its HTTP status)."""
        status = err.status if isinstance(err, ApiError) else getattr(err, "status", None)
        status = status if isinstance(status, int) else None
        cause: ProblemCause
        if isinstance(err, Forbidden):
            cause = "forbidden"
        elif isinstance(err, NotFound):
            cause = "not-found"
        else:
            cause = _BY_STATUS.get(status, "error") if status is not None else "error"
        return cls(str(err), cause, status)


NOT_SERVED = FeedProblem("not served by the cluster", "not-served")

#: a referenced kind's watch problem as the reason a reference reports
_REASON: dict[ProblemCause, str] = {
    "forbidden": "forbidden",
    "not-served": "unserved",
    "not-found": "unserved",
}


class InformerSource(Protocol):
    """Where informers come from: an :class:`InformerSet` or an operator context."""

    def informer(
        self,
        path: str,
        *,
        transform: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
        kind: str | None = None,
        api_version: str | None = None,
    ) -> Informer: ...


class _SetSource:
    def __init__(self, informers: InformerSet) -> None:
        self._informers = informers

    def informer(
        self,
        path: str,
        *,
        transform: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
        kind: str | None = None,
        api_version: str | None = None,
    ) -> Informer:
        return self._informers.get(path, transform=transform, kind=kind, api_version=api_version)


class InventoryFeed:
    """Starts and grows the watches that feed ``inventory``; ``stop()`` ends them."""

    def __init__(
        self,
        inventory: Inventory,
        transport: Transport,
        informers: InformerSet | InformerSource,
        *,
        namespaces: Sequence[str] = (),
        rediscover_seconds: float = 60.0,
        watch_kartas: bool = True,
    ) -> None:
        self.inventory = inventory
        self._transport = transport
        self._source: InformerSource = (
            _SetSource(informers) if isinstance(informers, InformerSet) else informers
        )
        self._namespaces = tuple(namespaces)
        self._rediscover = rediscover_seconds
        self._watch_kartas = watch_kartas
        self._lock = threading.Lock()
        self._watching: dict[str, Informer] = {}
        self._kind_of: dict[str, str] = {}  # informer path → the GVK text problems are keyed by
        self._referenced: dict[str, GVK] = {}  # informer path → the referenced kind it watches
        self._served: dict[GVK, APIResource] = {}
        self.problems: dict[str, FeedProblem] = {}  # kind → why it is not watched
        self.last_sync: float | None = None
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None

    # -- lifecycle ------------------------------------------------------------------------

    def start(self) -> InventoryFeed:
        self._discover()
        if self._watch_kartas:
            kartas = self._watch(KARTAS_PATH, None, "Karta", "run.ai/v1alpha1")
            kartas.add_handler(self._on_karta)
        for path in self._paths(_PODS):
            self._watch(path, trim_pod, "Pod", "v1").add_handler(self.inventory.apply_pod)
        self.ensure()
        self._thread = threading.Thread(target=self._loop, name="inventory-feed", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()

    def informers(self) -> list[Informer]:
        with self._lock:
            return list(self._watching.values())

    def wait_synced(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        for informer in self.informers():
            if informer.last_error is not None and not informer.synced:
                continue  # forbidden or not served: reported in problems, not waited for
            if not informer.wait_synced(max(0.0, deadline - time.monotonic())):
                return False
        self.last_sync = time.time()
        self.check()  # a referenced kind that may not be listed: its workloads say so
        return True

    # -- watches --------------------------------------------------------------------------

    def ensure(self) -> None:
        """Watch every kind the definitions in force need and the cluster serves."""
        roots, links = watched_kinds(self.inventory.definitions())
        for gvks, handler, transform in (
            (roots, self._apply_workload, trim_workload),
            (links, self.inventory.apply_intermediate, trim_intermediate),
        ):
            for gvk in sorted(gvks, key=str):
                res = self._served.get(gvk)
                if res is None:
                    self.problems[str(gvk)] = NOT_SERVED
                    continue
                self.problems.pop(str(gvk), None)
                for path in self._paths(res):
                    if path not in self._watching:
                        self._kind_of[path] = str(gvk)
                        informer = self._watch(path, transform, res.kind, res.api_version)
                        informer.add_handler(handler)
        for gvk in sorted(referenced_kinds(self.inventory.definitions()), key=str):
            res = self._served.get(gvk) or self._served_version(gvk)
            if res is None:
                self.inventory.reference_unavailable(
                    gvk.group, gvk.kind, "unserved", f"the cluster serves no {gvk.kind}"
                )
                continue
            # a cluster-scoped kind cluster-wide; a namespaced one in the namespaces served, as
            # the workloads (a lookup reads the workload's own namespace unless told otherwise,
            # and one namespace's permissions must be enough)
            for path in self._paths(res):
                if path in self._referenced:
                    continue
                self._referenced[path] = gvk
                self._kind_of.setdefault(path, str(gvk))
                # the whole object (minus server bookkeeping): a definition may read any of it
                informer = self._watch(path, trim_workload, res.kind, res.api_version)
                informer.add_handler(self.inventory.apply_referenced)
                self.inventory.reference_unavailable(gvk.group, gvk.kind, None)

    def _apply_workload(self, event: str, obj: dict[str, Any]) -> None:
        # the informer's transform keeps at least trim_workload's fields (merged per path)
        self.inventory.apply_workload(event, obj, trimmed=True)

    def _served_version(self, gvk: GVK) -> APIResource | None:
        """Another served version of a referenced kind (a definition names one version; the
        objects say which they are, and the engine does not compare versions)."""
        for served, res in sorted(self._served.items(), key=lambda item: str(item[0])):
            if (served.group, served.kind) == (gvk.group, gvk.kind):
                return res
        return None

    def _paths(self, res: APIResource) -> list[str]:
        if self._namespaces and res.namespaced:
            return [res.path(ns) for ns in self._namespaces]
        return [res.path()]

    def _watch(
        self,
        path: str,
        transform: Callable[[dict[str, Any]], dict[str, Any]] | None,
        kind: str,
        api_version: str,
    ) -> Informer:
        with self._lock:
            found = self._watching.get(path)
            if found is None:
                found = self._source.informer(
                    path, transform=transform, kind=kind, api_version=api_version
                )
                self._watching[path] = found
            return found

    def _on_karta(self, event: str, obj: dict[str, Any]) -> None:
        self.inventory.apply_karta(event, obj)
        try:
            self.ensure()
        except Exception:  # never let a bad definition stop the Karta watch
            log.exception("could not extend the watches after a Karta change")

    def _discover(self) -> None:
        try:
            resources = discover(self._transport)
        except ClusterError as exc:
            log.warning("discovery failed: %s", exc)
            return
        served: dict[GVK, APIResource] = {}
        for res in resources:
            if "list" in res.verbs or not res.verbs:
                served.setdefault(GVK(res.group, res.version, res.kind), res)
        self._served = served

    def _loop(self) -> None:
        while not self._stopping.wait(self._rediscover):
            self._discover()
            try:
                self.ensure()
            except Exception:
                log.exception("could not extend the watches after rediscovery")
            self.check()

    def check(self) -> dict[str, FeedProblem]:
        """Refresh :attr:`problems` from the watches' last errors (keyed by GVK text for
        workload kinds, by path otherwise: a 403 there is "no permission")."""
        for informer in self.informers():
            key = self._kind_of.get(informer.path, informer.path)
            error = informer.last_error
            failed = error is not None and not informer.synced
            if error is not None and failed:
                self.problems[key] = FeedProblem.of(error)
            elif key in self.problems and self.problems[key].cause != "not-served":
                del self.problems[key]
            gvk = self._referenced.get(informer.path)
            if gvk is not None:  # what each workload reading it reports
                problem = self.problems.get(key) if failed else None
                self.inventory.reference_unavailable(
                    gvk.group,
                    gvk.kind,
                    _REASON.get(problem.cause, "error") if problem is not None else None,
                    problem.message if problem is not None else "",
                )
        return dict(self.problems)
