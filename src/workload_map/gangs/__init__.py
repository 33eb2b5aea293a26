"""Gang enforcement: scheduling objects for every Karta-described workload, and pods joined.

Not imported by the core. ``plan`` (pure) maps a workload's gangs onto the scheduler's API
(native ``scheduling.k8s.io/v1beta1``, coscheduling, Volcano; none for KAI); ``PodAdmitter``
decides, from caches only, what a new pod must carry to join its gang.
"""

from __future__ import annotations

from workload_map.gangs.admission import PodAdmitter, PodDecision, json_patch, pod_decisions
from workload_map.gangs.cache import ObjectCache
from workload_map.gangs.config import BACKENDS, COSCHEDULING, KAI, NATIVE, VOLCANO, GangConfig
from workload_map.gangs.naming import dns_label, dns_subdomain, label_value
from workload_map.gangs.planner import plan
from workload_map.gangs.plans import (
    COSCHEDULING_API,
    MAX_TEMPLATES,
    NATIVE_API,
    VOLCANO_API,
    Decision,
    Gang,
    Plan,
    WorkloadRef,
    workload_object_name,
)
from workload_map.gangs.policy import OptIn, left_alone, opt_in

__all__ = [
    "BACKENDS",
    "COSCHEDULING",
    "COSCHEDULING_API",
    "KAI",
    "MAX_TEMPLATES",
    "NATIVE",
    "NATIVE_API",
    "VOLCANO",
    "VOLCANO_API",
    "Decision",
    "Gang",
    "GangConfig",
    "ObjectCache",
    "OptIn",
    "Plan",
    "PodAdmitter",
    "PodDecision",
    "WorkloadRef",
    "dns_label",
    "dns_subdomain",
    "json_patch",
    "label_value",
    "left_alone",
    "opt_in",
    "plan",
    "pod_decisions",
    "workload_object_name",
]
