"""Every sample of a covered kind goes through ``describe`` cleanly, with reviewed golden output.

One golden JSON per source file (upstream samples under ``golden/realworld/``, our manifests
under ``golden/fixtures/``) holds, per object, the part of the describe view the catalog decides:
phases, desired pods, resources and the component tree (names, instances, kinds, replicas,
per-component resources). Regenerate after a reviewed change with
``WLMAP_UPDATE_GOLDEN=1 pytest tests/catalog/test_golden.py`` and read the diff.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.catalog.conftest import FIXTURES, GOLDEN, objects_in, realworld
from workload_map.catalog import catalog
from workload_map.engine import Workload

UPDATE = os.environ.get("WLMAP_UPDATE_GOLDEN") == "1"


def _resources(value: dict[str, Any] | None) -> dict[str, Any] | None:
    keys = ("gpus", "cpuMillis", "memoryBytes", "byResource")
    return None if value is None else {k: value.get(k) for k in keys}


def _component(node: dict[str, Any]) -> dict[str, Any]:
    out = {
        "name": node["name"],
        "component": node.get("component"),
        "instance": node.get("instance"),
        "kind": node.get("kind"),
        "replicas": {k: node["replicas"].get(k) for k in ("desired", "min", "max")},
        "resources": _resources(node.get("resources")),
    }
    children = [_component(c) for c in node.get("children") or []]
    if children:
        out["children"] = children
    return out


def project(obj: dict[str, Any]) -> dict[str, Any]:
    found = catalog.resolve(obj["apiVersion"], obj["kind"])
    assert found is not None
    karta, exact = found
    view = Workload(karta, obj).describe()
    return {
        "object": f"{obj['apiVersion']} {obj['kind']} {view.get('name')}",
        "definition": karta.metadata["name"],
        "exactVersion": exact,
        "phases": view["phases"],
        "pods": view["pods"]["desired"],
        "resources": _resources(view["resources"]),
        "components": [_component(c) for c in view["components"]],
    }


def _sources() -> list[tuple[str, Path]]:
    out = [
        (f"fixtures/{p.relative_to(FIXTURES).as_posix()}", p)
        for p in sorted(FIXTURES.rglob("*.yaml"))
    ]
    root = realworld()
    if root is not None:
        for p in sorted(root.rglob("*.yaml")):
            rel = p.relative_to(root).as_posix()
            if not rel.startswith("karta-upstream/"):
                out.append((f"realworld/{rel}", p))
    return out


def _covered(path: Path) -> list[dict[str, Any]]:
    try:
        objects = objects_in(path)
    except yaml.YAMLError:
        return []  # upstream files kept verbatim although they do not parse
    return [
        o
        for o in objects
        if o.get("apiVersion") and catalog.resolve(o["apiVersion"], o["kind"]) is not None
    ]


SOURCES = _sources()


@pytest.mark.parametrize(("name", "path"), SOURCES, ids=[s[0] for s in SOURCES])
def test_describe_matches_golden(name: str, path: Path) -> None:
    objects = _covered(path)
    golden = GOLDEN / f"{name.removesuffix('.yaml')}.json"
    if not objects:
        assert not golden.exists(), f"{golden} is stale: the file has no covered object"
        pytest.skip("no object of a covered kind")
    got = [project(o) for o in objects]
    text = json.dumps(got, indent=1, sort_keys=True) + "\n"
    if UPDATE or not golden.exists():
        if not UPDATE:
            pytest.fail(f"no golden yet: run with WLMAP_UPDATE_GOLDEN=1 and review {golden}")
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_text(text)
        return
    assert json.loads(golden.read_text()) == got


def test_no_orphan_golden_files() -> None:
    expected = {GOLDEN / f"{name.removesuffix('.yaml')}.json" for name, _ in SOURCES}
    present = set(GOLDEN.rglob("*.json"))
    if realworld() is None:
        present = {p for p in present if "realworld" not in p.relative_to(GOLDEN).parts[:1]}
    assert sorted(p.relative_to(GOLDEN).as_posix() for p in present - expected) == []
