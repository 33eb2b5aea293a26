"""The web list evaluates the workloads it shows: the rows of one page, not the whole fleet,
unless a filter or sort reads every workload's evaluation (phase, pods, GPUs)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.web.conftest import NOW
from workload_map.cluster import inventory as inventory_module
from workload_map.cluster.inventory import Inventory
from workload_map.web import views
from workload_map.web.source import new_inventory

WORKLOADS = 230  # three pages of views.PAGE_SIZE (100)


def _job(i: int) -> dict[str, Any]:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": f"job-{i:03d}",
            "namespace": f"team-{i % 3}",
            "uid": f"uid-job-{i}",
            "creationTimestamp": f"2026-11-{1 + i % 19:02d}T00:00:00Z",
        },
        "spec": {
            "parallelism": 1 + i % 4,
            "template": {
                "spec": {
                    "containers": [
                        {
                            "name": "main",
                            "image": "busybox",
                            "resources": {"requests": {"nvidia.com/gpu": str(i % 3)}},
                        }
                    ]
                }
            },
        },
        "status": {"active": 1} if i % 2 else {"succeeded": 1},
    }


def _pod(i: int) -> dict[str, Any]:
    job = _job(i)
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"job-{i:03d}-pod",
            "namespace": job["metadata"]["namespace"],
            "uid": f"uid-pod-{i}",
            "labels": {"job-name": job["metadata"]["name"]},
            "ownerReferences": [
                {
                    "apiVersion": "batch/v1",
                    "kind": "Job",
                    "name": job["metadata"]["name"],
                    "uid": job["metadata"]["uid"],
                    "controller": True,
                }
            ],
        },
        "spec": {
            "nodeName": "node-1" if i % 5 else "",
            "containers": job["spec"]["template"]["spec"]["containers"],
        },
        "status": {"phase": "Running"},
    }


def _fleet(inventory: Inventory) -> Inventory:
    for i in range(WORKLOADS):
        inventory.apply_workload("ADDED", _job(i))
    for i in range(0, WORKLOADS, 2):
        inventory.apply_pod("ADDED", _pod(i))
    return inventory


@pytest.fixture
def evaluations(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the workloads the inventory evaluates, in order."""
    seen: list[str] = []
    real = inventory_module.summarize

    def counting(wl: Any, **kwargs: Any) -> Any:
        seen.append(wl.obj["metadata"]["name"])
        return real(wl, **kwargs)

    monkeypatch.setattr(inventory_module, "summarize", counting)
    return seen


def _shown(listing: views.Listing) -> list[tuple[Any, ...]]:
    return [
        (
            r.path,
            r.phases,
            r.ready,
            r.desired,
            r.gpus,
            r.gpus_pending,
            r.gpus_held,
            r.age,
            r.entry.summary,
            r.entry.error,
        )
        for r in listing.rows
    ]


def _everything_first(filters: views.Filters) -> views.Listing:
    """The listing of an inventory whose every workload was evaluated before."""
    inventory = _fleet(new_inventory())
    inventory.entries()
    return views.rows(inventory, filters, NOW)


@pytest.mark.parametrize("page", [1, 3])
@pytest.mark.parametrize("sort", ["namespace", "name", "kind", "age"])
def test_a_page_sorted_by_the_object_evaluates_its_rows_only(
    evaluations: list[str], sort: str, page: int
) -> None:
    filters = views.Filters(sort=sort, descending=page == 3, page=page)
    expected = _everything_first(filters)
    evaluations.clear()
    got = views.rows(_fleet(new_inventory()), filters, NOW)
    shown = WORKLOADS - 2 * views.PAGE_SIZE if page == 3 else views.PAGE_SIZE
    assert len(got.rows) == shown
    assert sorted(evaluations) == sorted(r.entry.name for r in got.rows)
    assert _shown(got) == _shown(expected)
    assert (got.total, got.pages, got.namespaces, got.kinds) == (
        expected.total,
        expected.pages,
        expected.namespaces,
        expected.kinds,
    )


def test_a_text_namespace_or_kind_filter_evaluates_the_rows_shown(
    evaluations: list[str],
) -> None:
    filters = views.Filters(namespace="team-1", kind="Job", text="job-1")
    expected = _everything_first(filters)
    evaluations.clear()
    got = views.rows(_fleet(new_inventory()), filters, NOW)
    assert 0 < len(got.rows) == got.total < views.PAGE_SIZE
    assert sorted(evaluations) == sorted(r.entry.name for r in got.rows)
    assert _shown(got) == _shown(expected)


@pytest.mark.parametrize(
    "filters",
    [
        views.Filters(sort="phase"),
        views.Filters(sort="pods"),
        views.Filters(sort="gpus"),
        views.Filters(phase="Running"),
    ],
)
def test_a_phase_filter_or_an_evaluated_sort_evaluates_every_workload(
    evaluations: list[str], filters: views.Filters
) -> None:
    expected = _everything_first(filters)
    evaluations.clear()
    got = views.rows(_fleet(new_inventory()), filters, NOW)
    assert len(evaluations) == WORKLOADS
    assert _shown(got) == _shown(expected)


def test_the_next_page_evaluates_its_own_rows_and_keeps_the_first_pages(
    evaluations: list[str],
) -> None:
    inventory = _fleet(new_inventory())
    first = views.rows(inventory, views.Filters(), NOW)
    second = views.rows(inventory, views.Filters(page=2), NOW)
    again = views.rows(inventory, views.Filters(), NOW)
    assert len(evaluations) == 2 * views.PAGE_SIZE  # each workload once
    assert [r.entry for r in again.rows] == [r.entry for r in first.rows]
    assert not {r.path for r in first.rows} & {r.path for r in second.rows}


def test_the_definitions_page_counts_without_evaluating(evaluations: list[str]) -> None:
    inventory = _fleet(new_inventory())
    rows = views.definition_rows(inventory, {})
    assert not evaluations
    assert sum(r["instances"] for r in rows) == WORKLOADS
    counted = {r["gvk"].kind for r in rows if r["instances"]}
    assert counted == {"Job"}


def test_listed_entries_are_unevaluated_until_asked() -> None:
    inventory = _fleet(new_inventory())
    listed = inventory.listed()
    assert [e.uid for e in listed] == [e.uid for e in inventory.entries()]
    fresh = _fleet(new_inventory())
    listed = fresh.listed()
    assert all(e.summary is None and e.error is None and not e.pods for e in listed)
    done = fresh.evaluated(listed[:5])
    assert [e.uid for e in done] == [e.uid for e in listed[:5]]
    assert all(e.summary is not None for e in done)
    # evaluated once, kept: listed again, the same entries
    assert fresh.listed()[:5] == done
    assert all(a is b for a, b in zip(fresh.listed()[:5], done, strict=True))
