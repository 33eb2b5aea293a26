"""Watches for the CLI (``wlmap get -w``): the API's watch protocol over the transport's stream.

``watch`` yields the events of one resource collection from a resource version on, and resumes
by itself when the server ends a watch (they are cut every few minutes) from the last version
seen, bookmarks included. A version the server no longer has (410 Gone) raises
:class:`WatchExpired`, so the caller can list again. The operator's informers live in
``cluster/cache.py``; this is the small read-only loop a terminal command needs.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from workload_map.kube.errors import ClusterError, api_error

if TYPE_CHECKING:
    from workload_map.kube.client import Cluster
    from workload_map.kube.discovery import APIResource

__all__ = ["WatchEvent", "WatchExpired", "list_version", "watch"]

# The server ends each watch after this long (kubectl uses a random 5-10 min); the client's
# read timeout is a little longer, and bookmarks keep an idle watch talking meanwhile.
SERVER_TIMEOUT = 300
READ_SLACK = 30


class WatchExpired(ClusterError):
    """The resource version to resume from is gone (HTTP 410): list again."""


@dataclass(frozen=True)
class WatchEvent:
    type: str  # ADDED, MODIFIED or DELETED
    object: dict[str, Any]


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
    """Events from ``resource_version`` on, until the caller stops (or ``resume`` is False and
    the server ends the watch)."""
    stream = getattr(cluster.transport, "stream", None)
    if stream is None:
        raise ClusterError("this connection cannot watch (its transport has no stream)")
    path = res.path(namespace if res.namespaced else None)
    version = resource_version
    while True:
        query = [
            ("watch", "true"),
            ("allowWatchBookmarks", "true"),
            ("timeoutSeconds", str(server_timeout)),
        ]
        if version:
            query.append(("resourceVersion", version))
        if label_selector:
            query.append(("labelSelector", label_selector))
        if field_selector:
            query.append(("fieldSelector", field_selector))
        for doc in stream(path, query, timeout=float(server_timeout + READ_SLACK)):
            if not isinstance(doc, dict):
                continue
            kind = str(doc.get("type") or "")
            obj = doc.get("object")
            if not isinstance(obj, dict):
                continue
            if kind == "ERROR":
                code = int(obj.get("code") or 0)
                if code == 410:
                    raise WatchExpired(
                        f"watch of {res.group_resource}: resource version {version} is too old"
                    )
                import json

                raise api_error(code or 500, json.dumps(obj), path)
            meta = obj.get("metadata") or {}
            version = str(meta.get("resourceVersion") or version)
            if kind == "BOOKMARK":
                continue
            if "apiVersion" not in obj or "kind" not in obj:
                obj = {"apiVersion": res.api_version, "kind": res.kind, **obj}
            yield WatchEvent(kind, obj)
        if not resume:
            return
