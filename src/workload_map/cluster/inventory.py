"""Every workload a definition covers, its pods and its evaluation, kept current from watches.

The exporter and the web view both need the same thing: for every workload of every kind that a
definition (cluster Karta, else the built-in catalog) covers, the pods that belong to it and the
engine's shared evaluation of the two (:mod:`workload_map.engine.summary`; the whole describe
view only for the entries a reader opens). Watch caches feed this inventory through ``apply_*``; readers get
:class:`Entry` objects. Nothing here calls the API: :func:`watched_resources` says what to watch
and :mod:`workload_map.kube.cache` does the watching.

Pods join their workload through their owner chain (pod → ReplicaSet/Job/StatefulSet/... →
workload), walked in memory through the cached intermediate objects by uid. A chain that breaks
(an intermediate already garbage-collected) falls back to the operators' owner labels
(:func:`workload_map.engine.owner_labels.label_verdict`), and a pod is never given to a workload whose
labels it contradicts. A workload owned by another covered workload (a RayCluster under a RayJob)
gets its pods too, and is marked ``top_level=False`` so that sums over top-level workloads count
each pod once.

A definition's references (a TrainJob's runtime) are answered from the referenced objects the
watches deliver (``apply_referenced``; :func:`referenced_kinds` says which kinds). Each
evaluation records what it read, so a referenced object that changes re-evaluates exactly the
workloads that read it; a kind that cannot be watched (not served, forbidden) is reported per
workload as such (:meth:`Inventory.reference_unavailable`), not as "not found". The objects and
who read what are kept by :class:`~workload_map.cluster.referenced.ReferencedObjects`.

Summaries are memoised per (definition, workload resourceVersion, pods' resourceVersions): a change
marks only the workloads whose pods or objects changed, so a scrape of 10k workloads costs the
few that changed since the last one. An evaluation that fails is recorded on its entry
(``error``), counted per definition and logged once; every other workload still has its summary.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from workload_map.catalog import catalog as builtin
from workload_map.catalog.definitions import Definition
from workload_map.cluster.referenced import ReadKey, ReferencedObjects, referenced_kinds
from workload_map.engine import Workload
from workload_map.engine.evaluations import Evaluations
from workload_map.engine.owner_labels import label_verdict
from workload_map.engine.owners import (
    chain_uids,
    controller_ref,
    walk_chain,
)
from workload_map.engine.references import ReferenceView, Resolution, Resolver
from workload_map.engine.summary import WorkloadSummary, summarize
from workload_map.errors import WlmapError
from workload_map.kube.trim import trim_workload
from workload_map.model import GVK, load_karta, validate

__all__ = ["Entry", "Inventory", "NamespaceFilter", "referenced_kinds", "watched_kinds"]

log = logging.getLogger("workload_map.inventory")

ADDED, MODIFIED, DELETED = "ADDED", "MODIFIED", "DELETED"
#: distinct owner chains kept as one tuple each (a fleet has one per Job, ReplicaSet…)
_CHAINS_KEPT = 1 << 16
#: the inventory's name among the consumers of a process's shared evaluations
EVALUATIONS_CONSUMER = "inventory"
#: a pod's links: the uids up its chain that the caches hold, the workloads among them
#: (nearest first), and the uid where the chain left the caches (None: it ended)
_Links = tuple[tuple[str, ...], tuple[str, ...], str | None]


@dataclass(frozen=True)
class NamespaceFilter:
    """Which namespaces count: ``include`` (empty: all) minus ``exclude``."""

    include: frozenset[str] = frozenset()
    exclude: frozenset[str] = frozenset()

    def __call__(self, namespace: str) -> bool:
        if self.include and namespace not in self.include:
            return False
        return namespace not in self.exclude


# slotted: one per workload, 10k and more held at once
@dataclass(frozen=True, slots=True)
class Entry:
    """One workload as the inventory sees it.

    ``summary`` is the shared evaluation (:mod:`workload_map.engine.summary`: phases, counts,
    requested/pending/held, gangs), computed for every workload when the inventory is read;
    ``view``, the whole describe JSON, is built only when a reader asks for it (a workload's
    page), then kept with the entry. An owned workload listed without its evaluation
    (:meth:`Inventory.entries`) has neither summary nor pods."""

    uid: str
    obj: dict[str, Any]
    gvk: GVK
    definition: Definition
    top_level: bool
    pods: tuple[dict[str, Any], ...]
    summary: WorkloadSummary | None  # None when the evaluation failed (or was not asked)
    error: str | None = None  # why the summary is missing or incomplete
    #: the definition's references as resolved for this evaluation (None: it has none, or
    #: the inventory's evaluation was replaced); the describe view binds the same objects
    resolution: Resolution | None = None
    _view: list[dict[str, Any] | None] = field(default_factory=list, compare=False, repr=False)

    @property
    def namespace(self) -> str:
        return str((self.obj.get("metadata") or {}).get("namespace") or "")

    @property
    def name(self) -> str:
        return str((self.obj.get("metadata") or {}).get("name") or "")

    @property
    def phases(self) -> tuple[str, ...]:
        return self.summary.phases if self.summary is not None else ()

    @property
    def references(self) -> tuple[ReferenceView, ...]:
        """What each of the definition's references resolved to (``problem`` when it could
        not be read)."""
        return self.resolution.views if self.resolution is not None else ()

    @property
    def reference_problems(self) -> list[str]:
        """One line per reference that could not be resolved (``reference 'runtime': …``)."""
        return self.resolution.problems if self.resolution is not None else []

    @property
    def view(self) -> dict[str, Any] | None:
        """The describe JSON (``wlmap describe -o json``), built on first use; None when the
        workload cannot be evaluated."""
        if not self._view:
            try:
                self._view.append(
                    _describe(self.definition, self.obj, list(self.pods), self.resolution)
                )
            except WlmapError:
                self._view.append(None)
            except Exception:  # an engine bug must cost one page, not the server
                log.debug("describe failed", exc_info=True)
                self._view.append(None)
        return self._view[0]


@dataclass(slots=True)
class _Slot:
    obj: dict[str, Any]
    gvk: GVK
    entry: Entry | None = None  # memoised; None when dirty
    version: int = 0  # bumped whenever the memo goes stale


@dataclass(frozen=True, slots=True)
class _Job:
    """One evaluation to run outside the lock: its inputs, and the slot version they are of."""

    uid: str
    slot: _Slot
    version: int
    definition: Definition
    obj: dict[str, Any]
    gvk: GVK
    pods: tuple[dict[str, Any], ...]
    top_level: bool
    #: the referenced objects' version when the job was made (a referenced object that
    #: changed during the evaluation makes its result stale)
    ref_version: int = 0


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    meta = obj.get("metadata")
    return meta if isinstance(meta, Mapping) else {}


def _uid(obj: Mapping[str, Any]) -> str:
    return str(_meta(obj).get("uid") or "")


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


class Inventory:
    """Workloads, intermediates, pods and definitions, fed by watch events; thread-safe.

    ``catalog`` seeds the built-in definitions (a cluster Karta of the same root GVK replaces
    one); ``namespaces`` filters what is kept; ``evaluate`` turns (definition, workload, pods)
    into the shared evaluation (:func:`~workload_map.engine.summary.summarize`, by default).
    """

    def __init__(
        self,
        *,
        catalog: bool = True,
        namespaces: NamespaceFilter | None = None,
        evaluate: Callable[[Definition, dict[str, Any], list[dict[str, Any]]], WorkloadSummary]
        | None = None,
    ) -> None:
        self._lock = threading.RLock()
        self._keep = namespaces or NamespaceFilter()
        self._evaluate = evaluate or _summarize
        self._catalog: dict[GVK, Definition] = {}
        if catalog:
            for karta in builtin.list():
                if karta.root_gvk is not None:
                    self._catalog[karta.root_gvk] = Definition(karta, karta.name or "", "catalog")
        self._kartas: dict[str, tuple[Definition | None, str | None]] = {}  # name → (def, error)
        self._by_gvk: dict[GVK, Definition] = {}
        self._workloads: dict[str, _Slot] = {}
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
        self.errors: dict[str, int] = {}  # evaluation failures per definition name
        self._logged: set[tuple[str, str]] = set()
        self.generation = 0  # bumped on every change (watchers of the inventory poll it)
        self._listeners: list[Callable[[], None]] = []
        # the lock is shared: an evaluation's reads are recorded where its entry is stored
        self._refs = ReferencedObjects(self._lock)
        self._shared: Evaluations | None = None
        self._resolve()

    def share_evaluations(self, evaluations: Evaluations) -> None:
        """Evaluate through the process's shared evaluations
        (:mod:`workload_map.engine.evaluations`): in the operator, the gang planner reads the
        engine's view of a workload that this inventory made, and the other way round. Call it
        before the first read."""
        evaluations.join(EVALUATIONS_CONSUMER)
        self._shared = evaluations

    # -- definitions ----------------------------------------------------------------------

    def apply_karta(self, event: str, obj: Mapping[str, Any]) -> None:
        """A Karta from the cluster: loaded and validated; an invalid one keeps its error and
        the catalog's definition (if any) keeps serving its kind."""
        name = str(_meta(obj).get("name") or "")
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
        namespace = str(_meta(obj).get("namespace") or "")
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
                self._workloads[uid] = slot = _Slot(_kept(obj, trimmed), gvk)
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
        if not uid or not self._keep(str(_meta(obj).get("namespace") or "")):
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
        if not uid or not self._keep(str(_meta(obj).get("namespace") or "")):
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
                self._orphans.setdefault(str(_meta(pod).get("namespace") or ""), set()).add(uid)
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
        namespace = str(_meta(pod).get("namespace") or "")
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
                self._orphans.get(str(_meta(pod).get("namespace") or ""), set()).discard(uid)
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

    # -- reading --------------------------------------------------------------------------

    def entries(self, *, owned_views: bool = False) -> list[Entry]:
        """Every covered workload, sorted by namespace, kind and name, summaries computed.

        Stale summaries are evaluated outside the lock, so watches keep feeding the inventory
        while a first scrape or page computes thousands of them. A workload owned by another
        covered one (the Jobs of a JobSet) is counted through its owner, so its own summary is
        only computed with ``owned_views`` (or by :meth:`entry`); without, its entry has
        ``summary=None`` and no error."""
        with self._lock:
            ready, jobs = self._collect(list(self._workloads), owned_views=owned_views)
        out = ready + [e for e in map(self._finish, jobs) if e is not None]
        out.sort(key=lambda e: (e.namespace, e.gvk.kind, e.name))
        return out

    def entry(self, uid: str) -> Entry | None:
        with self._lock:
            ready, jobs = self._collect([uid])
        if ready:
            return ready[0]
        return self._finish(jobs[0]) if jobs else None

    def find(self, gvk: GVK, namespace: str, name: str) -> Entry | None:
        with self._lock:
            found = next(
                (
                    uid
                    for uid in self._ns_workloads.get(namespace, ())
                    if self._workloads[uid].gvk == gvk
                    and _meta(self._workloads[uid].obj).get("name") == name
                ),
                None,
            )
        return self.entry(found) if found is not None else None

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

    def _collect(
        self, uids: list[str], *, owned_views: bool = True
    ) -> tuple[list[Entry], list[_Job]]:
        """Under the lock: the fresh entries among ``uids``, and the evaluations the rest need."""
        ready: list[Entry] = []
        jobs: list[_Job] = []
        for uid in uids:
            slot = self._workloads.get(uid)
            if slot is None:
                continue
            definition = self._by_gvk.get(slot.gvk)
            if definition is None:
                continue
            if slot.entry is not None and slot.entry.definition is definition:
                if slot.entry.summary is not None or slot.entry.error or not owned_views:
                    ready.append(slot.entry)
                    continue
            top_level = self._top_level(slot.obj)
            if not top_level and not owned_views:
                # a placeholder, without pods (nothing reads them: entry(uid) evaluates it)
                entry = Entry(uid, slot.obj, slot.gvk, definition, False, (), None, None)
                slot.entry = entry
                ready.append(entry)
                continue
            # a workload's pods are those whose chain passes it (every workload on a chain
            # is one of the pod's owners): one set serves both, 10k workloads' worth
            known = self._pods
            pods = tuple([known[p] for p in sorted(self._through.get(uid, ())) if p in known])
            jobs.append(
                _Job(
                    uid,
                    slot,
                    slot.version,
                    definition,
                    slot.obj,
                    slot.gvk,
                    pods,
                    top_level,
                    self._refs.version,
                )
            )
        return ready, jobs

    def _finish(self, job: _Job) -> Entry:
        """Evaluate (no lock held), then memoise unless the slot changed meanwhile."""
        summary: WorkloadSummary | None = None
        error: str | None = None
        resolution: Resolution | None = None
        reads: set[ReadKey] = set()
        try:
            if self._evaluate is _summarize and _has_references(job.definition):
                workload = _workload(job.definition, job.obj, list(job.pods), self.resolver(reads))
                summary, resolution = summarize(workload), workload.resolution
            elif self._evaluate is _summarize and self._shared is not None:
                # the process's other consumer (the gang planner) reads the same evaluation
                summary = self._shared.workload(
                    EVALUATIONS_CONSUMER,
                    job.definition.karta,
                    job.obj,
                    job.pods,
                    definition_name=job.definition.name,
                    origin=job.definition.origin,
                    owned=True,  # linked here by the owner rule: not partitioned again
                    validate=False,
                ).summary()
            else:
                summary = self._evaluate(job.definition, job.obj, list(job.pods))
            error = summary.error
        except WlmapError as exc:
            error = str(exc)
        except Exception as exc:  # an engine bug must cost one workload, not the scrape
            error = f"internal error: {type(exc).__name__}: {exc}"
            log.debug("evaluation failed", exc_info=True)
        entry = Entry(
            job.uid,
            job.obj,
            job.gvk,
            job.definition,
            job.top_level,
            job.pods,
            summary,
            error,
            resolution,
        )
        with self._lock:
            current = self._workloads.get(job.uid) is job.slot and job.slot.version == job.version
            if reads and job.ref_version != self._refs.version:
                current = False  # a referenced object changed while it was read
            stored = job.slot.entry
            placeholder = stored is not None and stored.summary is None and stored.error is None
            if not current or (stored is not None and not placeholder):
                return entry  # stale inputs, or another reader stored it first
            job.slot.entry = entry
            self._refs.record(job.uid, reads)
            self._log_references(job, entry)
            if error is not None:
                name = job.definition.name
                self.errors[name] = self.errors.get(name, 0) + 1
                if (name, job.uid) not in self._logged:
                    self._logged.add((name, job.uid))
                    meta = _meta(job.obj)
                    log.warning(
                        "definition %s cannot evaluate %s %s/%s: %s",
                        name,
                        job.gvk.kind,
                        meta.get("namespace"),
                        meta.get("name"),
                        error,
                    )
        return entry

    def _log_references(self, job: _Job, entry: Entry) -> None:
        """Each reference problem of a workload logged once (a warning: the workload's numbers
        leave out what the referenced object would add)."""
        for problem in entry.reference_problems:
            key = (job.uid, problem)
            if key not in self._logged:
                self._logged.add(key)
                meta = _meta(job.obj)
                log.warning(
                    "%s %s/%s: %s (shown with what the workload alone says)",
                    job.gvk.kind,
                    meta.get("namespace"),
                    meta.get("name"),
                    problem,
                )


