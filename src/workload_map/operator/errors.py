"""The operator's errors, under the project's one root (:class:`workload_map.errors.WlmapError`)."""

from __future__ import annotations

from workload_map.errors import WlmapError

__all__ = ["ConfigError", "OperatorError"]


class OperatorError(WlmapError):
    """The operator could not start or keep running a part of itself."""


class ConfigError(OperatorError, ValueError):
    """A flag or setting is unusable (also a ValueError, so argparse reports it as one)."""
