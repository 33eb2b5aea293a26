"""Shared builders for the model tests: a minimal valid Karta document to mutate."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

FIXTURES = Path(__file__).parent / "fixtures"

_BASE: dict[str, Any] = {
    "apiVersion": "run.ai/v1alpha1",
    "kind": "Karta",
    "metadata": {"name": "example-com-job-v1"},
    "spec": {
        "structureDefinition": {
            "rootComponent": {
                "name": "root",
                "kind": {"group": "example.com", "version": "v1", "kind": "Job"},
                "statusDefinition": {
                    "phaseDefinition": {"path": ".status.phase"},
                    "statusMappings": {"running": [{"byPhase": "Running"}]},
                },
            },
            "childComponents": [
                {
                    "name": "worker",
                    "ownerRef": "root",
                    "specDefinition": {"podTemplateSpecPath": ".spec.template"},
                    "scaleDefinition": {"replicasPath": ".spec.replicas"},
                    "podSelector": {
                        "componentTypeSelector": {
                            "keyPath": '.metadata.labels["example.com/role"]',
                            "value": "worker",
                        }
                    },
                }
            ],
        }
    },
}


def base_doc() -> dict[str, Any]:
    """A fresh deep copy of a small valid definition (root + one pod-bearing child)."""
    return copy.deepcopy(_BASE)


@pytest.fixture
def doc() -> dict[str, Any]:
    return base_doc()
