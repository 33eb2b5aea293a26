"""Shared helpers for the catalog tests: reading upstream objects and our own fixtures.

Upstream manifests (``../shared/realworld``) are read in place, never copied; YAML timestamps
are turned back into the RFC 3339 strings an API server would return, so objects look exactly
like what ``kubectl get -o json`` gives.
"""

from __future__ import annotations

import datetime as dt
import gzip
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import SHARED

HERE = Path(__file__).resolve().parent
FIXTURES = HERE / "fixtures"
GOLDEN = HERE / "golden"


def _plain(value: Any) -> Any:
    def default(x: Any) -> Any:
        if isinstance(x, dt.datetime):
            text = x.isoformat()
            return text.replace("+00:00", "Z")
        if isinstance(x, dt.date):
            return x.isoformat()
        raise TypeError(type(x).__name__)

    return json.loads(json.dumps(value, default=default))


def read_yaml_docs(path: Path) -> list[Any]:
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as fh:
        return [_plain(d) for d in yaml.safe_load_all(fh) if d is not None]


def iter_objects(root: Path, *, skip: tuple[str, ...] = ()) -> Iterator[tuple[str, dict[str, Any]]]:
    """(relative file name, object) for every Kubernetes object in every YAML file under root."""
    for path in sorted(root.rglob("*.yaml")) + sorted(root.rglob("*.yaml.gz")):
        rel = path.relative_to(root).as_posix()
        if any(part in rel for part in skip):
            continue
        try:
            docs = read_yaml_docs(path)
        except yaml.YAMLError:
            continue
        for doc in docs:
            items = doc.get("items") if isinstance(doc, dict) and doc.get("kind") == "List" else [doc]
            for item in items or []:
                if isinstance(item, dict) and item.get("kind") and item.get("apiVersion"):
                    yield rel, item


def realworld() -> Path | None:
    return None if SHARED is None else SHARED / "realworld"


@pytest.fixture(scope="session")
def realworld_dir(shared_dir: Path) -> Path:
    return shared_dir / "realworld"


def crds_by_gvk(root: Path) -> dict[tuple[str, str, str], tuple[str, dict[str, Any]]]:
    """Upstream CRDs under ``root`` keyed by every (group, version, kind) they serve."""
    out: dict[tuple[str, str, str], tuple[str, dict[str, Any]]] = {}
    for rel, obj in iter_objects(root, skip=("karta-upstream/",)):
        if obj.get("kind") != "CustomResourceDefinition":
            continue
        spec = obj.get("spec") or {}
        for version in spec.get("versions") or []:
            if not version.get("served"):
                continue
            key = (spec.get("group", ""), version.get("name", ""), spec.get("names", {}).get("kind", ""))
            known = out.get(key)
            # A trimmed copy (``*.minimal.yaml``) never replaces the full CRD.
            if known is None or "minimal" in known[0]:
                out[key] = (rel, obj)
    return out
