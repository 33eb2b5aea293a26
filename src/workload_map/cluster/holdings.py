"""The objects a fleet's watches deliver, kept and linked: workloads, their pods, definitions.

The feed side of the inventory (:mod:`workload_map.cluster.inventory` evaluates what is kept
here): watch caches hand every event to ``apply_*``, which keep the (trimmed) objects and keep
each pod linked to its workloads. Nothing here calls the API: :func:`watched_kinds` says what
to watch and :mod:`workload_map.kube.cache` does the watching.

Pods join their workload through their owner chain (pod → ReplicaSet/Job/StatefulSet/... →
workload), walked in memory through the cached intermediate objects by uid. A chain that breaks
(an intermediate already garbage-collected) falls back to the operators' owner labels
(:func:`workload_map.engine.owner_labels.label_verdict`), and a pod is never given to a workload whose
labels it contradicts. A workload owned by another covered workload (a RayCluster under a RayJob)
gets its pods too, and is not top level (:meth:`Holdings._top_level`), so that sums over
top-level workloads count each pod once.

The objects a definition's references read (a TrainJob's runtime) are kept as the watches
deliver them (``apply_referenced``; :func:`referenced_kinds` says which kinds) by
:class:`~workload_map.cluster.referenced.ReferencedObjects`, which also says who read what.

Every change marks exactly the workloads it touches (a slot's memo dropped, its version
bumped), for the evaluation side to evaluate again.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from workload_map.catalog import catalog as builtin
from workload_map.catalog.definitions import Definition
from workload_map.cluster.referenced import ReadKey, ReferencedObjects, referenced_kinds
from workload_map.engine.owner_labels import label_verdict
from workload_map.engine.owners import (
    chain_uids,
    controller_ref,
    walk_chain,
)
from workload_map.engine.references import Resolver
from workload_map.errors import WlmapError
from workload_map.kube.trim import trim_workload
from workload_map.model import GVK, load_karta, validate

__all__ = [
    "Holdings",
    "NamespaceFilter",
    "Slot",
    "meta_of",
    "referenced_kinds",
    "watched_kinds",
]

# the inventory's logger: the feed's messages are the inventory's, as before the split
log = logging.getLogger("workload_map.inventory")

ADDED, MODIFIED, DELETED = "ADDED", "MODIFIED", "DELETED"
#: distinct owner chains kept as one tuple each (a fleet has one per Job, ReplicaSet…)
_CHAINS_KEPT = 1 << 16
#: a pod's links: the uids up its chain that the caches hold, the workloads among them
#: (nearest first), and the uid where the chain left the caches (None: it ended)
_Links = tuple[tuple[str, ...], tuple[str, ...], str | None]
#: what the evaluation side memoises per workload (the inventory's entry)
E = TypeVar("E")


@dataclass(frozen=True)
class NamespaceFilter:
    """Which namespaces count: ``include`` (empty: all) minus ``exclude``."""

    include: frozenset[str] = frozenset()
    exclude: frozenset[str] = frozenset()

    def __call__(self, namespace: str) -> bool:
        if self.include and namespace not in self.include:
            return False
        return namespace not in self.exclude


@dataclass(slots=True)
class Slot(Generic[E]):
    """One workload kept: its object, and the evaluation side's memo of it."""

    obj: dict[str, Any]
    gvk: GVK
    entry: E | None = None  # memoised; None when dirty
    version: int = 0  # bumped whenever the memo goes stale


