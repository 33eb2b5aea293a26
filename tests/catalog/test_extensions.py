"""The ``workload-map.run.ai/`` gang annotations: read, checked, and used by the catalog."""

from __future__ import annotations

import copy
from typing import Any

from workload_map import load_karta, validate
from workload_map.catalog import catalog
from workload_map.model.extensions import CREATED_LATER, GANG_MIN_MEMBER, check, gang_extensions


def _karta(annotations: dict[str, str]) -> Any:
    base = catalog.by_name("kubeflow-org-mpijob-v2beta1")
    assert base is not None
    doc: dict[str, Any] = {
        "apiVersion": "run.ai/v1alpha1",
        "kind": "Karta",
        "metadata": {"name": "probe", "annotations": annotations},
        "spec": {
            "structureDefinition": {
                "rootComponent": {
                    "name": "job",
                    "kind": {"group": "example.com", "version": "v1", "kind": "Job"},
                    "statusDefinition": {"statusMappings": {}},
                },
                "childComponents": [
                    {
                        "name": "worker",
                        "ownerRef": "job",
                        "specDefinition": {"podTemplateSpecPath": ".spec.template"},
                    },
                    {"name": "grouping", "ownerRef": "job"},
                ],
            },
            "optimizationInstructions": {"gangScheduling": {"podGroup": {"name": "job"}}},
        },
    }
    return load_karta(copy.deepcopy(doc))


def test_catalog_definitions_carry_valid_extensions() -> None:
    seen = 0
    for karta in catalog.list():
        ext = gang_extensions(karta)
        seen += not ext.empty
        assert [str(f) for f in check(karta)] == []
    assert seen >= 8  # the Kubeflow kinds, MPI v2's launcher, Volcano, Spark


def test_mpi_v2_names_its_late_launcher() -> None:
    karta = catalog.by_name("kubeflow-org-mpijob-v2beta1")
    ext = gang_extensions(karta)
    assert ext.min_member == ".spec.runPolicy.schedulingPolicy.minAvailable"
    assert "launcher" in ext.created_later["replica"]


def test_check_reports_bad_expressions_and_components() -> None:
    karta = _karta(
        {
            GANG_MIN_MEMBER: ".spec.minAvailable |",
            CREATED_LATER + "nosuch": "true",
            CREATED_LATER + "grouping": "true",
            CREATED_LATER + "worker": "del(.x)",
            "workload-map.run.ai/gang-min-members": ".x",
        }
    )
    codes = sorted((f.code, f.severity) for f in check(karta))
    assert codes == [
        ("extension-component", "error"),
        ("extension-component", "error"),
        ("extension-unknown", "warning"),
        ("jq-forbidden", "error"),
        ("jq-parse-error", "error"),
    ]


def test_a_clean_extension_passes() -> None:
    karta = _karta({GANG_MIN_MEMBER: ".spec.minAvailable", CREATED_LATER + "worker": "true"})
    assert check(karta) == []
    assert [f for f in validate(karta) if f.is_error] == []
