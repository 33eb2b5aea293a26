"""Differential test: our engine against the reference Go library, on every realworld fixture.

The reference is ``github.com/run-ai/karta`` at the version KAI Scheduler pins, run through the
harness in ``benchmarks/refgo`` (built by its ``build.sh`` into the cache outside the checkout;
skipped with the reason when Go is absent). Each case is a definition (the reference's own
catalog, the older ResourceInterface examples, the newer upstream example, our catalog) applied
to every realworld object of its kind, with the realworld pods that belong to it or, for the
operators whose pod labels are well known (LeaderWorkerSet, JobSet, Kubeflow jobs), the pods
the operator would create; plus the engine's hand-written fixtures and a few hand-written probe
definitions. Both engines answer the same questions (validity, instances, scale, extracted
parts, status, subtree scale, tree, pod attribution, replica keys, gang members and keys, pod
groups); every answer that differs must be listed, with its reason, in
``docs/reference-differences.md`` — a new difference, or a listed one that went away, fails the
test. ``python tests/engine/test_reference_diff.py`` prints the current differences in the
document's table format.
"""

from __future__ import annotations

import copy
import gzip
import hashlib
import importlib.util
import json
import re
import sys
import warnings
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "reference-differences.md"
OUR_CATALOG = ROOT / "src" / "workload_map" / "catalog" / "data"
ENGINE_FIXTURES = ROOT / "tests" / "engine" / "fixtures"
MAX_SYNTHETIC_PODS = 48  # per workload: enough for several groups, cheap for both engines
MISSING = "∅"  # a fact one side does not state


