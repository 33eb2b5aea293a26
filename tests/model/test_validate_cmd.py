"""``wlmap validate`` in process: every exit code and the exact output lines."""

from __future__ import annotations

import io
import json
from pathlib import Path

import yaml

from tests.model.conftest import FIXTURES, base_doc
from workload_map.cli.validate_cmd import run


def _run(path: str, crd: str | None = None, stdin: str | None = None) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = run(path, crd, io.StringIO(stdin) if stdin is not None else None, out, err)
    return code, out.getvalue(), err.getvalue()


def _write(tmp_path: Path, doc: object, name: str = "k.yaml") -> str:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(doc) if not isinstance(doc, str) else doc)
    return str(path)


def test_valid_file(tmp_path: Path) -> None:
    path = _write(tmp_path, base_doc())
    assert _run(path) == (
        0,
        f"OK: {path} is a valid Karta definition (GVK: example.com/v1, Kind=Job)\n",
        "",
    )


def test_valid_from_stdin_with_warnings() -> None:
    doc = base_doc()
    doc["spec"]["structureDefinition"]["rootComponent"]["statusDefinition"]["statusMappings"] = {}
    code, out, err = _run("-", stdin=json.dumps(doc))
    assert code == 0
    assert out == "OK: - is a valid Karta definition (GVK: example.com/v1, Kind=Job)\n"
    assert err.startswith("warning: -: spec.structureDefinition.rootComponent.statusDefinition")
    assert "(no-status-mappings)" in err


def test_core_group_gvk() -> None:
    code, out, _ = _run(str(FIXTURES / "pod.json"))
    assert code == 0 and out.endswith("(GVK: /v1, Kind=Pod)\n")


def test_invalid_lists_every_finding(tmp_path: Path) -> None:
    doc = base_doc()
    child = doc["spec"]["structureDefinition"]["childComponents"][0]
    del child["ownerRef"]
    child["specDefinition"]["podTemplateSpecPath"] = ".spec | del(.x)"
    del doc["spec"]["structureDefinition"]["rootComponent"]["statusDefinition"]
    path = _write(tmp_path, doc)
    code, out, err = _run(path)
    assert code == 1
    lines = out.splitlines()
    assert lines[0] == f"INVALID: {path}"
    assert len(lines) == 4 and all(line.startswith("  spec.") for line in lines[1:])
    assert any("(root-no-status)" in line for line in lines)
    owner = next(line for line in lines if "missing-owner-ref" in line)
    assert "[component 'worker']" in owner
    jq_line = next(line for line in lines if "jq-forbidden" in line)
    assert "podTemplateSpecPath" in jq_line and "at position 8" in jq_line
    assert err == f"error: 3 finding(s) in {path}\n"


def test_unknown_fields_are_findings(tmp_path: Path) -> None:
    doc = base_doc()
    doc["spec"]["structureDefinition"]["rootComponent"]["specDefinition"] = {"podTemplatePath": "."}
    path = _write(tmp_path, doc)
    code, out, err = _run(path)
    assert code == 1
    assert (
        "spec.structureDefinition.rootComponent.specDefinition.podTemplatePath: unknown field"
        in out
    )
    assert err == f"error: 1 finding(s) in {path}\n"


def test_unreadable_and_unparseable(tmp_path: Path) -> None:
    code, out, err = _run(str(tmp_path / "missing.yaml"))
    assert (code, out) == (2, "") and err.startswith("error: cannot read") and "no such file" in err
    bad = _write(tmp_path, "a: [\n", "bad.yaml")
    code, out, err = _run(bad)
    assert (code, out) == (2, "") and "not valid YAML or JSON" in err
    code, _, err = _run(_write(tmp_path, [1, 2], "list.yaml"))
    # a top-level YAML list holds Kartas; an item that is not one is named by its place
    assert code == 2 and "list.yaml: item 1: expected a Karta object, got number 1" in err
    code, _, err = _run(_write(tmp_path, "", "empty.yaml"))
    assert code == 2 and "no document" in err
    code, _, err = _run(str(tmp_path))
    assert code == 2 and "directory" in err
    code, _, err = _run("-", stdin=None)
    assert code == 2
    code, _, err = _run("-", stdin=">")
    assert code == 2 and "expected a Karta object, got string" in err


def test_legacy_form_warns(tmp_path: Path) -> None:
    code, out, err = _run(str(FIXTURES / "legacy-resourceinterface.yaml"))
    assert code == 0 and out.startswith("OK: ")
    assert err.startswith("warning: ") and "deprecated" in err


