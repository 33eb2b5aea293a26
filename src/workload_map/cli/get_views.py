"""``wlmap get -o json``'s typed views: one workload per item, and the list.

``get`` builds these and prints their :func:`~workload_map.model.views.to_json`;
``python -m workload_map.cli.schemas`` derives ``schemas/get.schema.json`` from the same types.
Apart from :mod:`workload_map.cli.outputs` because an item holds the engine's
:class:`~workload_map.engine.summary.PodCounts` (describe's counts): the other commands'
outputs load no engine.
"""

from __future__ import annotations

from collections.abc import Mapping

from workload_map.engine.summary import PodCounts
from workload_map.model.views import View, json_field

__all__ = ["GetItem", "GetList", "GetMetadata"]


class GetMetadata(View):
    """The object's metadata kept for kubectl habits (custom-columns, --sort-by, -L)."""

    name: str | None = json_field("name")
    namespace: str | None = json_field("namespace")
    uid: str | None = json_field("uid")
    labels: Mapping[str, str] = json_field("labels")
    creation_timestamp: str | None = json_field("creationTimestamp")


class GetItem(View):
    """One workload as ``wlmap get -o json`` prints it (one row of the table)."""

    name: str | None = json_field("name")
    namespace: str | None = json_field("namespace")
    kind: str | None = json_field("kind")
    api_version: str | None = json_field("apiVersion")
    created_at: str | None = json_field("createdAt", description="metadata.creationTimestamp")
    definition: str = json_field("definition", description="the definition's name")
    origin: str = json_field("origin", description="catalog, cluster or file")
    phases: tuple[str, ...] = json_field("phases")
    pods: PodCounts = json_field("pods")
    gpus: int = json_field("gpus", description="requested by the pods the spec desires")
    stuck: str | None = json_field(
        "stuck", description="why the workload is stuck (Unschedulable pods, a short gang)"
    )
    metadata: GetMetadata = json_field("metadata")
    gpus_pending: int | None = json_field(
        "gpusPending",
        default=None,
        description="requested by pending pods (active, bound to no node); null without pods",
    )
    gpus_held: int | None = json_field(
        "gpusHeld",
        default=None,
        description="requested by held pods (bound to a node, not finished); null without pods",
    )
    cluster: str | None = json_field(
        "cluster",
        omit="none",
        default=None,
        description="the kubeconfig context it was read through (several --context or "
        "--all-contexts only)",
    )


class GetList(View):
    """``wlmap get -o json`` for a list (a single named workload prints its item alone)."""

    items: tuple[GetItem, ...] = json_field("items")
    count: int = json_field("count")
