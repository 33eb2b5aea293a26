"""Broken cluster Kartas (issue 12 item 3): never silently hide workloads."""

from __future__ import annotations

import copy
import json
from typing import Any

import yaml

from tests.cli.fake_cluster import JOBSET, KARTA, FakeAPI, obj


def _catalog_jobset(wlmap) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    return yaml.safe_load(
        wlmap(["definitions", "jobset-x-k8s-io-jobset-v1alpha2", "-o", "yaml"]).out
    )


def _api_with(*kartas: dict[str, Any]) -> FakeAPI:
    api = FakeAPI(namespace="ml").serve(JOBSET, KARTA)
    api.add(obj("jobset.x-k8s.io/v1alpha2", "JobSet", "train", "ml", spec={"replicatedJobs": []}))
    api.add(*kartas)
    return api


def _invalid_override(wlmap) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    karta = copy.deepcopy(_catalog_jobset(wlmap))
    karta["metadata"] = {
        "name": "team-jobset",
        "managedFields": [{"manager": "kubectl", "operation": "Apply"}],
    }
    # a child owned by a component that does not exist: loads, but does not validate
    karta["spec"]["structureDefinition"]["childComponents"] = [
        {
            "name": "orphan",
            "kind": {"group": "batch", "version": "v1", "kind": "Job"},
            "ownerRef": "nowhere",
        }
    ]
    return karta


def test_invalid_override_falls_back_to_the_catalog_says_so_and_fails(wlmap) -> None:
    api = _api_with(_invalid_override(wlmap))
    r = wlmap(["get", "jobsets", "-o", "json"], api=api)
    items = json.loads(r.out)["items"]
    assert [(i["name"], i["origin"]) for i in items] == [("train", "catalog")]
    assert 'cluster Karta "team-jobset"' in r.err and "is invalid" in r.err
    assert "using the built-in catalog definition jobset-x-k8s-io-jobset-v1alpha2" in r.err
    assert r.code == 1


def test_all_types_keeps_the_rows_of_an_invalid_override(wlmap) -> None:
    api = _api_with(_invalid_override(wlmap))
    r = wlmap(["get", "--all-types", "-o", "name"], api=api)
    assert "train" in r.out
    assert "using the built-in catalog definition" in r.err
    assert r.code == 1


def test_definitions_flags_invalid_and_unloadable_kartas(wlmap) -> None:
    unloadable = {
        "apiVersion": "run.ai/v1alpha1",
        "kind": "Karta",
        "metadata": {"name": "broken"},
        "spec": {"structureDefinition": {}},
    }
    api = _api_with(_invalid_override(wlmap), unloadable)
    r = wlmap(["definitions"], api=api, env={"KUBECONFIG": "/dev/null"})
    rows = {line.split()[0]: line for line in r.out.splitlines()[1:]}
    assert "cluster (INVALID)" in rows["team-jobset"]
    assert "cluster (INVALID)" in rows["broken"]
    assert 'cluster Karta "team-jobset" is invalid' in r.err
    assert 'cluster Karta "broken" is invalid' in r.err
    one = wlmap(["definitions", "broken"], api=api)
    assert one.code == 1 and "Problem:" in one.out
    detail = wlmap(["definitions", "team-jobset"], api=api)
    assert "INVALID" in detail.out


def test_definitions_json_drops_managed_fields(wlmap) -> None:
    karta = _catalog_jobset(wlmap)
    karta["metadata"] = {"name": "team-jobset", "managedFields": [{"manager": "kubectl"}]}
    api = _api_with(karta)
    listed = json.loads(wlmap(["definitions", "-o", "json"], api=api).out)
    mine = [i for i in listed["items"] if i["metadata"]["name"] == "team-jobset"]
    assert mine and "managedFields" not in mine[0]["metadata"]
    one = json.loads(wlmap(["definitions", "team-jobset", "-o", "json"], api=api).out)
    assert "managedFields" not in one["metadata"]
    names = wlmap(["definitions", "-o", "name"], api=api).out.split()
    assert "karta.run.ai/team-jobset" in names


def test_a_valid_override_still_wins_and_exits_zero(wlmap) -> None:
    karta = _catalog_jobset(wlmap)
    karta["metadata"] = {"name": "team-jobset"}
    r = wlmap(["get", "jobsets", "-o", "json"], api=_api_with(karta))
    assert r.code == 0, r.err
    assert [i["origin"] for i in json.loads(r.out)["items"]] == ["cluster"]


def test_a_stale_catalog_copy_is_never_preferred_over_the_built_in(wlmap) -> None:
    from workload_map.catalog import catalog
    from workload_map.catalog.stamps import (
        CATALOG_DIGEST_ANNOTATION,
        CATALOG_VERSION_ANNOTATION,
        catalog_digest,
    )

    name = "jobset-x-k8s-io-jobset-v1alpha2"
    copy_doc = _catalog_jobset(wlmap)
    copy_doc["metadata"] = {
        "name": name,
        "annotations": {CATALOG_DIGEST_ANNOTATION: "0" * 16, CATALOG_VERSION_ANNOTATION: "0.0.1"},
    }
    api = _api_with(copy_doc)
    r = wlmap(["get", "jobsets", "-o", "json"], api=api)
    assert r.code == 0, r.err
    assert [i["origin"] for i in json.loads(r.out)["items"]] == ["catalog"]
    assert "stale copy of the built-in definition" in r.err and "workload-map 0.0.1" in r.err
    listed = wlmap(["definitions", "--group", "jobset.x-k8s.io"], api=api)
    assert "cluster (STALE)" in listed.out
    # a current copy (same digest) is the cluster's definition, silently
    current = catalog.document(name)
    assert current is not None
    copy_doc["metadata"]["annotations"][CATALOG_DIGEST_ANNOTATION] = catalog_digest(current)
    r = wlmap(["get", "jobsets", "-o", "json"], api=_api_with(copy_doc))
    assert r.code == 0 and [i["origin"] for i in json.loads(r.out)["items"]] == ["cluster"]
    assert "stale" not in r.err
