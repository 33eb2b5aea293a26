"""Workloads of one shape (equal phases and tallies) share the formats of their phase and tally
lines; a change of one workload's inputs gives it its own, still the client's bytes."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml
from prometheus_client import CollectorRegistry, generate_latest

from workload_map.cluster.inventory import Inventory
from workload_map.exporter import ExporterHealth, WorkloadCollector
from workload_map.exporter import collector as collector_module

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.fixture(autouse=True)
def fixed_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(collector_module, "CLOCK", lambda: 1767225600.0)


def _objects() -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for path in (EXAMPLES / "jobset/jobset.yaml", EXAMPLES / "jobset/pods.yaml"):
        for doc in yaml.safe_load_all(path.read_text()):
            if isinstance(doc, dict) and doc.get("kind") == "List":
                out.extend(doc.get("items") or [])
            elif isinstance(doc, dict):
                out.append(doc)
    return out


def _copy(objects: list[dict[str, Any]], namespace: str) -> list[dict[str, Any]]:
    """The same workload and pods in another namespace (every uid its own)."""
    out = [copy.deepcopy(o) for o in objects]  # one by one: the YAML shares owner refs
    for obj in out:
        meta = obj["metadata"]
        meta["namespace"] = namespace
        if "uid" in meta:
            meta["uid"] += "-" + namespace
        for ref in meta.get("ownerReferences") or ():
            ref["uid"] += "-" + namespace
    return out


def _client(collector: WorkloadCollector) -> bytes:
    registry = CollectorRegistry()
    registry.register(collector)
    return generate_latest(registry)


def _pods_lines(text: bytes, namespace: str) -> list[bytes]:
    return [
        line
        for line in text.splitlines()
        if line.startswith(b"workloadmap_workload_pods{")
        and f'namespace="{namespace}"'.encode() in line
    ]


def test_one_shape_is_formatted_once_and_a_changed_pod_gets_its_own() -> None:
    objects = _objects()
    inventory = Inventory()
    for namespace in ("a", "b", "c"):
        inventory.apply_documents(_copy(objects, namespace))
    collector = WorkloadCollector(inventory, health=ExporterHealth(last_sync=1.0))
    made: list[int] = []
    real = collector._tally_formats

    def counting(*args: Any) -> Any:
        made.append(1)
        return real(*args)

    collector._tally_formats = counting  # type: ignore[method-assign]
    text = collector.exposition()
    assert text == _client(collector)
    top = [e for e in inventory.entries() if e.top_level and e.summary is not None]
    assert len(top) == 3 and len(made) == 1  # three workloads, one shape
    assert _pods_lines(text, "a") and len({len(_pods_lines(text, n)) for n in "abc"}) == 1

    # one pod of namespace b leaves its node: b's tallies change, a's and c's stay
    pod = next(
        p
        for p in inventory.pods()
        if p["metadata"]["namespace"] == "b" and (p.get("spec") or {}).get("nodeName")
    )
    moved = copy.deepcopy(pod)
    del moved["spec"]["nodeName"]
    moved["metadata"]["resourceVersion"] = "changed"
    inventory.apply_pod("MODIFIED", moved)
    again = collector.exposition()
    assert again == _client(collector)
    assert len(made) == 2  # b's new shape
    strip = [line.replace(b'namespace="a"', b"") for line in _pods_lines(again, "a")]
    assert strip == [line.replace(b'namespace="c"', b"") for line in _pods_lines(again, "c")]
    assert strip != [line.replace(b'namespace="b"', b"") for line in _pods_lines(again, "b")]
    assert _pods_lines(again, "a") == _pods_lines(text, "a")
