"""The catalog against a real API server (integration): built-in schemas and installation.

The offline suite checks the built-in kinds against ``builtin_schemas.py`` (hand-written); this
test fetches ``/openapi/v3/api/v1``, ``/openapi/v3/apis/apps/v1`` and ``/openapi/v3/apis/batch/v1``
from the API server of the integration harness, resolves the kind's schema (``$ref``/``allOf``),
and runs the same path and type checks. Then, with the project's ``kartas.run.ai`` CRD installed,
every object of ``as_cluster_objects()`` is server-side applied with strict field validation and
found again by its GVK labels, as KAI Scheduler's Karta grouper selects them. (One module, so the
session starts one extra control plane, not one per file.)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.catalog.builtin_schemas import BUILTIN, as_crd
from tests.catalog.test_schema import type_problems
from tests.integration.harness import Cluster
from workload_map.catalog import GROUP_LABEL, KIND_LABEL, VERSION_LABEL, catalog
from workload_map.model import check_against_crd

pytestmark = pytest.mark.integration

_PATHS = {
    "": "/openapi/v3/api/v1",
    "apps": "/openapi/v3/apis/apps/v1",
    "batch": "/openapi/v3/apis/batch/v1",
}


def _resolve(doc: dict[str, Any], schema: dict[str, Any], depth: int = 0) -> dict[str, Any]:
    """A self-contained copy of ``schema`` (refs inlined, at most 14 levels deep)."""
    if depth > 14:
        return {}
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        return _resolve(doc, doc["components"]["schemas"][name], depth)
    if schema.get("allOf"):
        merged: dict[str, Any] = {}
        for part in schema["allOf"]:
            merged.update(_resolve(doc, part, depth))
        merged.update({k: v for k, v in schema.items() if k != "allOf"})
        return _resolve(doc, merged, depth)
    out = {
        k: v for k, v in schema.items() if k not in {"properties", "items", "additionalProperties"}
    }
    if isinstance(schema.get("properties"), dict):
        out["properties"] = {
            k: _resolve(doc, v, depth + 1) for k, v in schema["properties"].items()
        }
    if isinstance(schema.get("items"), dict):
        out["items"] = _resolve(doc, schema["items"], depth + 1)
    if isinstance(schema.get("additionalProperties"), dict):
        out["additionalProperties"] = _resolve(doc, schema["additionalProperties"], depth + 1)
    return out


def _kind_schema(doc: dict[str, Any], group: str, version: str, kind: str) -> dict[str, Any]:
    for schema in doc["components"]["schemas"].values():
        for gvk in schema.get("x-kubernetes-group-version-kind") or []:
            if (gvk.get("group", ""), gvk.get("version"), gvk.get("kind")) == (
                group,
                version,
                kind,
            ):
                return _resolve(doc, schema)
    raise AssertionError(f"{group}/{version} {kind} is not in the OpenAPI document")


@pytest.mark.parametrize(("group", "version", "kind"), sorted(BUILTIN))
def test_builtin_definition_against_the_api_server(
    kube: Cluster,
    group: str,
    version: str,
    kind: str,
) -> None:
    doc = kube.request("GET", _PATHS[group])
    schema = _kind_schema(doc, group, version, kind)
    crd = as_crd(group, version, kind, schema)
    karta = catalog.get(group, version, kind)
    assert karta is not None
    findings = check_against_crd(karta, crd)
    assert findings == [], "\n".join(f"{f.path}: {f.message}" for f in findings)
    assert type_problems(karta, crd, version) == []


CRD = Path(__file__).resolve().parents[2] / "deploy" / "crds" / "kartas.run.ai.yaml"


def _contains(stored: Any, ours: Any) -> bool:
    if isinstance(ours, dict):
        return isinstance(stored, dict) and all(
            k in stored and _contains(stored[k], v) for k, v in ours.items()
        )
    if isinstance(ours, list):
        return (
            isinstance(stored, list)
            and len(stored) == len(ours)
            and all(_contains(a, b) for a, b in zip(stored, ours, strict=True))
        )
    return bool(stored == ours)


def test_every_definition_applies_and_is_found_by_its_labels(kube: Cluster) -> None:
    kube.install_crd(CRD)
    objects = catalog.as_cluster_objects()
    try:
        for obj in objects:
            kube.apply(obj, field_validation="Strict")
        check_found_by_labels(kube, objects)
    finally:
        # Kartas are cluster-scoped: leave none behind for the other tests of the session.
        for obj in objects:
            try:
                kube.delete("run.ai/v1alpha1", "Karta", obj["metadata"]["name"])
            except Exception:  # already gone, or never created
                pass


def check_found_by_labels(kube: Cluster, objects: list[dict[str, Any]]) -> None:
    for obj in objects:
        labels = obj["metadata"]["labels"]
        selector = ",".join(
            f"{key}={labels[key]}"
            for key in (GROUP_LABEL, VERSION_LABEL, KIND_LABEL)
            if labels[key]
        )
        found = kube.request(
            "GET", "/apis/run.ai/v1alpha1/kartas", query={"labelSelector": selector}
        )
        names = [
            item["metadata"]["name"]
            for item in found["items"]
            if item["metadata"]["labels"].get(GROUP_LABEL, "") == labels[GROUP_LABEL]
        ]
        assert names == [obj["metadata"]["name"]]
        stored = kube.get("run.ai/v1alpha1", "Karta", obj["metadata"]["name"])
        # the server adds the CRD's defaults (conditions field names...) and drops nothing
        assert _contains(stored["spec"], obj["spec"]), obj["metadata"]["name"]
