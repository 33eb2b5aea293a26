"""The differential test's cases: each definition applied to every object of its kind.

Definitions: the reference's own catalog, the older ResourceInterface examples, the newer
upstream example (all under ``../shared/realworld/karta-upstream``) and our catalog. Objects:
every realworld object, with the realworld pods that belong to it or, for the operators whose
pod labels are well known (LeaderWorkerSet, JobSet, Kubeflow jobs), the pods the operator would
create; plus the engine's hand-written fixtures and a few hand-written probe definitions.
"""

from __future__ import annotations

import copy
import gzip
import hashlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from tests.engine.refgo_harness import ROOT, refgo_workloads

__all__ = ["Case", "Definition", "all_cases", "shared_dir"]

OUR_CATALOG = ROOT / "src" / "workload_map" / "catalog" / "data"
ENGINE_FIXTURES = ROOT / "tests" / "engine" / "fixtures"
MAX_SYNTHETIC_PODS = 48  # per workload: enough for several groups, cheap for both engines


def shared_dir() -> Path | None:
    """The shared folder with the realworld manifests (None: not beside this checkout)."""
    from tests.conftest import SHARED

    return SHARED


@dataclass(frozen=True)
class Definition:
    id: str
    karta: dict[str, Any]
    gvk: tuple[str, str, str]


@dataclass
class Case:
    id: str
    definition: Definition
    obj: dict[str, Any]
    pods: list[dict[str, Any]] = field(default_factory=list)


def _docs(path: Path) -> list[Any]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as handle:
        return list(yaml.safe_load_all(handle))


def _root_gvk(karta: Mapping[str, Any]) -> tuple[str, str, str] | None:
    try:
        kind = karta["spec"]["structureDefinition"]["rootComponent"]["kind"]
        return (kind.get("group") or "", kind["version"], kind["kind"])
    except (KeyError, TypeError):
        return None


def _object_gvk(obj: Mapping[str, Any]) -> tuple[str, str, str]:
    api_version = str(obj.get("apiVersion", ""))
    group, _, version = api_version.rpartition("/")
    return (group, version, str(obj.get("kind", "")))


def _definitions(shared: Path | None) -> list[Definition]:
    sources: list[tuple[str, Path]] = []
    if shared is not None:
        upstream = shared / "realworld" / "karta-upstream"
        sources += [
            ("refcat", p) for p in sorted((upstream / "workload-map-catalog").glob("*.yaml"))
        ]
        sources += [("ri", p) for p in sorted((upstream / "run-ai-karta-examples").glob("*.yaml"))]
        sources += [("newer", p) for p in sorted((upstream / "run-ai-karta-newer").glob("*.yaml"))]
    sources += [("ours", p) for p in sorted(OUR_CATALOG.glob("*.yaml"))]
    out: list[Definition] = []
    for prefix, path in sources:
        try:
            docs = _docs(path)
        except yaml.YAMLError:
            continue  # the known-bad upstream mpijob.yaml; reported by test_fixture_inventory
        for doc in docs:
            if not isinstance(doc, dict) or doc.get("kind") not in ("Karta", "ResourceInterface"):
                continue
            gvk = _root_gvk(doc)
            # a definition with references (our extension) binds $<name> variables the
            # reference has no notion of: not comparable (docs/reference-differences.md)
            structure = (doc.get("spec") or {}).get("structureDefinition") or {}
            if gvk is not None and not structure.get("references"):
                out.append(Definition(f"{prefix}:{path.stem}", doc, gvk))
    return out


