"""The committed JSON Schemas are what the typed views give, and the outputs validate against them."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from tests.engine.conftest import FIXTURES, workload
from workload_map.engine.schemas import SCHEMAS, Schema, main, render

ROOT = Path(__file__).resolve().parents[2]
NAMES = sorted(p.name for p in FIXTURES.iterdir() if p.is_dir())


def _validator(file: str) -> jsonschema.protocols.Validator:
    schema = next(s for s in SCHEMAS if s.file == file).document()
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


@pytest.mark.parametrize("schema", SCHEMAS, ids=lambda s: s.file)
def test_committed_schema_is_generated_from_the_types(schema: Schema) -> None:
    committed = ROOT / "schemas" / schema.file
    assert committed.read_text(encoding="utf-8") == render(schema), "run `make schemas`"


def test_check_mode_reports_a_stale_file(tmp_path: Path) -> None:
    assert main(["--out", str(tmp_path)]) == 0
    assert main(["--out", str(tmp_path), "--check"]) == 0
    (tmp_path / SCHEMAS[0].file).write_text("{}\n", encoding="utf-8")
    assert main(["--out", str(tmp_path), "--check"]) == 1


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("with_pods", [True, False])
def test_describe_and_resources_validate(name: str, with_pods: bool) -> None:
    wl = workload(name, with_pods=with_pods)
    view = wl.describe(explain=True)
    _validator("describe.schema.json").validate(view)
    assert ("explain" in view) and (view["fileMode"] is wl.file_mode)
    _validator("resources.schema.json").validate(wl.resources())


def test_schema_refuses_unknown_and_missing_keys() -> None:
    view: dict[str, Any] = workload(NAMES[0]).describe()
    validator = _validator("describe.schema.json")
    extra = copy.deepcopy(view)
    extra["components"][0]["surprise"] = 1
    assert not validator.is_valid(extra)
    missing = copy.deepcopy(view)
    del missing["pods"]["current"]
    assert not validator.is_valid(missing)
    wrong = copy.deepcopy(view)
    wrong["fileMode"] = "yes"
    assert not validator.is_valid(wrong)


@pytest.mark.parametrize(
    "golden", sorted((ROOT / "tests" / "cli" / "golden").glob("describe-*.json")), ids=str
)
def test_cli_describe_goldens_validate(golden: Path) -> None:

    _validator("describe.schema.json").validate(json.loads(golden.read_text(encoding="utf-8")))
