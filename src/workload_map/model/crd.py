"""The ``kartas.run.ai`` CustomResourceDefinition, generated from the model's declared shape.

Generating it (``make crd`` / ``python -m workload_map.model.crd``) rather than writing it by
hand keeps the schema an API server enforces identical to what the loader accepts; a test fails
when the committed ``deploy/crds/kartas.run.ai.yaml`` drifts from this output. The schema is
structural (every node typed, list-map keys required) because an API server rejects anything else.
"""

from __future__ import annotations

import sys
from typing import Any

from workload_map.model.shape import BOOL, FREE, INT, SHAPES, STR, STRMAP, ListOf
from workload_map.model.types import GROUP, KIND, VERSION, KartaCondition, KartaSpec, KartaStatus
from workload_map.yaml_import import import_yaml

__all__ = ["CRD_NAME", "crd_manifest", "render_crd"]

CRD_NAME = f"kartas.{GROUP}"

_HEADER = (
    "# Generated from the workload_map.model shape by `make crd`"
    " (python -m workload_map.model.crd).\n"
    "# Do not edit: tests/model/test_crd.py fails when this file drifts from the generator.\n"
)

#: metav1.Condition constraints, as every Kubernetes API declares them.
_CONDITION_EXTRA: dict[str, dict[str, Any]] = {
    "lastTransitionTime": {"format": "date-time"},
    "message": {"maxLength": 32768},
    "observedGeneration": {"format": "int64", "minimum": 0},
    "reason": {
        "maxLength": 1024,
        "minLength": 1,
        "pattern": "^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$",
    },
    "type": {
        "maxLength": 316,
        "pattern": (
            r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
            r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$"
        ),
    },
}


def _field_schema(cls: type, f: Any) -> dict[str, Any]:
    typ = f.type
    node: dict[str, Any]
    if typ == STR:
        node = {"type": "string"}
    elif typ == INT:
        node = {"type": "integer"}
    elif typ == BOOL:
        node = {"type": "boolean"}
    elif typ == FREE:
        node = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    elif typ == STRMAP:
        node = {"type": "object", "additionalProperties": {"type": "string"}}
    elif isinstance(typ, ListOf):
        item = _item_schema(typ.item)
        node = {"type": "array", "items": item, "x-kubernetes-list-type": typ.list_type}
        if typ.list_type == "map":
            node["x-kubernetes-list-map-keys"] = list(typ.map_keys)
    else:
        node = _object_schema(typ)
        node.pop("description")
    node = {"description": f.doc, **node}
    if f.default is not None:
        node["default"] = f.default
    if f.enum:
        node["enum"] = list(f.enum)
    if f.min_length is not None:
        node["minLength"] = f.min_length
    if f.min_items is not None:
        node["minItems"] = f.min_items
    if f.min_properties is not None:
        node["minProperties"] = f.min_properties
    if cls is KartaCondition:
        node.update(_CONDITION_EXTRA.get(f.key, {}))
    return node


def _item_schema(typ: Any) -> dict[str, Any]:
    if typ == STR:
        return {"type": "string"}
    return _object_schema(typ)


def _object_schema(cls: type) -> dict[str, Any]:
    shape = SHAPES[cls]
    node: dict[str, Any] = {"description": shape.doc, "type": "object"}
    node["properties"] = {f.key: _field_schema(cls, f) for f in sorted(shape.fields, key=_key)}
    required = sorted(f.key for f in shape.fields if f.required)
    if required:
        node["required"] = required
    if shape.cel:
        node["x-kubernetes-validations"] = [
            {"rule": rule, "message": message} for rule, message in shape.cel
        ]
    return node


def _key(f: Any) -> str:
    return str(f.key)


def _root_schema() -> dict[str, Any]:
    return {
        "description": "Karta describes the structure, status and scheduling of a workload type.",
        "type": "object",
        "properties": {
            "apiVersion": {
                "description": "The versioned schema of this object.",
                "type": "string",
            },
            "kind": {"description": "The REST resource this object represents.", "type": "string"},
            "metadata": {"type": "object"},
            "spec": _object_schema(KartaSpec),
            "status": _object_schema(KartaStatus),
        },
    }


def crd_manifest() -> dict[str, Any]:
    """The CRD as a dict, ready for an API server."""
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": CRD_NAME},
        "spec": {
            "group": GROUP,
            "names": {
                "kind": KIND,
                "listKind": f"{KIND}List",
                "plural": "kartas",
                "singular": "karta",
                "shortNames": ["krt"],
            },
            "scope": "Cluster",
            "versions": [
                {
                    "name": VERSION,
                    "served": True,
                    "storage": True,
                    "additionalPrinterColumns": [
                        {
                            "name": "Framework",
                            "type": "string",
                            "description": "Target framework kind",
                            "jsonPath": ".spec.structureDefinition.rootComponent.kind.kind",
                        },
                        {
                            "name": "Root Component",
                            "type": "string",
                            "description": "Root component name",
                            "jsonPath": ".spec.structureDefinition.rootComponent.name",
                        },
                        {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
                    ],
                    "schema": {"openAPIV3Schema": _root_schema()},
                    "subresources": {"status": {}},
                }
            ],
        },
    }


def render_crd() -> str:
    """The CRD as the YAML text committed at ``deploy/crds/kartas.run.ai.yaml``."""
    yaml = import_yaml()
    # libyaml's emitter when PyYAML has it: the same text (tests/model/test_crd.py compares it
    # with the committed file), ~4x less CPU than the pure-Python emitter for 80 kB of schema
    body: str = yaml.dump(
        crd_manifest(),
        Dumper=getattr(yaml, "CSafeDumper", yaml.SafeDumper),
        sort_keys=False,
        default_flow_style=False,
        width=100,
    )
    return _HEADER + "---\n" + body


def main() -> int:
    sys.stdout.write(render_crd())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