def _load(name: str) -> ModuleType:
    """A module of benchmarks/refgo (not a package on sys.path), loaded once."""
    qualified = f"wlmap_refgo_{name}"
    if qualified in sys.modules:
        return sys.modules[qualified]
    path = ROOT / "benchmarks" / "refgo" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(qualified, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[qualified] = module
    spec.loader.exec_module(module)
    return module


refgo_client = _load("client")
refgo_workloads = _load("workloads")


def _shared() -> Path | None:
    from tests.conftest import SHARED

    return SHARED


# --------------------------------------------------------------------------------------------
# Cases: definitions, objects and pods
# --------------------------------------------------------------------------------------------


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
    shared = _shared()
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


# --------------------------------------------------------------------------------------------
# Facts: the answers both engines give, keyed the same way
# --------------------------------------------------------------------------------------------

Facts = dict[str, Any]


def _instance_key(instance: Any) -> str:
    return "" if instance in (None, "") else str(instance)


def _spec_summary(part: Any) -> Any:
    """What an extracted pod template / pod spec says in terms both engines keep verbatim."""
    if not isinstance(part, Mapping):
        return None
    spec = part.get("spec") if "spec" in part or "metadata" in part else part
    if not isinstance(spec, Mapping):
        spec = {}
    containers = spec.get("containers") or []
    return {
        "containers": [
            [c.get("name") or None, c.get("image") or None]
            for c in containers
            if isinstance(c, Mapping)
        ],
        "schedulerName": spec.get("schedulerName") or None,
    }


def _empty(value: Any) -> bool:
    """Go's zero values: the reference's typed projection cannot tell them from absent."""
    if isinstance(value, Mapping):
        return all(_empty(v) for v in value.values())
    return value in (None, "", [], False)


def _fragment_summary(fragment: Any) -> Any:
    if not isinstance(fragment, Mapping):
        return None
    return sorted(k for k, v in fragment.items() if not _empty(v))


def _condition(c: Mapping[str, Any]) -> list[Any]:
    return [c.get("type"), c.get("status"), c.get("reason"), c.get("message") or ""]


def _has_alpha_groups(case: Case) -> bool:
    """Whether the definition uses the deprecated ``podGroups`` form (the only one the
    reference's effective-member lookup reads)."""
    spec = case.definition.karta["spec"]
    gang = (spec.get("optimizationInstructions") or {}).get("gangScheduling") or {}
    return bool(gang.get("podGroups")) and not gang.get("podGroup")


def _has_status_definition(case: Case) -> bool:
    root = case.definition.karta["spec"]["structureDefinition"]["rootComponent"]
    return bool(root.get("statusDefinition"))


def _tree_shape(nodes: Any, parts_key: str) -> list[Any]:
    """A workload tree's shape: components, their instances (key, scale, extracted parts)."""
    shape: list[Any] = []
    for node in nodes or []:
        instances = []
        for inst in node.get("instances") or []:
            scale = inst.get("scale") or {}
            parts = inst.get(parts_key) or []
            instances.append(
                [
                    _instance_key(inst.get("instanceKey")),
                    [scale.get("replicas"), scale.get("minReplicas"), scale.get("maxReplicas")],
                    sorted(parts),
                    _tree_shape(inst.get("children"), parts_key),
                ]
            )
        shape.append([node.get("name"), bool(node.get("hasPodDefinition")), instances])
    return shape


def _tree_fact(shape: list[Any]) -> str:
    """The shape as one short text: equal trees give equal texts."""
    text = json.dumps(shape, separators=(",", ":"))
    return text if len(text) <= 120 else f"tree #{hashlib.sha1(text.encode()).hexdigest()[:10]}"


def reference_facts(report: Mapping[str, Any], case: Case) -> Facts:
    """The reference's answers, from one wlmap-refgo describe report."""
    if "error" in report:
        return {"harness": "error"}
    facts: Facts = {"valid": report["validation"]["valid"]}
    components = report["components"]
    root = components[0]
    if _has_status_definition(case):
        if root["statusError"]:
            facts["phases"] = "error"
        else:
            status = root["status"]
            facts["phases"] = list(status["matchedStatuses"])
            facts["phase"] = status.get("phase")
            facts["conditions"] = [_condition(c) for c in status.get("conditions") or []]
    for component in components:
        name = component["name"]
        facts[f"subtreeScale[{name}]"] = (
            "error" if component["subtreeScaleError"] else component["subtreeScale"]
        )
        if component["instanceIdsError"]:
            facts[f"instances[{name}]"] = "error"
            continue
        facts[f"instances[{name}]"] = [_instance_key(i) for i in component["instanceIds"] or []]
        errors = component["extractionErrors"]
        for part in ("podTemplateSpec", "podSpec", "metadata", "fragmentedPodSpec", "scale"):
            if part in errors:
                facts[f"{part}[{name}]"] = "error"
        for instance in component["instances"]:
            key = f"{name}/{_instance_key(instance['id'])}"
            if instance["id"]:
                facts[f"subtreeScale[{key}]"] = (
                    "error" if instance["subtreeScaleError"] else instance["subtreeScale"]
                )
            if "scale" not in errors:
                scale = instance["scale"]
                facts[f"scale[{key}]"] = (
                    None
                    if scale is None
                    else [scale.get("replicas"), scale.get("minReplicas"), scale.get("maxReplicas")]
                )
            if "extractedInstances" not in errors:
                facts[f"parts[{key}]"] = sorted(instance["extractedInstanceParts"])
            if instance["podTemplateSpec"] is not None:
                facts[f"podTemplateSpec[{key}]"] = _spec_summary(instance["podTemplateSpec"])
            if instance["podSpec"] is not None:
                facts[f"podSpec[{key}]"] = _spec_summary(instance["podSpec"])
            if instance["fragmentedPodSpec"] is not None:
                facts[f"fragmentedPodSpec[{key}]"] = _fragment_summary(
                    instance["fragmentedPodSpec"]
                )
    tree = report.get("tree")
    facts["tree"] = (
        "error" if tree is None else _tree_fact(_tree_shape(tree["children"], "extractedParts"))
    )
    for pod in report["pods"]:
        keys = pod.get("replicaKeys") or {}
        facts[f"replica[{pod['name']}]"] = sorted([c, k] for c, k in keys.items()) if keys else None
        if _has_alpha_groups(case) and pod["component"] is not None:
            effective = pod["effective"]
            facts[f"member[{pod['name']}]"] = (
                "error"
                if pod["effectiveError"]
                else None
                if effective is None
                else [effective["component"], effective["podGroupName"]]
            )
            if effective is not None and not pod["effectiveError"]:
                facts[f"keys[{pod['name']}]"] = (
                    "error" if pod["groupKeysError"] else list(pod["groupKeys"] or [])
                )
        pod_key = f"pod[{pod['name']}]"
        if pod["component"] is None:
            facts[pod_key] = "unattributed"
        elif pod["instanceError"]:
            facts[pod_key] = [pod["component"], "error"]
        else:
            facts[pod_key] = [pod["component"], _instance_key(pod["instance"])]
        facts[f"group[{pod['name']}]"] = pod["podGroup"]
    for group in report["podGroups"]:
        if not group["pods"]:
            continue
        facts[f"podGroup[{group['name']}].minMember"] = group["minMember"]
        facts[f"podGroup[{group['name']}].pods"] = sorted(group["pods"])
        for sub in group["subGroups"]:
            sub_key = f"podGroup[{group['name']}]/{sub['name']}"
            facts[f"{sub_key}.minMember"] = "error" if sub["minMemberError"] else sub["minMember"]
            facts[f"{sub_key}.pods"] = sorted(sub["pods"])
    return facts


def _answer(fn: Any, *args: Any) -> Any:
    """A method's answer, or "error" when it raises (an answer to compare, not a test crash)."""
    from workload_map.errors import WlmapError
    from workload_map.jq.errors import JqError

    try:
        return fn(*args)
    except (WlmapError, JqError) as err:
        return _Failed(err)


@dataclass(frozen=True)
class _Failed:
    error: Exception


_DEFINITIONS: dict[str, tuple[Any, bool]] = {}


def _our_definition(definition_id: str, karta: Mapping[str, Any]) -> tuple[Any, bool]:
    """Our model of a definition and whether we find it valid, once per definition."""
    if definition_id not in _DEFINITIONS:
        import workload_map as wm

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            model = wm.load_karta(copy.deepcopy(dict(karta)))
            findings = wm.validate(model)
        _DEFINITIONS[definition_id] = (model, not [f for f in findings if f.severity == "error"])
    return _DEFINITIONS[definition_id]


def our_facts(case: Case) -> Facts:
    """Our engine's answers to the same questions, from the public ``Workload`` API."""
    import workload_map as wm

    model, valid = _our_definition(case.definition.id, case.definition.karta)
    facts: Facts = {"valid": valid}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        # validate=False: extraction is compared even where the two validators disagree.
        workload = _answer(lambda: wm.Workload(model, case.obj, pods=case.pods, validate=False))
    if isinstance(workload, _Failed):
        facts["workload"] = "error"
        return facts

    if _has_status_definition(case):
        status = _answer(workload.status)
        if isinstance(status, _Failed) or status is None:
            facts["phases"] = "error"
        else:
            facts["phases"] = list(status.matched)
            facts["phase"] = status.phase
            facts["conditions"] = [_condition(c.to_dict()) for c in status.conditions]

    for component in model.components():
        name = component.name
        scale = _answer(workload.subtree_scale, name)
        facts[f"subtreeScale[{name}]"] = "error" if isinstance(scale, _Failed) else scale
        ids = _answer(workload.instance_ids, name)
        if isinstance(ids, _Failed):
            facts[f"instances[{name}]"] = "error"
            continue
        facts[f"instances[{name}]"] = [_instance_key(i) for i in ids]
        parts: dict[str, Any] = {}
        for part, getter in (
            ("podTemplateSpec", workload.pod_template_specs),
            ("podSpec", workload.pod_specs),
            ("metadata", workload.pod_metadata),
            ("fragmentedPodSpec", workload.fragmented_pod_specs),
            ("scale", workload.scales),
        ):
            parts[part] = _answer(getter, name)
            if isinstance(parts[part], _Failed):
                facts[f"{part}[{name}]"] = "error"
        extracted = _answer(workload.instances, name)
        for instance_id in ids:
            key = f"{name}/{_instance_key(instance_id)}"
            if instance_id:
                sub = _answer(workload.subtree_scale, name, instance_id)
                facts[f"subtreeScale[{key}]"] = "error" if isinstance(sub, _Failed) else sub
            scales = parts["scale"]
            if not isinstance(scales, _Failed):
                one = (scales or {}).get(instance_id)
                facts[f"scale[{key}]"] = (
                    None if one is None else [one.replicas, one.min_replicas, one.max_replicas]
                )
            if not isinstance(extracted, _Failed) and instance_id in extracted:
                facts[f"parts[{key}]"] = sorted(extracted[instance_id].to_dict())
            for part in ("podTemplateSpec", "podSpec"):
                values = parts[part]
                if not isinstance(values, _Failed) and values and instance_id in values:
                    facts[f"{part}[{key}]"] = _spec_summary(values[instance_id])
            fragments = parts["fragmentedPodSpec"]
            if not isinstance(fragments, _Failed) and fragments and instance_id in fragments:
                facts[f"fragmentedPodSpec[{key}]"] = _fragment_summary(fragments[instance_id])

    tree = _answer(workload.tree) if valid else None
    if tree is None or isinstance(tree, _Failed):
        facts["tree"] = "error"
    else:
        facts["tree"] = _tree_fact(_tree_shape(tree.to_dict()["children"], "extracted"))

    placements = _answer(lambda: list(workload.placements))
    if isinstance(placements, _Failed):
        facts["placements"] = "error"
        return facts
    for placement in placements:
        facts[f"replica[{placement.pod}]"] = (
            [[placement.replica_component, placement.replica]]
            if placement.replica is not None
            else None
        )
        pod_key = f"pod[{placement.pod}]"
        if not placement.attributed:
            facts[pod_key] = "unattributed"
        else:
            facts[pod_key] = [placement.component, _instance_key(placement.instance)]
    if _has_alpha_groups(case):
        explained = _answer(workload.explain)
        for entry in [] if isinstance(explained, _Failed) else explained:
            gang = entry.get("gang")
            if entry.get("component") is None or gang is None:
                continue
            pod_name = entry["pod"]
            if gang.get("effectiveComponent") is None:
                facts[f"member[{pod_name}]"] = None
                continue
            facts[f"member[{pod_name}]"] = [gang["effectiveComponent"], gang["definition"]]
            facts[f"keys[{pod_name}]"] = [k["value"] for k in gang.get("keys") or []]
    for pod in case.pods:  # pods left out by the owner check are unattributed too
        facts.setdefault(f"pod[{pod['metadata']['name']}]", "unattributed")
    groups = _answer(workload.pod_groups)
    if isinstance(groups, _Failed):
        facts["podGroups"] = "error"
        return facts
    grouped: dict[str, str] = {}
    for group in groups:
        if not group.pods:
            continue
        facts[f"podGroup[{group.name}].minMember"] = group.min_member
        facts[f"podGroup[{group.name}].pods"] = sorted(group.pods)
        for pod in group.pods:
            grouped[pod] = group.name
        for sub in group.sub_groups:
            sub_key = f"podGroup[{group.name}]/{sub.name}"
            facts[f"{sub_key}.minMember"] = "error" if sub.error else sub.min_member
            facts[f"{sub_key}.pods"] = sorted(sub.pods)
    for pod in case.pods:
        pod_name = pod["metadata"]["name"]
        facts[f"group[{pod_name}]"] = grouped.get(pod_name)
    return facts


# --------------------------------------------------------------------------------------------
# Differences and the documented list
# --------------------------------------------------------------------------------------------


def render(value: Any) -> str:
    """A short, stable text for a fact value (long lists become a count and a digest)."""
    if isinstance(value, str) and value == MISSING:
        return MISSING
    if isinstance(value, list) and len(value) > 4:
        digest = hashlib.sha1(json.dumps(value, sort_keys=True).encode()).hexdigest()[:8]
        return f"[{len(value)} items #{digest}]"
    text = json.dumps(value, sort_keys=True, ensure_ascii=False)
    return text.replace("|", "\\|")


@dataclass(frozen=True)
class Difference:
    case: str
    fact: str
    ours: str
    reference: str

    def row(self, reason: str = "?") -> str:
        return f"| `{self.case}` | `{self.fact}` | {self.ours} | {self.reference} | {reason} |"


def differences(case_id: str, ours: Facts, reference: Facts) -> set[Difference]:
    out: set[Difference] = set()
    for key in sorted(set(ours) | set(reference)):
        a, b = ours.get(key, MISSING), reference.get(key, MISSING)
        if a != b:
            out.add(Difference(case_id, key, render(a), render(b)))
    return out


_ROW = re.compile(r"^\|\s*`(?P<case>[^`]+)`\s*\|\s*`(?P<fact>[^`]+)`\s*\|(?P<rest>.*)\|\s*$")
_REASON_HEADING = re.compile(r"^###\s+(?P<id>[a-z0-9-]+)\b")


def documented() -> dict[Difference, str]:
    """Rows of the document's difference tables, each with the reason id it is filed under."""
    out: dict[Difference, str] = {}
    if not DOC.is_file():
        return out
    for line in DOC.read_text(encoding="utf-8").splitlines():
        match = _ROW.match(line)
        if not match:
            continue
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", match.group("rest"))]
        if len(cells) < 3:
            continue
        diff = Difference(match.group("case"), match.group("fact"), cells[0], cells[1])
        out[diff] = cells[2]
    return out


def reason_ids() -> set[str]:
    if not DOC.is_file():
        return set()
    return {
        m.group("id")
        for line in DOC.read_text(encoding="utf-8").splitlines()
        if (m := _REASON_HEADING.match(line))
    }


def compute_all(refgo: Any) -> dict[str, tuple[Facts, Facts]]:
    cases = all_cases()
    requests = [{"karta": c.definition.karta, "object": c.obj, "pods": c.pods} for c in cases]
    reports = refgo.describe_many(requests)
    return {
        case.id: (our_facts(case), reference_facts(report, case))
        for case, report in zip(cases, reports, strict=True)
    }


# --------------------------------------------------------------------------------------------
# Tests
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def refgo() -> Any:
    try:
        return refgo_client.RefGo(refgo_client.build())
    except refgo_client.RefGoUnavailable as err:
        pytest.skip(f"reference harness unavailable: {err}")


@pytest.fixture(scope="session")
def all_facts(refgo: Any) -> dict[str, tuple[Facts, Facts]]:
    pytest.importorskip("workload_map.engine", reason="the engine package is not importable")
    return compute_all(refgo)


# A fresh machine builds the harness first (module downloads and a compile: minutes).
@pytest.mark.timeout(900)
def test_every_difference_is_documented(all_facts: dict[str, tuple[Facts, Facts]]) -> None:
    found: set[Difference] = set()
    for case_id, (ours, reference) in all_facts.items():
        found |= differences(case_id, ours, reference)
    # Rows of cases that were not run here (../shared absent) are neither checked nor stale.
    listed = {d: r for d, r in documented().items() if d.case in all_facts}
    new = sorted(found - set(listed), key=lambda d: (d.case, d.fact))
    gone = sorted(set(listed) - found, key=lambda d: (d.case, d.fact))
    message = []
    if new:
        message.append(f"{len(new)} difference(s) not in {DOC.name}:")
        message += [d.row() for d in new[:60]]
    if gone:
        message.append(f"{len(gone)} documented difference(s) no longer occur:")
        message += [d.row(listed[d]) for d in gone[:60]]
    assert not message, "\n".join(message)


def test_every_documented_difference_has_a_reason() -> None:
    known = reason_ids()
    unexplained = sorted(
        f"{d.case} {d.fact}: {reason!r}"
        for d, reason in documented().items()
        if reason not in known
    )
    assert not unexplained, "rows whose reason is not a '### <id>' section:\n" + "\n".join(
        unexplained
    )


def test_cases_cover_the_reference_catalog() -> None:
    shared = _shared()
    if shared is None:
        pytest.skip("../shared (realworld manifests) is not beside this checkout")
    covered = {c.definition.id for c in all_cases()}
    # The reference catalog definitions whose kinds have realworld objects (Sandbox and
    # LLMInferenceService v1alpha1 have none).
    expected = {
        "refcat:apps-statefulset-v1",
        "refcat:leaderworkerset-x-k8s-io-leaderworkerset-v1",
        "refcat:milvus-io-milvus-v1beta1",
        "refcat:ray-io-rayjob-v1",
        "refcat:serving-knative-dev-service-v1",
        "refcat:serving-kserve-io-llminferenceservice-v1alpha2",
    }
    assert expected <= covered
    with_pods = {c.definition.id for c in all_cases() if c.pods}
    assert {"refcat:leaderworkerset-x-k8s-io-leaderworkerset-v1", "ri:jobset", "ri:pytorch"} <= (
        with_pods
    )


def main() -> int:
    """Print the current differences as rows for docs/reference-differences.md."""
    try:
        refgo = refgo_client.RefGo(refgo_client.build())
    except refgo_client.RefGoUnavailable as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    listed = documented()
    for case_id, (ours, reference) in compute_all(refgo).items():
        for diff in sorted(differences(case_id, ours, reference), key=lambda d: d.fact):
            print(diff.row(listed.get(diff, "?")))
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    raise SystemExit(main())
