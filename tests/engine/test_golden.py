"""Golden tests: the reference catalog's definitions over real upstream manifests.

For every definition in ``../shared/realworld/karta-upstream/workload-map-catalog`` and every
realworld object of its type (spec-only examples and objects with status), the engine's
structure, status, GPU totals and gangs are compared with ``golden/<definition>.yaml``. Pods
come from ``realworld/*/pods`` when they name the object, else (LeaderWorkerSet, StatefulSet)
they are the pods the operator would create, with its labels. Refresh with ``--update-golden``
and review the diff.
"""

from __future__ import annotations

import copy
import functools
import warnings
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import SHARED
from tests.engine.conftest import GOLDEN

LWS = "leaderworkerset.sigs.k8s.io"


def _definitions() -> list[Path]:
    if SHARED is None:
        return []
    return sorted((SHARED / "realworld" / "karta-upstream" / "workload-map-catalog").glob("*.yaml"))


def _gvk(karta: dict[str, Any]) -> tuple[str, str, str]:
    kind = karta["spec"]["structureDefinition"]["rootComponent"]["kind"]
    return (kind.get("group") or "", kind["version"], kind["kind"])


_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@functools.cache
def _all_objects(shared: Path) -> tuple[tuple[str, tuple[str, str, str], dict[str, Any]], ...]:
    realworld = shared / "realworld"
    out = []
    for family in sorted(
        p for p in realworld.iterdir() if p.is_dir() and p.name != "karta-upstream"
    ):
        for path in sorted([*family.glob("*.yaml"), *(family / "with-status").glob("*.yaml")]):
            try:
                docs = list(yaml.load_all(path.read_text(), Loader=_LOADER))
            except yaml.YAMLError:
                continue
            for index, doc in enumerate(docs):
                if not isinstance(doc, dict) or not isinstance(doc.get("metadata"), dict):
                    continue
                group, _, version = str(doc.get("apiVersion", "")).rpartition("/")
                gvk = (group, version, str(doc.get("kind")))
                out.append((f"{path.relative_to(realworld)}#{index}", gvk, doc))
    return tuple(out)


def _objects(shared: Path, gvk: tuple[str, str, str]) -> list[tuple[str, dict[str, Any]]]:
    return [(oid, copy.deepcopy(doc)) for oid, g, doc in _all_objects(shared) if g == gvk]


def _pod(
    name: str,
    labels: dict[str, str],
    annotations: dict[str, str] | None = None,
    owner: dict[str, Any] | None = None,
) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "labels": labels}
    if annotations:
        meta["annotations"] = annotations
    if owner:
        meta["ownerReferences"] = [owner]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": {"containers": [{"name": "c"}]},
        "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]},
    }


def _operator_pods(obj: dict[str, Any]) -> list[dict[str, Any]] | None:
    name = obj["metadata"].get("name") or "x"
    spec = obj.get("spec") or {}
    if obj["kind"] == "LeaderWorkerSet":
        size = int(spec.get("leaderWorkerTemplate", {}).get("size") or 1)
        pods = []
        for group in range(int(spec.get("replicas") or 1)):
            base = {f"{LWS}/name": name, f"{LWS}/group-index": str(group)}
            pods.append(_pod(f"{name}-{group}", {**base, f"{LWS}/worker-index": "0"}))
            for worker in range(1, size):
                pods.append(
                    _pod(
                        f"{name}-{group}-{worker}",
                        {**base, f"{LWS}/worker-index": str(worker)},
                        {f"{LWS}/leader-name": f"{name}-{group}"},
                    )
                )
        return pods[:40]
    if obj["kind"] == "StatefulSet":
        owner = {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": name, "controller": True}
        return [_pod(f"{name}-{i}", {}, owner=owner) for i in range(int(spec.get("replicas") or 1))]
    return None


def _realworld_pods(shared: Path, family: str, name: str) -> list[dict[str, Any]]:
    out = []
    for path in sorted((shared / "realworld" / family / "pods").glob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            if (
                isinstance(doc, dict)
                and doc.get("kind") == "Pod"
                and name
                and name in str(doc.get("metadata"))
            ):
                out.append(doc)
    return out


def _summary(karta: Any, obj: dict[str, Any], pods: list[dict[str, Any]]) -> dict[str, Any]:
    from workload_map.engine import Workload
    from workload_map.errors import WlmapError

    try:
        d = Workload(karta, obj, pods).describe()
    except WlmapError as err:
        return {"error": str(err)}

    def node(n: dict[str, Any]) -> dict[str, Any]:
        r = n["replicas"]
        out: dict[str, Any] = {
            "name": n["name"],
            "replicas": [r["desired"], r["current"], r["min"], r["max"]],
            "gpus": n["resources"]["gpus"],
            "cpuMillis": n["resources"]["cpuMillis"],
        }
        if n["children"]:
            out["children"] = [node(c) for c in n["children"]]
        return out

    return {
        "phases": d["phases"],
        "pods": [d["pods"]["desired"], d["pods"]["current"], d["pods"]["ready"]],
        "resources": {
            k: d["resources"][k] for k in ("gpus", "cpuMillis", "memoryBytes", "byResource")
        },
        "components": [node(n) for n in d["components"]],
        "podGroups": [
            [
                g["name"].replace(
                    obj["metadata"].get("uid") or obj["metadata"].get("name", ""), "<uid>", 1
                ),
                g["minMember"],
                len(g["pods"]),
            ]
            for g in d["podGroups"]
        ],
        "unattributedPods": len(d["unattributedPods"]),
        **({"errors": d["errors"]} if d["errors"] else {}),
    }


@pytest.mark.shared
@pytest.mark.parametrize("definition", [p.stem for p in _definitions()] or ["(no ../shared)"])
def test_golden(definition: str, shared_dir: Path, update_golden: bool) -> None:
    from workload_map.model import load_karta

    path = (
        shared_dir / "realworld" / "karta-upstream" / "workload-map-catalog" / f"{definition}.yaml"
    )
    raw = yaml.safe_load(path.read_text())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        karta = load_karta(raw)
    got: dict[str, Any] = {}
    for object_id, obj in _objects(shared_dir, _gvk(raw)):
        pods = _realworld_pods(
            shared_dir, object_id.split("/", 1)[0], obj["metadata"].get("name", "")
        )
        got[object_id] = _summary(karta, obj, pods or _operator_pods(obj) or [])
    golden = GOLDEN / f"{definition}.yaml"
    if update_golden or not golden.exists():
        golden.write_text(yaml.safe_dump(got, sort_keys=True, width=100))
    expected = yaml.safe_load(golden.read_text())
    assert set(got) == set(expected)
    for object_id in sorted(got):
        assert got[object_id] == expected[object_id], object_id
