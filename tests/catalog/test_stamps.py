"""catalog.stamps.copy_stamp: the one reading of an installed copy's catalog annotations that
``wlmap definitions install``, the library's definition lookup and the operator's ``Catalog``
condition share."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from workload_map.catalog import catalog
from workload_map.catalog.stamps import (
    CATALOG_DIGEST_ANNOTATION,
    CATALOG_VERSION_ANNOTATION,
    CopyStamp,
    catalog_digest,
    copy_stamp,
)

NAME = "batch-job-v1"


def built_in() -> dict[str, Any]:
    doc = catalog.document(NAME)
    assert doc is not None
    return doc


def installed(annotations: dict[str, Any]) -> dict[str, Any]:
    doc = built_in()
    doc["metadata"]["annotations"] = annotations
    return doc


@pytest.mark.parametrize(
    "obj",
    [
        {},
        {"metadata": None},
        {"metadata": {"annotations": None}},
        {"metadata": {"annotations": {CATALOG_VERSION_ANNOTATION: "0.1.0"}}},  # no digest
        {"metadata": {"annotations": {CATALOG_DIGEST_ANNOTATION: 7}}},  # not an annotation
    ],
)
def test_a_users_own_definition_has_no_stamp(obj: dict[str, Any]) -> None:
    assert copy_stamp(obj) is None


def test_a_copy_is_current_until_its_spec_differs() -> None:
    doc = built_in()
    obj = installed(
        {CATALOG_DIGEST_ANNOTATION: catalog_digest(doc), CATALOG_VERSION_ANNOTATION: "0.0.9"}
    )
    stamp = copy_stamp(obj)
    assert stamp == CopyStamp(catalog_digest(doc), "0.0.9")
    assert stamp.is_current(doc)
    changed = copy.deepcopy(doc)
    changed["spec"]["structureDefinition"]["rootComponent"]["kind"]["version"] = "v2"
    assert not stamp.is_current(changed)
    # metadata is not part of the digest: relabelling a copy keeps it current
    relabelled = copy.deepcopy(doc)
    relabelled["metadata"]["labels"] = {"team": "ml"}
    assert stamp.is_current(relabelled)


def test_the_release_is_optional() -> None:
    stamp = copy_stamp(installed({CATALOG_DIGEST_ANNOTATION: "0" * 16}))
    assert stamp == CopyStamp("0" * 16, None)
    assert not stamp.is_current(built_in())
