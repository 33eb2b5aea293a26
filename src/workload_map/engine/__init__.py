"""The workload engine: structure, status, write-back, pods, gangs, resources and describe.

Pure: plain dicts (or Kubernetes client objects) in, plain data out, inputs never mutated.
:class:`Workload` is the entry point; the modules below it each own one concern.
"""

from __future__ import annotations

from workload_map.engine.describe import DescribeView, WorkloadResources
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
from workload_map.engine.owners import is_owned_by, partition_pods, top_owner, walk_chain
from workload_map.engine.pods import Placement
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
