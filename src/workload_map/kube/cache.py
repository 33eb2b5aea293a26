"""Watch caches of plain dicts, shared by the operator, its controllers, the exporter and the web view.

An :class:`Informer` lists a collection through the one pager (:mod:`workload_map.kube.pager`),
then watches it through the one watch (:class:`~workload_map.kube.watch.Watch`: bookmarks,
resume from the last resourceVersion seen) and lists again on ``410 Gone``; a relist diffs
against the cache (gone objects fire DELETED, kept ones MODIFIED, new ones ADDED). What a
consumer needs beyond that is here too:

* objects stay plain dicts: any kind (CRDs included) is cached without generated models;
* a ``transform`` trims every object before it is stored (pods keep only what controllers read);
  every consumer of one path states what it keeps (a :class:`~workload_map.kube.trim.Trim`)
  and :class:`InformerSet` keeps their union, re-listing when a later consumer needs more;
* watches carry a server-side timeout (jittered) plus a client read timeout, so a silently
  dead connection is noticed;
* when the API server goes away, retries back off exponentially with jitter;
* ``wait_synced`` and ``last_error`` tell a controller whether the cache is usable, and why not
  (a 403 becomes a condition, not a crash loop).
"""

from __future__ import annotations

import builtins
import logging
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from workload_map.kube.errors import ApiError, ClusterError, Gone
from workload_map.kube.pager import Reader, pages
from workload_map.kube.trim import Trim
from workload_map.kube.watch import Streamer, Watch, WatchExpired

__all__ = [
    "ADDED",
    "DELETED",
    "MODIFIED",
    "Handler",
    "Informer",
    "InformerSet",
    "Source",
    "Transform",
    "TransformConflict",
    "merge_transforms",
    "object_key",
]

log = logging.getLogger("workload_map.cache")

#: statuses that answer a list for good: unauthorized, forbidden, not served
_REFUSALS = frozenset({401, 403, 404})


class Source(Reader, Streamer, Protocol):
    """What an informer reads through: GETs (the pager) and streams (the watch)."""


ADDED = "ADDED"
MODIFIED = "MODIFIED"
DELETED = "DELETED"

Transform = Callable[[dict[str, Any]], dict[str, Any]]
Handler = Callable[[str, dict[str, Any]], None]


class TransformConflict(ClusterError):
    """Two consumers of one watched path want transforms that cannot be merged."""

    def __init__(self, path: str, held: object, wanted: object) -> None:
        super().__init__(
            f"the watch of {path} is shared: its transform {held!r} and the requested "
            f"{wanted!r} cannot be merged (declare both as workload_map.kube.trim.Trim "
            "field sets, or use one function)"
        )
        self.path = path


def merge_transforms(
    path: str, held: Transform | None, wanted: Transform | None
) -> Transform | None:
    """The transform that keeps what both ``held`` and ``wanted`` keep (None: everything).

    Field sets (:class:`Trim`) merge into their union; no transform keeps everything, so it
    absorbs any field set; two different plain functions cannot be merged and raise
    :class:`TransformConflict` (a function may reshape objects, not only drop fields).
    """
    if held is wanted:
        return held
    if held is None or wanted is None:
        other = wanted if held is None else held
        if isinstance(other, Trim):
            return None
        raise TransformConflict(path, held, wanted)
    if isinstance(held, Trim) and isinstance(wanted, Trim):
        return held if held.covers(wanted) else held | wanted
    raise TransformConflict(path, held, wanted)


def object_key(obj: dict[str, Any]) -> str:
    """``namespace/name`` for namespaced objects, ``name`` for cluster-scoped ones."""
    meta = obj.get("metadata") or {}
    ns = meta.get("namespace") or ""
    name = meta.get("name") or ""
    return f"{ns}/{name}" if ns else str(name)


@dataclass
class _Backoff:
    """Exponential backoff with jitter between failed API calls of one informer."""

    base: float = 0.5
    cap: float = 30.0
    failures: int = 0

    def delay(self) -> float:
        if self.failures == 0:
            return 0.0
        raw = min(self.cap, self.base * (2 ** (self.failures - 1)))
        return float(raw * (0.5 + random.random() / 2))