def test_multi_document_stream() -> None:
    code, out, _ = _run(str(FIXTURES / "two-kartas.yaml"))
    assert code == 0
    # several Kartas in a file are named by their metadata.name, then their place
    assert out.splitlines() == [
        f'OK: {FIXTURES / "two-kartas.yaml"}: Karta "example-com-{k.lower()}-v1" (document {i}) '
        f"is a valid Karta definition (GVK: example.com/v1, Kind={k})"
        for i, k in ((1, "A"), (2, "B"))
    ]


def test_with_crd(tmp_path: Path) -> None:
    crd = str(FIXTURES / "trainer-crd.yaml")
    code, out, _ = _run(str(FIXTURES / "trainer-full.yaml"), crd)
    assert code == 0, out
    doc = yaml.safe_load((FIXTURES / "trainer-full.yaml").read_text())
    doc["spec"]["structureDefinition"]["childComponents"][0]["specDefinition"][
        "podTemplateSpecPath"
    ] = ".spec.role.launcher.template"
    code, out, err = _run(_write(tmp_path, doc), crd)
    assert code == 1
    assert "field 'role' does not exist at .spec (did you mean 'roles'?)" in out
    assert "at position 5" in out and "(schema-unknown-field)" in out
    code, _, err = _run(str(FIXTURES / "trainer-full.yaml"), str(tmp_path / "nope.yaml"))
    assert code == 2 and "cannot read" in err
    code, _, err = _run(str(FIXTURES / "trainer-full.yaml"), str(FIXTURES / "pod.json"))
    assert code == 2 and "no CustomResourceDefinition" in err


def test_schema_findings_and_rule_findings_together(tmp_path: Path) -> None:
    doc = base_doc()
    child = doc["spec"]["structureDefinition"]["childComponents"][0]
    child["bogus"] = 1
    child["ownerRef"] = "ghost"
    child["scaleDefinition"]["replicasPath"] = "[del(.x)] | length"
    path = _write(tmp_path, doc)
    code, out, err = _run(path)
    assert code == 1
    lines = out.splitlines()
    assert lines[0] == f"INVALID: {path}"
    assert [line.rsplit("(", 1)[1] for line in lines[1:]] == [
        "unknown-field)",
        "unknown-owner)",
        "jq-forbidden)",
    ]
    assert err == f"error: 3 finding(s) in {path}\n"


def test_wrong_version_or_kind_is_invalid_not_unreadable(tmp_path: Path) -> None:
    doc = base_doc()
    doc["apiVersion"] = "run.ai/v2"
    path = _write(tmp_path, doc)
    code, out, err = _run(path)
    assert code == 1
    assert out == (
        f"INVALID: {path}\n  apiVersion: unsupported version 'run.ai/v2' of Karta; "
        "expected run.ai/v1alpha1 (unsupported-version)\n"
    )
    assert err == f"error: 1 finding(s) in {path}\n"
    code, out, err = _run(_write(tmp_path, {"apiVersion": "v1", "kind": "Pod"}, "pod.yaml"))
    assert code == 1 and "not a Karta definition" in out and "(not-a-karta)" in out


def test_unwritable_suspend_actions(tmp_path: Path) -> None:
    doc = base_doc()
    doc["spec"]["structureDefinition"]["rootComponent"]["suspendDefinition"] = {
        "suspendActions": [{"path": ".spec.suspend | not", "value": "true"}],
        "resumeActions": [{"path": "[.spec.x]", "value": "{bad"}],
    }
    path = _write(tmp_path, doc)
    code, out, _ = _run(path)
    assert code == 1
    assert out.count("(action-path-not-writable)") == 2
    assert "resumeActions[0].value: resumeActions[0]: value '{bad' is not JSON text" in out


def test_lists_of_kartas_are_validated_item_by_item(tmp_path: Path) -> None:
    """``kubectl get kartas -o yaml`` prints a List; a YAML sequence works too; each Karta is
    named by its metadata.name and its place."""
    first, listed = list(yaml.safe_load_all((FIXTURES / "two-kartas.yaml").read_text()))
    docs = [first, *listed["items"]]
    code, out, _ = _run(_write(tmp_path, {"apiVersion": "v1", "kind": "List", "items": docs}))
    assert code == 0, out
    # the loader unwraps a List into documents
    assert 'Karta "example-com-a-v1" (document 1) is a valid' in out
    assert 'Karta "example-com-b-v1" (document 2) is a valid' in out
    code, out, _ = _run(_write(tmp_path, [docs[0], {**docs[1], "spec": {}}], "seq.yaml"))
    assert code == 1
    assert "INVALID: " in out and 'seq.yaml: Karta "example-com-b-v1" (item 2)' in out
