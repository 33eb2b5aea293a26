"""The workload metrics exporter: ``workloadmap_*`` series joining pods to their workloads.

Runs as a controller of ``wlmap operator`` (``--enable-workload-metrics``) or standalone
(``wlmap exporter``); both serve the same families on their own address, computed at scrape time
from watch caches (see :mod:`workload_map.exporter.collector` and docs/metrics.md).
"""

from __future__ import annotations

from workload_map.exporter.collector import ExporterHealth, LabelPolicy, WorkloadCollector
from workload_map.exporter.families import PHASES, label_name
from workload_map.exporter.settings import ExporterSettings, add_flags, settings_from

__all__ = [
    "PHASES",
    "ExporterHealth",
    "ExporterSettings",
    "LabelPolicy",
    "WorkloadCollector",
    "add_flags",
    "label_name",
    "settings_from",
]