@dataclass
class Informer:
    """One watched collection (``path`` such as ``/api/v1/pods``), cached as dicts.

    ``source`` is the request path (:class:`~workload_map.kube.transport.KubeTransport`).
    Handlers run on the informer thread, after the cache holds the event's object; they get
    ``(event_type, obj)`` with ``obj`` already transformed.
    """

    source: Source
    path: str
    label_selector: str | None = None
    field_selector: str | None = None
    transform: Transform | None = None
    page_size: int = 500
    watch_timeout: int = 300
    kind: str | None = None
    api_version: str | None = None
    _handlers: list[Handler] = field(default_factory=list, repr=False)
    _synced: threading.Event = field(default_factory=threading.Event, repr=False)
    #: set unless a widened transform's relist is pending (the cache holds narrower objects)
    _wide: threading.Event = field(default_factory=threading.Event, repr=False)
    #: set once the first list succeeded or the server refused it for good (see wait_answered)
    _answered: threading.Event = field(default_factory=threading.Event, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _backoff: _Backoff = field(default_factory=_Backoff, repr=False)
    _store: dict[str, dict[str, Any]] = field(default_factory=dict, repr=False)
    _store_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _watch: Watch | None = field(default=None, repr=False)
    _thread: threading.Thread | None = field(default=None, repr=False)
    _version: str | None = field(default=None, repr=False)  # None: list (again)
    last_error: ApiError | Exception | None = None
    lists: int = 0  # full lists done (the first one plus relists after 410 / widening)
    expired: int = 0  # watches the server answered 410 Gone (each one lists again)
    stopping: threading.Event = field(default_factory=threading.Event, repr=False)
    _relist: threading.Event = field(default_factory=threading.Event, repr=False)

    # -- public ---------------------------------------------------------------------------

    def start(self) -> Informer:
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._run, name=f"informer {self.path}", daemon=True
            )
            self._thread.start()
        return self

    def stop(self) -> None:
        self.stopping.set()
        watch = self._watch
        if watch is not None:
            watch.stop()

    def widen(self, transform: Transform | None) -> None:
        """Keep more of each object from now on: the cache is re-listed with ``transform``
        (objects cached narrower come again as MODIFIED); ``wait_synced`` waits for that
        relist, while ``synced`` stays true (what was cached serves its first consumers)."""
        with self._lock:
            if transform is self.transform:
                return
            self.transform = transform
            started = self._thread is not None
            if started:
                self._wide.clear()
                self._relist.set()
        if not started:
            return
        log.info("watch of %s widened to %r: re-listing", self.path, transform)
        watch = self._watch
        if watch is not None:
            watch.stop()  # end the blocked read now (the loop then lists again)

    def add_handler(self, handler: Handler) -> None:
        """Call ``handler(event_type, obj)`` for every event; objects already cached are
        replayed as ADDED first, so a late subscriber misses nothing."""
        with self._lock:
            self._handlers.append(handler)
            # while a widening relist is pending the narrower objects are not replayed: the
            # relist delivers the wider ones (as MODIFIED) to every handler
            ready = self._synced.is_set() and self._wide.is_set()
            existing = self.list() if ready else []
        for obj in existing:
            handler(ADDED, obj)

    def wait_synced(self, timeout: float | None = None) -> bool:
        """True once the first full list (and any widening relist) is in the cache."""
        deadline = None if timeout is None else time.monotonic() + timeout
        if not self._synced.wait(timeout):
            return False
        return self._wide.wait(None if deadline is None else max(0.0, deadline - time.monotonic()))

    def wait_answered(self, timeout: float | None = None) -> bool:
        """True once the first list is in the cache or the server refused it with an answer a
        retry will not change soon (401, 403, 404: bad credentials, no permission, not
        served); False at the timeout while the server cannot be reached or fails (5xx),
        which a retry may mend. A caller that waits for several caches thus never sits out
        its whole timeout on one the server refuses; ``synced`` then says which it was."""
        return self._answered.wait(timeout)

    @property
    def synced(self) -> bool:
        return self._synced.is_set()

    def list(self) -> builtins.list[dict[str, Any]]:
        with self._store_lock:
            return builtins.list(self._store.values())

    def get(self, key: str) -> dict[str, Any] | None:
        """By :func:`object_key` (``name`` or ``namespace/name``)."""
        with self._store_lock:
            return self._store.get(key)

    @property
    def resource_version(self) -> str | None:
        return self._version

    # -- the loop -------------------------------------------------------------------------

    def _run(self) -> None:
        while not self.stopping.is_set():
            wait = self._backoff.delay()
            if wait and self.stopping.wait(wait):
                return
            try:
                if self._version is None or self._relist.is_set():
                    self._list()
                seen = self._watch_once()
            except (WatchExpired, Gone) as exc:
                log.debug("watch of %s: %s; listing again", self.path, exc)
                self.expired += 1
                self._version = None
            except ApiError as exc:
                self._failed(exc)
            except Exception as exc:  # an unreachable server, a bad answer: retried
                self._failed(exc)
                log.debug("watch of %s: %s", self.path, exc)
            else:
                # a watch the server ended before any event (not even a bookmark) counts as a
                # failure, so an answer that ends at once never makes this loop spin
                quiet = not seen and not self._relist.is_set() and not self.stopping.is_set()
                self._backoff.failures = self._backoff.failures + 1 if quiet else 0

    def _failed(self, exc: Exception) -> None:
        self._backoff.failures += 1
        self.last_error = exc
        if isinstance(exc, ApiError) and exc.status in _REFUSALS:
            self._answered.set()

    def _list(self) -> None:
        while True:
            transform = self.transform
            self._relist.clear()
            items, version = self._paged_list_once()
            if self.transform is transform:
                break
            # widened while listing: earlier pages were trimmed narrower
        self._replace(items)
        self._version = version or "0"
        self.lists += 1
        self.last_error = None
        self._backoff.failures = 0
        self._synced.set()
        self._wide.set()
        self._answered.set()

    def _query(self) -> builtins.list[tuple[str, str]]:
        query: builtins.list[tuple[str, str]] = []
        if self.label_selector:
            query.append(("labelSelector", self.label_selector))
        if self.field_selector:
            query.append(("fieldSelector", self.field_selector))
        return query

    def _paged_list_once(self) -> tuple[builtins.list[dict[str, Any]], str | None]:
        items: builtins.list[dict[str, Any]] = []
        version: str | None = None
        for doc in pages(self.source, self.path, self._query(), limit=self.page_size):
            for item in doc.get("items") or []:
                if isinstance(item, dict):
                    items.append(self._trim(item))
            version = (doc.get("metadata") or {}).get("resourceVersion") or version
        return items, version

    def _watch_once(self) -> int:
        """Watch until the server ends it (or a relist or stop is asked for); the number of
        events seen, bookmarks included."""
        # the server ends each watch after watch_timeout (±10% so replicas do not reconnect
        # in step); the read timeout notices a connection that died without closing
        server_timeout = int(self.watch_timeout * (0.9 + random.random() / 5))
        watch = Watch(
            self.source,
            self.path,
            resource_version=self._version or "",
            label_selector=self.label_selector,
            field_selector=self.field_selector,
            server_timeout=server_timeout,
            kind=self.kind,
            api_version=self.api_version,
        )
        self._watch = watch
        seen = 0
        if self.stopping.is_set() or self._relist.is_set():
            return seen
        try:
            for event in watch.events(resume=False, bookmarks=True):
                seen += 1
                self._version = watch.resource_version
                if self.stopping.is_set() or self._relist.is_set():
                    return seen
                if event.type == "BOOKMARK":
                    continue
                self._apply(event.type, event.object)
            return seen
        finally:
            self._watch = None
            if watch.resource_version:
                self._version = watch.resource_version

    # -- the store and the handlers ---------------------------------------------------------

    def _replace(self, items: builtins.list[dict[str, Any]]) -> None:
        fresh = {object_key(o): o for o in items}
        with self._store_lock:
            old = self._store
            self._store = fresh
        for key, obj in old.items():
            if key not in fresh:
                self._fire(DELETED, obj)
        for key, obj in fresh.items():
            self._fire(MODIFIED if key in old else ADDED, obj)

    def _apply(self, event_type: str, obj: dict[str, Any]) -> None:
        if event_type not in (ADDED, MODIFIED, DELETED):
            return
        stored = self._trim(obj)
        key = object_key(stored)
        with self._store_lock:
            if event_type == DELETED:
                self._store.pop(key, None)
            else:
                self._store[key] = stored
        self._fire(event_type, stored)

    def _trim(self, obj: Any) -> Any:
        if not isinstance(obj, dict):
            return obj
        if self.kind and "kind" not in obj:
            obj = {"apiVersion": self.api_version, "kind": self.kind, **obj}
        return self.transform(obj) if self.transform is not None else obj

    def _fire(self, event_type: str, obj: dict[str, Any]) -> None:
        with self._lock:
            handlers = builtins.list(self._handlers)
        for handler in handlers:
            try:
                handler(event_type, obj)
            except Exception:  # one bad handler must not stop the others
                log.exception("handler for %s failed on %s", self.path, event_type)


