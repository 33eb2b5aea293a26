"""Library helpers for a live cluster: the definition that describes an object, and its pods.

``resolve_definition(obj, cluster)`` answers "which Karta does wlmap use for this object" as the
CLI does (a valid cluster Karta of the exact GVK, else the catalog's, else another version of
the same group and kind); ``workload_pods(cluster, obj)`` lists the pods whose controller chain
reaches the object. Both take plain dicts or any client's objects (see
:mod:`workload_map.engine.objects`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from workload_map.cluster.errors import ClusterError

if TYPE_CHECKING:
    from workload_map.cluster.client import Cluster
    from workload_map.cluster.definitions import Definition, Definitions

__all__ = ["resolve_definition", "supports_suspend", "workload_pods"]


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
    group, _, version = api_version.rpartition("/")
    found = definitions if definitions is not None else Definitions.load(cluster)
    chosen = found.resolve(GVK(group, version, kind))
    if chosen is not None or exact:
        return chosen
    others = [d for d in found.for_group_kind(group, kind) if d.valid]
    return others[0] if others else None


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
