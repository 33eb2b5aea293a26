"""The definition of a live object (the cluster's Kartas over the catalog) and its pods.

``resolve_definition(obj, cluster)`` is :func:`workload_map.catalog.resolution.resolve_definition`
with the cluster's Kartas loaded; ``workload_pods(cluster, obj)`` lists the pods whose
controller chain reaches the object. Both take plain dicts or any client's objects.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from workload_map.catalog import resolution
from workload_map.catalog.registry import CatalogError
from workload_map.cluster import definitions as cluster_definitions
from workload_map.cluster.ownership import find_pods
from workload_map.kube.errors import ClusterError

if TYPE_CHECKING:
    from workload_map.catalog.definitions import Definition, Definitions
    from workload_map.kube.client import Cluster

__all__ = ["resolve_definition", "workload_pods"]


def resolve_definition(
    obj: Any,
    cluster: Cluster | None = None,
    *,
    definitions: Definitions | None = None,
    exact: bool = False,
) -> Definition | None:
    """The definition wlmap uses for ``obj`` (None when nothing covers its kind).

    ``cluster`` adds its Karta objects (which replace the catalog's per GVK); ``definitions``
    reuses a loaded set (``workload_map.cluster.definitions.load(cluster)``) across many
    objects. Without an exact match the most stable definition of the same group and kind is
    returned, unless ``exact``. Raises
    :class:`~workload_map.catalog.definitions.AmbiguousDefinition` when several cluster Kartas
    claim the GVK.
    """
    found = definitions if definitions is not None else cluster_definitions.load(cluster)
    try:
        return resolution.resolve_definition(obj, definitions=found, exact=exact)
    except CatalogError as exc:  # the object is not one: the library's cluster error
        raise ClusterError(str(exc)) from exc


def workload_pods(cluster: Cluster, workload: Any) -> list[dict[str, Any]]:
    """The pods of a live workload: those whose controller chain reaches its uid (a bare Pod is
    its own pod). Raises :class:`~workload_map.kube.errors.Forbidden` when pods cannot be
    listed in its namespace."""
    try:
        plain = resolution.plain_object(workload)
    except CatalogError as exc:
        raise ClusterError(str(exc)) from exc
    return find_pods(cluster, plain)
