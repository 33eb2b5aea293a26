"""The workloadmap_* families computed from an inventory fed with the project's fixtures."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest
import yaml
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from workload_map.cluster.inventory import Inventory, NamespaceFilter
from workload_map.engine.summary import Tally, WorkloadSummary
from workload_map.exporter import PHASES, ExporterHealth, LabelPolicy, WorkloadCollector
from workload_map.exporter import collector as collector_module

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
GOLDEN = Path(__file__).parent / "golden"

FAMILIES = {
    "workloadmap_exporter_last_sync_timestamp_seconds",
    "workloadmap_exporter_watch_restarts",
    "workloadmap_exporter_leader",
    "workloadmap_exporter_synced",
    "workloadmap_exporter_evaluation_errors",
    "workloadmap_definition_info",
    "workloadmap_definition_ready",
    "workloadmap_workload_info",
    "workloadmap_pod_workload_info",
    "workloadmap_workload_phase",
    "workloadmap_workload_phase_since_timestamp_seconds",
    "workloadmap_workload_generation",
    "workloadmap_workload_observed_generation",
    "workloadmap_workload_pods",
    "workloadmap_component_pods",
    "workloadmap_workload_resources",
    "workloadmap_component_resources",
    "workloadmap_workload_resource_requests",
    "workloadmap_component_resource_requests",
    "workloadmap_gang_min_members",
    "workloadmap_gang_pods",
    "workloadmap_workload_references",
}


def documents(*paths: Path) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for path in paths:
        for doc in yaml.safe_load_all(path.read_text()):
            if isinstance(doc, dict) and doc.get("kind") == "List":
                out.extend(i for i in doc.get("items") or [] if isinstance(i, dict))
            elif isinstance(doc, dict):
                out.append(doc)
    return out


def feed(inventory: Inventory, objects: Iterable[dict[str, Any]]) -> None:
    """What the watches would deliver: Kartas, workloads, links and pods, in that order."""
    inventory.apply_documents(objects)


def exposition(collector: WorkloadCollector) -> str:
    registry = CollectorRegistry()
    registry.register(collector)
    return generate_latest(registry).decode()


def samples(text: str, name: str) -> list[tuple[dict[str, str], float]]:
    out = []
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            if s.name == name:
                out.append((dict(s.labels), s.value))
    return out


def one(text: str, name: str, **labels: str) -> float:
    found = [v for ls, v in samples(text, name) if all(ls.get(k) == v2 for k, v2 in labels.items())]
    assert len(found) == 1, f"{name} {labels}: {found}"
    return found[0]


@pytest.fixture(autouse=True)
def fixed_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """Phases first seen by the exporter carry the collector's clock: a fixed one here, so the
    expositions (and the golden) do not depend on when the test runs."""
    monkeypatch.setattr(collector_module, "CLOCK", lambda: 1767225600.0)


@pytest.fixture
def jobset_inventory() -> Inventory:
    inventory = Inventory()
    feed(inventory, documents(EXAMPLES / "jobset/jobset.yaml", EXAMPLES / "jobset/pods.yaml"))
    return inventory


def test_exposition_names_are_exactly_the_documented_families(jobset_inventory: Inventory) -> None:
    text = exposition(WorkloadCollector(jobset_inventory, health=ExporterHealth(last_sync=1.0)))
    names = {f.name for f in text_string_to_metric_families(text)}
    assert names == FAMILIES
    sample_names = {s.name for f in text_string_to_metric_families(text) for s in f.samples}
    assert "workloadmap_workload_info" in sample_names
    assert "workloadmap_pod_workload_info" in sample_names
    assert "workloadmap_exporter_watch_restarts_total" in sample_names
    assert "workloadmap_exporter_evaluation_errors_total" not in sample_names  # none yet


def test_exposition_golden(jobset_inventory: Inventory, update_golden: bool) -> None:
    text = exposition(WorkloadCollector(jobset_inventory, health=ExporterHealth(last_sync=1.0)))
    # the catalog's definitions change with every new kind: pin the workload part only
    kept = (
        "\n".join(line for line in text.splitlines() if "workloadmap_definition" not in line) + "\n"
    )
    golden = GOLDEN / "jobset.prom"
    if update_golden or not golden.exists():
        GOLDEN.mkdir(exist_ok=True)
        golden.write_text(kept)
    assert kept == golden.read_text()


def test_jobset_joins_and_totals(jobset_inventory: Inventory) -> None:
    text = exposition(WorkloadCollector(jobset_inventory))
    view = next(e for e in jobset_inventory.entries() if e.gvk.kind == "JobSet").view
    assert view is not None
    ns, wl = "ml-team", "llm-pretrain"
    assert one(text, "workloadmap_workload_info", kind="JobSet", top_level="true") == 1
    # the Jobs under the JobSet are workloads too, but not top level
    jobs = {
        ls["workload"]: ls["top_level"]
        for ls, _ in samples(text, "workloadmap_workload_info")
        if ls["kind"] == "Job"
    }
    assert jobs["llm-pretrain-workers-0"] == "false"
    assert jobs["llm-pretrain-driver-0"] == "false"
    for state in ("desired", "current", "ready"):
        assert (
            one(text, "workloadmap_workload_pods", workload=wl, kind="JobSet", state=state)
            == (view["pods"][state])
        )
    assert (
        one(
            text,
            "workloadmap_workload_resource_requests",
            workload=wl,
            kind="JobSet",
            resource="nvidia.com/gpu",
            source="spec",
        )
        == view["resources"]["gpus"]
    )
    # every attributed pod of the JobSet has exactly one join series, naming the JobSet
    joined = [ls for ls, _ in samples(text, "workloadmap_pod_workload_info")]
    pod_names = {p["name"] for c in view["components"] for p in c["pods"]}
    assert {ls["pod"] for ls in joined if ls["workload"] == wl} == pod_names
    mine = [ls for ls in joined if ls["workload"] == wl]
    assert all(ls["namespace"] == ns and ls["kind"] == "JobSet" for ls in mine)
    assert all(ls["component"] for ls in mine)
    # the other JobSet's pod in the file is nobody's here
    assert "other-run-workers-0-0-q8z7w" not in {ls["pod"] for ls in joined}
    phases = {
        ls["phase"]: v
        for ls, v in samples(text, "workloadmap_workload_phase")
        if ls["kind"] == "JobSet"
    }
    assert set(phases) == set(PHASES)
    assert {p for p, v in phases.items() if v == 1} == set(view["phases"])


def test_resources_held_by_active_pods_only(jobset_inventory: Inventory) -> None:
    from workload_map.engine.resources import pod_request

    entry = next(e for e in jobset_inventory.entries() if e.gvk.kind == "JobSet")
    pod = next(dict(p) for p in entry.pods if pod_request(p["spec"]).get("nvidia.com/gpu"))
    pod["status"] = {**(pod.get("status") or {}), "phase": "Succeeded"}
    before = exposition(WorkloadCollector(jobset_inventory))
    held = one(
        before,
        "workloadmap_workload_resource_requests",
        kind="JobSet",
        resource="nvidia.com/gpu",
        source="pods",
    )
    jobset_inventory.apply_pod("MODIFIED", pod)
    after = exposition(WorkloadCollector(jobset_inventory))
    gpus = pod_request(pod["spec"]).get("nvidia.com/gpu", 0)
    assert gpus > 0
    assert (
        one(
            after,
            "workloadmap_workload_resource_requests",
            kind="JobSet",
            resource="nvidia.com/gpu",
            source="pods",
        )
        == held - gpus
    )


def test_gang_series(jobset_inventory: Inventory) -> None:
    text = exposition(WorkloadCollector(jobset_inventory))
    view = next(e for e in jobset_inventory.entries() if e.gvk.kind == "JobSet").view
    assert view is not None and view["podGroups"]
    for group in view["podGroups"]:
        assert (
            one(text, "workloadmap_gang_min_members", pod_group=group["name"]) == group["minMember"]
        )
        total = one(text, "workloadmap_gang_pods", pod_group=group["name"], state="total")
        scheduled = one(text, "workloadmap_gang_pods", pod_group=group["name"], state="scheduled")
        assert 0 <= scheduled <= total <= len(group["pods"])


def test_every_example_kind_is_exported() -> None:
    inventory = Inventory()
    for folder in sorted(p for p in EXAMPLES.iterdir() if p.is_dir()):
        objects = documents(*sorted(folder.glob("*.yaml")))
        for obj in objects:  # live objects always have a uid; some files leave it out
            meta = obj.setdefault("metadata", {})
            meta.setdefault("uid", f"uid-{obj.get('kind')}-{meta.get('name')}")
        feed(inventory, objects)
    text = exposition(WorkloadCollector(inventory))
    kinds = {
        ls["kind"]
        for ls, _ in samples(text, "workloadmap_workload_info")
        if ls["top_level"] == "true"
    }
    assert {"JobSet", "LeaderWorkerSet", "PyTorchJob", "RayCluster"} <= kinds
    assert not samples(text, "workloadmap_exporter_evaluation_errors_total")


def test_catalog_fixtures_evaluate_without_errors() -> None:
    fixtures = ROOT / "tests/catalog/fixtures"
    inventory = Inventory()
    objects = [d for path in sorted(fixtures.glob("*.yaml")) for d in documents(path)]
    # fixtures reuse names across files: give each its own namespace
    for i, obj in enumerate(objects):
        meta = obj.setdefault("metadata", {})
        meta["namespace"] = f"fx-{i}"
        meta.setdefault("uid", f"uid-{i}")
    feed(inventory, objects)
    entries = inventory.entries()
    assert len(entries) >= 20
    text = exposition(WorkloadCollector(inventory))
    assert len(samples(text, "workloadmap_workload_info")) == len(entries)
    failing = {e.definition.name: e.error for e in entries if e.error}
    assert not failing


BROKEN_KARTA = {
    "apiVersion": "run.ai/v1alpha1",
    "kind": "Karta",
    "metadata": {"name": "widgets", "resourceVersion": "1"},
    "spec": {
        "structureDefinition": {
            "rootComponent": {
                "name": "widget",
                "kind": {"group": "example.com", "version": "v1", "kind": "Widget"},
                "specDefinition": {"podTemplateSpecPath": ".spec.template"},
                # fails at run time on a widget whose spec.replicas is a string
                "scaleDefinition": {"replicasPath": ".spec.replicas + 1"},
                "statusDefinition": {
                    "statusMappings": {
                        "running": [
                            {
                                "byExpression": {
                                    "expression": ".spec.replicas > 0",
                                    "expectedResult": "true",
                                }
                            }
                        ]
                    }
                },
            }
        }
    },
}


def widget(name: str, replicas: Any) -> dict[str, Any]:
    return {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": name, "namespace": "lab", "uid": f"uid-{name}"},
        "spec": {
            "replicas": replicas,
            "template": {"spec": {"containers": [{"name": "c", "image": "x"}]}},
        },
    }


def test_a_failing_definition_is_counted_logged_once_and_others_export(
    jobset_inventory: Inventory, caplog: pytest.LogCaptureFixture
) -> None:
    inventory = jobset_inventory
    inventory.apply_karta("ADDED", BROKEN_KARTA)
    inventory.apply_workload("ADDED", widget("good", 2))
    inventory.apply_workload("ADDED", widget("bad", "two"))
    with caplog.at_level(logging.WARNING, logger="workload_map.inventory"):
        first = exposition(WorkloadCollector(inventory))
        second = exposition(WorkloadCollector(inventory))
    errors = one(first, "workloadmap_exporter_evaluation_errors_total", definition="widgets")
    assert errors == 1
    assert one(second, "workloadmap_exporter_evaluation_errors_total", definition="widgets") == 1
    assert len([r for r in caplog.records if "widgets" in r.getMessage()]) == 1
    assert one(first, "workloadmap_workload_pods", workload="good", state="desired") == 3
    assert not [
        ls for ls, _ in samples(first, "workloadmap_workload_pods") if ls["workload"] == "bad"
    ]
    assert one(first, "workloadmap_workload_info", workload="bad") == 1  # still listed
    assert one(first, "workloadmap_workload_pods", workload="llm-pretrain", state="desired") > 0


def test_invalid_cluster_karta_is_not_ready_and_catalog_keeps_serving(
    jobset_inventory: Inventory,
) -> None:
    bad = {
        "apiVersion": "run.ai/v1alpha1",
        "kind": "Karta",
        "metadata": {"name": "my-jobset"},
        "spec": {
            "structureDefinition": {
                "rootComponent": {
                    "name": "js",
                    "kind": {"group": "jobset.x-k8s.io", "version": "v1alpha2", "kind": "JobSet"},
                    "specDefinition": {"podTemplateSpecPath": ".spec | input"},
                }
            }
        },
    }
    jobset_inventory.apply_karta("ADDED", bad)
    text = exposition(WorkloadCollector(jobset_inventory))
    assert one(text, "workloadmap_definition_ready", definition="my-jobset") == 0
    assert "my-jobset" in jobset_inventory.definition_errors()
    info = one(text, "workloadmap_workload_info", kind="JobSet")
    assert info == 1
    origin = [ls for ls, _ in samples(text, "workloadmap_workload_info") if ls["kind"] == "JobSet"]
    assert origin[0]["definition_origin"] == "catalog"


def test_namespace_filter_and_label_allowlist() -> None:
    objects = documents(EXAMPLES / "jobset/jobset.yaml", EXAMPLES / "jobset/pods.yaml")
    objects[0].setdefault("metadata", {}).setdefault("labels", {})["team.example.com/name"] = "nlp"
    kept = Inventory(namespaces=NamespaceFilter(exclude=frozenset({"ml-team"})))
    feed(kept, objects)
    assert kept.entries() == []
    inventory = Inventory(namespaces=NamespaceFilter(include=frozenset({"ml-team"})))
    feed(inventory, objects)
    text = exposition(
        WorkloadCollector(inventory, labels=LabelPolicy(("team.example.com/name", "absent")))
    )
    labels = [ls for ls, _ in samples(text, "workloadmap_workload_info") if ls["kind"] == "JobSet"]
    assert labels[0]["label_team_example_com_name"] == "nlp"
    assert labels[0]["label_absent"] == ""


def test_followers_export_health_only(jobset_inventory: Inventory) -> None:
    text = exposition(
        WorkloadCollector(jobset_inventory, health=ExporterHealth(is_leader=lambda: False))
    )
    assert one(text, "workloadmap_exporter_leader") == 0
    assert not samples(text, "workloadmap_workload_info")
    assert not samples(text, "workloadmap_pod_workload_info")


def test_before_the_first_evaluation_only_the_exporters_own_series(
    jobset_inventory: Inventory,
) -> None:
    """A restart: until the caches synced and every workload was evaluated, a scrape gets the
    exporter's own series with synced 0, never a fleet of missing workloads (issue 25 item 2)."""
    health = ExporterHealth(last_sync=None, synced=False)
    collector = WorkloadCollector(jobset_inventory, health=health)
    text = exposition(collector)
    assert one(text, "workloadmap_exporter_synced") == 0
    assert one(text, "workloadmap_exporter_leader") == 1
    names = {s.name for f in text_string_to_metric_families(text) for s in f.samples}
    assert all(n.startswith("workloadmap_exporter_") for n in names), names
    assert collector.exposition().decode() == text  # the fast path says the same
    health.synced = True
    text = exposition(collector)
    assert one(text, "workloadmap_exporter_synced") == 1
    assert samples(text, "workloadmap_workload_info")
    assert collector.exposition().decode() == text


