"""The public API: one name per object, typed, and ``__all__`` of every public package pinned.

Adding or removing a public name is a decision: update the list here with it.
"""

from __future__ import annotations

import importlib
import inspect
import subprocess
import sys
import types
from typing import Any

import pytest

PINNED: dict[str, list[str]] = {
    "workload_map": [
        "WlmapError",
        "Workload",
        "catalog",
        "dump_karta",
        "jq",
        "load_karta",
        "validate",
    ],
    "workload_map.errors": ["WlmapError"],
    "workload_map.catalog": [
        "CHECKED_AGAINST_ANNOTATION",
        "Catalog",
        "CatalogEntry",
        "CatalogError",
        "DERIVED_FROM_ANNOTATION",
        "GROUP_LABEL",
        "KIND_LABEL",
        "SERVED_VERSIONS_ANNOTATION",
        "VERSION_LABEL",
        "as_cluster_objects",
        "by_name",
        "catalog",
        "find",
        "for_api_version",
        "get",
        "kartas",
        "names",
        "resolve",
        "slug",
        "version_priority",
    ],
    "workload_map.engine": [
        "Condition",
        "DefinitionNotFoundError",
        "DescribeView",
        "EngineError",
        "ExtractedInstance",
        "ExtractionError",
        "InstanceNotFoundError",
        "InvalidDefinitionError",
        "Placement",
        "PodGroup",
        "PodGroupResult",
        "Scale",
        "Status",
        "Workload",
        "WorkloadResources",
        "WriteRefusedError",
        "is_owned_by",
        "partition_pods",
        "top_owner",
        "walk_chain",
    ],
    "workload_map.model": [
        "API_VERSION",
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
        "GVK",
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
        "SEVERITY_ORDER",
        "STATUS_ORDER",
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
    ],
    "workload_map.model.views": [
        "View",
        "json_field",
        "json_schema",
        "json_type",
        "set_field",
        "to_json",
        "view",
    ],
}
#: packages whose ``__all__`` their owners pin (jq: tests/jq/test_api.py) or that change fast;
#: here every exported name must at least resolve
OTHER_PACKAGES = [
    "workload_map.jq",
    "workload_map.cluster",
    "workload_map.gangs",
    "workload_map.operator",
    "workload_map.exporter",
]


@pytest.mark.parametrize("name", sorted(PINNED))
def test_all_is_pinned(name: str) -> None:
    module = importlib.import_module(name)
    assert sorted(module.__all__) == PINNED[name]
    for attr in module.__all__:
        assert getattr(module, attr) is not None, attr


@pytest.mark.parametrize("name", OTHER_PACKAGES)
def test_other_packages_export_what_they_list(name: str) -> None:
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError:
        pytest.skip(f"{name} is not in this checkout")
    exported = getattr(module, "__all__", None)
    assert isinstance(exported, list | tuple), f"{name} has no __all__"
    assert len(set(exported)) == len(exported)
    for attr in exported:
        getattr(module, attr)


def _unannotated(fn: Any) -> list[str]:
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        return []
    missing = [
        p.name
        for p in signature.parameters.values()
        if p.annotation is inspect.Parameter.empty and p.name not in ("self", "cls")
    ]
    if signature.return_annotation is inspect.Signature.empty:
        missing.append("return")
    if "Any" in str(signature.return_annotation) and fn.__name__ in ("parse", "compile_tree"):
        missing.append("return is Any")
    return missing


@pytest.mark.parametrize("name", sorted(PINNED))
def test_exported_functions_and_methods_are_typed(name: str) -> None:
    module = importlib.import_module(name)
    problems = []
    for attr in module.__all__:
        value = getattr(module, attr)
        targets: list[Any] = []
        if isinstance(value, types.FunctionType | types.MethodType):
            targets.append(value)
        elif inspect.isclass(value) and value.__module__.startswith("workload_map"):
            targets.extend(
                v
                for k, v in vars(value).items()
                if isinstance(v, types.FunctionType) and (not k.startswith("_") or k == "__init__")
            )
        for fn in targets:
            missing = _unannotated(fn)
            if missing:
                problems.append(f"{attr}.{fn.__name__}: {missing}")
    assert problems == []


def test_catalog_is_one_object_whatever_is_imported_first() -> None:
    orders = [
        "import workload_map as wm; import workload_map.catalog as c",
        "import workload_map.catalog as c; import workload_map as wm",
        "from workload_map.catalog import catalog as inst; import workload_map as wm;"
        " import workload_map.catalog as c",
        "import workload_map as wm; wm.catalog; import workload_map.catalog as c",
    ]
    for order in orders:
        code = (
            f"{order}; assert wm.catalog is c, type(wm.catalog);"
            " assert c.get('batch', 'v1', 'Job') == c.catalog.get('batch', 'v1', 'Job')"
        )
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
        assert done.returncode == 0, (order, done.stderr)


def test_no_module_is_shadowed_by_a_function() -> None:
    import workload_map.model as model

    assert inspect.isfunction(model.validate)
    assert importlib.import_module("workload_map.model.validation").validate is model.validate
    import workload_map.catalog as catalog

    assert not hasattr(catalog, "list")  # the builtin is not rebound at module level


def test_every_error_is_under_wlmap_error() -> None:
    from workload_map.catalog import CatalogError
    from workload_map.cli.exits import CliError
    from workload_map.cli.jq_cli import FlagError
    from workload_map.engine import EngineError
    from workload_map.errors import WlmapError
    from workload_map.jq import JqError
    from workload_map.model import KartaLoadError

    for error in (FlagError, CatalogError, KartaLoadError, EngineError, CliError):
        assert issubclass(error, WlmapError), error
    assert not issubclass(JqError, WlmapError)  # the jq engine's own root, usable alone
