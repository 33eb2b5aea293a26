# mypy: disable-error-code="no-untyped-call"
"""Watch caches of plain dicts, shared by the operator, its controllers, the exporter and the web view.

Built on ``kubernetes.informer.SharedInformer`` (list, then watch from the list's
resourceVersion, resume from the last seen resourceVersion, relist on ``410 Gone``) and
``kubernetes.watch.Watch`` (bookmarks, one in-stream 410 retry). What the library leaves to its
caller is added here, around it rather than instead of it:

* objects stay plain dicts: the list and watch calls go through ``ApiClient.call_api`` on a
  raw path, so any kind (CRDs included) is cached without generated models;
* the initial list is paged (``limit``/``continue``), so a cluster of 100k pods is never one
  response;
* a ``transform`` trims every object before it is stored (pods keep only what controllers read);
  every consumer of one path states what it keeps (a :class:`~workload_map.kube.trim.Trim`)
  and :class:`InformerSet` keeps their union, re-listing when a later consumer needs more;
* watches ask for bookmarks and carry a server-side timeout plus a client read timeout, so a
  silently dead connection is noticed;
* when the API server goes away, reconnects back off exponentially (the library loops at once);
* ``wait_synced`` and ``last_error`` tell a controller whether the cache is usable, and why not
  (a 403 becomes a condition, not a crash loop).
"""

from __future__ import annotations

import builtins
import json
import logging
import random
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from workload_map.kube.errors import ApiError, ClusterError, api_error
from workload_map.kube.trim import Trim

__all__ = [
    "ADDED",
    "DELETED",
    "MODIFIED",
    "Handler",
    "Informer",
    "InformerSet",
    "Transform",
    "TransformConflict",
    "call",
    "merge_transforms",
    "object_key",
]

log = logging.getLogger("workload_map.cache")


class _OwnRelists(logging.Filter):
    """Keeps the library's error and warning lines about a relist we caused out of the logs.

    A widened transform ends the informer's watch (its response shut down: the library logs
    "Unexpected error in watch loop" with a traceback) and then asks for a relist with our own
    410 (the library warns "Watch expired"); both are expected, so they are logged at debug
    under ``workload_map.cache`` instead. Records are matched by the informer's thread.
    """

    def __init__(self) -> None:
        super().__init__()
        # informer thread ident -> (records still to drop, until when)
        self.threads: dict[int, tuple[int, float]] = {}
        self.lock = threading.Lock()

    def expect(self, thread: threading.Thread | None, records: int) -> None:
        if thread is not None and thread.ident is not None:
            with self.lock:
                self.threads[thread.ident] = (records, time.monotonic() + 30.0)

    def filter(self, record: logging.LogRecord) -> bool:
        ident = record.thread or 0
        with self.lock:
            left, until = self.threads.get(ident, (0, 0.0))
            if not left or time.monotonic() > until:
                self.threads.pop(ident, None)
                return True
            message = str(record.msg)
            if not message.startswith(("Unexpected error in watch loop", "Watch expired")):
                return True
            if left == 1:
                del self.threads[ident]
            else:
                self.threads[ident] = (left - 1, until)
        log.debug("widening relist: %s", record.getMessage())
        return False


_own_relists = _OwnRelists()
logging.getLogger("kubernetes.informer.informer").addFilter(_own_relists)

ADDED = "ADDED"
MODIFIED = "MODIFIED"
DELETED = "DELETED"

Transform = Callable[[dict[str, Any]], dict[str, Any]]
Handler = Callable[[str, dict[str, Any]], None]
#: the reason of our own 410 Gone, which makes the library relist after a widened transform
_RELIST = "transform widened: relist"


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
class _ListResult:
    """What SharedInformer reads from a list call: ``.items`` and ``.metadata.resource_version``."""

    items: list[dict[str, Any]]
    metadata: Any


@dataclass
class _ListMeta:
    resource_version: str | None


