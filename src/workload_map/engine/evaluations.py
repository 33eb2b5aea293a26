"""One evaluation per workload, shared by the consumers of one process (issue 21 item 4).

The operator with gangs and metrics evaluates every workload twice from the same watch caches:
the inventory (exporter, web view) summarises it, and the gang controller plans its gangs. Both
build a :class:`~workload_map.engine.workload.Workload` over the same objects, and each
``Workload`` derives the same things lazily: the extractor's instances, the status and phases,
each pod's placement and the gangs with their minimums. :class:`Evaluations` hands both the
same ``Workload``, so what one consumer derived the other reads.

Pure: a memo, keyed so that any change invalidates it. The watch caches replace an object on
every change (a new dict per event, never mutated in place), so an entry matches only the very
objects it was made from: the workload object and each pod by identity, in the order given
(consumers pass pods sorted by uid), with an equal definition (two rooms load their own copy of
a definition; equal copies answer alike). The entry holds those objects, so an identity cannot
be reused while it is kept. A definition with references is not shared (each room binds them
from its own caches).

``owned``: the inventory links pods by the owner rule and says so (no partition); the gang
planner passes its pods to be partitioned. An evaluation made one way serves the other only
when the partition would keep every pod given (checked, never assumed); a partitioned one whose
partition keeps every pod is made as an owned one (the same evaluation), the pods whose
controller reference names the workload needing no partition to say so.

What is kept: one entry per workload uid (the newest inputs), until every consumer that
joined (:meth:`Evaluations.join`) and covers its definition has taken it; then it is dropped
and lives on only where a consumer keeps it. A process with one consumer keeps nothing. A
bound (``capacity``) drops the oldest entries of workloads that went away before every
consumer took them.
"""

from __future__ import annotations

import _thread
from collections.abc import Callable, Sequence
from operator import is_
from typing import Any

from workload_map.engine.partition import partition_listed, partition_pods
from workload_map.engine.structure import prepare
from workload_map.engine.workload import Workload
from workload_map.model import Karta

__all__ = ["Evaluations"]


class _Entry:
    __slots__ = ("definition_name", "karta", "obj", "owned", "pods", "taken", "workload")

    def __init__(
        self,
        karta: Karta,
        obj: dict[str, Any],
        pods: tuple[dict[str, Any], ...],
        definition_name: str,
        owned: bool,
        workload: Workload,
        consumer: str,
    ) -> None:
        self.karta = karta
        self.obj = obj
        self.pods = pods
        self.definition_name = definition_name
        self.owned = owned
        self.workload = workload
        self.taken = {consumer}


