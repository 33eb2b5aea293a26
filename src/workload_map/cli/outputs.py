"""The CLI's own machine outputs as typed views: ``definitions -o json`` and ``verify --dump``
(``get -o json``'s are in :mod:`workload_map.cli.get_views`, with the engine's pod counts they
hold: ``definitions`` loads no engine).

Each command builds these views and prints their :func:`~workload_map.model.views.to_json`;
``python -m workload_map.cli.schemas`` derives the committed JSON Schemas (``schemas/``) from the
same types, so the contract and the output cannot drift apart. ``describe -o json`` is the
engine's :class:`~workload_map.engine.describe.DescribeView`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from workload_map.model.crd import crd_manifest
from workload_map.model.views import View, json_field

__all__ = [
    "DefinitionsList",
    "InvalidKarta",
    "KartaObject",
    "PredictedComponent",
    "PredictedGang",
    "Prediction",
]


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


class InvalidKarta(View):
    """A cluster Karta that cannot be used, and why."""

    name: str = json_field("name")
    problem: str = json_field("problem")


class DefinitionsList(View):
    """``wlmap definitions -o json`` (``definitions NAME -o json`` prints one Karta object)."""

    items: tuple[KartaObject, ...] = json_field("items")
    count: int = json_field("count")
    invalid: tuple[InvalidKarta, ...] = json_field("invalid", omit="falsy", default=())


class PredictedComponent(View):
    """What a definition implies for one component (summed over its instances) or one node."""

    instances: tuple[str, ...] | None = json_field(
        "instances", omit="none", default=None, description="instance ids (components only)"
    )
    replicas: int = json_field("replicas", default=0)
    gpus: int = json_field("gpus", default=0)


class PredictedGang(View):
    """One gang: its minimum and the component that defines it."""

    min_member: int | None = json_field("minMember")
    definition: str | None = json_field("definition", omit="none", default=None)


class Prediction(View):
    """``wlmap verify --dump``: what a definition implies for an object, in the ``--predict``
    file's format (docs/verify.md)."""

    phases: tuple[str, ...] = json_field("phases")
    pods: int = json_field("pods")
    gpus: int = json_field("gpus")
    components: Mapping[str, PredictedComponent] = json_field(
        "components", description="by component name, then by owner/child node path"
    )
    gangs: tuple[PredictedGang, ...] = json_field("gangs")
