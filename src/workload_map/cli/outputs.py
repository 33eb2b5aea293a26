"""The CLI's own machine outputs as typed views: ``get -o json``, ``definitions -o json`` and
``verify --dump``.

Each command builds these views and prints their :func:`~workload_map.model.views.to_json`;
``python -m workload_map.cli.schemas`` derives the committed JSON Schemas (``schemas/``) from the
same types, so the contract and the output cannot drift apart. ``describe -o json`` is the
engine's :class:`~workload_map.engine.describe.DescribeView`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from workload_map.engine.describe import PodCounts
from workload_map.model.crd import crd_manifest
from workload_map.model.views import json_field, view

__all__ = [
    "DefinitionsList",
    "GetItem",
    "GetList",
    "GetMetadata",
    "InvalidKarta",
    "KartaObject",
    "PredictedComponent",
    "PredictedGang",
    "Prediction",
]


@view
class GetMetadata:
    """The object's metadata kept for kubectl habits (custom-columns, --sort-by, -L)."""

    name: str | None = json_field("name")
    namespace: str | None = json_field("namespace")
    uid: str | None = json_field("uid")
    labels: Mapping[str, str] = json_field("labels")
    creation_timestamp: str | None = json_field("creationTimestamp")


@view
class GetItem:
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


@view
class GetList:
    """``wlmap get -o json`` for a list (a single named workload prints its item alone)."""

    items: tuple[GetItem, ...] = json_field("items")
    count: int = json_field("count")


class KartaObject(dict[str, Any]):
    """A Karta object as ``kubectl apply`` takes it; its schema is the CRD's (generated from
    the model types by :mod:`workload_map.model.crd`)."""

    @classmethod
    def __json_schema__(cls) -> dict[str, Any]:

        spec = crd_manifest()["spec"]
        version = spec["versions"][0]
        return {
            "description": "A Karta object: the CRD's schema, with its apiVersion and kind.",
            "allOf": [version["schema"]["openAPIV3Schema"]],
            "properties": {
                "apiVersion": {"const": f"{spec['group']}/{version['name']}"},
                "kind": {"const": spec["names"]["kind"]},
            },
            "required": ["apiVersion", "kind", "metadata", "spec"],
        }


@view
class InvalidKarta:
    """A cluster Karta that cannot be used, and why."""

    name: str = json_field("name")
    problem: str = json_field("problem")


@view
class DefinitionsList:
    """``wlmap definitions -o json`` (``definitions NAME -o json`` prints one Karta object)."""

    items: tuple[KartaObject, ...] = json_field("items")
    count: int = json_field("count")
    invalid: tuple[InvalidKarta, ...] = json_field("invalid", omit="falsy", default=())


@view
class PredictedComponent:
    """What a definition implies for one component (summed over its instances) or one node."""

    instances: tuple[str, ...] | None = json_field(
        "instances", omit="none", default=None, description="instance ids (components only)"
    )
    replicas: int = json_field("replicas", default=0)
    gpus: int = json_field("gpus", default=0)


@view
class PredictedGang:
    """One gang: its minimum and the component that defines it."""

    min_member: int | None = json_field("minMember")
    definition: str | None = json_field("definition", omit="none", default=None)


@view
class Prediction:
    """``wlmap verify --dump``: what a definition implies for an object, in the ``--predict``
    file's format (docs/verify.md)."""

    phases: tuple[str, ...] = json_field("phases")
    pods: int = json_field("pods")
    gpus: int = json_field("gpus")
    components: Mapping[str, PredictedComponent] = json_field(
        "components", description="by component name, then by owner/child node path"
    )
    gangs: tuple[PredictedGang, ...] = json_field("gangs")
