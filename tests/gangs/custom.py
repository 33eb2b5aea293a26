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