@dataclass
class Informer:
    """One watched collection (``path`` such as ``/api/v1/pods``), cached as dicts.

    ``api_client`` is a ``kubernetes.client.ApiClient``. Handlers run on the informer thread,
    after the cache holds the event's object; they get ``(event_type, obj)`` with ``obj``
    already transformed.
    """

    api_client: Any
    path: str
    label_selector: str | None = None
    field_selector: str | None = None
    transform: Transform | None = None
    page_size: int = 500
    watch_timeout: int = 300
    request_timeout: float = 30.0
    kind: str | None = None
    api_version: str | None = None
    _handlers: list[Handler] = field(default_factory=list, repr=False)
    _synced: threading.Event = field(default_factory=threading.Event, repr=False)
    #: set unless a widened transform's relist is pending (the cache holds narrower objects)
    _wide: threading.Event = field(default_factory=threading.Event, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _backoff: _Backoff = field(default_factory=_Backoff, repr=False)
    _inner: Any = field(default=None, repr=False)
    last_error: ApiError | Exception | None = None
    lists: int = 0  # full lists done (the first one plus relists after 410 / resync)
    stopping: threading.Event = field(default_factory=threading.Event, repr=False)
    _relist: threading.Event = field(default_factory=threading.Event, repr=False)

    def __post_init__(self) -> None:
        from kubernetes import informer as k8s_informer

        outer = self

        class _Store(k8s_informer.ObjectCache):
            """The library's store, with the transform applied on the way in."""

            def _put(self, obj: Any) -> None:
                super()._put(outer._trim(obj))

            def _replace_all(self, objects: Iterable[Any]) -> None:
                super()._replace_all(objects)  # list items are trimmed as they are read

        class _Inner(k8s_informer.SharedInformer):
            def _initial_list(self) -> None:
                super()._initial_list()
                outer.lists += 1
                outer.last_error = None
                outer._synced.set()
                outer._wide.set()

        self._inner = _Inner(
            self._list_or_watch,
            label_selector=self.label_selector,
            field_selector=self.field_selector,
            key_func=object_key,
        )
        self._inner._cache = _Store(key_func=object_key)
        for event_type in (ADDED, MODIFIED, DELETED):
            self._inner.add_event_handler(event_type, self._dispatcher(event_type))
        self._inner.add_event_handler("ERROR", self._on_error)

    # -- public ---------------------------------------------------------------------------

    def start(self) -> Informer:
        self._inner.start()
        return self

    def stop(self) -> None:
        self.stopping.set()
        inner_watch = self._inner._watch
        self._inner._stop_event.set()
        if inner_watch is not None:
            inner_watch.stop()

    def widen(self, transform: Transform | None) -> None:
        """Keep more of each object from now on: the cache is re-listed with ``transform``
        (objects cached narrower come again as MODIFIED); ``wait_synced`` waits for that
        relist, while ``synced`` stays true (what was cached serves its first consumers)."""
        with self._lock:
            if transform is self.transform:
                return
            self.transform = transform
            started = self._inner._thread is not None
            if started:
                self._wide.clear()
                self._relist.set()
        if not started:
            return
        log.info("watch of %s widened to %r: re-listing", self.path, transform)
        watch = self._inner._watch
        # an open watch ends with an error line, then our 410 with a warning
        _own_relists.expect(self._inner._thread, 2 if watch is not None else 1)
        if watch is not None:
            # end the blocked read now (the next watch call asks for the relist)
            watch.stop()
            resp = getattr(watch, "_resp", None)
            if resp is not None and hasattr(resp, "shutdown"):
                try:
                    resp.shutdown()
                except OSError:  # not connected yet or already closed: the stop flag serves
                    log.debug("watch of %s: shutdown of its response failed", self.path)

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

    @property
    def synced(self) -> bool:
        return self._synced.is_set()

    def list(self) -> builtins.list[dict[str, Any]]:
        return builtins.list(self._inner.cache.list())

    def get(self, key: str) -> dict[str, Any] | None:
        """By :func:`object_key` (``name`` or ``namespace/name``)."""
        obj = self._inner.cache.get_by_key(key)
        return obj if isinstance(obj, dict) else None

    @property
    def resource_version(self) -> str | None:
        rv = self._inner._resource_version
        return str(rv) if rv is not None else None

    # -- the list/watch function SharedInformer and Watch call --------------------------

    def _list_or_watch(self, **kwargs: Any) -> Any:
        """:rtype: object"""
        wait = self._backoff.delay()
        if wait and self.stopping.wait(wait):
            raise _Stopped(self.path)
        if kwargs.get("watch") and self._relist.is_set():
            # the library relists on 410 Gone: how a widened transform re-reads every object
            from kubernetes.client.exceptions import ApiException

            self._relist.clear()
            raise ApiException(status=410, reason=_RELIST)
        try:
            result = self._watch_call(kwargs) if kwargs.get("watch") else self._paged_list()
        except Exception:
            self._backoff.failures += 1
            raise
        self._backoff.failures = 0
        return result

    def _query(self) -> builtins.list[tuple[str, str]]:
        query: builtins.list[tuple[str, str]] = []
        if self.label_selector:
            query.append(("labelSelector", self.label_selector))
        if self.field_selector:
            query.append(("fieldSelector", self.field_selector))
        return query

    def _call(self, query: builtins.list[tuple[str, str]], *, stream: bool, timeout: Any) -> Any:
        from kubernetes.client.exceptions import ApiException

        try:
            resp = call(self.api_client, "GET", self.path, query=query, timeout=timeout)
        except ApiException as exc:
            err = api_error(int(exc.status or 0), exc.body, self.path)
            self.last_error = err
            if err.status == 410:
                raise  # SharedInformer relists on this one
            raise err from exc
        if stream:
            return resp  # the urllib3 response Watch reads line by line
        try:
            return json.loads(resp.data)
        finally:
            resp.release_conn()

    def _paged_list(self) -> _ListResult:
        while True:
            transform = self.transform
            self._relist.clear()
            result = self._paged_list_once()
            if self.transform is transform:
                return result
            # widened while listing: earlier pages were trimmed narrower

    def _paged_list_once(self) -> _ListResult:
        items: list[dict[str, Any]] = []
        token: str | None = None
        rv: str | None = None
        while True:
            query = [*self._query(), ("limit", str(self.page_size))]
            if token:
                query.append(("continue", token))
            doc = self._call(query, stream=False, timeout=self.request_timeout)
            meta = doc.get("metadata") or {}
            for item in doc.get("items") or []:
                if isinstance(item, dict):
                    items.append(self._trim(item))
            rv = meta.get("resourceVersion") or rv
            token = meta.get("continue") or None
            if not token:
                break
        return _ListResult(items, _ListMeta(rv))

    def _watch_call(self, kwargs: dict[str, Any]) -> Any:
        query = [*self._query(), ("watch", "true"), ("allowWatchBookmarks", "true")]
        rv = kwargs.get("resource_version")
        if rv:
            query.append(("resourceVersion", str(rv)))
        # the server ends each watch after watch_timeout (±10% so replicas do not reconnect
        # in step); the read timeout notices a connection that died without closing
        server_timeout = int(self.watch_timeout * (0.9 + random.random() / 5))
        query.append(("timeoutSeconds", str(server_timeout)))
        return self._call(query, stream=True, timeout=(self.request_timeout, server_timeout + 30))

    # -- events ---------------------------------------------------------------------------

    def _trim(self, obj: Any) -> Any:
        if not isinstance(obj, dict):
            return obj
        if self.kind and "kind" not in obj:
            obj = {"apiVersion": self.api_version, "kind": self.kind, **obj}
        return self.transform(obj) if self.transform is not None else obj

    def _dispatcher(self, event_type: str) -> Callable[[Any], None]:
        def fire(obj: Any) -> None:
            if not isinstance(obj, dict):
                return
            stored = None
            if event_type != DELETED:  # the store already holds the trimmed copy
                stored = self._inner.cache.get_by_key(object_key(obj))
            if stored is None:
                stored = self._trim(obj)
            with self._lock:
                handlers = list(self._handlers)
            for handler in handlers:
                try:
                    handler(event_type, stored)
                except Exception:  # one bad handler must not stop the others
                    log.exception("handler for %s failed on %s", self.path, event_type)

        return fire

    def _on_error(self, exc: Any) -> None:
        if isinstance(exc, _Stopped) or getattr(exc, "reason", None) == _RELIST:
            return
        if isinstance(exc, Exception):
            if not isinstance(exc, ApiError):
                self._backoff.failures = max(self._backoff.failures, 1)
            self.last_error = exc
            log.debug("watch of %s: %s", self.path, exc)


def call(
    api_client: Any,
    method: str,
    path: str,
    *,
    query: list[tuple[str, str]] | None = None,
    body: Any = None,
    content_type: str = "application/json",
    accept: str = "application/json",
    timeout: Any = None,
) -> Any:
    """One request through ``ApiClient.param_serialize`` + ``call_api`` (auth, TLS, proxies as
    configured); returns the urllib3 response, unread; a non-2xx answer raises
    ``kubernetes.client.exceptions.ApiException`` with the status and body."""
    from kubernetes.client.exceptions import ApiException

    headers = {"Accept": accept}
    if body is not None:
        headers["Content-Type"] = content_type
    m, url, hdrs, payload, post = api_client.param_serialize(
        method,
        path,
        query_params=list(query or []),
        header_params=headers,
        body=body,
        auth_settings=["BearerToken"],
    )
    answer = api_client.call_api(m, url, hdrs, payload, post, _request_timeout=timeout)
    raw = answer.response
    if not 200 <= int(answer.status) <= 299:
        try:
            text = raw.data.decode("utf-8", "replace")
        finally:
            raw.release_conn()
        raise ApiException(status=int(answer.status), reason=answer.reason, body=text)
    return raw


class _Stopped(Exception):
    """Raised inside the list/watch call when the informer is stopping during a backoff."""


class InformerSet:
    """One :class:`Informer` per (path, selectors), started on first use and shared.

    Every consumer states its transform; the informer keeps what all of them need
    (:func:`merge_transforms`), so the order in which consumers register does not matter.
    """

    def __init__(self, api_client: Any) -> None:
        self.api_client = api_client
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
                    self.api_client,
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