def meta_of(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    meta = obj.get("metadata")
    return meta if isinstance(meta, Mapping) else {}


def _uid(obj: Mapping[str, Any]) -> str:
    return str(meta_of(obj).get("uid") or "")


def _controller_uid(obj: Mapping[str, Any]) -> str | None:
    """The uid the object's controller reference names (the engine's one owner rule)."""
    ref = controller_ref(obj)
    return ref.uid if ref is not None else None


def _gvk_of(obj: Mapping[str, Any]) -> GVK | None:
    api_version, kind = obj.get("apiVersion"), obj.get("kind")
    if not isinstance(api_version, str) or not isinstance(kind, str) or not kind:
        return None
    return GVK.from_api_version(api_version, kind)


def watched_kinds(definitions: Iterable[Definition]) -> tuple[set[GVK], set[GVK]]:
    """(workload kinds, intermediate kinds) to watch for these definitions.

    Workload kinds are the definitions' root kinds; intermediates are the kinds of their other
    components (Jobs of a JobSet, ReplicaSets of a Deployment…), which link pods to workloads.
    Pods themselves are always watched and are in neither set.
    """
    roots: set[GVK] = set()
    links: set[GVK] = set()
    for d in definitions:
        if d.gvk is None or not d.gvk.kind:
            continue
        roots.add(d.gvk)
        for comp in d.karta.components():
            kind = comp.kind
            if kind is None or not kind.kind or kind == d.gvk:
                continue
            if (kind.group, kind.kind) != ("", "Pod"):
                links.add(GVK(kind.group, kind.version, kind.kind))
    return roots, links - roots


class Holdings(Generic[E]):
    """Workloads, intermediates, pods and definitions, fed by watch events; thread-safe.

    ``catalog`` seeds the built-in definitions (a cluster Karta of the same root GVK replaces
    one); ``namespaces`` filters what is kept. ``E`` is what the evaluation side memoises per
    workload (:attr:`Slot.entry`), dropped by every change that touches the workload.
    """

    def __init__(
        self,
        *,
        catalog: bool = True,
        namespaces: NamespaceFilter | None = None,
    ) -> None:
        self._lock = threading.RLock()
        self._keep = namespaces or NamespaceFilter()
        self._catalog: dict[GVK, Definition] = {}
        if catalog:
            for karta in builtin.list():
                if karta.root_gvk is not None:
                    self._catalog[karta.root_gvk] = Definition(karta, karta.name or "", "catalog")
        self._kartas: dict[str, tuple[Definition | None, str | None]] = {}  # name → (def, error)
        self._by_gvk: dict[GVK, Definition] = {}
        self._workloads: dict[str, Slot[E]] = {}
        self._links: dict[str, dict[str, Any]] = {}
        #: every object a chain may pass, workloads and links, by uid (what walk_chain reads)
        self._owners: dict[str, Mapping[str, Any]] = {}
        self._pods: dict[str, dict[str, Any]] = {}
        # indexes that keep every change local: pod uid → (path, owners, missing uid);
        # object uid → pods whose chain passes it; missing uid → pods whose chain stops there;
        # namespace → workloads, and pods that only labels could place
        self._pod_links: dict[str, _Links] = {}
        self._through: dict[str, set[str]] = {}
        self._chains: dict[_Links, _Links] = {}  # see _shared_links
        self._waiting: dict[str, set[str]] = {}
        self._ns_workloads: dict[str, set[str]] = {}
        self._orphans: dict[str, set[str]] = {}
        self.generation = 0  # bumped on every change (watchers of the inventory poll it)
        self._listeners: list[Callable[[], None]] = []
        # the lock is shared: an evaluation's reads are recorded where its entry is stored
        self._refs = ReferencedObjects(self._lock)
        self._resolve()

    # -- definitions ----------------------------------------------------------------------

    def apply_karta(self, event: str, obj: Mapping[str, Any]) -> None:
        """A Karta from the cluster: loaded and validated; an invalid one keeps its error and
        the catalog's definition (if any) keeps serving its kind."""
        name = str(meta_of(obj).get("name") or "")
        with self._lock:
            if event == DELETED:
                self._kartas.pop(name, None)
            else:
                self._kartas[name] = _load(obj, name)
            self._resolve()
            for slot in self._workloads.values():
                _invalidate(slot)
            self._changed()

    def definitions(self) -> list[Definition]:
        """The definitions in force: cluster Kartas over the catalog, one per root GVK."""
        with self._lock:
            return sorted(self._by_gvk.values(), key=lambda d: (str(d.gvk), d.name))

    def definition_errors(self) -> dict[str, str]:
        """Cluster Kartas that cannot be used, by name, with the reason."""
        with self._lock:
            return {n: e for n, (_, e) in sorted(self._kartas.items()) if e is not None}

    def cluster_kartas(self) -> dict[str, Definition | None]:
        with self._lock:
            return {n: d for n, (d, _) in sorted(self._kartas.items())}

    def definition_for(self, gvk: GVK) -> Definition | None:
        with self._lock:
            return self._by_gvk.get(gvk)

    def _resolve(self) -> None:
        merged = dict(self._catalog)
        claimed: dict[GVK, list[Definition]] = {}
        for d, _ in self._kartas.values():
            if d is not None and d.gvk is not None:
                claimed.setdefault(d.gvk, []).append(d)
        for gvk, defs in claimed.items():
            # several Kartas for one GVK: the webhook refuses that; pick one deterministically
            merged[gvk] = sorted(defs, key=lambda d: d.name)[0]
        self._by_gvk = merged

    # -- objects --------------------------------------------------------------------------

    def apply_workload(self, event: str, obj: Mapping[str, Any], *, trimmed: bool = False) -> None:
        """A workload's watch event. ``trimmed``: ``obj`` is already what
        :data:`~workload_map.kube.trim.trim_workload` keeps (an informer trimmed it so), and is
        kept as it is rather than copied by a second trim."""
        uid, gvk = _uid(obj), _gvk_of(obj)
        namespace = str(meta_of(obj).get("namespace") or "")
        if not uid or gvk is None or not self._keep(namespace):
            return
        with self._lock:
            old = self._workloads.get(uid)
            if event == DELETED:
                if old is not None:
                    self._refs.forget(uid)
                    del self._workloads[uid]
                    if uid in self._links:  # (workloads win while both hold the uid)
                        self._owners[uid] = self._links[uid]
                    else:
                        self._owners.pop(uid, None)
                    self._ns_workloads.get(namespace, set()).discard(uid)
                    self._relink(self._through.pop(uid, set()))
            elif old is None:
                slot: Slot[E] = Slot(_kept(obj, trimmed), gvk)
                self._workloads[uid] = slot
                self._owners[uid] = slot.obj
                self._ns_workloads.setdefault(namespace, set()).add(uid)
                # pods waiting for this owner, orphans its labels may claim, and pods whose
                # chain passed it as a link (it is their workload now)
                self._relink(
                    self._waiting.pop(uid, set())
                    | self._orphans.get(namespace, set())
                    | self._through.get(uid, set())
                )
            else:
                moved = _controller_uid(old.obj) != _controller_uid(obj)
                old.obj = self._owners[uid] = _kept(obj, trimmed)
                _invalidate(old)
                if moved:
                    self._relink(set(self._through.get(uid, ())))
            self._changed()

    def apply_intermediate(self, event: str, obj: dict[str, Any]) -> None:
        uid = _uid(obj)
        if not uid or not self._keep(str(meta_of(obj).get("namespace") or "")):
            return
        with self._lock:
            before = self._links.get(uid)
            if event == DELETED:
                if before is None:
                    return
                del self._links[uid]
                if uid not in self._workloads:
                    self._owners.pop(uid, None)
                self._relink(self._through.pop(uid, set()))
            else:
                self._links[uid] = obj
                if uid not in self._workloads:
                    self._owners[uid] = obj
                if before is None:
                    self._relink(self._waiting.pop(uid, set()))
                elif _controller_uid(before) != _controller_uid(obj):
                    self._relink(set(self._through.get(uid, ())))
                else:
                    return  # nothing a chain reads has changed
            self._changed()

    def apply_pod(self, event: str, obj: dict[str, Any]) -> None:
        uid = _uid(obj)
        if not uid or not self._keep(str(meta_of(obj).get("namespace") or "")):
            return
        with self._lock:
            self._unlink_pod(uid)
            if event == DELETED:
                self._pods.pop(uid, None)
            else:
                self._pods[uid] = obj  # the watch cache's object: never mutated here
                self._link_pod(uid)
            self._changed()

    def apply_referenced(self, event: str, obj: Mapping[str, Any]) -> None:
        """An object of a kind some definition's references read: kept (namespace filter not
        applied: a runtime may be cluster-scoped or live in another namespace), and every
        workload whose evaluation read it (or listed its kind) is evaluated again."""
        with self._lock:
            self._reread(self._refs.apply(event, obj))

    def reference_unavailable(
        self, group: str, kind: str, reason: str | None, why: str = ""
    ) -> None:
        """Whether a referenced kind can be read: ``reason`` (``unserved``, ``forbidden``,
        ``error``) and ``why`` when it cannot, None when it can again. Workloads that read the
        kind are evaluated again when this changes."""
        with self._lock:
            self._reread(self._refs.set_unavailable(group, kind, reason, why))

    def _reread(self, stale: set[str] | None) -> None:
        """Under the lock: these workloads read a referenced object that changed (None: no
        referenced object changed)."""
        if stale is None:
            return
        for uid in stale:
            slot = self._workloads.get(uid)
            if slot is not None:
                _invalidate(slot)
        self._changed()

    def resolver(self, reads: set[ReadKey] | None = None) -> Resolver:
        """A resolver of references over the referenced objects held (what each evaluation
        binds); every read is added to ``reads``."""
        return self._refs.resolver(reads)

    def apply_documents(self, objects: Iterable[dict[str, Any]]) -> None:
        """Objects of files, as a cluster's watches would deliver them: Kartas, then workloads
        and the objects linking pods to them, then pods. Objects without a uid get one from
        their kind, namespace and name (files often leave uids out)."""
        objects = list(objects)
        for obj in objects:
            meta = obj.get("metadata")
            if not isinstance(meta, dict):
                meta = obj["metadata"] = {}
            if not meta.get("uid"):
                meta["uid"] = (
                    f"file:{obj.get('kind')}:{meta.get('namespace', '')}:{meta.get('name')}"
                )
        for obj in objects:
            if obj.get("kind") == "Karta":
                self.apply_karta(ADDED, obj)
        covered = {d.gvk for d in self.definitions()}
        referenced = {(g.group, g.kind) for g in referenced_kinds(self.definitions())}
        for obj in objects:
            kind = obj.get("kind")
            if kind in ("Karta", "Pod"):
                continue
            gvk = _gvk_of(obj)
            if gvk is not None and (gvk.group, gvk.kind) in referenced:
                self.apply_referenced(ADDED, obj)  # a runtime is also an object of its kind
            if GVK.from_api_version(str(obj.get("apiVersion")), str(kind)) in covered:
                self.apply_workload(ADDED, obj)
            else:
                self.apply_intermediate(ADDED, obj)
        for obj in objects:
            if obj.get("kind") == "Pod":
                self.apply_pod(ADDED, obj)

    def add_listener(self, callback: Callable[[], None]) -> None:
        """``callback()`` after every change (called with the inventory's lock held: be quick)."""
        self._listeners.append(callback)

    def _changed(self) -> None:
        self.generation += 1
        for callback in self._listeners:
            try:
                callback()
            except Exception:  # a listener's bug must not stop the watch that feeds us
                log.exception("inventory listener failed")

    # -- owner chains ---------------------------------------------------------------------

    def _path(self, obj: Mapping[str, Any]) -> tuple[list[str], str | None]:
        """Every uid up the controller chain of ``obj`` that the caches hold (the engine's one
        owner rule, :func:`~workload_map.engine.owners.chain_uids`: ``walk_chain``'s walk, by
        uid, without building the chain, as this runs per pod event), and the uid where the
        chain left them (None when it ended at an object without a controller, a cycle or the
        depth limit; ``""`` for a reference without a uid)."""
        return chain_uids(obj, self._owners)

    def _top_level(self, obj: Mapping[str, Any]) -> bool:
        """Whether no covered workload is up the controller chain of ``obj``: none the caches
        hold, and the reference where the chain left them (if it did) names no covered kind
        (that owner is hidden from us, or gone and its dependents about to be collected)."""
        meta = obj.get("metadata")
        if type(meta) is dict and not meta.get("ownerReferences"):
            # no owner at all (most top-level workloads): walk_chain's empty chain, without
            # building it, as a first scrape asks this of every workload of the fleet
            return True
        chain = walk_chain(obj, self._owners)
        for ref in chain.refs[: len(chain.owners)]:
            slot = self._workloads.get(str(ref.uid))
            if slot is not None and slot.gvk in self._by_gvk:
                return False
        missing = chain.missing
        if missing is None:
            return True
        wanted = GVK.from_api_version(missing.api_version, missing.kind).group_kind
        return not any(gvk.group_kind == wanted for gvk in self._by_gvk)

    def _link_pod(self, uid: str) -> None:
        pod = self._pods[uid]
        path, missing = self._path(pod)
        owners = [u for u in path if u in self._workloads]
        if missing is not None:
            self._waiting.setdefault(missing, set()).add(uid)
            if not owners:
                owners = self._by_labels(pod)
                path = [*path, *owners]  # so that their deletion relinks this pod too
                self._orphans.setdefault(str(meta_of(pod).get("namespace") or ""), set()).add(uid)
        links = self._shared_links((tuple(path), tuple(owners), missing))
        self._pod_links[uid] = links
        for u in path:
            self._through.setdefault(u, set()).add(uid)
        for owner in owners:
            _invalidate(self._workloads[owner])

    def _shared_links(self, links: _Links) -> _Links:
        """The one kept copy of these links: the pods of one Job have the same (three tuples
        per pod of a 100k-pod fleet otherwise). Bounded: emptied when full, as kube/trim's
        table (links kept stay correct; new ones share among themselves)."""
        found = self._chains.get(links)
        if found is None:
            if len(self._chains) >= _CHAINS_KEPT:
                self._chains.clear()
            found = self._chains[links] = links
        return found

    def _by_labels(self, pod: Mapping[str, Any]) -> list[str]:
        """For a pod whose chain broke before any workload: the one workload of its namespace
        that its operator's owner labels name, with that workload's own owners."""
        namespace = str(meta_of(pod).get("namespace") or "")
        matches = [
            uid
            for uid in self._ns_workloads.get(namespace, ())
            if label_verdict(pod, self._workloads[uid].obj) is True
        ]
        if len(matches) != 1:
            return []
        path, _ = self._path(self._workloads[matches[0]].obj)
        return [matches[0], *(u for u in path if u in self._workloads)]

    def _unlink_pod(self, uid: str) -> None:
        links = self._pod_links.pop(uid, None)
        if links is None:
            return
        path, owners, missing = links
        for u in path:
            through = self._through.get(u)
            if through is not None:
                through.discard(uid)
        if missing is not None:
            self._waiting.get(missing, set()).discard(uid)
            pod = self._pods.get(uid)
            if pod is not None:
                self._orphans.get(str(meta_of(pod).get("namespace") or ""), set()).discard(uid)
        for owner in owners:
            slot = self._workloads.get(owner)
            if slot is not None:
                _invalidate(slot)

    def _relink(self, pods: set[str]) -> None:
        """Walk these pods' chains again (an owner on their path came, went or moved)."""
        for uid in list(pods):
            if uid in self._pods:
                self._unlink_pod(uid)
                self._link_pod(uid)

    def pods(self) -> list[dict[str, Any]]:
        with self._lock:
            return list(self._pods.values())

    def pod_workload(self, pod_uid: str) -> str | None:
        """The uid of the top-level workload a pod belongs to, if any."""
        with self._lock:
            links = self._pod_links.get(pod_uid)
            if links is None or not links[1]:
                return None
            return links[1][-1]


def _kept(obj: Mapping[str, Any], trimmed: bool) -> dict[str, Any]:
    """What the inventory keeps of a workload: the informer's own object when it trimmed it
    (a second trim would only copy it: two copies of 10k workloads, and their trim's time)."""
    if trimmed and type(obj) is dict:
        return obj
    return trim_workload(obj)


def _invalidate(slot: Slot[Any]) -> None:
    slot.entry = None
    slot.version += 1


def _load(obj: Mapping[str, Any], name: str) -> tuple[Definition | None, str | None]:
    item = {"apiVersion": "run.ai/v1alpha1", "kind": "Karta", **obj}
    try:
        karta = load_karta(item)
    except WlmapError as exc:
        return None, str(exc)
    findings = [f for f in validate(karta) if f.is_error]
    if findings:
        return None, "; ".join(str(f) for f in findings)
    if karta.root_gvk is None or not karta.root_gvk.kind:
        return None, "its root component has no kind"
    return Definition(karta, name, "cluster", dict(item)), None
