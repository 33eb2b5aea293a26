"""``get``'s rows come from the shared evaluation (``Workload.summary()``), not from the describe
view: every field must be what the describe view gave (the row as it was built before), for
every catalog kind, with and without pods, with pods running, pending, unschedulable and gangs
short of their minimum."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.catalog.operator_pods import operator_for
from tests.engine.conftest import karta_dict, root
from workload_map.catalog.definitions import Definitions
from workload_map.catalog.resolution import resolve_definition
from workload_map.cli.get_rows import read_facts, row_item, stuck_reason
from workload_map.cli.get_views import GetItem, GetMetadata
from workload_map.cli.workload_view import evaluate
from workload_map.engine import Workload
from workload_map.engine.describe import PodCounts
from workload_map.model.views import to_json

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "catalog" / "fixtures"


def _objects() -> list[dict[str, Any]]:
    out = []
    for path in sorted([*FIXTURES.glob("*.yaml"), *(FIXTURES / "gangs").glob("*.yaml")]):
        for doc in yaml.safe_load_all(path.read_text()):
            if isinstance(doc, dict) and doc.get("kind"):
                out.append(doc)
    return out


def _described_row(obj: dict[str, Any], definition: Any, view: dict[str, Any]) -> dict[str, Any]:
    """The row as ``get`` built it from the describe view (before the shared evaluation)."""
    meta = obj.get("metadata") or {}
    counts = view.get("pods") or {}
    labels = meta.get("labels")
    item = GetItem(
        name=meta.get("name"),
        namespace=meta.get("namespace"),
        kind=obj.get("kind"),
        api_version=obj.get("apiVersion"),
        created_at=meta.get("creationTimestamp"),
        definition=definition.name,
        origin=definition.origin,
        phases=tuple(view.get("phases") or ["Undefined"]),
        pods=PodCounts(
            counts.get("desired", 0),
            counts.get("current"),
            counts.get("ready"),
            counts.get("pending"),
            counts.get("held"),
        ),
        gpus=(view.get("resources") or {}).get("gpus", 0),
        gpus_pending=(view.get("pendingResources") or {}).get("gpus"),
        gpus_held=(view.get("heldResources") or {}).get("gpus"),
        stuck=stuck_reason(dict(view)),
        metadata=GetMetadata(
            name=meta.get("name"),
            namespace=meta.get("namespace"),
            uid=meta.get("uid"),
            labels=dict(labels) if isinstance(labels, dict) else {},
            creation_timestamp=meta.get("creationTimestamp"),
        ),
    )
    out: dict[str, Any] = to_json(item)
    return out


def _running(pod: dict[str, Any], index: int) -> dict[str, Any]:
    pod = copy.deepcopy(pod)
    spec = pod.setdefault("spec", {})
    spec["nodeName"] = f"node-{index % 3}"
    for container in spec.get("containers") or []:
        container["resources"] = {"requests": {"cpu": "1", "nvidia.com/gpu": "2"}}
    pod["status"] = {
        "phase": "Running",
        "conditions": [{"type": "Ready", "status": "True" if index % 2 else "False"}],
    }
    return pod


def _unschedulable(pod: dict[str, Any]) -> dict[str, Any]:
    pod = copy.deepcopy(pod)
    pod["status"] = {
        "phase": "Pending",
        "conditions": [
            {
                "type": "PodScheduled",
                "status": "False",
                "reason": "Unschedulable",
                "message": "0/4 nodes are available",
            }
        ],
    }
    return pod


def _pod_sets(obj: dict[str, Any]) -> list[tuple[str, list[dict[str, Any]] | None]]:
    sets: list[tuple[str, list[dict[str, Any]] | None]] = [("no pods known", None), ("none", [])]
    maker = operator_for(obj)
    if maker is None:
        return sets
    pods = maker[0](copy.deepcopy(obj))
    if not pods:
        return sets
    running = [_running(p, i) for i, p in enumerate(pods)]
    sets += [
        ("created", pods),
        ("running", running),
        ("one unschedulable", [_unschedulable(pods[0]), *running[1:]]),
        (
            "every other unschedulable",
            [
                _unschedulable(p) if i % 2 else r
                for i, (p, r) in enumerate(zip(pods, running, strict=True))
            ],
        ),
        ("all unschedulable", [_unschedulable(p) for p in pods]),
        ("one missing", running[:-1]),
        ("half missing", running[: len(running) // 2]),
    ]
    return sets


CASES = [
    (obj, label, pods)
    for obj in _objects()
    if resolve_definition(obj, definitions=Definitions.builtin()) is not None
    for label, pods in _pod_sets(obj)
]


@pytest.mark.parametrize(
    ("obj", "label", "pods"),
    CASES,
    ids=[f"{o['kind']}/{(o.get('metadata') or {}).get('name')}:{label}" for o, label, _ in CASES],
)
def test_a_row_from_the_shared_evaluation_is_the_row_from_describe(
    obj: dict[str, Any], label: str, pods: list[dict[str, Any]] | None
) -> None:
    definition = resolve_definition(obj, definitions=Definitions.builtin())
    assert definition is not None
    view = evaluate(obj, pods, definition, lambda wl: wl.describe())
    facts = evaluate(obj, pods, definition, read_facts)
    assert row_item(obj, definition, facts) == _described_row(obj, definition, view)


def test_the_cases_cover_stuck_and_settled_rows() -> None:
    """The comparison above sees rows stuck both ways, and rows with pods pending and held."""
    stuck: set[str] = set()
    pending = held = 0
    for obj, _, pods in CASES:
        definition = resolve_definition(obj, definitions=Definitions.builtin())
        assert definition is not None
        row = row_item(obj, definition, evaluate(obj, pods, definition, read_facts))
        if row["stuck"]:
            stuck.add(row["stuck"].split()[0] if "Unschedulable" not in row["stuck"] else "pods")
        pending += bool(row["pods"].get("pending"))
        held += bool(row["pods"].get("held"))
    assert stuck == {"gang", "pods"}
    assert len(CASES) > 150 and pending > 10 and held > 10


def test_pods_under_a_grouping_component_of_several_instances_count_as_describe_lists_them() -> (
    None
):
    """describe lists a pod-bearing child under each instance of its grouping parent; the
    row's Unschedulable count follows it."""
    group = {
        "name": "group",
        "ownerRef": "thing",
        "instanceIdPath": ".spec.groups[]",
        "podSelector": {"componentInstanceSelector": {"idPath": ".metadata.labels.group"}},
    }
    worker = {
        "name": "worker",
        "ownerRef": "group",
        "specDefinition": {"podTemplateSpecPath": ".spec.template"},
        "scaleDefinition": {"replicasPath": ".spec.replicas"},
        "podSelector": {"componentTypeSelector": {"keyPath": ".metadata.labels.role"}},
    }
    karta = karta_dict(root(), group, worker)
    thing = {
        "apiVersion": "example.com/v1",
        "kind": "Thing",
        "metadata": {"name": "x", "namespace": "ml", "uid": "uid-x"},
        "spec": {"groups": ["a", "b"], "replicas": 2, "template": {"spec": {"containers": []}}},
    }
    owner = {"apiVersion": "example.com/v1", "kind": "Thing", "name": "x", "uid": "uid-x"}
    pods = [
        _unschedulable(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {
                    "name": f"x-{i}",
                    "namespace": "ml",
                    "uid": f"uid-p{i}",
                    "labels": {"role": "worker", "group": "a"},
                    "ownerReferences": [{**owner, "controller": True}],
                },
                "spec": {"containers": []},
            }
        )
        for i in range(3)
    ]
    view = Workload(karta, thing, pods).describe()
    facts = read_facts(Workload(karta, thing, pods))
    assert [node["name"] for node in view["components"]] == ["a", "b"]
    # the three pods are listed under both instances of the group, and counted so
    assert facts.stuck == stuck_reason(view) == "6 pods Unschedulable"