class Evaluations:
    """The shared evaluations of one process (see the module doc); thread-safe."""

    def __init__(self, capacity: int = 50_000) -> None:
        self.capacity = capacity
        self._lock = _thread.RLock()  # (a match is checked again under it before storing)
        self._items: dict[str, _Entry] = {}
        self._consumers: dict[str, Callable[[Karta], bool]] = {}
        #: (consumer, id of a definition) -> (the definition, the consumer's test, its answer)
        self._coverage: dict[tuple[str, int], tuple[Karta, Callable[[Karta], bool], bool]] = {}
        #: (id, id) of two definitions -> whether they are equal, with both held (ids stay valid)
        self._equal: dict[tuple[int, int], tuple[Karta, Karta, bool]] = {}
        #: evaluations handed out made by another consumer, and made anew
        self.shared = 0
        self.made = 0

    def __len__(self) -> int:
        return len(self._items)

    def join(self, consumer: str, covers: Callable[[Karta], bool] = lambda _: True) -> None:
        """``consumer`` takes the evaluations of the workloads whose definition it ``covers``:
        an entry is kept until every such consumer has taken it."""
        with self._lock:
            self._consumers[consumer] = covers

    def workload(
        self,
        consumer: str,
        karta: Karta,
        obj: dict[str, Any],
        pods: Sequence[dict[str, Any]],
        *,
        definition_name: str | None = None,
        origin: str = "cluster",
        owned: bool,
        validate: bool = True,
    ) -> Workload:
        """The evaluation of ``obj`` with ``pods`` under ``karta``: another consumer's when it
        was made from these very objects, else a new one (kept for the other consumers).
        ``validate``: ``karta`` is validated first (once per definition object), as a
        ``Workload`` of it would be, whether or not the evaluation is another's."""
        name = definition_name or karta.name or ""
        meta = obj.get("metadata")
        uid = meta.get("uid") if type(meta) is dict else None
        if not isinstance(uid, str) or not uid or karta.spec.structure_definition.references:
            return self._make(karta, obj, pods, name, origin, owned, validate)
        prepare(karta, validate=validate)  # cached: an invalid definition raises here, as before
        kept = None if owned else _keeps_all(obj, uid, pods)
        if kept:
            # the partition would keep every pod: the same evaluation as an owned one (and
            # the owned one another consumer made serves without a partition of its own)
            owned = True
        found = self._shareable(uid, karta, obj, pods, name, owned, consumer, kept)
        if found is not None:
            return found
        wl = self._make(karta, obj, pods, name, origin, owned, validate)
        with self._lock:
            # both rooms start at once: another consumer may have made it meanwhile; its
            # evaluation is taken and this one dropped (nothing was derived from it yet)
            found = self._shareable(uid, karta, obj, pods, name, owned, consumer, kept)
            if found is not None:
                return found
            self.made += 1
            made = _Entry(karta, obj, tuple(pods), name, owned, wl, consumer)
            old = self._items.get(uid)
            if old is not None and self._matches(old, karta, obj, pods, name):
                # the same objects evaluated the other way (the partition left a pod out):
                # the consumers that took that one have their own
                made.taken |= old.taken
            if self._others(made, consumer):
                self._items.pop(uid, None)  # the newest goes last: the oldest is dropped first
                self._items[uid] = made
                while len(self._items) > self.capacity:
                    del self._items[next(iter(self._items))]
            elif old is not None:
                del self._items[uid]  # older inputs, or served every consumer now
        return wl

    def _shareable(
        self,
        uid: str,
        karta: Karta,
        obj: dict[str, Any],
        pods: Sequence[dict[str, Any]],
        name: str,
        owned: bool,
        consumer: str,
        kept: bool | None = None,
    ) -> Workload | None:
        """The kept evaluation of these very inputs, taken by ``consumer``, if one serves
        (``kept``: :func:`_keeps_all`'s answer for them, if known)."""
        with self._lock:
            entry = self._items.get(uid)
        if entry is None or not self._matches(entry, karta, obj, pods, name):
            return None
        if entry.owned != owned and (kept is False or not self._interchangeable(entry, owned)):
            return None
        with self._lock:
            self.shared += 1
            self._take(uid, entry, consumer)
        return entry.workload

    def forget(self, uid: str) -> None:
        """Drop what is kept of a workload (it was deleted)."""
        with self._lock:
            self._items.pop(uid, None)

    # -- under the hood -------------------------------------------------------------------

    @staticmethod
    def _make(
        karta: Karta,
        obj: dict[str, Any],
        pods: Sequence[dict[str, Any]],
        name: str,
        origin: str,
        owned: bool,
        validate: bool,
    ) -> Workload:
        return Workload(
            karta,
            obj,
            pods=list(pods),
            definition_name=name,
            origin=origin,
            validate=validate,
            file_mode=False,
            owned=owned,
            shared_inputs=True,  # the watch caches' objects (module doc)
        )

    def _matches(
        self,
        entry: _Entry,
        karta: Karta,
        obj: dict[str, Any],
        pods: Sequence[dict[str, Any]],
        name: str,
    ) -> bool:
        if entry.obj is not obj or entry.definition_name != name:
            return False
        kept = entry.pods
        # each pod by identity, in C (no Python step per pod of every workload of a fleet)
        if len(kept) != len(pods) or not all(map(is_, kept, pods)):
            return False
        return entry.karta is karta or self._same_karta(entry.karta, karta)

    def _same_karta(self, a: Karta, b: Karta) -> bool:
        key = (id(a), id(b))
        with self._lock:
            found = self._equal.get(key)
        if found is not None and found[0] is a and found[1] is b:
            return found[2]
        equal = a == b
        with self._lock:
            if len(self._equal) > 256:  # definitions come and go with cluster Kartas
                self._equal.clear()
            self._equal[key] = (a, b, equal)
        return equal

    @staticmethod
    def _interchangeable(entry: _Entry, owned: bool) -> bool:
        """Whether an evaluation made with the other ``owned`` serves this one: only when
        partitioning the pods would keep every one of them."""
        wl = entry.workload
        if owned:  # made partitioned: it kept every pod given
            return not wl.excluded and len(wl.candidate_pods) == len(entry.pods)
        candidates, excluded = partition_pods(entry.obj, entry.pods)
        return not excluded and len(candidates) == len(entry.pods)

    def _others(self, entry: _Entry, consumer: str) -> bool:
        """Under the lock: whether a consumer that covers the entry's definition has not taken
        it yet."""
        taken = entry.taken
        for name, covers in self._consumers.items():
            if name != consumer and name not in taken and self._covered(name, covers, entry.karta):
                return True
        return False

    def _covered(self, name: str, covers: Callable[[Karta], bool], karta: Karta) -> bool:
        """Under the lock: ``covers(karta)``, asked once per consumer and definition object
        (a process has a few definitions and evaluates 10k workloads of them)."""
        key = (name, id(karta))
        found = self._coverage.get(key)
        if found is not None and found[0] is karta and found[1] is covers:
            return found[2]
        answer = covers(karta)
        if len(self._coverage) > 256:  # definitions come and go with cluster Kartas
            self._coverage.clear()
        self._coverage[key] = (karta, covers, answer)  # held: ids stay theirs
        return answer

    def _take(self, uid: str, entry: _Entry, consumer: str) -> None:
        entry.taken.add(consumer)
        if not self._others(entry, consumer) and self._items.get(uid) is entry:
            del self._items[uid]


