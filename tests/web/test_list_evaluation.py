"""The served inventory evaluates what the web view reads: no gangs, no pod places, same list."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.web.conftest import EXAMPLES, NOW
from workload_map.cluster.inventory import Inventory
from workload_map.engine import gangs as engine_gangs
from workload_map.engine import workload as engine_workload
from workload_map.web import views
from workload_map.web.source import FileSource, load_documents, new_inventory


def _fed(inventory: Inventory) -> Inventory:
    objects, problems = load_documents(sorted(Path(EXAMPLES).rglob("*.yaml")))
    assert not problems
    inventory.apply_documents(objects)
    return inventory


def _built_groups(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the pod groups the engine builds (the gangs of one workload each)."""
    built = [0]
    real = engine_gangs.build_pod_groups

    def counting(*args: Any, **kwargs: Any) -> Any:
        built[0] += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(engine_workload, "build_pod_groups", counting)
    return built


def test_the_served_inventory_builds_no_gangs_and_lists_the_same(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    built = _built_groups(monkeypatch)
    full = _fed(Inventory())
    listed = views.rows(full, views.Filters(), NOW)
    assert built[0] > 0  # the examples have workloads with gangs: the full one builds them
    served = _fed(new_inventory())
    built[0] = 0
    got = views.rows(served, views.Filters(), NOW)
    assert built[0] == 0
    assert len(got.rows) == len(listed.rows) > 3
    key = [
        (r.phases, r.ready, r.desired, r.gpus, r.gpus_held, r.gpus_pending, r.path)
        for r in listed.rows
    ]
    assert [
        (r.phases, r.ready, r.desired, r.gpus, r.gpus_held, r.gpus_pending, r.path)
        for r in got.rows
    ] == key
    for a, b in zip(full.entries(), served.entries(), strict=True):
        if a.summary is None:
            assert b.summary is None
            continue
        assert b.summary is not None
        assert (b.summary.phases, b.summary.totals, b.summary.components, b.summary.error) == (
            a.summary.phases,
            a.summary.totals,
            a.summary.components,
            a.summary.error,
        )
        assert (b.summary.gangs, b.summary.pods, b.summary.detailed) == ((), (), False)
        assert a.summary.detailed
        assert a.summary.pods or not a.pods
        assert views.vitals(b) == views.vitals(a)


def test_the_served_workload_page_still_describes_the_gangs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    served = _fed(new_inventory())
    entries = [e for e in served.entries() if e.top_level and e.gvk.kind == "JobSet"]
    assert entries
    built = _built_groups(monkeypatch)
    view = entries[0].view  # the describe view, built on a reader's request
    assert view is not None and built[0] == 1
    assert view == _fed(Inventory()).entry(entries[0].uid).view  # type: ignore[union-attr]


def test_both_sources_serve_an_inventory_without_details() -> None:
    source = FileSource(EXAMPLES, poll_seconds=0)
    try:
        (inventory,) = source.clusters().values()
        assert inventory.detail is False
    finally:
        source.close()


def _row_key(sort: str, r: views.Row) -> Any:
    """The list's order by ``sort``, read from a shown row (the key of each sort column)."""
    e = r.entry
    return {
        "cluster": (r.cluster, e.namespace, e.name),
        "name": (e.name, e.namespace),
        "kind": (e.gvk.kind, e.namespace, e.name),
        "namespace": (e.namespace, e.name),
        "phase": (views.PHASE_ORDER.index(r.phases[0]) if r.phases else 99, e.namespace, e.name),
        "pods": (r.desired or 0, e.namespace, e.name),
        "gpus": (r.gpus or 0, e.namespace, e.name),
        "age": (str((e.obj.get("metadata") or {}).get("creationTimestamp") or ""), e.name),
    }[sort]


@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize(
    "sort", ["cluster", "name", "kind", "namespace", "phase", "pods", "gpus", "age"]
)
def test_each_sort_orders_the_rows_it_shows(sort: str, descending: bool) -> None:
    inventory = _fed(new_inventory())
    listed = views.rows(inventory, views.Filters(sort=sort, descending=descending), NOW)
    assert len(listed.rows) == listed.total > 3
    ordered = sorted(listed.rows, key=lambda r: _row_key(sort, r), reverse=descending)
    assert [r.path for r in listed.rows] == [r.path for r in ordered]
    assert {_row_key(sort, r) for r in listed.rows} != {_row_key(sort, listed.rows[0])}
