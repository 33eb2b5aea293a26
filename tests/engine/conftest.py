"""Helpers of the engine tests: the hand-written fixtures and the golden-file switch.

Each fixture folder under ``fixtures/`` holds a Karta (``karta.yaml``), one workload object
(``workload.yaml``) and the objects of a ``--pods`` file (``pods.yaml``). Goldens are refreshed
with ``pytest tests/engine --update-golden`` (or ``WLMAP_UPDATE_GOLDEN=1``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

FIXTURES = Path(__file__).parent / "fixtures"
GOLDEN = Path(__file__).parent / "golden"
FIXTURE_NAMES = sorted(p.name for p in FIXTURES.iterdir() if (p / "karta.yaml").is_file())


def load_fixture(name: str) -> tuple[dict[str, Any], dict[str, Any], list[dict[str, Any]]]:
    """(karta dict, workload object, objects of the pods file) of one fixture folder."""
    folder = FIXTURES / name
    karta = yaml.safe_load((folder / "karta.yaml").read_text())
    obj = yaml.safe_load((folder / "workload.yaml").read_text())
    pods_file = folder / "pods.yaml"
    pods = list(yaml.safe_load_all(pods_file.read_text())) if pods_file.is_file() else []
    return karta, obj, [p for p in pods if isinstance(p, dict)]


def workload(name: str, *, with_pods: bool = True, **kwargs: Any) -> Any:
    from workload_map.engine import Workload

    karta, obj, pods = load_fixture(name)
    return Workload(karta, obj, pods if with_pods else None, **kwargs)


def karta_dict(root: dict[str, Any], *children: dict[str, Any], gang: Any = None) -> dict[str, Any]:
    """A Karta dict from component dicts (tests build small definitions inline)."""
    spec: dict[str, Any] = {
        "structureDefinition": {"rootComponent": root, "childComponents": list(children)}
    }
    if gang is not None:
        spec["optimizationInstructions"] = {"gangScheduling": gang}
    return {
        "apiVersion": "run.ai/v1alpha1",
        "kind": "Karta",
        "metadata": {"name": "t"},
        "spec": spec,
    }


ROOT_KIND = {"group": "example.com", "version": "v1", "kind": "Thing"}


def root(**fields: Any) -> dict[str, Any]:
    """A root component named ``thing`` with an empty status definition unless given."""
    out: dict[str, Any] = {
        "name": "thing",
        "kind": ROOT_KIND,
        "statusDefinition": {"statusMappings": {}},
    }
    out.update(fields)
    return out