def test_pod_with_broken_chain_joins_by_operator_labels(jobset_inventory: Inventory) -> None:
    entry = next(e for e in jobset_inventory.entries() if e.gvk.kind == "JobSet")
    orphan = dict(entry.pods[0])
    meta = dict(orphan["metadata"])
    meta.update(name="llm-pretrain-workers-9-0-zzzzz", uid="pod-orphan")
    meta["ownerReferences"] = [
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "name": "gone",
            "uid": "job-gone",
            "controller": True,
        }
    ]
    orphan["metadata"] = meta
    jobset_inventory.apply_pod("ADDED", orphan)
    assert jobset_inventory.pod_workload("pod-orphan") == entry.uid
    # a pod whose labels name another JobSet is never given to this one
    stranger = dict(orphan)
    labels = dict(meta.get("labels") or {})
    labels["jobset.sigs.k8s.io/jobset-name"] = "someone-else"
    stranger["metadata"] = {**meta, "uid": "pod-stranger", "name": "x", "labels": labels}
    jobset_inventory.apply_pod("ADDED", stranger)
    assert jobset_inventory.pod_workload("pod-stranger") is None


def test_deleting_objects_updates_the_series(jobset_inventory: Inventory) -> None:
    entry = next(e for e in jobset_inventory.entries() if e.gvk.kind == "JobSet")
    before = one(
        exposition(WorkloadCollector(jobset_inventory)),
        "workloadmap_workload_pods",
        kind="JobSet",
        state="current",
    )
    jobset_inventory.apply_pod("DELETED", entry.pods[0])
    after = one(
        exposition(WorkloadCollector(jobset_inventory)),
        "workloadmap_workload_pods",
        kind="JobSet",
        state="current",
    )
    assert after == before - 1
    jobset_inventory.apply_workload("DELETED", entry.obj)
    text = exposition(WorkloadCollector(jobset_inventory))
    assert not [
        ls for ls, _ in samples(text, "workloadmap_workload_info") if ls["kind"] == "JobSet"
    ]


