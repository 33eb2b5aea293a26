"""The objects the pod webhook reads, kept in memory with only the fields it needs.

At admission a pod has no uid and often no name, and the webhook may make no API call, so
the owner chain (pod → ReplicaSet/Job/StatefulSet/leader pod → … → workload) is walked through
this store, which the operator's watches keep current. A just-created owner may not have
arrived yet: :meth:`ObjectCache.wait_for` waits for it, bounded, on a condition variable that
every insert wakes. Intermediate owners and pods keep their identity, labels, owners and the
few spec fields read (``schedulerName``, ``schedulingGroup``, ``nodeName``); workloads keep
their spec and status (the engine reads them) without ``managedFields`` or the last-applied
annotation. No library offers an index by (group, kind, namespace, name) with a bounded wait.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from workload_map.engine.references import ReferenceRequest, Resolver

# the trims are the shared ones: one pod informer serves every controller of the process
from workload_map.kube.trim import trim_intermediate as trim_owner
from workload_map.kube.trim import trim_pod, trim_workload

__all__ = [
    "Key",
    "ObjectCache",
    "cache_resolver",
    "group_of",
    "key_of",
    "trim_owner",
    "trim_pod",
    "trim_workload",
]

#: (API group, kind, namespace, name); cluster-scoped objects have namespace ""
Key = tuple[str, str, str, str]


def group_of(api_version: str) -> str:
    return api_version.split("/")[0] if "/" in api_version else ""


def key_of(obj: Mapping[str, Any]) -> Key:
    meta = obj.get("metadata") or {}
    return (
        group_of(str(obj.get("apiVersion") or "")),
        str(obj.get("kind") or ""),
        str(meta.get("namespace") or ""),
        str(meta.get("name") or ""),
    )


class ObjectCache:
    """Thread-safe objects by (group, kind, namespace, name), with a bounded wait for one.

    ``clock`` (seconds, default :func:`time.monotonic`) measures :meth:`wait_for`'s budget and
    the time it reports waited; a test passes one that moves as it says, so "the budget was
    spent" and "the arrival ended the wait" are facts of the test, not of the machine's speed
    (issue 26). Only the condition variable's own timeout stays in real seconds.
    """

    def __init__(self, *, clock: Callable[[], float] = time.monotonic) -> None:
        # (group, kind) → namespace → name → object: nested, so that no key is made per
        # object (a tuple of four per cached pod was about 9 MB of 130k objects); the names
        # are the objects' own strings
        self._items: dict[tuple[str, str], dict[str, dict[str, dict[str, Any]]]] = {}
        self._count = 0
        self._changed = threading.Condition()
        self._clock = clock

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[dict[str, Any]]:
        with self._changed:
            return iter(
                [o for spaces in self._items.values() for n in spaces.values() for o in n.values()]
            )

    def upsert(self, obj: dict[str, Any]) -> None:
        """Store ``obj`` (already trimmed) and wake every waiter."""
        group, kind, namespace, name = key_of(obj)
        with self._changed:
            names = self._items.setdefault((group, kind), {}).setdefault(namespace, {})
            if name not in names:
                self._count += 1
            names[name] = obj
            self._changed.notify_all()

    def remove(self, obj: Mapping[str, Any]) -> None:
        group, kind, namespace, name = key_of(obj)
        with self._changed:
            names = self._items.get((group, kind), {}).get(namespace)
            if names is not None and names.pop(name, None) is not None:
                self._count -= 1
                if not names:
                    del self._items[(group, kind)][namespace]

    def get(self, group: str, kind: str, namespace: str, name: str) -> dict[str, Any] | None:
        # dict reads are atomic under the GIL: the request path takes no lock here (a
        # namespace emptied meanwhile reads as absent)
        spaces = self._items.get((group, kind))
        names = spaces.get(namespace) if spaces is not None else None
        return names.get(name) if names is not None else None

    def get_many(
        self, group: str, kind: str, keys: Iterable[tuple[str, str]]
    ) -> list[dict[str, Any]]:
        """The objects of these (namespace, name) keys the cache holds, in order (without a
        lock, as :meth:`get`): one call for a workload's pods, which a resync reads per
        workload."""
        spaces = self._items.get((group, kind))
        if not spaces:
            return []
        out: list[dict[str, Any]] = []
        last: str | None = None
        names: dict[str, dict[str, Any]] | None = None
        for namespace, name in keys:
            if namespace != last:  # a workload's pods share one namespace: looked up once
                last, names = namespace, spaces.get(namespace)
            if names is not None:
                found = names.get(name)
                if found is not None:
                    out.append(found)
        return out

    def wait_for(
        self, key: Key, timeout: float, uid: str | None = None
    ) -> tuple[dict[str, Any] | None, float]:
        """The object (with ``uid`` when given) once it arrives, or None; and the time waited."""
        clock = self._clock
        start = clock()
        deadline = start + max(timeout, 0.0)
        with self._changed:
            while True:
                found = self.get(*key)
                if found is not None and (uid is None or _uid(found) in (uid, "")):
                    return found, clock() - start
                remaining = deadline - clock()
                if remaining <= 0:
                    return None, clock() - start
                self._changed.wait(remaining)

    def items_of(self, group: str, kind: str, namespace: str | None = None) -> list[dict[str, Any]]:
        with self._changed:
            spaces = self._items.get((group, kind), {})
            return [
                v
                for ns, names in spaces.items()
                if namespace is None or ns == namespace
                for v in names.values()
            ]


def _uid(obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata") or {}
    uid = meta.get("uid")
    return uid if isinstance(uid, str) else ""


def cache_resolver(cache: ObjectCache) -> Resolver:
    """A resolver of a definition's references over the watch cache (the referenced kinds
    are watched: :meth:`~workload_map.gangs.watcher.GangWatcher.refresh_kinds`). A
    cluster-scoped object is cached under namespace ``""``."""

    def resolve(request: ReferenceRequest) -> Any:
        group, kind = request.kind.group, request.kind.kind
        if request.object_name is not None:
            return cache.get(group, kind, request.namespace or "", request.object_name) or (
                cache.get(group, kind, "", request.object_name)
            )
        wanted = request.match_labels or {}
        found = []
        for obj in cache.items_of(group, kind):
            meta = obj.get("metadata") or {}
            if request.namespace and meta.get("namespace") not in (None, "", request.namespace):
                continue
            labels = meta.get("labels") or {}
            if all(labels.get(k) == v for k, v in wanted.items()):
                found.append(obj)
        return found

    return resolve
