"""The one pager: a collection read ``limit`` objects at a time with ``continue`` tokens.

Every list of the project goes through :func:`pages` (the command line's lists, the cluster's
Kartas, the catalog installer, the watch caches' initial lists), so a cluster of 100k pods is
never one response. An expired ``continue`` token is the API server's 410 Gone, raised as
:class:`~workload_map.kube.errors.Gone` for the caller to list again from the start.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, Protocol

from workload_map.kube.errors import ApiError, relabel

__all__ = ["METADATA", "METADATA_LIST", "PAGE_SIZE", "Reader", "list_all", "pages"]


class Reader(Protocol):
    """What a pager reads through (any :class:`~workload_map.kube.transport.Transport`)."""

    def get(
        self, path: str, query: Sequence[tuple[str, str]] = (), *, accept: str | None = None
    ) -> Any: ...


PAGE_SIZE = 500

#: ``Accept`` of a list of the objects' metadata only (``PartialObjectMetadataList``: names,
#: uids, labels, owner references; a tenth of a pod's bytes), JSON when a server cannot
METADATA_LIST = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"
#: ``Accept`` of one object's metadata only (``PartialObjectMetadata``)
METADATA = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json"


def pages(
    source: Reader,
    path: str,
    query: Sequence[tuple[str, str]] = (),
    *,
    limit: int = PAGE_SIZE,
    resource_version: str | None = None,
    what: str | None = None,
    accept: str | None = None,
) -> Iterator[dict[str, Any]]:
    """Each page (a ``List`` document) of the collection at ``path``; ``limit`` <= 0 reads it
    in one request. ``what`` names the collection in errors (default: the path); ``accept``
    asks for another representation (:data:`METADATA_LIST`: the objects' metadata only)."""
    token: str | None = None
    while True:
        page = list(query)
        if limit > 0:
            page.append(("limit", str(limit)))
        if token:
            page.append(("continue", token))
        elif resource_version is not None:
            page.append(("resourceVersion", resource_version))
        try:
            doc = (
                source.get(path, page) if accept is None else source.get(path, page, accept=accept)
            )
        except ApiError as exc:
            raise relabel(exc, what or path, "LIST") from exc
        if not isinstance(doc, dict):
            return
        yield doc
        token = (doc.get("metadata") or {}).get("continue") or None
        if not token or limit <= 0:
            return


def list_all(
    source: Reader,
    path: str,
    query: Sequence[tuple[str, str]] = (),
    *,
    limit: int = PAGE_SIZE,
    what: str | None = None,
) -> tuple[list[dict[str, Any]], str | None]:
    """Every object of the collection and the list's resourceVersion (to watch from)."""
    items: list[dict[str, Any]] = []
    version: str | None = None
    for doc in pages(source, path, query, limit=limit, what=what):
        items.extend(i for i in doc.get("items") or [] if isinstance(i, dict))
        version = (doc.get("metadata") or {}).get("resourceVersion") or version
    return items, version