def test_fast_exposition_is_byte_for_byte_the_clients(jobset_inventory: Inventory) -> None:
    jobset_inventory.apply_karta("ADDED", BROKEN_KARTA)
    jobset_inventory.apply_workload("ADDED", widget("bad", "two"))
    for folder in sorted(p for p in EXAMPLES.iterdir() if p.is_dir()):
        objects = documents(*sorted(folder.glob("*.yaml")))
        for obj in objects:
            meta = obj.setdefault("metadata", {})
            meta.setdefault("uid", f"uid-{obj.get('kind')}-{meta.get('name')}")
            meta.setdefault("labels", {})["team"] = 'a "quoted"\\ value\nwith newline'
        feed(jobset_inventory, objects)
    for health in (ExporterHealth(last_sync=12.5), ExporterHealth(is_leader=lambda: False)):
        collector = WorkloadCollector(
            jobset_inventory, health=health, labels=LabelPolicy(("team",))
        )
        assert collector.exposition().decode() == exposition(collector)
        assert collector.exposition().decode() == exposition(collector)  # memoised: the same again


def test_memoised_rows_follow_changes(jobset_inventory: Inventory) -> None:
    collector = WorkloadCollector(jobset_inventory)
    before = collector.exposition().decode()
    entry = next(e for e in jobset_inventory.entries() if e.gvk.kind == "JobSet")
    jobset_inventory.apply_pod("DELETED", entry.pods[0])
    after = collector.exposition().decode()
    assert one(after, "workloadmap_workload_pods", kind="JobSet", state="current") == (
        one(before, "workloadmap_workload_pods", kind="JobSet", state="current") - 1
    )
    assert after == exposition(collector)


