"""Every command that reads objects through a definition maps engine errors the same way, and
lets a bug reach main()'s boundary ("internal error"), never a "cannot describe" message."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.cli.conftest import EXAMPLES
from tests.cli.fake_cluster import JOBSET, FakeAPI, obj
from workload_map.engine import Workload
from workload_map.engine.errors import ExtractionError

JOBSET_FILE = EXAMPLES / "jobset" / "jobset.yaml"


def _raise(error: Exception) -> Any:
    def describe(self: Workload, **_: Any) -> dict[str, Any]:
        raise error

    return describe


def _read_by(argv: list[str]) -> str:
    """The engine method the command reads a workload through: ``get`` shows the shared
    evaluation (``summary``), the others the describe view."""
    return "summary" if argv[0] == "get" else "describe"


def _api() -> FakeAPI:
    api = FakeAPI(namespace="ml").serve(JOBSET)
    api.add(obj("jobset.x-k8s.io/v1alpha2", "JobSet", "train", "ml", spec={"replicatedJobs": []}))
    return api


def _verify_args(wlmap: Any, tmp_path: Path) -> list[str]:
    karta = tmp_path / "k.yaml"
    karta.write_text(wlmap(["definitions", "jobset-x-k8s-io-jobset-v1alpha2", "-o", "yaml"]).out)
    return ["verify", "--definition", str(karta), str(JOBSET_FILE)]


@pytest.mark.parametrize("command", ["get", "describe-type", "describe", "verify"])
def test_a_bug_surfaces_as_one(wlmap: Any, monkeypatch: Any, tmp_path: Path, command: str) -> None:
    argv = {
        "get": ["get", "jobsets"],
        "describe-type": ["describe", "jobsets"],
        "describe": ["describe", "jobset/train"],
    }.get(command) or _verify_args(wlmap, tmp_path)
    monkeypatch.setattr(Workload, _read_by(argv), _raise(TypeError("unexpected None")))
    r = wlmap(argv, api=_api())
    assert r.code == 1
    assert "internal error (a bug in wlmap): TypeError: unexpected None" in r.err
    assert "cannot describe" not in r.err and "could not resolve" not in r.err


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["get", "jobsets"], "warning: could not resolve JobSet/train: boom at .spec"),
        (
            ["describe", "jobsets"],
            "cannot describe JobSet/train with definition jobset-x-k8s-io-jobset-v1alpha2 "
            "(catalog): boom at .spec",
        ),
        (
            ["describe", "jobset/train"],
            "cannot describe JobSet/train with definition jobset-x-k8s-io-jobset-v1alpha2 "
            "(catalog): boom at .spec",
        ),
    ],
)
def test_an_engine_error_names_object_and_definition(
    wlmap: Any, monkeypatch: Any, argv: list[str], expected: str
) -> None:
    monkeypatch.setattr(Workload, _read_by(argv), _raise(ExtractionError("boom at .spec")))
    r = wlmap(argv, api=_api())
    assert expected in r.err
    assert "bug" not in r.err


def test_verify_names_the_file_on_an_engine_error(
    wlmap: Any, monkeypatch: Any, tmp_path: Path
) -> None:
    argv = _verify_args(wlmap, tmp_path)
    monkeypatch.setattr(Workload, "describe", _raise(ExtractionError("boom at .spec")))
    r = wlmap(argv)
    assert r.code == 1
    assert f"{JOBSET_FILE}: cannot describe JobSet/llm-pretrain with definition" in r.err
    assert "boom at .spec" in r.err and "bug" not in r.err


def test_file_errors_name_the_file_and_document(
    wlmap: Any, monkeypatch: Any, tmp_path: Path
) -> None:
    service = "apiVersion: v1\nkind: Service\nmetadata: {name: s}\n"
    job = (
        "apiVersion: batch/v1\nkind: Job\nmetadata: {name: pi}\n"
        "spec: {template: {spec: {containers: [{name: c, image: x}]}}}\n"
    )
    path = tmp_path / "app.yaml"
    path.write_text(service + "---\n" + job)
    monkeypatch.setattr(Workload, "describe", _raise(ExtractionError("boom at .spec")))
    r = wlmap(["describe", "-f", str(path)])
    assert r.code == 1
    assert f"cannot describe Job/pi in {path} (document 2) with definition batch-job-v1" in r.err
    monkeypatch.undo()
    bad = tmp_path / "bad.yaml"
    bad.write_text(service + "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: [1]\n")
    r = wlmap(["describe", "-f", str(bad), "pod/p"])
    assert r.code == 2 and f"{bad} (document 2): spec must be a mapping" in r.err
