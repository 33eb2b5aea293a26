"""Every jq path of every definition exists in its target's schema, with the type it needs.

Custom kinds are checked against the upstream CRD in ``../shared/realworld`` (the served
version the definition names); built-in kinds against the hand-written schemas of
``builtin_schemas.py`` (and, in the integration suite, the API server's OpenAPI). Kinds with no
schema here are listed in ``NO_SCHEMA`` and must be covered by hand-written manifests instead.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.catalog.builtin_schemas import BUILTIN, as_crd
from tests.catalog.conftest import FIXTURES, UPSTREAM, crds_by_gvk, iter_objects, realworld
from workload_map.catalog import catalog
from workload_map.model import FindingCode, Karta, check_against_crd, schema_types_at
from workload_map.model.shape import iter_jq_fields

# Kinds whose CRD is not stored beside the project; hand-written fixtures cover them.
NO_SCHEMA = {
    "agents-x-k8s-io-sandbox-v1alpha1",
    "agents-x-k8s-io-sandbox-v1beta1",
    "kubeflow-org-notebook-v1",
    "kubeflow-org-notebook-v1alpha1",
    "kubeflow-org-notebook-v1beta1",
    "kubevirt-io-virtualmachine-v1",
    "kubevirt-io-virtualmachineinstance-v1",
    "machinelearning-seldon-io-seldondeployment-v1",
    "machinelearning-seldon-io-seldondeployment-v1alpha2",
    "machinelearning-seldon-io-seldondeployment-v1alpha3",
    "nvidia-com-dynamographdeployment-v1beta1",
    "slinky-slurm-net-nodeset-v1alpha1",
    "sparkoperator-k8s-io-scheduledsparkapplication-v1beta2",
    "tekton-dev-pipelinerun-v1",
    "tekton-dev-taskrun-v1",
}

# Kinds whose published CRD keeps the schema open (no openAPIV3Schema): the CRD is checked for
# the group, kind and served version only; hand-written fixtures written from the Go types cover
# the paths.
OPEN_SCHEMA = {"kubeflow-org-scheduledworkflow-v1beta1"}

# What each kind of path must address (OpenAPI types; "unknown" = computed or schemaless).
NUMBER = {"integer", "number", "string"}
EXPECTED_TYPES: dict[str, set[str]] = {
    "podTemplateSpecPath": {"object"},
    "podSpecPath": {"object"},
    "metadataPath": {"object"},
    "containersPath": {"array"},
    "containerPath": {"object"},
    "resourcesPath": {"object"},
    "resourceClaimsPath": {"array"},
    "labelsPath": {"object"},
    "annotationsPath": {"object"},
    "podAffinityPath": {"object"},
    "nodeAffinityPath": {"object"},
    "schedulerNamePath": {"string"},
    "priorityClassNamePath": {"string"},
    "imagePath": {"string"},
    "replicasPath": NUMBER,
    "minReplicasPath": NUMBER,
    "maxReplicasPath": NUMBER,
    "instanceIdPath": {"string", "integer"},
}


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "object" if isinstance(value, dict) else "array"


_CRDS: dict[tuple[str, str, str], tuple[str, dict[str, Any]]] | None = None


def _target(group: str, version: str, kind: str) -> tuple[str, dict[str, Any]] | None:
    global _CRDS
    if (group, version, kind) in BUILTIN:
        schema = BUILTIN[(group, version, kind)]
        return "hand-written built-in schema", as_crd(group, version, kind, schema)
    if _CRDS is None:
        # ../shared/realworld wins over the CRDs kept with the tests (tests/catalog/upstream).
        root = realworld()
        _CRDS = {**crds_by_gvk(UPSTREAM), **(crds_by_gvk(root) if root is not None else {})}
    return _CRDS.get((group, version, kind))


def type_problems(karta: Karta, crd: dict[str, Any], version: str) -> list[str]:
    """Paths whose schema type does not fit the field (a template must be an object...)."""
    problems = []
    for field in iter_jq_fields(karta):
        if field.target != "workload":
            continue
        wanted = EXPECTED_TYPES.get(field.key)
        if field.key == "path" and field.path.endswith("phaseDefinition.path"):
            wanted = {"string"}
        elif field.key == "path" and field.path.endswith("conditionsDefinition.path"):
            wanted = {"array"}
        elif field.key == "path" and "Actions[" in field.path:
            actions = (
                karta.component(field.component or "").suspend_definition
                if field.component
                else None
            )
            assert actions is not None
            index = int(field.path.rsplit("[", 1)[1].split("]")[0])
            pool = (
                actions.suspend_actions
                if "suspendActions" in field.path
                else actions.resume_actions
            )
            wanted = {_json_type(json.loads(pool[index].value))}
            if wanted == {"integer"}:
                wanted = NUMBER
        if wanted is None:
            continue
        types = schema_types_at(crd, field.expression, version=version) - {"unknown", "null"}
        if types - wanted:
            problems.append(
                f"{field.path}: '{field.expression}' gives {sorted(types)}, needs {sorted(wanted)}"
            )
    return problems


@pytest.mark.parametrize("name", catalog.names())
def test_paths_exist_with_the_right_types(name: str) -> None:
    entry = catalog.entry(name)
    karta = catalog.by_name(name)
    assert entry is not None and karta is not None
    found = _target(entry.group, entry.version, entry.kind)
    if name in NO_SCHEMA:
        assert found is None, f"{name} has a schema now: take it out of NO_SCHEMA"
        pytest.skip(f"no schema for {entry.api_version} {entry.kind}: covered by fixtures only")
    if found is None:
        pytest.skip("../shared is absent: upstream CRDs unavailable")
    source, crd = found
    findings = check_against_crd(karta, crd)
    if name in OPEN_SCHEMA:
        assert [f.code for f in findings] == [FindingCode.CRD_NO_SCHEMA], findings
        pytest.skip(f"{source} has no schema: paths covered by fixtures only")
    assert findings == [], f"against {source}:\n" + "\n".join(
        f"{f.path}: {f.message}" for f in findings
    )
    problems = type_problems(karta, crd, entry.version)
    assert problems == [], f"against {source}:\n" + "\n".join(problems)


@pytest.mark.parametrize("name", sorted(NO_SCHEMA))
def test_kinds_without_schema_have_hand_written_fixtures(name: str) -> None:
    entry = catalog.entry(name)
    assert entry is not None
    covered = {(obj["apiVersion"], obj["kind"]) for _, obj in iter_objects(FIXTURES)}
    if entry.derived:
        source = catalog.entry(entry.source.removesuffix(".yaml"))
        assert source is not None
        entry = source
    assert (entry.api_version, entry.kind) in covered, f"no fixture under {Path(FIXTURES).name}/"
