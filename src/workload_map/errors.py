"""The root of every error this package raises on purpose.

Each area (definitions, extraction, cluster access) subclasses :class:`WlmapError`, so a caller can
catch one type; the jq engine keeps its own root, :class:`workload_map.jq.JqError`, because it is
usable on its own.
"""

from __future__ import annotations

__all__ = ["WlmapError"]


class WlmapError(Exception):
    """Base class of workload-map's errors (except the jq engine's, which stand alone)."""
