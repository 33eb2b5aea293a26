"""What the cluster serves: API resources from discovery, and kubectl's TYPE-token matching.

Aggregated discovery (``/api`` + ``/apis`` as ``APIGroupDiscoveryList``, two requests) is tried
first; older servers get the legacy walk over every group version. Versions keep the server's
preference order (the API server lists a group's versions in Kubernetes' version priority), so
the first served version of a group is its preferred one and no version order is computed here.
"""

from collections.abc import Iterable
from typing import Any

import msgspec

from workload_map.kube.errors import ApiError
from workload_map.kube.transport import Transport

__all__ = ["APIResource", "discover", "match_type"]

_AGGREGATED = (
    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,"
    "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,"
    "application/json"
)


class APIResource(msgspec.Struct, frozen=True):
    """One served resource at one group version (subresources are left out)."""

    group: str
    version: str
    kind: str
    plural: str
    singular: str
    namespaced: bool
    short_names: tuple[str, ...] = ()
    verbs: tuple[str, ...] = ()
    preferred: bool = False

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def qualified(self) -> str:
        """``kind.version.group`` in lower case (what ambiguity messages offer)."""
        base = f"{self.kind.lower()}.{self.version}"
        return f"{base}.{self.group}" if self.group else base

    @property
    def group_resource(self) -> str:
        """``plural.group`` (kubectl's resource name, e.g. ``jobsets.jobset.x-k8s.io``)."""
        return f"{self.plural}.{self.group}" if self.group else self.plural

    def path(self, namespace: str | None = None, name: str | None = None) -> str:
        base = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        if namespace is not None and self.namespaced:
            base += f"/namespaces/{namespace}"
        base += f"/{self.plural}"
        return f"{base}/{name}" if name is not None else base


def discover(transport: Transport) -> list[APIResource]:
    """Every served resource, in server preference order per group."""
    core = transport.get("/api", accept=_AGGREGATED)
    if isinstance(core, dict) and core.get("kind") == "APIGroupDiscoveryList":
        groups = transport.get("/apis", accept=_AGGREGATED)
        if isinstance(groups, dict) and groups.get("kind") == "APIGroupDiscoveryList":
            return _from_aggregated(core) + _from_aggregated(groups)
    return _legacy(transport, core)


def _from_aggregated(doc: dict[str, Any]) -> list[APIResource]:
    out: list[APIResource] = []
    for item in doc.get("items") or []:
        group = str((item.get("metadata") or {}).get("name") or "")
        for index, version_doc in enumerate(item.get("versions") or []):
            version = str(version_doc.get("version") or "")
            for res in version_doc.get("resources") or []:
                kind_doc = res.get("responseKind") or {}
                kind = str(kind_doc.get("kind") or "")
                plural = str(res.get("resource") or "")
                if not kind or not plural:
                    continue
                out.append(
                    APIResource(
                        group=group,
                        version=version,
                        kind=kind,
                        plural=plural,
                        singular=str(res.get("singularResource") or kind.lower()),
                        namespaced=res.get("scope") == "Namespaced",
                        short_names=tuple(res.get("shortNames") or ()),
                        verbs=tuple(res.get("verbs") or ()),
                        preferred=index == 0,
                    )
                )
    return out


def _legacy(transport: Transport, core: Any) -> list[APIResource]:
    out: list[APIResource] = []
    core_versions = core.get("versions") if isinstance(core, dict) else None
    for version in core_versions or ["v1"]:
        out.extend(_legacy_list(transport, "", str(version), preferred=True))
    groups = transport.get("/apis")
    for group_doc in groups.get("groups") or [] if isinstance(groups, dict) else []:
        name = str(group_doc.get("name") or "")
        preferred = (group_doc.get("preferredVersion") or {}).get("version")
        versions = [str(v.get("version")) for v in group_doc.get("versions") or []]
        versions.sort(key=lambda v: v != preferred)  # stable: then the server's order
        for version in versions:
            out.extend(_legacy_list(transport, name, version, preferred=version == preferred))
    return out


def _legacy_list(
    transport: Transport, group: str, version: str, *, preferred: bool
) -> list[APIResource]:
    path = f"/apis/{group}/{version}" if group else f"/api/{version}"
    try:
        doc = transport.get(path)
    except ApiError:
        # A broken aggregated API (e.g. metrics-server down) must not hide the rest.
        return []
    out = []
    for res in doc.get("resources") or []:
        plural = str(res.get("name") or "")
        if not plural or "/" in plural:
            continue
        kind = str(res.get("kind") or "")
        out.append(
            APIResource(
                group=group,
                version=version,
                kind=kind,
                plural=plural,
                singular=str(res.get("singularName") or kind.lower()),
                namespaced=bool(res.get("namespaced")),
                short_names=tuple(res.get("shortNames") or ()),
                verbs=tuple(res.get("verbs") or ()),
                preferred=preferred,
            )
        )
    return out


def match_type(token: str, resources: Iterable[APIResource]) -> list[APIResource]:
    """Resources a kubectl TYPE token names (``jobsets``, ``js``, ``jobset.v1alpha2.jobset.x-k8s.io``,
    ``jobsets.jobset.x-k8s.io``), case-insensitive; several versions of one group all match."""
    token = token.lower()
    resources = list(resources)
    name, _, rest = token.partition(".")
    if rest:
        version, _, group = rest.partition(".")
        full = [
            r for r in resources if _names(r, name) and r.version == version and r.group == group
        ]
        if full:
            return full
        by_group = [r for r in resources if _names(r, name) and r.group == rest]
        if by_group:
            return by_group
    return [r for r in resources if _names(r, token)]


def _names(res: APIResource, token: str) -> bool:
    return token in (res.plural, res.singular, res.kind.lower()) or token in (
        s.lower() for s in res.short_names
    )
