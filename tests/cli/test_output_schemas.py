"""The CLI's machine outputs (get, definitions, verify --dump) against their committed schemas:
the files are what the types give, and real command output validates."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from tests.cli.conftest import EXAMPLES, ROOT
from tests.cli.test_cluster_kartas import _api_with, _invalid_override
from tests.cli.test_get import _api
from workload_map.cli.schemas import CLI_SCHEMAS, SCHEMAS, main
from workload_map.engine.schemas import Schema, render


def _validator(file: str) -> Any:
    schema = next(s for s in SCHEMAS if s.file == file).document()
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


@pytest.mark.parametrize("schema", CLI_SCHEMAS, ids=lambda s: s.file)
def test_committed_schema_is_generated_from_the_types(schema: Schema) -> None:
    committed = ROOT / "schemas" / schema.file
    assert committed.read_text(encoding="utf-8") == render(schema), "run `make schemas`"


def test_make_schemas_writes_every_file_and_check_finds_a_stale_one(tmp_path: Path) -> None:
    assert main(["--out", str(tmp_path)]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(s.file for s in SCHEMAS)
    assert main(["--out", str(tmp_path), "--check"]) == 0
    (tmp_path / "get.schema.json").write_text("{}\n", encoding="utf-8")
    assert main(["--out", str(tmp_path), "--check"]) == 1


@pytest.mark.parametrize(
    "argv",
    [
        ["get", "jobsets", "-o", "json"],
        ["get", "jobsets", "-A", "-o", "json"],
        ["get", "jobset/new", "-o", "json"],
        ["get", "--all-types", "-o", "json"],
        ["get", "jobsets", "--phase", "Failed", "-o", "json"],
    ],
    ids=" ".join,
)
def test_get_json_validates(wlmap: Any, argv: list[str]) -> None:
    r = wlmap(argv, api=_api())
    assert r.code == 0, r.err
    doc = json.loads(r.out)
    _validator("get.schema.json").validate(doc)
    items = doc["items"] if "items" in doc else [doc]
    assert all(isinstance(i["pods"]["desired"], int) for i in items)


def test_get_schema_refuses_unknown_and_missing_keys(wlmap: Any) -> None:
    doc = json.loads(wlmap(["get", "jobset/new", "-o", "json"], api=_api()).out)
    validator = _validator("get.schema.json")
    assert validator.is_valid(doc)
    extra = copy.deepcopy(doc)
    extra["surprise"] = 1
    assert not validator.is_valid(extra)
    missing = copy.deepcopy(doc)
    del missing["metadata"]["uid"]
    assert not validator.is_valid(missing)
    wrong = copy.deepcopy(doc)
    wrong["gpus"] = "4"
    assert not validator.is_valid(wrong)


def test_definitions_json_validates(wlmap: Any) -> None:
    validator = _validator("definitions.schema.json")
    listed = json.loads(wlmap(["definitions", "-o", "json"]).out)
    assert listed["count"] == len(listed["items"]) > 40 and "invalid" not in listed
    validator.validate(listed)
    one = json.loads(wlmap(["definitions", "jobset-x-k8s-io-jobset-v1alpha2", "-o", "json"]).out)
    validator.validate(one)
    assert not validator.is_valid({"items": [], "count": 0, "surprise": True})
    bad = copy.deepcopy(one)
    bad["spec"]["structureDefinition"] = "not an object"
    assert not validator.is_valid(bad)


def test_definitions_json_with_invalid_cluster_kartas_validates(wlmap: Any) -> None:
    api = _api_with(_invalid_override(wlmap))
    r = wlmap(["definitions", "-o", "json"], api=api, env={"KUBECONFIG": "/dev/null"})
    doc = json.loads(r.out)
    assert [i["name"] for i in doc["invalid"]] == ["team-jobset"]
    _validator("definitions.schema.json").validate(doc)


@pytest.mark.parametrize(
    ("definition", "workload"),
    [
        ("jobset-x-k8s-io-jobset-v1alpha2", EXAMPLES / "jobset" / "jobset.yaml"),
        ("leaderworkerset-x-k8s-io-leaderworkerset-v1", EXAMPLES / "leaderworkerset" / "lws.yaml"),
    ],
)
def test_verify_dump_validates(wlmap: Any, tmp_path: Path, definition: str, workload: Path) -> None:
    karta = tmp_path / "k.yaml"
    karta.write_text(wlmap(["definitions", definition, "-o", "yaml"]).out)
    r = wlmap(["verify", "--definition", str(karta), str(workload), "--dump"])
    assert r.code == 0, r.err
    dumped = yaml.safe_load(r.out)
    _validator("verify-dump.schema.json").validate(dumped)
    assert dumped["gangs"] and dumped["components"]
