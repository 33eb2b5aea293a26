"""A scrape when nothing changed reuses the last exposition's workload text whole, and every
scrape stays byte for byte what ``prometheus_client.generate_latest`` prints (issue 20 item 9)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from prometheus_client import CollectorRegistry, generate_latest

from workload_map.cluster.inventory import Entry, Inventory
from workload_map.exporter import ExporterHealth, LabelPolicy, WorkloadCollector
from workload_map.exporter import collector as collector_module

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.fixture(autouse=True)
def fixed_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(collector_module, "CLOCK", lambda: 1767225600.0)


def _inventory() -> Inventory:
    objects: list[dict[str, Any]] = []
    for path in (EXAMPLES / "jobset/jobset.yaml", EXAMPLES / "jobset/pods.yaml"):
        for doc in yaml.safe_load_all(path.read_text()):
            if isinstance(doc, dict) and doc.get("kind") == "List":
                objects.extend(doc.get("items") or [])
            elif isinstance(doc, dict):
                objects.append(doc)
    inventory = Inventory()
    inventory.apply_documents(objects)
    return inventory


def _client(collector: WorkloadCollector) -> bytes:
    registry = CollectorRegistry()
    registry.register(collector)
    return generate_latest(registry)


class _Reads:
    """Counts the inventory reads of the fleet (the real method runs)."""

    def __init__(self, inventory: Inventory) -> None:
        self.count = 0
        real: Callable[..., list[Entry]] = inventory.entries

        def entries(**kwargs: Any) -> list[Entry]:
            self.count += 1
            return real(**kwargs)

        inventory.entries = entries  # type: ignore[method-assign]


def test_an_unchanged_inventory_is_scraped_without_reading_it_again() -> None:
    inventory = _inventory()
    reads = _Reads(inventory)
    collector = WorkloadCollector(inventory, health=ExporterHealth(last_sync=3.0))
    first = collector.exposition_chunks()
    assert reads.count == 1
    second = collector.exposition_chunks()
    assert reads.count == 1  # the workload part was reused whole
    assert b"".join(second) == b"".join(first) == _client(collector)
    # the reused pieces are the memo's own bytes, not copies
    assert {id(c) for c in second} >= {id(c) for c in first if b"workloadmap_pod_workload" in c}


def test_a_change_is_scraped_anew_and_the_health_series_stay_current() -> None:
    inventory = _inventory()
    reads = _Reads(inventory)
    health = ExporterHealth(last_sync=3.0)
    collector = WorkloadCollector(inventory, health=health)
    before = collector.exposition()
    health.last_sync = 4.0  # not an inventory change: still reused, the header series new
    again = collector.exposition()
    assert reads.count == 1
    assert again != before and again == _client(collector)
    pod = inventory.pods()[0]
    inventory.apply_pod("DELETED", pod)
    after = collector.exposition()
    assert reads.count == 3  # the scrape, and generate_latest's collect() above
    assert after == _client(collector)
    assert pod["metadata"]["name"].encode() not in after.split(b"workloadmap_pod_workload_info")[2]


def test_a_follower_then_leader_again_exports_the_same_fleet() -> None:
    inventory = _inventory()
    leading = {"now": True}
    health = ExporterHealth(last_sync=1.0, is_leader=lambda: leading["now"])
    collector = WorkloadCollector(inventory, health=health)
    led = collector.exposition()
    leading["now"] = False
    assert b"workloadmap_workload_info" not in collector.exposition()
    leading["now"] = True
    assert collector.exposition() == led == _client(collector)


@pytest.mark.parametrize(
    "team", ["plain", 'a "quoted" value', "back\\slash", "new\nline", "ünïcode"]
)
def test_label_values_are_escaped_as_the_client_escapes_them(team: str) -> None:
    inventory = _inventory()
    for entry in inventory.entries():
        obj = dict(entry.obj)
        obj["metadata"] = {**obj["metadata"], "labels": {"team": team}}
        inventory.apply_workload("MODIFIED", obj)
    collector = WorkloadCollector(
        inventory, health=ExporterHealth(last_sync=1.0), labels=LabelPolicy(("team",))
    )
    assert collector.exposition() == _client(collector)
    assert collector.exposition() == _client(collector)


@pytest.mark.parametrize("name", ["w%s", 'w"%(i0)s', "w%%\\"])
def test_a_workload_identity_is_written_as_it_is_into_every_family(name: str) -> None:
    # the phases, pods and resources families format the workload's identity into lines
    # kept by what else they hold (collector._Lines.shape): % and escapes in it stay values
    inventory = _inventory()
    for entry in inventory.entries():
        obj = {**entry.obj, "metadata": {**entry.obj["metadata"], "name": name}}
        inventory.apply_workload("MODIFIED", obj)
    collector = WorkloadCollector(inventory, health=ExporterHealth(last_sync=1.0))
    text = collector.exposition()
    assert text == _client(collector)
    escaped = name.replace("\\", "\\\\").replace('"', '\\"')
    assert f'workload="{escaped}"'.encode() in text.split(b"workloadmap_workload_phase{")[1]


def _pod_name(pod: dict[str, Any], value: str) -> None:
    pod["metadata"]["name"] = pod["metadata"]["name"] + value


def _pod_uid(pod: dict[str, Any], value: str) -> None:
    pod["metadata"]["uid"] = pod["metadata"]["uid"] + value


def _pod_resource(pod: dict[str, Any], value: str) -> None:
    container = pod["spec"]["containers"][0]
    limits = container.setdefault("resources", {}).setdefault("limits", {})
    limits["example.com/acc" + value] = "1"


@pytest.mark.parametrize("where", [_pod_name, _pod_uid, _pod_resource])
# (a %: the shaped families' lines are %-formats, the values written into them)
@pytest.mark.parametrize("value", ['"q"', "b\\s", "n\nl", "p%s%%d%(x)s"])
def test_every_label_value_from_a_pod_is_escaped_as_the_client_escapes_it(
    where: Callable[[dict[str, Any], str], None], value: str
) -> None:
    """The escape check is made once per workload, over the values its objects give (not the
    collector's own): a character to escape in any one of them (the pod's name, its uid, a
    resource it requests) must still be escaped, alone in the workload."""
    inventory = _inventory()
    pod = inventory.pods()[0]
    changed = {**pod, "metadata": dict(pod["metadata"]), "spec": dict(pod["spec"])}
    changed["spec"]["containers"] = [
        {**c, "resources": {k: dict(v) for k, v in (c.get("resources") or {}).items()}}
        for c in pod["spec"]["containers"]
    ]
    where(changed, value)
    inventory.apply_pod("DELETED", pod)
    inventory.apply_pod("ADDED", changed)
    collector = WorkloadCollector(inventory, health=ExporterHealth(last_sync=1.0))
    text = collector.exposition()
    escaped = value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')
    assert escaped.encode() in text  # the value reached a series, escaped
    assert text == _client(collector)


def test_the_text_written_without_rows_is_the_text_of_the_rows() -> None:
    # a scrape writes each workload's text straight (_lines); collect() and a memo made for
    # it go through rows (_rows, then _text): both give every family's lines alike, for a
    # top-level workload, the Jobs it owns, a workload with labels copied, and one whose
    # evaluation failed
    inventory = _inventory()
    collector = WorkloadCollector(
        inventory,
        health=ExporterHealth(last_sync=1.0),
        labels=LabelPolicy(workload_labels=("app", "jobset.sigs.k8s.io/jobset-name")),
    )
    entries = inventory.entries()
    assert {e.top_level for e in entries} == {True, False}
    top = next(e for e in entries if e.top_level)
    broken = Entry(**{**_fields(top), "error": "component 'x': unreadable"})
    for entry in [*entries, broken]:
        from_rows = collector._text(collector_module._Memo(entry, collector._rows(entry, [])))
        written = collector._lines(entry)
        assert len(written) == len(from_rows) == 15
        assert written == from_rows, entry.name
    assert any(b"workloadmap_pod_workload_info" in c for c in collector._lines(top))
    assert not any(b"workloadmap_pod_workload_info" in c for c in collector._lines(broken))


def _fields(entry: Entry) -> dict[str, Any]:
    return {f: getattr(entry, f) for f in Entry.__dataclass_fields__ if not f.startswith("_")}
