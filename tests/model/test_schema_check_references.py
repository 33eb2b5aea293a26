"""``$name`` paths checked against the schema of the kind a reference reads (``validate --crd``
with that kind's CRD): a typo under ``$runtime`` is a finding naming the referenced kind, the
same path valid in one of several kinds is not, and nothing is guessed where no CRD is given."""

from __future__ import annotations

import copy
import gzip
from pathlib import Path
from typing import Any

import pytest
import yaml

from workload_map.catalog import catalog
from workload_map.model import dump_karta, load_karta
from workload_map.model.schema_check import check_references_against_crds


def crd(group: str, kind: str, spec_props: dict[str, Any], version: str = "v1") -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{kind.lower()}s.{group}"},
        "spec": {
            "group": group,
            "names": {"kind": kind, "plural": f"{kind.lower()}s"},
            "scope": "Namespaced",
            "versions": [
                {
                    "name": version,
                    "served": True,
                    "storage": True,
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "properties": {
                                "spec": {"type": "object", "properties": spec_props},
                            },
                        }
                    },
                }
            ],
        },
    }


POOL = crd("example.com", "Pool", {"size": {"type": "integer"}, "zone": {"type": "string"}})
BIGPOOL = crd("example.com", "BigPool", {"size": {"type": "integer"}, "racks": {"type": "integer"}})
MEMBER = crd("example.com", "Member", {"weight": {"type": "integer"}})


def karta(replicas: str, *, kinds: tuple[str, ...] = ("Pool",), listed: bool = False) -> Any:
    target = {"kinds": [{"group": "example.com", "version": "v1", "kind": k} for k in kinds]}
    if len(kinds) > 1:
        target["kindPath"] = ".spec.poolKind"
    reference: dict[str, Any] = {"name": "pool"}
    if listed:
        reference["list"] = {**target, "matchLabels": {"team": "a"}}
    else:
        reference["lookup"] = {**target, "namePath": ".spec.pool"}
    return load_karta(
        {
            "apiVersion": "run.ai/v1alpha1",
            "kind": "Karta",
            "metadata": {"name": "w"},
            "spec": {
                "structureDefinition": {
                    "rootComponent": {
                        "name": "w",
                        "kind": {"group": "example.com", "version": "v1", "kind": "Work"},
                    },
                    "childComponents": [
                        {
                            "name": "p",
                            "kind": {"group": "", "version": "v1", "kind": "Pod"},
                            "ownerRef": "w",
                            "scaleDefinition": {"replicasPath": replicas},
                        }
                    ],
                    "references": [reference],
                }
            },
        }
    )


def _messages(found: list[Any]) -> list[str]:
    return [f.message for f in found]


def test_a_valid_path_has_no_finding() -> None:
    assert check_references_against_crds(karta("$pool.spec.size // 1"), [POOL]) == []


def test_a_typo_under_the_reference_names_the_referenced_kind() -> None:
    found = check_references_against_crds(karta(".spec.n // $pool.spec.sise"), [POOL])
    assert [(f.path, f.code, f.offset) for f in found] == [
        (
            "spec.structureDefinition.childComponents[0].scaleDefinition.replicasPath",
            "schema-unknown-field",
            21,
        )
    ]
    assert _messages(found) == [
        "'.spec.n // $pool.spec.sise': field 'sise' does not exist at $pool.spec "
        "(did you mean 'size'?) in Pool example.com/v1 (reference 'pool')"
    ]
    assert all(f.is_error for f in found)
    found = check_references_against_crds(karta("$pool.spec.zone.x"), [POOL])
    assert _messages(found) == [
        "'$pool.spec.zone.x': cannot read field 'x': $pool.spec.zone is a string in Pool "
        "example.com/v1 (reference 'pool')"
    ]


def test_a_list_reference_is_an_array_of_its_kind() -> None:
    ok = karta("[$pool[].spec.size] | add", listed=True)
    assert check_references_against_crds(ok, [POOL]) == []
    bad = karta("$pool.spec.size", listed=True)
    assert _messages(check_references_against_crds(bad, [POOL])) == [
        "'$pool.spec.size': cannot read field 'spec': $pool is an array (iterate it with [] "
        "first) in Pool example.com/v1 (reference 'pool')"
    ]


def test_a_path_valid_in_one_of_several_kinds_is_not_reported() -> None:
    two = ("Pool", "BigPool")
    assert (
        check_references_against_crds(karta("$pool.spec.racks", kinds=two), [POOL, BIGPOOL]) == []
    )
    found = check_references_against_crds(karta("$pool.spec.nope", kinds=two), [POOL, BIGPOOL])
    assert [m.split(" in ")[1] for m in _messages(found)] == [
        "Pool or BigPool example.com/v1 (reference 'pool')"
    ]
    # only the kinds whose CRD is given are checked: racks is not in Pool's
    assert len(check_references_against_crds(karta("$pool.spec.racks", kinds=two), [POOL])) == 1


def test_nothing_is_checked_without_the_referenced_kinds_crd() -> None:
    assert check_references_against_crds(karta("$pool.spec.nope"), [MEMBER]) == []
    assert check_references_against_crds(karta("$pool.spec.nope"), []) == []


