"""Exit codes of every subcommand but ``jq`` (INTERFACES.md) and the error that carries one.

Commands raise :class:`CliError`; ``main`` prints ``error: <message>`` (plus a hint line) on
stderr, writes the optional machine payload to stdout, and returns the code.
"""

from __future__ import annotations

from typing import Any

from workload_map.errors import WlmapError

__all__ = [
    "AMBIGUOUS",
    "ERROR",
    "NOT_FOUND",
    "NO_DEFINITION",
    "OK",
    "USAGE",
    "CliError",
    "JsonPathError",
    "UsageError",
]

OK = 0
ERROR = 1  # invalid input, cluster or other error
USAGE = 2  # usage error or unreadable file
NOT_FOUND = 3  # the named workload (or its type) is not in the cluster
NO_DEFINITION = 4  # no definition covers the type
AMBIGUOUS = 5  # a bare name matches several workloads


class CliError(WlmapError):
    """A failure to report as ``error: message`` with ``code``; ``payload`` goes to stdout."""

    def __init__(
        self,
        message: str,
        code: int = ERROR,
        *,
        hint: str | None = None,
        payload: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.hint = hint
        self.payload = payload


class JsonPathError(WlmapError):
    """A template that does not parse, or fails on the data (the message names the template).
    Here, not in :mod:`~workload_map.cli.jsonpath`, so that a command can catch it without
    importing the template engine it may not need."""


class UsageError(CliError):
    """Bad flags or arguments (exit 2)."""

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message, USAGE, hint=hint)
