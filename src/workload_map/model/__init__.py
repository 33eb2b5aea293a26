"""The Karta definition model: typed classes, loading/dumping, validation and the CRD.

A Karta is the contract between whoever knows a workload type and every tool handling it; this
package is the single place that turns user input into that contract and explains what is wrong.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from workload_map.model.findings import Finding, FindingCode
    from workload_map.model.load import (
        KartaLoadError,
        LenientLoad,
        dump_karta,
        load_karta,
        load_karta_leniently,
        load_kartas,
    )
    from workload_map.model.phases import Phase
    from workload_map.model.schema_check import (
        check_against_crd,
        check_references_against_crds,
        schema_nodes_at,
        schema_types_at,
    )
    from workload_map.model.types import (
        API_VERSION,
        GVK,
        SEVERITY_ORDER,
        STATUS_ORDER,
        Action,
        Component,
        ComponentInstanceSelector,
        ComponentTypeSelector,
        ConditionMatcher,
        ConditionsDefinition,
        ExpressionMatcher,
        FragmentedPodSpecDefinition,
        GangScheduling,
        Karta,
        KartaCondition,
        KartaSpec,
        KartaStatus,
        Member,
        OptimizationInstructions,
        PhaseDefinition,
        PodGroupDefinition,
        PodGroupMapping,
        PodSelector,
        Reference,
        ReferenceList,
        ReferenceLookup,
        ReplicaSelector,
        ScaleDefinition,
        SpecDefinition,
        StatusDefinition,
        StatusMappings,
        StatusMatcher,
        StructureDefinition,
        SubGroup,
        SuspendDefinition,
        Topology,
    )
    from workload_map.model.validation import is_valid, validate, validate_loaded

__all__ = [
    "API_VERSION",
    "GVK",
    "SEVERITY_ORDER",
    "STATUS_ORDER",
    "Action",
    "Component",
    "ComponentInstanceSelector",
    "ComponentTypeSelector",
    "ConditionMatcher",
    "ConditionsDefinition",
    "ExpressionMatcher",
    "Finding",
    "FindingCode",
    "FragmentedPodSpecDefinition",
    "GangScheduling",
    "Karta",
    "KartaCondition",
    "KartaLoadError",
    "KartaSpec",
    "KartaStatus",
    "LenientLoad",
    "Member",
    "OptimizationInstructions",
    "Phase",
    "PhaseDefinition",
    "PodGroupDefinition",
    "PodGroupMapping",
    "PodSelector",
    "Reference",
    "ReferenceList",
    "ReferenceLookup",
    "ReplicaSelector",
    "ScaleDefinition",
    "SpecDefinition",
    "StatusDefinition",
    "StatusMappings",
    "StatusMatcher",
    "StructureDefinition",
    "SubGroup",
    "SuspendDefinition",
    "Topology",
    "check_against_crd",
    "check_references_against_crds",
    "dump_karta",
    "is_valid",
    "load_karta",
    "load_karta_leniently",
    "load_kartas",
    "schema_nodes_at",
    "schema_types_at",
    "validate",
    "validate_loaded",
]

#: each public name and the module that defines it, imported on first use (PEP 562): a
#: command that only loads a definition skips the validator, the CRD schema checks and
#: what they import (the jq safety rules among them)
_HOMES = {
    "API_VERSION": "types",
    "Action": "types",
    "Component": "types",
    "ComponentInstanceSelector": "types",
    "ComponentTypeSelector": "types",
    "ConditionMatcher": "types",
    "ConditionsDefinition": "types",
    "ExpressionMatcher": "types",
    "Finding": "findings",
    "FindingCode": "findings",
    "FragmentedPodSpecDefinition": "types",
    "GVK": "types",
    "GangScheduling": "types",
    "Karta": "types",
    "KartaCondition": "types",
    "KartaLoadError": "load",
    "KartaSpec": "types",
    "KartaStatus": "types",
    "LenientLoad": "load",
    "Member": "types",
    "OptimizationInstructions": "types",
    "Phase": "phases",
    "PhaseDefinition": "types",
    "PodGroupDefinition": "types",
    "PodGroupMapping": "types",
    "PodSelector": "types",
    "Reference": "types",
    "ReferenceList": "types",
    "ReferenceLookup": "types",
    "ReplicaSelector": "types",
    "SEVERITY_ORDER": "types",
    "STATUS_ORDER": "types",
    "ScaleDefinition": "types",
    "SpecDefinition": "types",
    "StatusDefinition": "types",
    "StatusMappings": "types",
    "StatusMatcher": "types",
    "StructureDefinition": "types",
    "SubGroup": "types",
    "SuspendDefinition": "types",
    "Topology": "types",
    "check_against_crd": "schema_check",
    "check_references_against_crds": "schema_check",
    "dump_karta": "load",
    "is_valid": "validation",
    "load_karta": "load",
    "load_karta_leniently": "load",
    "load_kartas": "load",
    "schema_nodes_at": "schema_check",
    "schema_types_at": "schema_check",
    "validate": "validation",
    "validate_loaded": "validation",
}


def __getattr__(name: str) -> Any:
    try:
        module = _HOMES[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    value = getattr(import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
