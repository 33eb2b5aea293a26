"""The definition that describes an object (the one resolver, CLI and library), offline.

``resolve_definition(obj, definitions=...)`` answers "which Karta does wlmap use for this
object": a cluster Karta of the exact GVK (it replaces the catalog's), else the catalog's,
else the most stable definition of the same group and kind at another version.
:func:`resolve_gvk` is the same rule on a GVK (or on the versions a cluster serves, in order)
and returns a :class:`Resolution` saying whether the match is exact and, when not, the warning
to give; every command (``describe``, ``describe -f``, ``get``) resolves through it. With a
cluster's Kartas: :func:`workload_map.cluster.resolve_definition`. Objects may be plain dicts
or any client's objects (see :mod:`workload_map.engine.objects`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import msgspec

from workload_map.catalog.definitions import Definitions, gvk_text
from workload_map.catalog.registry import CatalogError, version_priority
from workload_map.engine.objects import to_plain
from workload_map.model import GVK

if TYPE_CHECKING:
    from workload_map.catalog.definitions import Definition

__all__ = ["Resolution", "plain_object", "resolve_definition", "resolve_gvk", "supports_suspend"]


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
    :class:`~workload_map.catalog.definitions.AmbiguousDefinition` when several cluster Kartas
    claim the GVK."""
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


def plain_object(obj: Any) -> dict[str, Any]:
    """``obj`` (a dict or any client's object) as a plain dict; :class:`CatalogError` when it
    is not an object."""
    plain = to_plain(obj, what="object")
    if not isinstance(plain, dict):
        raise CatalogError(f"object: expected a Kubernetes object, got {type(plain).__name__}")
    return plain


def resolve_definition(
    obj: Any, *, definitions: Definitions | None = None, exact: bool = False
) -> Definition | None:
    """The definition wlmap uses for ``obj`` (None when nothing covers its kind).

    ``definitions`` is the set to choose from (default: the built-in catalog; with a cluster's
    Kartas: :func:`workload_map.cluster.resolve_definition`). Without an exact match the most
    stable definition of the same group and kind is returned, unless ``exact``. Raises
    :class:`~workload_map.catalog.definitions.AmbiguousDefinition` when several cluster
    Kartas claim the GVK, :class:`CatalogError` when ``obj`` has no apiVersion and kind.
    """
    plain = plain_object(obj)
    api_version, kind = plain.get("apiVersion"), plain.get("kind")
    if not isinstance(api_version, str) or not isinstance(kind, str) or not kind:
        raise CatalogError("object: apiVersion and kind are needed to find its definition")
    gvk = GVK.from_api_version(api_version, kind)
    found = definitions if definitions is not None else Definitions.builtin()
    resolution = resolve_gvk(gvk, found, exact=exact)
    return resolution.definition if resolution is not None else None


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