class InformerSet:
    """One :class:`Informer` per (path, selectors), started on first use and shared.

    Every consumer states its transform; the informer keeps what all of them need
    (:func:`merge_transforms`), so the order in which consumers register does not matter.
    """

    def __init__(self, source: Source) -> None:
        self.source = source
        self._lock = threading.Lock()
        self._informers: dict[tuple[str, str | None, str | None], Informer] = {}

    def get(
        self,
        path: str,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
        transform: Transform | None = None,
        kind: str | None = None,
        api_version: str | None = None,
    ) -> Informer:
        """The shared informer for ``path``, keeping at least what ``transform`` keeps.

        A later consumer whose field set needs more widens the shared one (a relist); two
        plain functions that differ raise :class:`TransformConflict`.
        """
        key = (path, label_selector, field_selector)
        with self._lock:
            found = self._informers.get(key)
            if found is not None:
                merged = merge_transforms(path, found.transform, transform)
                if merged is not found.transform:
                    found.widen(merged)
            if found is None:
                found = Informer(
                    self.source,
                    path,
                    label_selector=label_selector,
                    field_selector=field_selector,
                    transform=transform,
                    kind=kind,
                    api_version=api_version,
                ).start()
                self._informers[key] = found
            return found

    def all(self) -> list[Informer]:
        with self._lock:
            return list(self._informers.values())

    def wait_synced(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        return all(i.wait_synced(max(0.0, deadline - time.monotonic())) for i in self.all())

    def stop(self) -> None:
        for informer in self.all():
            informer.stop()
