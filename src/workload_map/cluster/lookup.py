"""The definition that describes an object (the one resolver, CLI and library), and its pods.

``resolve_definition(obj, cluster)`` answers "which Karta does wlmap use for this object": a
cluster Karta of the exact GVK (it replaces the catalog's), else the catalog's, else the most
stable definition of the same group and kind at another version. :func:`resolve_gvk` is the
same rule on a GVK (or on the versions a cluster serves, in order) and returns a
:class:`Resolution` saying whether the match is exact and, when not, the warning to give; every
command (``describe``, ``describe -f``, ``get``) resolves through it.
``workload_pods(cluster, obj)`` lists the pods whose controller chain reaches the object. Both
take plain dicts or any client's objects (see :mod:`workload_map.engine.objects`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import msgspec

from workload_map.cluster.errors import ClusterError

if TYPE_CHECKING:
    from workload_map.cluster.client import Cluster
    from workload_map.cluster.definitions import Definition, Definitions
    from workload_map.model import GVK

__all__ = [
    "Resolution",
    "resolve_definition",
    "resolve_gvk",
    "supports_suspend",
    "workload_pods",
]


class Resolution(msgspec.Struct, frozen=True):
    """The definition chosen for ``wanted`` and whether it was written for that exact GVK."""

    definition: Definition
    wanted: GVK
    exact: bool

    @property
    def note(self) -> str | None:
        """The warning a fallback to another version deserves (None when exact)."""
        written = self.definition.gvk
        if self.exact or written is None:
            return None
        from workload_map.cluster.definitions import gvk_text

        return (
            f"no definition for {gvk_text(self.wanted)}; using {self.definition.name} "
            f"(written for {written.api_version})"
        )


def resolve_gvk(
    wanted: GVK,
    definitions: Definitions,
    *,
    exact: bool = False,
    other_versions: Sequence[str] = (),
) -> Resolution | None:
    """The definition of exactly ``wanted``, else of its group and kind at the first of
    ``other_versions`` (the versions a cluster also serves, in its order) that has one; else,
    unless ``exact``, the most stable definition of that group and kind (valid ones first), as
    a fallback. None when nothing covers the kind. Raises
    :class:`~workload_map.cluster.definitions.AmbiguousDefinition` when several cluster Kartas
    claim the GVK."""
    from workload_map.catalog.registry import version_priority
    from workload_map.model import GVK

    for version in (wanted.version, *other_versions):
        gvk = wanted if version == wanted.version else GVK(wanted.group, version, wanted.kind)
        found = definitions.resolve(gvk)
        if found is not None:
            return Resolution(found, gvk, True)
    if exact:
        return None
    others = definitions.for_group_kind(wanted.group, wanted.kind)
    if not others:
        return None
    others.sort(key=lambda d: (not d.valid, version_priority(d.gvk.version if d.gvk else "")))
    return Resolution(others[0], wanted, False)


def _plain(obj: Any) -> dict[str, Any]:
    from workload_map.engine.objects import to_plain

    plain = to_plain(obj, what="object")
    if not isinstance(plain, dict):
        raise ClusterError(f"object: expected a Kubernetes object, got {type(plain).__name__}")
    return plain


def resolve_definition(
    obj: Any,
    cluster: Cluster | None = None,
    *,
    definitions: Definitions | None = None,
    exact: bool = False,
) -> Definition | None:
    """The definition wlmap uses for ``obj`` (None when nothing covers its kind).

    ``cluster`` adds its Karta objects (which replace the catalog's per GVK); ``definitions``
    reuses a loaded set (``Definitions.load(cluster)``) across many objects. Without an exact
    match the most stable definition of the same group and kind is returned, unless ``exact``.
    Raises :class:`~workload_map.cluster.definitions.AmbiguousDefinition` when several
    cluster Kartas claim the GVK.
    """
    from workload_map.cluster.definitions import Definitions
    from workload_map.model import GVK

    plain = _plain(obj)
    api_version, kind = plain.get("apiVersion"), plain.get("kind")
    if not isinstance(api_version, str) or not isinstance(kind, str) or not kind:
        raise ClusterError("object: apiVersion and kind are needed to find its definition")
    gvk = GVK.from_api_version(api_version, kind)
    found = definitions if definitions is not None else Definitions.load(cluster)
    resolution = resolve_gvk(gvk, found, exact=exact)
    return resolution.definition if resolution is not None else None


def workload_pods(cluster: Cluster, workload: Any) -> list[dict[str, Any]]:
    """The pods of a live workload: those whose controller chain reaches its uid (a bare Pod is
    its own pod). Raises :class:`~workload_map.cluster.errors.Forbidden` when pods cannot be
    listed in its namespace."""
    from workload_map.cluster.ownership import find_pods

    return find_pods(cluster, _plain(workload))


def supports_suspend(definition: Definition | Any) -> bool:
    """Whether the definition (a :class:`Definition` or a model ``Karta``) can suspend its
    workloads: some component declares suspend actions (``Workload.suspend()`` then works)."""
    karta = getattr(definition, "karta", definition)
    components = getattr(karta, "components", None)
    if not callable(components):
        raise TypeError(f"expected a Definition or a Karta, got {type(definition).__name__}")
    for component in components():
        suspend = getattr(component, "suspend_definition", None)
        if suspend is not None and getattr(suspend, "suspend_actions", None):
            return True
    return False