def test_a_variable_rebound_by_the_path_is_not_the_reference() -> None:
    rebound = karta(".spec as $pool | $pool.anything // 1")
    assert check_references_against_crds(rebound, [POOL]) == []
    destructured = karta(".spec as {a: [$pool]} | $pool.anything // 1")
    assert check_references_against_crds(destructured, [POOL]) == []


def test_workload_paths_are_not_checked_against_the_referenced_kind() -> None:
    assert check_references_against_crds(karta(".spec.nope // $pool.spec.size"), [POOL]) == []


@pytest.mark.shared
def test_the_catalog_trainjob_paths_exist_in_the_trainer_runtime_crds(shared_dir: Path) -> None:
    folder = shared_dir / "realworld" / "kubeflow-trainer-v2"
    crds = [
        yaml.safe_load(
            gzip.decompress((folder / f"trainer.kubeflow.org_{name}.yaml.gz").read_bytes())
        )
        for name in ("clustertrainingruntimes", "trainingruntimes")
    ]
    trainjob = catalog.get("trainer.kubeflow.org", "v1alpha1", "TrainJob")
    assert check_references_against_crds(trainjob, crds) == []
    # the same definition with one typo under $runtime: found, in both runtime kinds
    doc = copy.deepcopy(dump_karta(trainjob))
    text = yaml.safe_dump(doc).replace(
        "$runtime.spec.mlPolicy.numNodes", "$runtime.spec.mlPolicy.numNode"
    )
    found = check_references_against_crds(load_karta(yaml.safe_load(text)), crds)
    assert len(found) == 1
    assert (
        "field 'numNode' does not exist at $runtime.spec.mlPolicy (did you mean 'numNodes'?)"
        in (found[0].message)
    )
    assert "in ClusterTrainingRuntime or TrainingRuntime trainer.kubeflow.org/v1alpha1" in (
        found[0].message
    )


def test_validate_crd_checks_references_with_the_root_crd_or_without_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import io

    from workload_map.cli.main import main

    work = crd("example.com", "Work", {"pool": {"type": "string"}, "n": {"type": "integer"}})
    definition = tmp_path / "karta.yaml"
    definition.write_text(yaml.safe_dump(dump_karta(karta(".spec.n // $pool.spec.sise"))))

    def validate(*crds: dict[str, Any]) -> tuple[int, str, str]:
        path = tmp_path / "crds.yaml"
        path.write_text(yaml.safe_dump_all(list(crds)))
        out, err = io.StringIO(), io.StringIO()
        code = main(
            ["validate", str(definition), "--crd", str(path)],
            io.StringIO(),
            out,
            err,
            environ={"HOME": str(tmp_path)},
        )
        return code, out.getvalue(), err.getvalue()

    code, out, err = validate(work, POOL)  # both in one file
    assert code == 1, err
    assert "field 'sise' does not exist at $pool.spec" in out and "in Pool example.com/v1" in out
    code, out, err = validate(POOL)  # only the referenced kind's: its paths still checked
    assert code == 1 and "field 'sise'" in out
    assert "holds no CRD of Work; only the paths reading references were checked" in err
    code, out, err = validate(work)  # only the root's: the references are not guessed
    assert "sise" not in out, out


def test_validate_crd_is_repeatable(tmp_path: Path) -> None:
    """``--crd`` once per file: the root kind's CRD and the referenced kind's in two files
    check as one file holding both; a file among them without a CRD is named."""
    import io

    from workload_map.cli.main import main

    work = crd("example.com", "Work", {"pool": {"type": "string"}, "n": {"type": "integer"}})
    definition = tmp_path / "karta.yaml"
    definition.write_text(yaml.safe_dump(dump_karta(karta(".spec.nn // $pool.spec.sise"))))
    files = {}
    for name, doc in (("work.yaml", work), ("pool.yaml", POOL), ("other.yaml", {"kind": "Pod"})):
        files[name] = tmp_path / name
        files[name].write_text(yaml.safe_dump(doc))

    def validate(*names: str) -> tuple[int, str, str]:
        out, err = io.StringIO(), io.StringIO()
        words = [w for n in names for w in ("--crd", str(files[n]))]
        code = main(
            ["validate", str(definition), *words],
            io.StringIO(),
            out,
            err,
            environ={"HOME": str(tmp_path)},
        )
        return code, out.getvalue(), err.getvalue()

    code, out, err = validate("work.yaml", "pool.yaml")
    assert code == 1, err
    # the root's paths against Work (the first file), $pool's against Pool (the second)
    assert "field 'nn' does not exist at .spec" in out, out
    assert "field 'sise' does not exist at $pool.spec" in out, out
    code, out, err = validate("pool.yaml")  # the second file alone: the references only
    assert code == 1 and "'sise'" in out and "'nn'" not in out, out
    assert f"{files['pool.yaml']} holds no CRD of Work" in err
    code, out, err = validate("work.yaml", "other.yaml")
    assert code == 2 and out == "", out
    assert f"{files['other.yaml']} contains no CustomResourceDefinition" in err
