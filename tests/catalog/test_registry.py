"""The catalog API: lookups, served versions, listing, cluster objects, copies, load errors."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from workload_map.catalog import (
    DERIVED_FROM_ANNOTATION,
    GROUP_LABEL,
    KIND_LABEL,
    SERVED_VERSIONS_ANNOTATION,
    VERSION_LABEL,
    Catalog,
    CatalogError,
    catalog,
    slug,
    version_priority,
)
from workload_map.model import Karta


def test_slug_rule() -> None:
    assert slug("", "v1", "Pod") == "core-pod-v1"
    assert slug("kubeflow.org", "v1", "PyTorchJob") == "kubeflow-org-pytorchjob-v1"
    assert slug("jobset.x-k8s.io", "v1alpha2", "JobSet") == "jobset-x-k8s-io-jobset-v1alpha2"


def test_version_priority_orders_like_kubernetes() -> None:
    versions = ["v1alpha1", "v2beta1", "v1", "v1beta1", "v2", "v1alpha2", "foo"]
    assert sorted(versions, key=version_priority) == [
        "v2",
        "v1",
        "v2beta1",
        "v1beta1",
        "v1alpha2",
        "v1alpha1",
        "foo",
    ]


def test_exact_lookup_returns_a_karta_named_by_its_slug() -> None:
    karta = catalog.get("kubeflow.org", "v1", "PyTorchJob")
    assert isinstance(karta, Karta)
    assert karta.metadata["name"] == "kubeflow-org-pytorchjob-v1"
    assert karta.root_gvk is not None and karta.root_gvk.kind == "PyTorchJob"
    assert catalog.get("kubeflow.org", "v2", "PyTorchJob") is None
    assert catalog.get("example.com", "v1", "Nothing") is None


def test_core_group_lookup_and_api_version_form() -> None:
    pod = catalog.for_api_version("v1", "Pod")
    assert pod is not None and pod.metadata["name"] == "core-pod-v1"
    job = catalog.for_api_version("batch/v1", "Job")
    assert job is not None and job.metadata["name"] == "batch-job-v1"


def test_every_entry_is_found_by_its_gvk_name_and_group_kind() -> None:
    for entry in catalog.entries():
        karta = catalog.get(entry.group, entry.version, entry.kind)
        assert karta is not None, entry
        assert karta.metadata["name"] == entry.name == slug(entry.group, entry.version, entry.kind)
        assert catalog.by_name(entry.name) is not None
        assert entry.name in [k.metadata["name"] for k in catalog.find(entry.group, entry.kind)]


def test_served_versions_answer_with_a_copy_for_that_version() -> None:
    found = catalog.find("serving.kserve.io", "LLMInferenceService")
    assert [k.metadata["name"] for k in found] == [
        "serving-kserve-io-llminferenceservice-v1alpha2",
        "serving-kserve-io-llminferenceservice-v1alpha1",
    ]
    derived = catalog.get("serving.kserve.io", "v1alpha1", "LLMInferenceService")
    assert derived is not None and derived.root_gvk is not None
    assert derived.root_gvk.version == "v1alpha1"
    annotations = derived.metadata["annotations"]
    assert annotations[DERIVED_FROM_ANNOTATION] == "serving-kserve-io-llminferenceservice-v1alpha2"
    assert SERVED_VERSIONS_ANNOTATION not in annotations
    entry = catalog.entry("serving-kserve-io-llminferenceservice-v1alpha1")
    assert entry is not None and entry.derived and entry.source.endswith("v1alpha2.yaml")


def test_resolve_falls_back_to_the_most_stable_version_of_the_kind() -> None:
    exact = catalog.resolve("kubeflow.org/v1beta1", "Notebook")
    assert exact is not None and exact[1] is True
    other = catalog.resolve("ray.io/v1alpha1", "RayCluster")
    assert other is not None
    karta, is_exact = other
    assert not is_exact and karta.metadata["name"] == "ray-io-raycluster-v1"
    assert catalog.resolve("example.com/v1", "Nothing") is None


def test_list_and_names_are_sorted_and_consistent() -> None:
    names = catalog.names()
    assert names == sorted(names)
    assert len(set(names)) == len(names)
    assert [k.metadata["name"] for k in catalog.list()] == names
    assert len(catalog) == len(names)
    assert "batch-job-v1" in catalog


def test_results_are_independent_copies() -> None:
    first = catalog.get("batch", "v1", "Job")
    assert first is not None
    first.metadata["name"] = "changed"
    first.metadata.setdefault("labels", {})["x"] = "y"
    again = catalog.get("batch", "v1", "Job")
    assert again is not None and again.metadata["name"] == "batch-job-v1"
    assert "labels" not in again.metadata
    doc = catalog.document("batch-job-v1")
    assert doc is not None
    doc["spec"] = {}
    assert catalog.document("batch-job-v1")["spec"] != {}  # type: ignore[index]
    # nested dicts and lists are new too, down to the leaves
    deep = catalog.document("jobset-x-k8s-io-jobset-v1alpha2")
    assert deep is not None
    children = deep["spec"]["structureDefinition"]["childComponents"]
    children[0]["name"] = "changed"
    children.append({"name": "extra"})
    fresh = catalog.document("jobset-x-k8s-io-jobset-v1alpha2")
    assert fresh is not None
    assert fresh["spec"]["structureDefinition"]["childComponents"][0]["name"] != "changed"
    assert {"name": "extra"} not in fresh["spec"]["structureDefinition"]["childComponents"]


def test_cluster_objects_carry_the_gvk_labels_and_apply_cleanly() -> None:
    objects = catalog.as_cluster_objects()
    assert len(objects) == len(catalog.names())
    for obj in objects:
        assert obj["apiVersion"] == "run.ai/v1alpha1" and obj["kind"] == "Karta"
        root = obj["spec"]["structureDefinition"]["rootComponent"]["kind"]
        labels = obj["metadata"]["labels"]
        assert labels[GROUP_LABEL] == root.get("group", "")
        assert labels[VERSION_LABEL] == root["version"]
        assert labels[KIND_LABEL] == root["kind"]
        assert obj["metadata"]["name"] == slug(root.get("group", ""), root["version"], root["kind"])
        assert "status" not in obj
        # survives a YAML round trip (what `kubectl apply -f` reads)
        assert yaml.safe_load(yaml.safe_dump(obj)) == obj


# -- a catalog over a directory of our making ---------------------------------------------------
def _karta(group: str, version: str, kind: str, **annotations: str) -> dict[str, object]:
    meta: dict[str, object] = {"name": slug(group, version, kind)}
    if annotations:
        meta["annotations"] = dict(annotations)
    return {
        "apiVersion": "run.ai/v1alpha1",
        "kind": "Karta",
        "metadata": meta,
        "spec": {
            "structureDefinition": {
                "rootComponent": {
                    "name": kind.lower(),
                    "kind": {"group": group, "version": version, "kind": kind},
                    "statusDefinition": {"statusMappings": {}},
                }
            }
        },
    }


def _write(directory: Path, doc: dict[str, object], name: str | None = None) -> None:
    meta = doc["metadata"]
    assert isinstance(meta, dict)
    (directory / f"{name or meta['name']}.yaml").write_text(yaml.safe_dump(doc))


def test_duplicate_gvk_through_served_versions_is_rejected(tmp_path: Path) -> None:
    _write(tmp_path, _karta("example.com", "v1", "Thing"))
    _write(
        tmp_path,
        _karta("example.com", "v2", "Thing", **{SERVED_VERSIONS_ANNOTATION: "v2,v1"}),
    )
    with pytest.raises(CatalogError, match=r"duplicate GVK example.com/v1, Kind=Thing"):
        Catalog(tmp_path).names()


def test_file_name_must_be_the_slug(tmp_path: Path) -> None:
    _write(tmp_path, _karta("example.com", "v1", "Thing"), name="thing")
    with pytest.raises(CatalogError, match="must both be the slug"):
        Catalog(tmp_path).names()


def test_served_versions_must_include_the_own_version(tmp_path: Path) -> None:
    _write(tmp_path, _karta("example.com", "v1", "Thing", **{SERVED_VERSIONS_ANNOTATION: "v2"}))
    with pytest.raises(CatalogError, match="must include the definition's own version"):
        Catalog(tmp_path).names()


def test_incomplete_root_and_bad_yaml_are_reported_with_the_file(tmp_path: Path) -> None:
    doc = _karta("example.com", "v1", "Thing")
    doc["spec"] = {"structureDefinition": {"rootComponent": {"name": "x"}}}
    _write(tmp_path, doc)
    with pytest.raises(CatalogError, match=r"example-com-thing-v1.yaml: spec.structureDefinition"):
        Catalog(tmp_path).names()
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "example-com-thing-v1.yaml").write_text("spec: [unclosed\n")
    with pytest.raises(CatalogError, match="is not valid YAML"):
        Catalog(bad).names()


def test_exact_lookup_parses_only_the_files_it_needs(tmp_path: Path) -> None:
    _write(tmp_path, _karta("example.com", "v1", "Thing"))
    (tmp_path / "other-broken-v1.yaml").write_text("spec: [unclosed\n")
    cat = Catalog(tmp_path)
    karta = cat.get("example.com", "v1", "Thing")
    assert karta is not None and karta.metadata["name"] == "example-com-thing-v1"
    with pytest.raises(CatalogError):
        cat.names()  # listing reads everything and meets the broken file
