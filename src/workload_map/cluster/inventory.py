"""Every workload a definition covers, its pods and its evaluation, kept current from watches.

The exporter and the web view both need the same thing: for every workload of every kind that a
definition (cluster Karta, else the built-in catalog) covers, the pods that belong to it and the
engine's shared evaluation of the two (:mod:`workload_map.engine.summary`; the whole describe
view only for the entries a reader opens). Watch caches feed this inventory through ``apply_*``
(:class:`~workload_map.cluster.holdings.Holdings`: the objects kept, each pod linked to its
workloads by the owner rule); readers get :class:`Entry` objects, evaluated here.

A definition's references (a TrainJob's runtime) are answered from the referenced objects the
watches deliver. Each evaluation records what it read, so a referenced object that changes
re-evaluates exactly the workloads that read it; a kind that cannot be watched (not served,
forbidden) is reported per workload as such (:meth:`Inventory.reference_unavailable`), not as
"not found".

Summaries are memoised per (definition, workload resourceVersion, pods' resourceVersions): a change
marks only the workloads whose pods or objects changed, so a scrape of 10k workloads costs the
few that changed since the last one. An evaluation that fails is recorded on its entry
(``error``), counted per definition and logged once; every other workload still has its summary.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from workload_map.catalog.definitions import Definition
from workload_map.cluster.holdings import (
    Holdings,
    NamespaceFilter,
    Slot,
    meta_of,
    referenced_kinds,
    watched_kinds,
)
from workload_map.cluster.referenced import ReadKey
from workload_map.engine import Workload
from workload_map.engine.evaluations import Evaluations
from workload_map.engine.references import ReferenceView, Resolution, Resolver
from workload_map.engine.summary import WorkloadSummary, summarize
from workload_map.errors import WlmapError
from workload_map.model import GVK

__all__ = ["Entry", "Inventory", "NamespaceFilter", "referenced_kinds", "watched_kinds"]

log = logging.getLogger("workload_map.inventory")

#: the inventory's name among the consumers of a process's shared evaluations
EVALUATIONS_CONSUMER = "inventory"


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


# not frozen: one is made per workload of every first read, and a frozen dataclass's
# __init__ sets each of its nine fields through object.__setattr__ (about four times the cost)
@dataclass(slots=True)
class _Job:
    """One evaluation to run outside the lock: its inputs, and the slot version they are of."""

    uid: str
    slot: Slot[Entry]
    version: int
    definition: Definition
    obj: dict[str, Any]
    gvk: GVK
    pods: tuple[dict[str, Any], ...]
    top_level: bool
    #: the referenced objects' version when the job was made (a referenced object that
    #: changed during the evaluation makes its result stale)
    ref_version: int = 0


class Inventory(Holdings[Entry]):
    """Workloads, intermediates, pods and definitions, fed by watch events
    (:class:`~workload_map.cluster.holdings.Holdings`), and their evaluations; thread-safe.

    ``catalog`` seeds the built-in definitions (a cluster Karta of the same root GVK replaces
    one); ``namespaces`` filters what is kept; ``evaluate`` turns (definition, workload, pods)
    into the shared evaluation (:func:`~workload_map.engine.summary.summarize`, by default).
    ``detail=False``: the default evaluation leaves out the gangs and the pod places
    (``summarize(detail=False)``), for a reader of the numbers only (``wlmap serve``: its
    list and vitals read the phases and totals, its workload page the describe view).
    """

    def __init__(
        self,
        *,
        catalog: bool = True,
        namespaces: NamespaceFilter | None = None,
        evaluate: Callable[[Definition, dict[str, Any], list[dict[str, Any]]], WorkloadSummary]
        | None = None,
        detail: bool = True,
    ) -> None:
        super().__init__(catalog=catalog, namespaces=namespaces)
        #: None: the shared evaluation (``summarize``, with references and shared evaluations)
        self._evaluate = evaluate
        self.detail = detail
        self.errors: dict[str, int] = {}  # evaluation failures per definition name
        self._logged: set[tuple[str, str]] = set()
        self._shared: Evaluations | None = None

    def share_evaluations(self, evaluations: Evaluations) -> None:
        """Evaluate through the process's shared evaluations
        (:mod:`workload_map.engine.evaluations`): in the operator, the gang planner reads the
        engine's view of a workload that this inventory made, and the other way round. Call it
        before the first read."""
        evaluations.join(EVALUATIONS_CONSUMER)
        self._shared = evaluations

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

    def listed(self) -> list[Entry]:
        """Every covered workload in :meth:`entries`' order, none evaluated here: an entry
        already evaluated (and still current) as it is, any other without its evaluation
        (``summary=None``, no error, no pods; :meth:`evaluated` gives it). For a reader that
        shows a few of many (the web list's page): sorting and filtering by name, kind or
        namespace reads nothing of the evaluation, so only the rows shown are evaluated."""
        out: list[Entry] = []
        with self._lock:
            by_gvk = self._by_gvk
            for uid, slot in self._workloads.items():
                definition = by_gvk.get(slot.gvk)
                if definition is None:
                    continue
                entry = slot.entry
                if entry is None or entry.definition is not definition:
                    # not stored: a top-level placeholder in the slot would read as evaluated
                    top_level = self._top_level(slot.obj)
                    entry = Entry(uid, slot.obj, slot.gvk, definition, top_level, (), None, None)
                out.append(entry)
        out.sort(key=lambda e: (e.namespace, e.gvk.kind, e.name))
        return out

    def evaluated(self, entries: list[Entry]) -> list[Entry]:
        """``entries`` (of :meth:`listed`) with each top-level one evaluated, in their order
        (one whose workload is gone meanwhile stays as given)."""
        wanted = [e.uid for e in entries if e.top_level and e.summary is None and not e.error]
        if not wanted:
            return entries
        with self._lock:
            ready, jobs = self._collect(wanted)
        done = {e.uid: e for e in ready}
        done.update((e.uid, e) for e in map(self._finish, jobs))
        return [done.get(e.uid, e) if e.top_level else e for e in entries]

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
                    and meta_of(self._workloads[uid].obj).get("name") == name
                ),
                None,
            )
        return self.entry(found) if found is not None else None

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
            if self._evaluate is not None:
                summary = self._evaluate(job.definition, job.obj, list(job.pods))
            elif _has_references(job.definition):
                workload = _workload(job.definition, job.obj, list(job.pods), self.resolver(reads))
                summary, resolution = summarize(workload, detail=self.detail), workload.resolution
            elif self._shared is not None:
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
                summary = summarize(
                    _workload(job.definition, job.obj, list(job.pods)), detail=self.detail
                )
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
                    meta = meta_of(job.obj)
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
                meta = meta_of(job.obj)
                log.warning(
                    "%s %s/%s: %s (shown with what the workload alone says)",
                    job.gvk.kind,
                    meta.get("namespace"),
                    meta.get("name"),
                    problem,
                )


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
        shared_inputs=True,  # the watch caches' objects, replaced on change
    )


def _describe(
    definition: Definition,
    obj: dict[str, Any],
    pods: list[dict[str, Any]],
    resolution: Resolution | None = None,
) -> dict[str, Any]:
    return _workload(definition, obj, pods, resolution).describe()


def _has_references(definition: Definition) -> bool:
    return bool(definition.karta.spec.structure_definition.references)
