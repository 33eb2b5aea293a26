"""The workload engine: structure, status, write-back, pods, gangs, resources and describe.

Pure: plain dicts (or Kubernetes client objects) in, plain data out, inputs never mutated.
:class:`Workload` is the entry point; the modules below it each own one concern.

The names below are bound on first use (PEP 562), each from the module that owns it: importing
one module of the engine (``engine.owners`` for the owner rule, ``engine.errors``) must not load
the whole engine and the jq package with it, which every command's context and file reader
would otherwise pay (``wlmap crd show``, ``validate``, completion; docs/cli.md).
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from workload_map.engine.describe import DescribeView
    from workload_map.engine.errors import (
        DefinitionNotFoundError,
        EngineError,
        ExtractionError,
        InstanceNotFoundError,
        InvalidDefinitionError,
        WriteRefusedError,
    )
    from workload_map.engine.extract import ExtractedInstance, Scale
    from workload_map.engine.gangs import PodGroup, PodGroupResult
    from workload_map.engine.owners import top_owner, walk_chain
    from workload_map.engine.partition import is_owned_by, partition_pods
    from workload_map.engine.pods import Placement
    from workload_map.engine.resource_view import WorkloadResources
    from workload_map.engine.status import Condition, Status
    from workload_map.engine.workload import Workload

__all__ = [
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
]

#: each public name's module (full names: tests/test_rooms.py reads them as this package's
#: imports)
_HOMES = {
    "Condition": "workload_map.engine.status",
    "DefinitionNotFoundError": "workload_map.engine.errors",
    "DescribeView": "workload_map.engine.describe",
    "EngineError": "workload_map.engine.errors",
    "ExtractedInstance": "workload_map.engine.extract",
    "ExtractionError": "workload_map.engine.errors",
    "InstanceNotFoundError": "workload_map.engine.errors",
    "InvalidDefinitionError": "workload_map.engine.errors",
    "Placement": "workload_map.engine.pods",
    "PodGroup": "workload_map.engine.gangs",
    "PodGroupResult": "workload_map.engine.gangs",
    "Scale": "workload_map.engine.extract",
    "Status": "workload_map.engine.status",
    "Workload": "workload_map.engine.workload",
    "WorkloadResources": "workload_map.engine.resource_view",
    "WriteRefusedError": "workload_map.engine.errors",
    "is_owned_by": "workload_map.engine.partition",
    "partition_pods": "workload_map.engine.partition",
    "top_owner": "workload_map.engine.owners",
    "walk_chain": "workload_map.engine.owners",
}


def __getattr__(name: str) -> Any:
    try:
        module = _HOMES[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
