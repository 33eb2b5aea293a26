"""The one watch: the API's watch protocol over the request path's stream.

:class:`Watch` yields the events of one collection from a resource version on, asks for
bookmarks, and resumes by itself when the server ends a watch (they are cut every few
minutes) from the last version seen, bookmarks included. A version the server no longer has
(410 Gone, as the answer or as an ``ERROR`` event) raises :class:`WatchExpired`, so the caller
lists again. :meth:`Watch.stop` ends a blocked read from another thread. The command line's
``get -w`` (:func:`watch`) and the watch caches (:mod:`workload_map.kube.cache`) both use it.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from workload_map.kube.errors import ClusterError, Gone, api_error

if TYPE_CHECKING:
    from workload_map.kube.client import Cluster
    from workload_map.kube.discovery import APIResource

__all__ = [
    "READ_SLACK",
    "SERVER_TIMEOUT",
    "Abortable",
    "Streamer",
    "Watch",
    "WatchEvent",
    "WatchExpired",
    "list_version",
    "open_watch",
    "watch",
]

# The server ends each watch after this long (kubectl uses a random 5-10 min); the client's
# read timeout is a little longer, and bookmarks keep an idle watch talking meanwhile.
SERVER_TIMEOUT = 300
READ_SLACK = 30


class WatchExpired(ClusterError):
    """The resource version to resume from is gone (HTTP 410): list again."""


class Abortable(Protocol):
    """An open watch response that another thread can end."""

    def abort(self) -> None: ...


class Streamer(Protocol):
    """What a watch reads through (:class:`~workload_map.kube.transport.KubeTransport`)."""

    def stream(
        self,
        path: str,
        query: Sequence[tuple[str, str]] = (),
        *,
        timeout: float | None = None,
        opened: Callable[[Abortable], None] | None = None,
    ) -> Iterator[Any]: ...


@dataclass(frozen=True)
class WatchEvent:
    type: str  # ADDED, MODIFIED, DELETED (BOOKMARK only with bookmarks=True)
    object: dict[str, Any]


class Watch:
    """One resumable watch of the collection at ``path`` (its ``resource_version`` advances
    with every event, bookmarks included)."""

    def __init__(
        self,
        source: Streamer,
        path: str,
        *,
        resource_version: str,
        label_selector: str | None = None,
        field_selector: str | None = None,
        server_timeout: int = SERVER_TIMEOUT,
        kind: str | None = None,
        api_version: str | None = None,
    ) -> None:
        self._source = source
        self.path = path
        self.resource_version = resource_version
        self._selectors = [
            *([("labelSelector", label_selector)] if label_selector else []),
            *([("fieldSelector", field_selector)] if field_selector else []),
        ]
        self.server_timeout = server_timeout
        self._kind = kind
        self._api_version = api_version
        self._lock = threading.Lock()
        self._open: Abortable | None = None
        self._stopped = False
        self.streams = 0  # watch requests made (the first and every resume)

    def events(self, *, resume: bool = True, bookmarks: bool = False) -> Iterator[WatchEvent]:
        """Events until :meth:`stop` (or, with ``resume`` False, until the server ends this
        watch); ``bookmarks`` yields BOOKMARK events too (their object carries only the
        version)."""
        while not self._stopped:
            query = [
                ("watch", "true"),
                ("allowWatchBookmarks", "true"),
                ("timeoutSeconds", str(self.server_timeout)),
            ]
            if self.resource_version:
                query.append(("resourceVersion", self.resource_version))
            query.extend(self._selectors)
            self.streams += 1
            try:
                for doc in self._source.stream(
                    self.path,
                    query,
                    timeout=float(self.server_timeout + READ_SLACK),
                    opened=self._opened,
                ):
                    event = self._event(doc)
                    if event is not None and (bookmarks or event.type != "BOOKMARK"):
                        yield event
            except Gone as exc:
                raise self._expired() from exc
            finally:
                with self._lock:
                    self._open = None
            if not resume:
                return

    def stop(self) -> None:
        """End the watch: a read blocked in another thread returns."""
        with self._lock:
            self._stopped = True
            current = self._open
        if current is not None:
            try:
                current.abort()
            except OSError:  # not connected (yet, or any more): the stop flag ends the loop
                pass

    def _opened(self, response: Abortable) -> None:
        with self._lock:
            self._open = response
            stopped = self._stopped
        if stopped:
            response.abort()

    def _expired(self) -> WatchExpired:
        return WatchExpired(
            f"watch of {self.path}: resource version {self.resource_version} is too old"
        )

    def _event(self, doc: Any) -> WatchEvent | None:
        if not isinstance(doc, dict):
            return None
        kind = str(doc.get("type") or "")
        obj = doc.get("object")
        if not isinstance(obj, dict):
            return None
        if kind == "ERROR":
            code = int(obj.get("code") or 0)
            if code == 410:
                raise self._expired()
            raise api_error(code or 500, json.dumps(obj), self.path, "WATCH")
        meta = obj.get("metadata") or {}
        self.resource_version = str(meta.get("resourceVersion") or self.resource_version)
        if kind != "BOOKMARK" and self._kind and ("apiVersion" not in obj or "kind" not in obj):
            obj = {"apiVersion": self._api_version, "kind": self._kind, **obj}
        return WatchEvent(kind, obj)


def list_version(
    cluster: Cluster,
    res: APIResource,
    namespace: str | None,
    *,
    label_selector: str | None = None,
    field_selector: str | None = None,
) -> str:
    """The collection's current resource version (a one-item list), to watch from."""
    query = [("limit", "1")]
    if label_selector:
        query.append(("labelSelector", label_selector))
    if field_selector:
        query.append(("fieldSelector", field_selector))
    doc = cluster.transport.get(res.path(namespace if res.namespaced else None), query)
    return str((doc.get("metadata") or {}).get("resourceVersion") or "")


def open_watch(
    cluster: Cluster,
    res: APIResource,
    namespace: str | None,
    *,
    resource_version: str,
    label_selector: str | None = None,
    field_selector: str | None = None,
    server_timeout: int = SERVER_TIMEOUT,
) -> Watch:
    """The :class:`Watch` of ``res`` from ``resource_version`` on: its ``events()``, and its
    ``stop()`` for another thread to end a blocked read."""
    source = cluster.transport
    if getattr(source, "stream", None) is None:
        raise ClusterError("this connection cannot watch (its transport has no stream)")
    return Watch(
        source,  # type: ignore[arg-type]
        res.path(namespace if res.namespaced else None),
        resource_version=resource_version,
        label_selector=label_selector,
        field_selector=field_selector,
        server_timeout=server_timeout,
        kind=res.kind,
        api_version=res.api_version,
    )


def watch(
    cluster: Cluster,
    res: APIResource,
    namespace: str | None,
    *,
    resource_version: str,
    label_selector: str | None = None,
    field_selector: str | None = None,
    server_timeout: int = SERVER_TIMEOUT,
    resume: bool = True,
) -> Iterator[WatchEvent]:
    """Events of ``res`` from ``resource_version`` on, until the caller stops (or ``resume``
    is False and the server ends the watch)."""
    one = open_watch(
        cluster,
        res,
        namespace,
        resource_version=resource_version,
        label_selector=label_selector,
        field_selector=field_selector,
        server_timeout=server_timeout,
    )
    return one.events(resume=resume)
