"""The generated JSON bundle of the built-in definitions (catalog/bundle.py) against their YAML.

The YAML files are the source of truth: the committed bundle must hold exactly what parsing
them gives (``make catalog-bundle`` regenerates it), and the registry must fall back to the YAML
of any definition edited since the bundle was made.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from workload_map.catalog.bundle import (
    BUNDLE_NAME,
    Bundle,
    data_directory,
    parse_sources,
    render_bundle,
)
from workload_map.catalog.registry import Catalog

DATA = data_directory()


def test_the_committed_bundle_is_what_the_yaml_gives() -> None:
    sources = parse_sources(DATA)
    assert len(sources) >= 40
    committed = (DATA / BUNDLE_NAME).read_bytes()
    assert committed == render_bundle(sources), "run `make catalog-bundle`"
    bundle = Bundle(committed)
    for stem, (text, doc) in sources.items():
        assert bundle.document(stem, text) == doc, stem


def test_the_catalog_reads_the_bundle_and_answers_as_from_yaml(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    shutil.copytree(DATA, plain)
    (plain / BUNDLE_NAME).unlink()
    bundled, from_yaml = Catalog(DATA), Catalog(plain)
    assert bundled._bundle() is not None and from_yaml._bundle() is None
    assert bundled.names() == from_yaml.names()
    for name in bundled.names():
        assert bundled.document(name) == from_yaml.document(name), name


def test_a_definition_edited_after_the_bundle_is_read_from_its_yaml(tmp_path: Path) -> None:
    copy = tmp_path / "data"
    shutil.copytree(DATA, copy)
    stem = "jobset-x-k8s-io-jobset-v1alpha2"
    path = copy / f"{stem}.yaml"
    text = path.read_text(encoding="utf-8")
    edited = text.replace("metadata:\n", "metadata:\n  labels: {edited: 'yes'}\n", 1)
    assert edited != text
    path.write_text(edited, encoding="utf-8")
    catalog = Catalog(copy)
    assert catalog._bundle() is not None  # the stale bundle is there, for the other files
    doc = catalog.document(stem)
    assert doc is not None and doc["metadata"]["labels"] == {"edited": "yes"}
    # the untouched ones still come from the bundle, equal to their YAML
    assert catalog.document("apps-deployment-v1") == Catalog(DATA).document("apps-deployment-v1")


def test_a_broken_bundle_is_ignored(tmp_path: Path) -> None:
    copy = tmp_path / "data"
    shutil.copytree(DATA, copy)
    (copy / BUNDLE_NAME).write_bytes(b"not json\n")
    catalog = Catalog(copy)
    assert catalog._bundle() is None
    assert catalog.names() == Catalog(DATA).names()
