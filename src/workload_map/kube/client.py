"""A small read-only cluster client: discovery, GET by name, paged LIST, owner look-ups.

Objects stay plain dicts (what the engine takes). Every failure names the resource and namespace
it concerns, so the CLI can print it as is.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from workload_map.kube.cache_dir import cache_folder
from workload_map.kube.discovery import APIResource, discover, match_type
from workload_map.kube.discovery_cache import DiscoveryCache
from workload_map.kube.errors import ApiError, Forbidden, NotFound, NotServed
from workload_map.kube.kubeconfig import resolve
from workload_map.kube.options import ConnectionOptions
from workload_map.kube.pager import METADATA, METADATA_LIST, pages
from workload_map.kube.transport import KubeTransport, Transport

__all__ = ["Cluster", "connect"]


def connect(options: ConnectionOptions) -> Cluster:
    """A :class:`Cluster` for the kubeconfig/context/in-cluster config the options select."""
    resolved = resolve(options)
    root = cache_folder(options.cache_dir, options.environ)
    cache = None
    if root is not None:
        trust = (
            resolved.ca_file or "",
            (resolved.ca_data or b"").hex(),
            resolved.tls_server_name or "",
            "insecure" if resolved.insecure else "",
        )
        cache = DiscoveryCache(root, resolved.server, trust)
    # one connection per thread, and a server that did not answer is not asked again
    return Cluster(KubeTransport(resolved, remember_unreachable=True), discovery_cache=cache)


class Cluster:
    """Read access to one cluster through a :class:`Transport`."""

    def __init__(
        self, transport: Transport, *, discovery_cache: DiscoveryCache | None = None
    ) -> None:
        self.transport = transport
        self._resources: list[APIResource] | None = None
        self._discovery_cache = discovery_cache
        #: whether ``_resources`` came from the disk cache (so may be stale)
        self._from_disk = False
        self._objects: dict[tuple[str, str, str, str], dict[str, Any] | None] = {}

    @property
    def namespace(self) -> str:
        """The default namespace (``-n``, else the context's, else ``default``)."""
        return self.transport.namespace

    @property
    def context(self) -> str | None:
        return self.transport.context

    @property
    def server(self) -> str:
        return self.transport.server

    # discovery -------------------------------------------------------------------------------
    def resources(self, *, fresh: bool = False) -> list[APIResource]:
        """Every served resource (discovered once per Cluster; from the disk cache when it
        holds a fresh answer for this server, unless ``fresh``: then from the server)."""
        if fresh and self._from_disk:
            self._discover()
        if self._resources is None and fresh:
            self._discover()
        if self._resources is None:
            cache = self._discovery_cache
            cached = cache.load() if cache is not None else None
            if cached is not None:
                self._resources, self._from_disk = cached, True
            else:
                self._discover()
        return self._resources  # type: ignore[return-value]  # set by either branch

    def rediscover(self) -> bool:
        """Ask the server again when what :meth:`resources` holds came from the disk cache
        (once per Cluster): True when it did, so a caller that missed a kind looks again."""
        if not self._from_disk:
            return False
        self._discover()
        return True

    def _discover(self) -> None:
        self._from_disk = False
        self._resources = discover(self.transport)
        if self._discovery_cache is not None:
            self._discovery_cache.store(self._resources)

    def _check_served(self, res: APIResource, exc: NotFound) -> None:
        """After a 404 on a resource discovery came from the disk cache for: ask the server
        again (once) and raise :class:`NotServed` when it no longer serves the resource."""
        if self.rediscover() and res not in self.resources():
            raise NotServed(
                404,
                f'the server has no resource type "{res.group_resource}" at version '
                f"{res.version} any more",
                detail=exc.detail,
            ) from exc

    def match_type(self, token: str) -> list[APIResource]:
        """:func:`~workload_map.kube.discovery.match_type` over the served resources,
        re-discovering once when a cached discovery knows no match (a CRD installed since)."""
        found = match_type(token, self.resources())
        if not found and self.rediscover():
            found = match_type(token, self.resources())
        return found

    def resource_for(self, api_version: str, kind: str) -> APIResource | None:
        """The served resource of exactly this apiVersion and kind (re-discovering once when
        a cached discovery lacks it)."""
        found = self._resource_for(api_version, kind)
        if found is None and self.rediscover():
            found = self._resource_for(api_version, kind)
        return found

    def _resource_for(self, api_version: str, kind: str) -> APIResource | None:
        group, _, version = api_version.rpartition("/")
        for res in self.resources():
            if res.group == group and res.version == version and res.kind == kind:
                return res
        return None

    def served_versions(self, group: str, kind: str) -> list[APIResource]:
        """The served versions of a group/kind, preferred first then in the server's order."""
        found = [r for r in self.resources() if r.group == group and r.kind == kind]
        found.sort(key=lambda r: not r.preferred)  # stable
        return found

    # reads -----------------------------------------------------------------------------------
    def get(self, res: APIResource, name: str, namespace: str | None) -> dict[str, Any]:
        """One object; :class:`NotFound` / :class:`Forbidden` name the object."""
        where = f" in namespace {namespace}" if res.namespaced and namespace else ""
        try:
            obj = self.transport.get(res.path(namespace if res.namespaced else None, name))
        except NotFound as exc:
            self._check_served(res, exc)
            raise NotFound(404, f'{res.kind} "{name}" not found{where}', detail=exc.detail) from exc
        except Forbidden as exc:
            raise Forbidden(
                403,
                f'forbidden: cannot get {res.group_resource} "{name}"{where}',
                detail=exc.detail,
            ) from exc
        return _as_object(obj, res)

    def iter_list(
        self,
        res: APIResource,
        namespace: str | None,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
        chunk_size: int = 500,
        resource_version: str | None = None,
        metadata_only: bool = False,
    ) -> Iterator[dict[str, Any]]:
        """Every object (``namespace=None``: all namespaces), fetched ``chunk_size`` at a time.

        ``metadata_only``: each object as its ``apiVersion``, ``kind`` and ``metadata`` alone
        (the server sends a ``PartialObjectMetadataList``; an old server's whole objects are cut
        down to the same), for walking owner chains without decoding specs and statuses."""
        path = res.path(namespace if res.namespaced else None)
        query = [("labelSelector", label_selector)] if label_selector else []
        if field_selector:
            query.append(("fieldSelector", field_selector))
        listed = pages(
            self.transport,
            path,
            query,
            limit=chunk_size,
            resource_version=resource_version,
            what=res.group_resource,
            accept=METADATA_LIST if metadata_only else None,
        )
        try:
            for doc in listed:
                for item in doc.get("items") or []:
                    yield _as_metadata(item, res) if metadata_only else _as_object(item, res)
        except NotFound as exc:
            # A collection is there even when empty: a 404 means the type is not served (any
            # more). When that came from the disk cache, ask the server again, so this
            # command's error and the next command see what it serves now.
            self._check_served(res, exc)
            raise
        except Forbidden as exc:
            scope = f" in namespace {namespace}" if namespace and res.namespaced else ""
            raise Forbidden(
                403,
                f"forbidden: cannot list {res.group_resource}{scope}{_why(exc)}",
                detail=exc.detail,
            ) from exc

    def get_metadata(self, res: APIResource, name: str, namespace: str | None) -> dict[str, Any]:
        """One object's ``apiVersion``, ``kind`` and ``metadata`` (``PartialObjectMetadata``);
        errors as :meth:`get`."""
        where = f" in namespace {namespace}" if res.namespaced and namespace else ""
        try:
            obj = self.transport.get(
                res.path(namespace if res.namespaced else None, name), accept=METADATA
            )
        except NotFound as exc:
            raise NotFound(404, f'{res.kind} "{name}" not found{where}', detail=exc.detail) from exc
        except Forbidden as exc:
            raise Forbidden(
                403,
                f'forbidden: cannot get {res.group_resource} "{name}"{where}',
                detail=exc.detail,
            ) from exc
        return _as_metadata(obj, res)

    def get_cached(
        self, api_version: str, kind: str, name: str, namespace: str | None
    ) -> dict[str, Any] | None:
        """An owner-chain link by reference, or None when it is missing or unreadable;
        fetched once per Cluster (misses cached too)."""
        key = (api_version, kind, namespace or "", name)
        if key in self._objects:
            return self._objects[key]
        res = self.resource_for(api_version, kind)
        obj: dict[str, Any] | None = None
        if res is not None:
            try:
                obj = self.get(res, name, namespace)
            except ApiError:
                obj = None
        self._objects[key] = obj
        return obj

    def has_cached(self, api_version: str, kind: str, name: str, namespace: str | None) -> bool:
        """Whether :meth:`get_cached` answers this reference without a request."""
        return (api_version, kind, namespace or "", name) in self._objects

    def remember(self, obj: dict[str, Any]) -> None:
        """Seed the owner cache with an object already fetched (e.g. from a list)."""
        meta = obj.get("metadata") or {}
        key = (
            str(obj.get("apiVersion")),
            str(obj.get("kind")),
            str(meta.get("namespace") or ""),
            str(meta.get("name")),
        )
        self._objects[key] = obj


def _why(exc: Forbidden) -> str:
    """The server's own words (they name the user and the missing verb), when it gave any."""
    return f" ({exc.detail})" if exc.detail else ""


def _as_metadata(obj: Any, res: APIResource) -> dict[str, Any]:
    """A ``PartialObjectMetadata`` item (or a whole object) as the resource's kind with its
    metadata only."""
    meta = obj.get("metadata") if isinstance(obj, dict) else None
    return {
        "apiVersion": res.api_version,
        "kind": res.kind,
        "metadata": meta if isinstance(meta, dict) else {},
    }


def _as_object(obj: Any, res: APIResource) -> dict[str, Any]:
    """List items lack apiVersion/kind; put them back so the engine sees whole objects."""
    if not isinstance(obj, dict):
        return {}
    result: dict[str, Any] = obj
    if "apiVersion" not in result or "kind" not in result:
        result = {"apiVersion": res.api_version, "kind": res.kind, **result}
    return result