def test_owners_arriving_after_their_pods_adopt_them() -> None:
    """Watches deliver in any order: pods first, then their Job, then the JobSet."""
    objects = documents(EXAMPLES / "jobset/jobset.yaml", EXAMPLES / "jobset/pods.yaml")
    inventory = Inventory()
    for obj in objects:
        if obj.get("kind") == "Pod":
            inventory.apply_pod("ADDED", obj)
    for obj in objects:
        if obj.get("kind") == "Job":
            inventory.apply_workload("ADDED", obj)
    assert not [e for e in inventory.entries() if e.gvk.kind == "JobSet"]
    inventory.apply_workload("ADDED", objects[0])
    late = exposition(WorkloadCollector(inventory))
    assert late == exposition(WorkloadCollector(_fed(objects)))
    # and the JobSet going away leaves its pods to no top-level JobSet
    inventory.apply_workload("DELETED", objects[0])
    gone = exposition(WorkloadCollector(inventory))
    assert not [
        ls for ls, _ in samples(gone, "workloadmap_pod_workload_info") if ls["kind"] == "JobSet"
    ]


def _fed(objects: list[dict[str, Any]]) -> Inventory:
    inventory = Inventory()
    feed(inventory, objects)
    return inventory


def test_watches_are_not_blocked_while_views_are_evaluated() -> None:
    """Evaluation runs outside the lock; a change meanwhile makes its result stale, not stored."""
    import threading

    release = threading.Event()
    started = threading.Event()
    calls: list[int] = []

    def slow(definition: Any, obj: dict[str, Any], pods: list[dict[str, Any]]) -> WorkloadSummary:
        calls.append(len(pods))
        started.set()
        assert release.wait(60)
        tally = Tally(1, len(pods), 0, 0, len(pods), {}, {}, {})
        return WorkloadSummary(("Running",), None, tally, (), (), ())

    objects = documents(EXAMPLES / "jobset/jobset.yaml", EXAMPLES / "jobset/pods.yaml")
    inventory = Inventory(evaluate=slow)
    feed(inventory, [o for o in objects if o.get("kind") != "Job"][:3])
    reader = threading.Thread(target=inventory.entries)
    reader.start()
    assert started.wait(30)
    pod = next(o for o in objects if o.get("kind") == "Pod")
    done = threading.Event()
    threading.Thread(target=lambda: (inventory.apply_pod("MODIFIED", pod), done.set())).start()
    # generous: a watch blocked by the evaluation would wait for the release, which comes
    # only after this; the bound only keeps a loaded machine from failing the test
    assert done.wait(30), "a watch event waited for an evaluation"
    release.set()
    reader.join(60)
    evaluated = len(calls)
    inventory.entries()  # the result computed before the change was not memoised
    assert len(calls) > evaluated
    again = len(calls)
    inventory.entries()  # now it is
    assert len(calls) == again
