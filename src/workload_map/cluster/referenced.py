"""The objects a definition's references read, as watches deliver them, and who read what.

An inventory evaluates a TrainJob with its runtime: the runtime comes from here
(:meth:`ReferencedObjects.resolver`), and the evaluation records each read (group, kind, name;
name None for a list by labels). When a referenced object changes, or its kind becomes
unreadable (not served, forbidden) or readable again, :meth:`ReferencedObjects.apply` and
:meth:`ReferencedObjects.set_unavailable` answer which workloads read it, so the inventory
evaluates exactly those again. ``version`` is bumped on each such change: an evaluation that
ran across one read a stale object and must not be kept.

The inventory's lock is shared (passed in), so that a workload's reads are recorded in the same
critical section that stores its evaluation; every method takes it, and it is re-entrant.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from typing import Any

from workload_map.catalog.definitions import Definition
from workload_map.engine.references import (
    ReferenceRequest,
    ReferenceUnavailable,
    Resolver,
)
from workload_map.engine.references import referenced_kinds as definition_references
from workload_map.model import GVK

__all__ = ["ReadKey", "ReferencedObjects", "referenced_kinds"]

#: one read of a reference: (group, kind, name), name None for a list by labels. The namespace
#: is left out: a lookup may find a cluster-scoped object under any namespace, and a key that
#: matches too much only re-evaluates a workload once more
ReadKey = tuple[str, str, str | None]


def referenced_kinds(definitions: Iterable[Definition]) -> set[GVK]:
    """Every kind the definitions' references may read (watched beside the workloads; a kind
    a definition may never read, a Secret, is not among them)."""
    return {gvk for d in definitions for gvk in definition_references(d.karta)}


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    meta = obj.get("metadata")
    return meta if isinstance(meta, Mapping) else {}


class ReferencedObjects:
    """Referenced objects by (group, kind) then (namespace, name), the kinds that cannot be
    read (with why), and which workload uids read which :data:`ReadKey`."""

    def __init__(self, lock: threading.RLock) -> None:
        self._lock = lock
        self._objects: dict[tuple[str, str], dict[tuple[str, str], Mapping[str, Any]]] = {}
        self._unavailable: dict[tuple[str, str], tuple[str, str]] = {}
        self._readers: dict[ReadKey, set[str]] = {}
        self._reads: dict[str, frozenset[ReadKey]] = {}  # workload uid → its recorded reads
        #: bumped whenever a referenced object or a kind's availability changes
        self.version = 0

    def apply(self, event: str, obj: Mapping[str, Any]) -> set[str] | None:
        """A watch event of a referenced object (kept whatever its namespace: a runtime may be
        cluster-scoped or live in another namespace). Returns the uids of the workloads that
        read it or listed its kind (they are forgotten as readers: their next evaluation
        records its own reads), or None when nothing changed (an unnamed object, or the
        deletion of one never seen)."""
        api_version, kind = obj.get("apiVersion"), obj.get("kind")
        name = str(_meta(obj).get("name") or "")
        if not isinstance(api_version, str) or not isinstance(kind, str) or not kind or not name:
            return None
        group = GVK.from_api_version(api_version, kind).group
        key = (str(_meta(obj).get("namespace") or ""), name)
        with self._lock:
            objects = self._objects.setdefault((group, kind), {})
            if event == "DELETED":
                if objects.pop(key, None) is None:
                    return None
            else:
                objects[key] = obj
            return self._stale({(group, kind, name), (group, kind, None)})

    def set_unavailable(
        self, group: str, kind: str, reason: str | None, why: str = ""
    ) -> set[str] | None:
        """Whether a referenced kind can be read: ``reason`` (``unserved``, ``forbidden``,
        ``error``) and ``why`` when it cannot, None when it can again. Returns the uids of the
        workloads that read the kind, or None when its availability did not change."""
        with self._lock:
            before = self._unavailable.get((group, kind))
            now = (reason, why) if reason is not None else None
            if before == now:
                return None
            if now is None:
                del self._unavailable[(group, kind)]
            else:
                self._unavailable[(group, kind)] = now
            return self._stale({k for k in self._readers if k[:2] == (group, kind)})

    def _stale(self, keys: set[ReadKey]) -> set[str]:
        self.version += 1
        stale: set[str] = set()
        for key in keys:
            stale |= self._readers.pop(key, set())
        return stale

    def record(self, uid: str, reads: Iterable[ReadKey]) -> None:
        """The reads of the evaluation kept for workload ``uid`` (replacing those of its last)."""
        reads = frozenset(reads)
        with self._lock:
            for key in self._reads.get(uid, frozenset()) - reads:
                self._readers.get(key, set()).discard(uid)
            for key in reads:
                self._readers.setdefault(key, set()).add(uid)
            if reads:
                self._reads[uid] = reads
            else:
                self._reads.pop(uid, None)

    def forget(self, uid: str) -> None:
        """Workload ``uid`` is gone: it reads nothing any more."""
        self.record(uid, ())

    def readers(self, key: ReadKey) -> frozenset[str]:
        """The workloads whose kept evaluation read ``key``."""
        with self._lock:
            return frozenset(self._readers.get(key, ()))

    def resolver(self, reads: set[ReadKey] | None = None) -> Resolver:
        """A resolver of references over the objects held (what each evaluation binds); every
        read is added to ``reads``."""

        def resolve(request: ReferenceRequest) -> Any:
            group, kind = request.kind.group, request.kind.kind
            if reads is not None:
                reads.add((group, kind, request.object_name))
            with self._lock:
                unavailable = self._unavailable.get((group, kind))
                if unavailable is not None:
                    raise ReferenceUnavailable(*unavailable)
                objects = self._objects.get((group, kind), {})
                if request.object_name is not None:
                    namespace = request.namespace or ""
                    # a cluster-scoped object is held under no namespace
                    return objects.get((namespace, request.object_name)) or objects.get(
                        ("", request.object_name)
                    )
                wanted = request.match_labels or {}
                found = []
                for (namespace, _), obj in sorted(objects.items()):
                    if request.namespace and namespace not in ("", request.namespace):
                        continue
                    labels = _meta(obj).get("labels")
                    labels = labels if isinstance(labels, Mapping) else {}
                    if all(labels.get(k) == v for k, v in wanted.items()):
                        found.append(obj)
                return found

        return resolve