def _keeps_all(obj: dict[str, Any], uid: str, pods: Sequence[Any]) -> bool | None:
    """Whether partitioning ``pods`` against ``obj`` (uid ``uid``) keeps every one, when every
    item is a plain object (else None: not decided here). A Pod whose controller reference
    (its first) names ``obj`` by uid and kind is kept by its chain, so only the others are
    partitioned (each pod of a list of pods alone is decided on its own, and a pod whose
    controller is the workload is kept whatever else the list holds): a Job's pods cost no
    partition. Anything but a Pod among them is a link, not a candidate: False."""
    kind = obj.get("kind")
    if type(kind) is not str or not kind:
        return None
    first = pods[0] if pods else None
    rest: list[Any] = []
    keep = rest.append
    for pod in pods:  # per pod of every workload a cold resync plans: the common case first
        meta = pod.get("metadata") if type(pod) is dict else None
        if type(meta) is dict:
            refs = meta.get("ownerReferences")
            if type(refs) is list and refs:
                ref = refs[0]
                if (
                    type(ref) is dict
                    # the uid first: the pods of a workload whose controllers are its children
                    # (a JobSet's Jobs) fail there, and these reads are pure
                    and ref.get("uid") == uid
                    and ref.get("controller") is True
                    and ref.get("kind") == kind
                    and meta.get("uid") != uid  # (the pod itself: a cycle)
                    and pod.get("kind") == "Pod"
                    and (pod.get("apiVersion") or "v1") == "v1"
                    and type(pod.get("items")) is not list
                ):
                    continue
        if pod is first:
            # the first pod's controller is not the workload (a JobSet's pods, whose
            # controllers are its Jobs): nearly always none is, and the partition of them all
            # answers as that of the rest (a pod the workload controls is kept whatever the
            # list holds) in a few C-level passes, without a Python step per pod first
            split = partition_listed(obj, pods if type(pods) is list else list(pods))
            if split is None:
                return None
            return not split[1] and len(split[0]) == len(pods)
        keep(pod)
    if not rest:
        return True
    split = partition_listed(obj, rest)
    if split is None:
        return None
    return not split[1] and len(split[0]) == len(rest)
