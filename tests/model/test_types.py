"""The typed model's helpers: status order, component navigation, GVK text."""

from __future__ import annotations

from workload_map.model import (
    GVK,
    STATUS_ORDER,
    Component,
    Karta,
    KartaSpec,
    StatusMappings,
    StatusMatcher,
    StructureDefinition,
)


def _karta() -> Karta:
    root = Component("root", kind=GVK("example.com", "v1", "Job"))
    children = (
        Component("a", owner_ref="root"),
        Component("b", owner_ref="a"),
        Component("c", owner_ref="root"),
    )
    return Karta("run.ai/v1alpha1", "Karta", {}, KartaSpec(StructureDefinition(root, children)))


def test_entries_are_eight_in_reference_order() -> None:
    running = (StatusMatcher(by_phase="Running"),)
    entries = StatusMappings(running=running).entries()
    assert [name for name, _ in entries] == [
        "Resuming",
        "Suspending",
        "Suspended",
        "Running",
        "Failed",
        "Completed",
        "Initializing",
        "Degraded",
    ]
    assert list(STATUS_ORDER) == [name for name, _ in entries]
    assert dict(entries)["Running"] == running
    assert dict(entries)["Failed"] == ()


def test_component_navigation() -> None:
    karta = _karta()
    assert [c.name for c in karta.components()] == ["root", "a", "b", "c"]
    assert karta.component("b") == Component("b", owner_ref="a")
    assert karta.component("zzz") is None
    assert [c.name for c in karta.children_of("root")] == ["a", "c"]
    assert [c.name for c in karta.iter_descendants("root")] == ["a", "b", "c"]
    assert karta.root_gvk == GVK("example.com", "v1", "Job")
    assert karta.gang_scheduling is None


def test_gvk_text_follows_go() -> None:
    assert str(GVK("jobset.x-k8s.io", "v1alpha2", "JobSet")) == (
        "jobset.x-k8s.io/v1alpha2, Kind=JobSet"
    )
    assert str(GVK("", "v1", "Pod")) == "/v1, Kind=Pod"
    assert GVK("", "v1", "Pod").api_version == "v1"
    assert GVK("apps", "v1", "Deployment").api_version == "apps/v1"
