"""A custom kind known only through a Karta: ``parts`` of pods, one gang per part."""

from __future__ import annotations

from typing import Any

GROUP = "example.wlmap.io"
KIND = "PartSet"


def _by(expression: str) -> dict[str, Any]:
    return {"byExpression": {"expression": expression, "expectedResult": "true"}}


def karta(parts: int = 2, name: str = "partsets-example-wlmap-io") -> dict[str, Any]:
    """``parts`` components ``p0..``, each ``.spec.pN`` with a template and replicas."""
    components: list[dict[str, Any]] = []
    groups: list[dict[str, Any]] = []
    for i in range(parts):
        part = f"p{i}"
        components.append(
            {
                "name": part,
                "ownerRef": "root",
                "specDefinition": {"podTemplateSpecPath": f".spec.{part}.template"},
                "scaleDefinition": {"replicasPath": f".spec.{part}.replicas"},
                "podSelector": {
                    "componentTypeSelector": {
                        "keyPath": '.metadata.labels["example.wlmap.io/part"]',
                        "value": part,
                    }
                },
            }
        )
        groups.append(
            {
                "name": f"gang-{part}",
                "members": [
                    {
                        "componentName": part,
                        "groupByKeyPaths": ['.metadata.labels["example.wlmap.io/part"]'],
                    }
                ],
            }
        )
    return {
        "apiVersion": "run.ai/v1alpha1",
        "kind": "Karta",
        "metadata": {"name": name},
        "spec": {
            "structureDefinition": {
                "rootComponent": {
                    "name": "root",
                    "kind": {"group": GROUP, "version": "v1", "kind": KIND},
                    "statusDefinition": {
                        "statusMappings": {
                            "suspended": [_by(".spec.suspend == true")],
                            "completed": [_by('.status.phase == "Done"')],
                            "running": [_by('.spec.suspend != true and .status.phase != "Done"')],
                        }
                    },
                },
                "childComponents": components,
            },
            "optimizationInstructions": {"gangScheduling": {"podGroups": groups}},
        },
    }


def partset(name: str, replicas: list[int], namespace: str = "default") -> dict[str, Any]:
    spec: dict[str, Any] = {}
    for i, count in enumerate(replicas):
        part = f"p{i}"
        spec[part] = {
            "replicas": count,
            "template": {
                "metadata": {"labels": {"example.wlmap.io/part": part}},
                "spec": {"containers": [{"name": "main", "image": "busybox"}]},
            },
        }
    return {
        "apiVersion": f"{GROUP}/v1",
        "kind": KIND,
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
    }


def karta_subgroups(parts: int = 2, name: str = "partsets-example-wlmap-io") -> dict[str, Any]:
    """:func:`karta` in the v2 form: one ``podGroup`` whose subgroups are the parts (a gang
    of gangs: its minimum is the sum of theirs)."""
    out = karta(parts, name)
    out["spec"]["optimizationInstructions"]["gangScheduling"] = {
        "podGroup": {
            "name": "parts",
            "subGroups": [{"componentName": f"p{i}"} for i in range(parts)],
        }
    }
    return out


#: the label naming a pod's part, which is the instance id of :func:`karta_instances`
PART_LABEL = "example.wlmap.io/part"


def karta_instances(name: str = "partsets-example-wlmap-io") -> dict[str, Any]:
    """One component ``part`` with one instance per entry of ``.spec.parts`` (its ``name``),
    and one alpha gang definition keyed by the part label: a gang instance per part, each of
    its part's replicas (the instance's own scale)."""
    out = karta(1, name)
    key = f'.metadata.labels["{PART_LABEL}"]'
    out["spec"]["structureDefinition"]["childComponents"] = [
        {
            "name": "part",
            "ownerRef": "root",
            "instanceIdPath": ".spec.parts[].name",
            "specDefinition": {"podTemplateSpecPath": ".spec.parts[].template"},
            "scaleDefinition": {"replicasPath": ".spec.parts[].replicas"},
            "podSelector": {
                "componentTypeSelector": {"keyPath": f"{key} != null", "value": "true"},
                "componentInstanceSelector": {"idPath": key},
            },
        }
    ]
    out["spec"]["optimizationInstructions"]["gangScheduling"] = {
        "podGroups": [
            {"name": "gang", "members": [{"componentName": "part", "groupByKeyPaths": [key]}]}
        ]
    }
    return out


def partset_instances(name: str, replicas: list[int], namespace: str = "default") -> dict[str, Any]:
    """A PartSet of :func:`karta_instances`: parts ``p0..`` with ``replicas`` pods each."""
    parts = [
        {
            "name": f"p{i}",
            "replicas": count,
            "template": {
                "metadata": {"labels": {PART_LABEL: f"p{i}"}},
                "spec": {"containers": [{"name": "main", "image": "busybox"}]},
            },
        }
        for i, count in enumerate(replicas)
    ]
    return {
        "apiVersion": f"{GROUP}/v1",
        "kind": KIND,
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"parts": parts},
    }
