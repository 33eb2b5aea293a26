"""The one object reader (cli/manifests.py) and the one definition resolver (cluster/lookup.py)."""

from __future__ import annotations

import gzip
import io
from pathlib import Path

import pytest
import yaml

from workload_map.cli.exits import UsageError
from workload_map.cli.manifests import Manifest, Source, read_manifests, read_single, read_text
from workload_map.cluster import Definitions, Resolution, resolve_definition, resolve_gvk
from workload_map.model import GVK


def _stream(tmp_path: Path) -> Path:
    docs = [
        {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"}},
        {
            "apiVersion": "v1",
            "kind": "List",
            "items": [
                {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"}},
                {"kind": "Job", "metadata": {"name": "no-version"}},
            ],
        },
    ]
    path = tmp_path / "all.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    return path


def test_manifests_carry_their_gvk_and_place(tmp_path: Path) -> None:
    path = _stream(tmp_path)
    found = read_manifests(str(path), None)
    assert [m.label for m in found] == ["Service/s", "Job/j", "Job/no-version"]
    assert [m.gvk for m in found] == [GVK("", "v1", "Service"), GVK("batch", "v1", "Job"), None]
    assert [m.source.document for m in found] == [1, 2, 3]
    assert str(found[1].source) == f"{path} (document 2)"
    assert found[1].gvk_text == "batch/v1, Kind=Job" and found[2].gvk_text == "?"
    with pytest.raises(UsageError, match="the object has no apiVersion"):
        found[2].checked()
    assert found[0].checked() is found[0]


def test_a_document_that_is_not_an_object_is_named(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("apiVersion: v1\nkind: Pod\n---\n- 1\n")
    with pytest.raises(UsageError, match=r"bad.yaml: document 2 is a number"):
        read_manifests(str(path), None)


def test_single_object_stdin_and_gzip(tmp_path: Path) -> None:
    one = read_single("-", io.StringIO('{"apiVersion": "v1", "kind": "Pod"}'))
    assert one.gvk == GVK("", "v1", "Pod") and str(one.source) == "stdin"
    with pytest.raises(UsageError, match="holds 2 documents"):
        read_single("-", io.StringIO("kind: A\napiVersion: v1\n---\nkind: B\napiVersion: v1\n"))
    with pytest.raises(UsageError, match="no standard input"):
        read_text("-", None)
    packed = tmp_path / "pod.yaml.gz"
    packed.write_bytes(gzip.compress(b"apiVersion: v1\nkind: Pod\n"))
    assert read_single(str(packed), None).obj == {"apiVersion": "v1", "kind": "Pod"}
    broken = tmp_path / "cut.yaml.gz"
    broken.write_bytes(gzip.compress(b"apiVersion: v1\nkind: Pod\n")[:12])
    with pytest.raises(UsageError, match="cannot read"):
        read_text(str(broken), None)


def test_manifest_of_a_controlled_object() -> None:
    owned = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "j", "ownerReferences": [{"kind": "JobSet", "controller": True}]},
    }
    assert Manifest.of(owned, Source("f")).controlled
    assert not Manifest.of({"apiVersion": "batch/v1", "kind": "Job"}, Source("f")).controlled


def test_resolver_exact_other_versions_and_fallback() -> None:
    definitions = Definitions.builtin()
    exact = resolve_gvk(GVK("agents.x-k8s.io", "v1alpha1", "Sandbox"), definitions)
    assert isinstance(exact, Resolution) and exact.exact and exact.note is None
    assert exact.definition.name == "agents-x-k8s-io-sandbox-v1alpha1"
    # a version nothing was written for: the most stable definition of the kind, with a note
    wanted = GVK("agents.x-k8s.io", "v1", "Sandbox")
    fallback = resolve_gvk(wanted, definitions)
    assert fallback is not None and not fallback.exact and fallback.wanted == wanted
    assert fallback.definition.name == "agents-x-k8s-io-sandbox-v1beta1"
    assert fallback.note == (
        "no definition for agents.x-k8s.io/v1, Kind=Sandbox; using "
        "agents-x-k8s-io-sandbox-v1beta1 (written for agents.x-k8s.io/v1beta1)"
    )
    assert resolve_gvk(wanted, definitions, exact=True) is None
    # the versions a cluster also serves are tried, in order, before any fallback
    served = resolve_gvk(wanted, definitions, other_versions=["v2", "v1alpha1"])
    assert served is not None and served.exact and served.wanted.version == "v1alpha1"
    assert resolve_gvk(GVK("example.com", "v1", "Nope"), definitions) is None
    # the library helper answers the same
    obj = {"apiVersion": "agents.x-k8s.io/v1", "kind": "Sandbox"}
    assert resolve_definition(obj, definitions=definitions) is fallback.definition


def test_describe_file_warns_on_the_fallback(wlmap, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    karta_doc = yaml.safe_load(
        wlmap(["definitions", "agents-x-k8s-io-sandbox-v1beta1", "-o", "yaml"]).out
    )
    assert karta_doc["kind"] == "Karta"
    obj = {
        "apiVersion": "agents.x-k8s.io/v1",
        "kind": "Sandbox",
        "metadata": {"name": "box", "namespace": "ml"},
        "spec": {"podTemplate": {"spec": {"containers": [{"name": "c", "image": "x"}]}}},
    }
    path = tmp_path / "box.yaml"
    path.write_text(yaml.safe_dump(obj))
    r = wlmap(["describe", "-f", str(path), "-o", "json"])
    assert r.code == 0, r.err
    assert yaml.safe_load(r.out)["definition"]["name"] == "agents-x-k8s-io-sandbox-v1beta1"
    assert "no definition for agents.x-k8s.io/v1, Kind=Sandbox; using" in r.err


def test_timestamps_stay_text(wlmap, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Unquoted YAML timestamps are read as the API server sends them: strings."""
    text = (
        "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: pi\n"
        "  creationTimestamp: 2026-01-01T00:00:00Z\n"
        "spec:\n  template:\n    spec:\n      containers: [{name: c, image: x}]\n"
        "status:\n  startTime: 2026-01-01T00:00:00Z\n  conditions:\n"
        "  - {type: Complete, status: 'True', lastTransitionTime: 2026-01-01T00:10:00Z}\n"
    )
    path = tmp_path / "job.yaml"
    path.write_text(text)
    (found,) = read_manifests(str(path), None)
    assert found.obj["metadata"]["creationTimestamp"] == "2026-01-01T00:00:00Z"
    assert found.obj["status"]["conditions"][0]["lastTransitionTime"] == "2026-01-01T00:10:00Z"
    quoted = tmp_path / "quoted.yaml"
    quoted.write_text(text.replace("2026-01-01T00:00:00Z", '"2026-01-01T00:00:00Z"'))
    assert read_manifests(str(quoted), None)[0].obj == found.obj
    r = wlmap(["describe", "-f", str(path), "-o", "json"])
    assert r.code == 0 and yaml.safe_load(r.out)["phases"] == ["Completed"]


def test_one_document_parser_for_objects_and_kartas(tmp_path: Path) -> None:
    """Objects and Kartas are split by the same parser: JSON values one after another (as
    ``jq -c`` prints them), YAML streams and Lists; bad text names file, line and column."""
    from workload_map.model.load import KartaLoadError, parse_documents

    stream = '{"apiVersion": "v1", "kind": "Pod"}\n{"apiVersion": "batch/v1", "kind": "Job"}\n'
    assert [d["kind"] for d in parse_documents(stream)] == ["Pod", "Job"]
    path = tmp_path / "s.json"
    path.write_text(stream)
    assert [m.label for m in read_manifests(str(path), None)] == ["Pod/?", "Job/?"]
    bad = tmp_path / "bad.yaml"
    bad.write_text("a: [1\n")
    with pytest.raises(KartaLoadError) as caught:
        parse_documents(bad.read_text())
    assert (caught.value.line, caught.value.column) == (2, 1) and caught.value.detail
    with pytest.raises(UsageError, match=r"bad.yaml: not valid YAML or JSON \(line 2, column 1\)"):
        read_manifests(str(bad), None)
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(UsageError, match=r"deep\.json: not usable: the document nests too deeply"):
        read_manifests(str(deep), None)
