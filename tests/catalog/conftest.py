"""Shared helpers for the catalog tests: reading upstream objects and our own fixtures.

Upstream manifests (``../shared/realworld``) are read in place, never copied; YAML timestamps
are turned back into the RFC 3339 strings an API server would return, so objects look exactly
like what ``kubectl get -o json`` gives.
"""

from __future__ import annotations

import datetime as dt
import gzip
import hashlib
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import SHARED

HERE = Path(__file__).resolve().parent
FIXTURES = HERE / "fixtures"
GOLDEN = HERE / "golden"
#: upstream CRDs of catalog kinds that ../shared/realworld lacks (sources in its SOURCES.md)
UPSTREAM = HERE / "upstream"


def _plain(value: Any) -> Any:
    def default(x: Any) -> Any:
        if isinstance(x, dt.datetime):
            text = x.isoformat()
            return text.replace("+00:00", "Z")
        if isinstance(x, dt.date):
            return x.isoformat()
        raise TypeError(type(x).__name__)

    return json.loads(json.dumps(value, default=default))


_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def read_text(path: Path) -> str:
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as fh:
        return fh.read()


def _cache_dir() -> Path:
    return Path(os.environ.get("WLMAP_CACHE", Path.home() / ".cache" / "workload-map"))


def _write_aside(path: Path, text: str) -> None:
    """``text`` into ``path`` whole: written aside, then renamed, so that a parallel worker
    (pytest -n) or another clone's run reading the same key sees the whole file or none."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f"{path.name}.{os.getpid()}.partial")
    partial.write_text(text)
    partial.replace(path)


def read_yaml_docs(path: Path, text: str | None = None, *, plain: bool = True) -> list[Any]:
    """The documents of a YAML file. Plain ones (JSON values) are cached as JSON by the text's
    hash: test_gangs.py parametrizes over every upstream object at collection, and parsing the
    YAML cost each process (every xdist worker) seconds of CPU before its first test."""
    text = read_text(path) if text is None else text
    cached: Path | None = None
    if plain:
        digest = hashlib.sha256(text.encode()).hexdigest()
        cached = _cache_dir() / "test-yaml" / f"{digest}.json"
        try:
            out: list[Any] = json.loads(cached.read_text())
            return out
        except (OSError, ValueError):
            pass
    docs = [d for d in yaml.load_all(text, Loader=_LOADER) if d is not None]
    if not plain:
        return docs
    out = [_plain(d) for d in docs]
    if cached is not None:
        _write_aside(cached, json.dumps(out))
    return out


def iter_objects(
    root: Path,
    *,
    skip: tuple[str, ...] = (),
    containing: str | None = None,
    plain: bool = True,
) -> Iterator[tuple[str, dict[str, Any]]]:
    """(relative file name, object) for every Kubernetes object in every YAML file under root.

    ``containing`` skips (unparsed) the files whose text lacks that string.
    """
    for path in sorted(root.rglob("*.yaml")) + sorted(root.rglob("*.yaml.gz")):
        rel = path.relative_to(root).as_posix()
        if any(part in rel for part in skip):
            continue
        text = read_text(path)
        if containing is not None and containing not in text:
            continue
        try:
            docs = read_yaml_docs(path, text, plain=plain)
        except yaml.YAMLError:
            continue
        for doc in docs:
            items = (
                doc.get("items") if isinstance(doc, dict) and doc.get("kind") == "List" else [doc]
            )
            for item in items or []:
                if isinstance(item, dict) and item.get("kind") and item.get("apiVersion"):
                    yield rel, item


def realworld() -> Path | None:
    return None if SHARED is None else SHARED / "realworld"


@pytest.fixture(scope="session")
def realworld_dir(shared_dir: Path) -> Path:
    return shared_dir / "realworld"


def _cached_crds(root: Path) -> list[tuple[str, dict[str, Any]]]:
    """The CRDs under ``root``; parsed YAML is cached as JSON (parsing the big CRDs is slow)."""
    cache = _cache_dir() / "test-crds"
    out: list[tuple[str, dict[str, Any]]] = []
    for path in sorted(root.rglob("*.yaml")) + sorted(root.rglob("*.yaml.gz")):
        rel = path.relative_to(root).as_posix()
        if rel.startswith("karta-upstream/"):
            continue
        stat = path.stat()
        key = hashlib.sha256(f"{path}:{stat.st_size}:{stat.st_mtime_ns}".encode()).hexdigest()
        cached = cache / f"{key}.json"
        if cached.exists():
            docs = json.loads(cached.read_text())
        else:
            text = read_text(path)
            docs = []
            if "CustomResourceDefinition" in text:
                try:
                    docs = [
                        d
                        for d in read_yaml_docs(path, text, plain=False)
                        if isinstance(d, dict) and d.get("kind") == "CustomResourceDefinition"
                    ]
                except yaml.YAMLError:
                    docs = []
            _write_aside(cached, json.dumps(docs))
        out.extend((rel, d) for d in docs)
    return out


def crds_by_gvk(root: Path) -> dict[tuple[str, str, str], tuple[str, dict[str, Any]]]:
    """Upstream CRDs under ``root`` keyed by every (group, version, kind) they serve."""
    out: dict[tuple[str, str, str], tuple[str, dict[str, Any]]] = {}
    for rel, obj in _cached_crds(root):
        if obj.get("kind") != "CustomResourceDefinition":
            continue
        spec = obj.get("spec") or {}
        for version in spec.get("versions") or []:
            if not version.get("served"):
                continue
            key = (
                spec.get("group", ""),
                version.get("name", ""),
                spec.get("names", {}).get("kind", ""),
            )
            known = out.get(key)
            # A trimmed copy (``*.minimal.yaml``) never replaces the full CRD.
            if known is None or "minimal" in known[0]:
                out[key] = (rel, obj)
    return out


def objects_in(path: Path) -> list[dict[str, Any]]:
    """The Kubernetes objects of one YAML file (``List`` items expanded)."""
    out: list[dict[str, Any]] = []
    for doc in read_yaml_docs(path):
        items = doc.get("items") if isinstance(doc, dict) and doc.get("kind") == "List" else [doc]
        out.extend(i for i in items or [] if isinstance(i, dict) and i.get("kind"))
    return out
