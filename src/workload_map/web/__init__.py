"""``wlmap serve``: a local, read-only web view of every workload, from the user's kubeconfig.

Pages: workloads (every kind the definitions cover), one workload (tree as a graph, gangs,
vitals, unattributed pods, explain, events, raw object), definitions, and an offline
playground. Data comes from the shared watch-fed inventory (:mod:`workload_map.cluster.inventory`)
or, with ``-f DIR``, from files. See docs/web.md.
"""

from __future__ import annotations

from workload_map.web.app import WebSettings, build_app
from workload_map.web.source import FileSource, LiveSource, MultiSource, Source

__all__ = ["FileSource", "LiveSource", "MultiSource", "Source", "WebSettings", "build_app"]
