"""Workload objects for the gang tests: one per catalog kind with gang instructions."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml

from tests.catalog.conftest import FIXTURES, iter_objects
from workload_map.catalog import catalog
from workload_map.gangs.config import ANNOTATION_GANG
from workload_map.model import Karta

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


def gang_kartas() -> list[Karta]:
    out = []
    for karta in catalog:
        gang = karta.gang_scheduling
        if gang is not None and (gang.pod_group is not None or gang.pod_groups):
            out.append(karta)
    return out


def _objects() -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    for path in sorted(EXAMPLES.glob("*/*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            if (
                isinstance(doc, dict)
                and "apiVersion" in doc
                and doc.get("kind") not in (None, "List")
            ):
                found.append(doc)
    for base in (FIXTURES / "gangs", FIXTURES):
        for _, obj in iter_objects(base):
            found.append(obj)
    return found


OBJECTS = _objects()


def opted(obj: dict[str, Any], uid: str = "0a0b0c0d-0000-4000-8000-00000000beef") -> dict[str, Any]:
    """A copy with a uid and the opt-in annotation."""
    out = copy.deepcopy(obj)
    meta = out.setdefault("metadata", {})
    meta.setdefault("uid", uid)
    meta.setdefault("namespace", "default")
    meta.setdefault("annotations", {})[ANNOTATION_GANG] = "enabled"
    return out


def sample_for(karta: Karta) -> dict[str, Any] | None:
    """A fixture of the Karta's kind (another version's, re-labelled, when none of its own)."""
    gvk = karta.root_gvk
    assert gvk is not None
    same_kind = []
    for obj in OBJECTS:
        api_version, kind = obj.get("apiVersion", ""), obj.get("kind")
        group = api_version.split("/")[0] if "/" in api_version else ""
        if kind != gvk.kind or group != gvk.group:
            continue
        if api_version == gvk.api_version:
            return opted(obj)
        same_kind.append(obj)
    if same_kind:
        obj = opted(same_kind[0])
        obj["apiVersion"] = gvk.api_version
        return obj
    return None


def example(name: str) -> tuple[dict[str, Any], list[dict[str, Any]] | None]:
    folder = EXAMPLES / name
    obj = next(
        d
        for p in sorted(folder.glob("*.yaml"))
        if p.name != "pods.yaml"
        for d in yaml.safe_load_all(p.read_text())
        if isinstance(d, dict) and "apiVersion" in d and d.get("kind") not in (None, "List", "Pod")
    )
    pods_file = folder / "pods.yaml"
    pods = yaml.safe_load(pods_file.read_text())["items"] if pods_file.exists() else None
    return obj, pods


def karta_of(obj: dict[str, Any]) -> Karta:
    found = catalog.resolve(obj["apiVersion"], obj["kind"])
    assert found is not None, obj["kind"]
    return found[0]


def set_scheduler(obj: dict[str, Any], name: str) -> dict[str, Any]:
    """Every pod template's (and pod spec's) schedulerName set to ``name``."""
    out = copy.deepcopy(obj)

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            if "containers" in value and isinstance(value["containers"], list):
                value["schedulerName"] = name
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk(out.get("spec"))
    return out
