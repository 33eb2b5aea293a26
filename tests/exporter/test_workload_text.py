"""A first scrape writes each workload's lines with one format per workload shape, without
rows (``WorkloadCollector._workload_text``): byte for byte the client's text, and the rows'
path for the values it cannot take (escapes, a NUL) and for workloads with references."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from tests.exporter.test_collector import (
    BROKEN_KARTA,
    EXAMPLES,
    documents,
    exposition,
    feed,
    widget,
)
from workload_map.cluster.inventory import Entry, Inventory
from workload_map.exporter import ExporterHealth, LabelPolicy, WorkloadCollector
from workload_map.exporter import collector as collector_module


@pytest.fixture(autouse=True)
def fixed_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(collector_module, "CLOCK", lambda: 1767225600.0)


def _examples(team: str | None) -> Inventory:
    """Every example folder, a broken definition's workload (an error), each object labelled
    ``team`` (unless None)."""
    inventory = Inventory()
    inventory.apply_karta("ADDED", BROKEN_KARTA)
    inventory.apply_workload("ADDED", widget("bad", "two"))
    for folder in sorted(p for p in EXAMPLES.iterdir() if p.is_dir()):
        objects = documents(*sorted(folder.glob("*.yaml")))
        for obj in objects:
            meta = obj.setdefault("metadata", {})
            meta.setdefault("uid", f"uid-{obj.get('kind')}-{meta.get('name')}")
            if team is not None:
                meta.setdefault("labels", {})["team"] = team
            meta.setdefault("generation", 7)
        feed(inventory, objects)
    return inventory


def _rows_made(collector: WorkloadCollector) -> list[Entry]:
    """The entries whose rows the collector builds, in order."""
    made: list[Entry] = []
    real = collector._rows

    def counting(e: Entry, *args: Any, **kwargs: Any) -> Any:
        made.append(e)
        return real(e, *args, **kwargs)

    collector._rows = counting  # type: ignore[method-assign]
    return made


@pytest.mark.parametrize("team", [None, "ml-platform", "50%s of %d"])
def test_a_first_scrape_writes_the_workloads_without_rows(team: str | None) -> None:
    inventory = _examples(team)
    entries = inventory.entries()
    assert any(e.error for e in entries) and any(not e.top_level for e in entries)
    assert any(e.summary is not None and e.summary.gangs for e in entries)
    collector = WorkloadCollector(
        inventory,
        health=ExporterHealth(last_sync=12.5),
        labels=LabelPolicy(("team",) if team is not None else ()),
    )
    made = _rows_made(collector)
    text = collector.exposition()
    # only the workloads with references take the rows' path
    assert {e.uid for e in made} == {e.uid for e in entries if e.references}
    assert len(made) < len(entries)
    assert text.decode() == exposition(collector)
    for family in (
        b"workloadmap_workload_generation{",
        b"workloadmap_workload_phase_since_timestamp_seconds{",
        b"workloadmap_gang_pods{",
        b"workloadmap_component_resources{",
    ):
        assert family in text
    made.clear()
    assert collector.exposition() == text  # the same again, from the memo
    assert not made


@pytest.mark.parametrize("team", ['a "quoted" value', "back\\slash", "new\nline", "nul\0here"])
def test_a_value_the_format_cannot_take_goes_the_rows_way(team: str) -> None:
    inventory = _examples(None)
    top = next(e for e in inventory.entries() if e.top_level and e.summary is not None)
    obj = copy.deepcopy(top.obj)
    obj["metadata"].setdefault("labels", {})["team"] = team
    obj["metadata"]["resourceVersion"] = "changed"
    inventory.apply_workload("MODIFIED", obj)
    collector = WorkloadCollector(
        inventory, health=ExporterHealth(last_sync=1.0), labels=LabelPolicy(("team",))
    )
    made = _rows_made(collector)
    text = collector.exposition()
    assert top.uid in {e.uid for e in made}
    assert text.decode() == exposition(collector)


def test_workloads_of_one_shape_share_one_format() -> None:
    objects = documents(EXAMPLES / "jobset/jobset.yaml", EXAMPLES / "jobset/pods.yaml")
    inventory = Inventory()
    for namespace in ("a", "b", "c"):
        copies = [copy.deepcopy(o) for o in objects]
        for obj in copies:
            meta = obj["metadata"]
            meta["namespace"] = namespace
            if "uid" in meta:
                meta["uid"] += "-" + namespace
            for ref in meta.get("ownerReferences") or ():
                ref["uid"] += "-" + namespace
        feed(inventory, copies)
    collector = WorkloadCollector(inventory, health=ExporterHealth(last_sync=1.0))
    formats: list[int] = []
    real = collector._combined_format

    def counting(*args: Any, **kwargs: Any) -> Any:
        formats.append(1)
        return real(*args, **kwargs)

    collector._combined_format = counting  # type: ignore[method-assign]
    text = collector.exposition()
    assert text.decode() == exposition(collector)
    top = [e for e in inventory.entries() if e.top_level and e.summary is not None]
    assert len(top) == 3 and len(formats) == 1
    # one pod leaves its node: its workload's tallies change, so does its shape
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
    assert again.decode() == exposition(collector)
    assert len(formats) == 2 and again != text
