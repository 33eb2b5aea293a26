"""The cluster's Karta objects as :class:`~workload_map.catalog.definitions.Definitions`.

Failing to read the cluster degrades to the catalog with a warning, never an error: the
catalog alone is still a useful answer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from workload_map.catalog.definitions import Definitions, parse_cluster_kartas
from workload_map.kube.errors import ClusterError, Forbidden, NotFound
from workload_map.kube.pager import list_all

if TYPE_CHECKING:
    from workload_map.kube.client import Cluster

__all__ = ["KARTAS_PATH", "load"]

KARTAS_PATH = "/apis/run.ai/v1alpha1/kartas"


def load(cluster: Cluster | None, *, page_size: int = 500) -> Definitions:
    """Catalog definitions, replaced per GVK by the cluster's Kartas when one is given."""
    if cluster is None:
        return Definitions.builtin()
    warnings: list[str] = []
    items = _cluster_kartas(cluster, warnings, page_size)
    definitions, broken, found = parse_cluster_kartas(items)
    return Definitions.from_parsed(definitions, broken, [*warnings, *found])


def _cluster_kartas(cluster: Cluster, warnings: list[str], page_size: int) -> list[dict[str, Any]]:
    try:
        items, _ = list_all(cluster.transport, KARTAS_PATH, limit=page_size)
    except NotFound:
        warnings.append(
            "the kartas.run.ai CRD is not installed; showing built-in definitions only "
            "(to define your own types: `wlmap crd apply`; said once per cluster, -v says it "
            "every time)"
        )
        return []
    except Forbidden:
        warnings.append(
            "not allowed to list Karta definitions (kartas.run.ai) in this cluster; showing "
            "built-in definitions only (ask for the `list` verb on kartas.run.ai)"
        )
        return []
    except ClusterError as exc:
        warnings.append(f"could not read Karta definitions from the cluster: {exc}")
        return []
    return items