def _workload_objects(shared: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    realworld = shared / "realworld"
    for family in sorted(p for p in realworld.iterdir() if p.is_dir()):
        if family.name == "karta-upstream":
            continue
        files = sorted(family.glob("*.yaml")) + sorted((family / "with-status").glob("*.yaml"))
        for path in files:
            try:
                docs = _docs(path)
            except yaml.YAMLError:
                continue
            for index, doc in enumerate(docs):
                if (
                    isinstance(doc, dict)
                    and doc.get("apiVersion")
                    and doc.get("kind")
                    and isinstance(doc.get("metadata"), dict)
                ):
                    yield f"{path.relative_to(realworld)}#{index}", doc


def _realworld_pods(shared: Path) -> dict[str, list[dict[str, Any]]]:
    """Pods per family folder (only the files that parse as YAML)."""
    out: dict[str, list[dict[str, Any]]] = {}
    for path in sorted((shared / "realworld").glob("*/pods/*.yaml")):
        pods = [d for d in _docs(path) if isinstance(d, dict) and d.get("kind") == "Pod"]
        out.setdefault(path.parts[-3], []).extend(pods)
    return out


def _pod_mentions(pod: Mapping[str, Any], name: str) -> bool:
    meta = pod.get("metadata") or {}
    owners = [o.get("name") for o in meta.get("ownerReferences") or []]
    labels = list((meta.get("labels") or {}).values())
    return name in owners or name in labels


def _with_uid(case_id: str, obj: dict[str, Any]) -> dict[str, Any]:
    obj = copy.deepcopy(obj)
    meta = obj.setdefault("metadata", {})
    if not isinstance(meta, dict):
        return obj
    if not meta.get("uid"):
        meta["uid"] = "uid-" + hashlib.sha1(case_id.encode()).hexdigest()[:12]
    meta.setdefault("namespace", "default")
    return obj


def _engine_fixture_cases(definitions: list[Definition]) -> Iterator[Case]:
    """ENGINE's hand-written fixtures: one folder (or file) per workload with its Karta,
    the workload object and its pods, in any split over YAML files."""
    if not ENGINE_FIXTURES.is_dir():
        return
    groups: dict[Path, list[Any]] = {}
    for path in sorted(ENGINE_FIXTURES.rglob("*.yaml")):
        try:
            docs = [d for d in _docs(path) if isinstance(d, dict)]
        except yaml.YAMLError:
            continue
        key = path.parent if path.parent != ENGINE_FIXTURES else path
        groups.setdefault(key, []).extend(docs)
    for key, docs in groups.items():
        kartas = [d for d in docs if d.get("kind") in ("Karta", "ResourceInterface")]
        pods = [d for d in docs if d.get("kind") == "Pod"]
        objects = [
            d
            for d in docs
            if d.get("kind") not in ("Karta", "ResourceInterface", "Pod")
            and isinstance(d.get("metadata"), dict)
        ]
        rel = key.relative_to(ROOT)
        for index, obj in enumerate(objects):
            gvk = _object_gvk(obj)
            # The folder's own Karta, else (a folder of plain manifests) our catalog's.
            defs = [
                Definition(f"fixture:{rel.name}", k, gvk) for k in kartas if _root_gvk(k) == gvk
            ]
            if not kartas:
                defs = [d for d in definitions if d.gvk == gvk and d.id.startswith("ours:")]
            for definition in defs:
                case_id = f"{rel}#{index} ~ {definition.id}"
                owned = _with_uid(case_id, obj)
                yield Case(
                    case_id,
                    definition,
                    owned,
                    pods or refgo_workloads.operator_pods(owned, limit=MAX_SYNTHETIC_PODS),
                )


def _probe_karta(**changes: Any) -> dict[str, Any]:
    """A small hand-written two-component definition; ``changes`` edit it per probe."""
    karta: dict[str, Any] = {
        "apiVersion": "run.ai/v1alpha1",
        "kind": "Karta",
        "metadata": {"name": "probe-example-com-trainer-v1"},
        "spec": {
            "structureDefinition": {
                "rootComponent": {
                    "name": "trainer",
                    "kind": {"group": "probe.example.com", "version": "v1", "kind": "Trainer"},
                    "statusDefinition": {
                        "phaseDefinition": {"path": ".status.phase"},
                        "statusMappings": {
                            "running": [{"byPhase": "Running"}],
                            "failed": [
                                {
                                    "byExpression": {
                                        "expression": changes.get("failed", ".status.failed"),
                                        "expectedResult": "true",
                                    }
                                }
                            ],
                        },
                    },
                },
                "childComponents": [
                    {
                        "name": "worker",
                        "ownerRef": "trainer",
                        "specDefinition": {"podTemplateSpecPath": ".spec.worker.template"},
                        "scaleDefinition": {"replicasPath": ".spec.worker.replicas"},
                    }
                ],
            },
            "optimizationInstructions": {
                "gangScheduling": {
                    "podGroup": {
                        "name": "job",
                        "subGroups": [{"componentName": changes.get("subgroup", "worker")}],
                    }
                }
            },
        },
    }
    return karta


def _probe_object(replicas: Any) -> dict[str, Any]:
    return {
        "apiVersion": "probe.example.com/v1",
        "kind": "Trainer",
        "metadata": {"name": "probe", "namespace": "default", "uid": "probe-uid"},
        "spec": {
            "worker": {
                "replicas": replicas,
                "template": {"spec": {"containers": [{"name": "main", "image": "w:1"}]}},
            }
        },
        "status": {"phase": "Running"},
    }


def _probe_cases() -> Iterator[Case]:
    """Hand-written definitions for rules no upstream file exercises: a forbidden jq construct
    nested inside an array constructor (the pinned reference walks the whole tree as we do; the
    newest generation's check is shallow), a v2 subgroup naming no component (we reject it, the
    reference does not check), and a replica count written as a numeric string (we accept it as
    the newest generation does; the pinned one fails)."""
    gvk = ("probe.example.com", "v1", "Trainer")
    probes = {
        "jq-nested-del": (_probe_karta(failed="[del(.status)] | length == 0"), 3),
        "v2-unknown-subgroup": (_probe_karta(subgroup="coordinator"), 3),
        "numeric-string-replicas": (_probe_karta(), "3"),
    }
    for name, (karta, replicas) in probes.items():
        yield Case(
            f"probe:{name}", Definition(f"probe:{name}", karta, gvk), _probe_object(replicas)
        )


@cache
def all_cases() -> tuple[Case, ...]:
    shared = shared_dir()
    definitions = _definitions(shared)
    cases: list[Case] = []
    if shared is not None:
        realworld_pods = _realworld_pods(shared)
        by_gvk: dict[tuple[str, str, str], list[Definition]] = {}
        for definition in definitions:
            by_gvk.setdefault(definition.gvk, []).append(definition)
        for object_id, obj in _workload_objects(shared):
            for definition in by_gvk.get(_object_gvk(obj), []):
                case_id = f"{object_id} ~ {definition.id}"
                obj_with_uid = _with_uid(case_id, obj)
                name = str(obj_with_uid["metadata"].get("name", ""))
                family = object_id.split("/", 1)[0]
                pods = [
                    p for p in realworld_pods.get(family, []) if name and _pod_mentions(p, name)
                ]
                cases.append(
                    Case(
                        case_id,
                        definition,
                        obj_with_uid,
                        pods
                        or refgo_workloads.operator_pods(obj_with_uid, limit=MAX_SYNTHETIC_PODS),
                    )
                )
    cases.extend(_engine_fixture_cases(definitions))
    cases.extend(_probe_cases())
    return tuple(cases)
