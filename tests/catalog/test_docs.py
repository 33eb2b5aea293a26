"""docs/catalog.md is generated from the catalog; it must match what the catalog renders now."""

from __future__ import annotations

from pathlib import Path

from workload_map.catalog import catalog
from workload_map.catalog.docs import render

PAGE = Path(__file__).resolve().parents[2] / "docs" / "catalog.md"


def test_catalog_page_is_up_to_date() -> None:
    assert PAGE.read_text(encoding="utf-8") == render(), (
        "docs/catalog.md is stale: run `python -m workload_map.catalog.docs > docs/catalog.md`"
    )


def test_page_lists_every_definition_with_its_upstream_version() -> None:
    text = render()
    for entry in catalog.entries():
        if not entry.derived:
            assert f"### `{entry.name}`" in text
    assert text.count("* Checked against: ") == len([e for e in catalog.entries() if not e.derived])
    assert "Checked against: unknown" not in text


def test_every_definition_has_its_gang_peers_row() -> None:
    from workload_map.catalog.gang_peers import PEERS

    primary = {e.name for e in catalog.entries() if not e.derived}
    assert sorted(primary - set(PEERS)) == []
    assert sorted(set(PEERS) - primary) == []  # no row for a definition that went away
    text = render()
    assert "| `batch-job-v1` |" in text and "still differs from KAI" in text