def _kept(obj: Mapping[str, Any], trimmed: bool) -> dict[str, Any]:
    """What the inventory keeps of a workload: the informer's own object when it trimmed it
    (a second trim would only copy it: two copies of 10k workloads, and their trim's time)."""
    if trimmed and type(obj) is dict:
        return obj
    return trim_workload(obj)


def _invalidate(slot: _Slot) -> None:
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


def _workload(
    definition: Definition,
    obj: dict[str, Any],
    pods: list[dict[str, Any]],
    references: Resolver | Resolution | None = None,
) -> Workload:
    return Workload(
        definition.karta,
        obj,
        pods=pods,
        definition_name=definition.name,
        origin=definition.origin,
        validate=False,
        file_mode=False,
        owned=True,  # linked here by the owner rule: not partitioned again
        references=references,
    )


def _summarize(
    definition: Definition, obj: dict[str, Any], pods: list[dict[str, Any]]
) -> WorkloadSummary:
    return summarize(_workload(definition, obj, pods))


def _describe(
    definition: Definition,
    obj: dict[str, Any],
    pods: list[dict[str, Any]],
    resolution: Resolution | None = None,
) -> dict[str, Any]:
    return _workload(definition, obj, pods, resolution).describe()


def _has_references(definition: Definition) -> bool:
    return bool(definition.karta.spec.structure_definition.references)
