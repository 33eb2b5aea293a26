"""Cluster access errors: one class per thing a user can act on, never a transport type.

The CLI maps these to exit codes and prints ``str(error)``; every message says what was tried
(server, resource, name) and, where there is one, what to do about it.
"""

from __future__ import annotations

import json
from typing import Any

from workload_map.errors import WlmapError

__all__ = [
    "ApiError",
    "ClusterError",
    "Forbidden",
    "NotConfigured",
    "NotFound",
    "Unauthorized",
    "Unreachable",
    "api_error",
]


class ClusterError(WlmapError):
    """Anything that went wrong talking to (or finding) a cluster."""


class NotConfigured(ClusterError):
    """No kubeconfig and no in-cluster service account: there is no cluster to talk to."""


class Unreachable(ClusterError):
    """The API server could not be reached (DNS, refused connection, TLS, timeout)."""


class ApiError(ClusterError):
    """The API server answered with an error status."""

    def __init__(self, status: int, message: str, reason: str = "", detail: str = "") -> None:
        super().__init__(message)
        self.status = status
        self.reason = reason
        self.detail = detail  # the server's own message (a Status body's ``message``)


class Unauthorized(ApiError):
    """401: the credentials were rejected."""


class Forbidden(ApiError):
    """403: RBAC does not allow the request."""


class NotFound(ApiError):
    """404: no such object (or resource)."""


_MAX_TEXT = 256


def _server_message(body: bytes | str | None) -> tuple[str, str]:
    """The (message, reason) of a ``kind: Status`` body, else a truncated text body."""
    if body is None:
        return "", ""
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
    try:
        status: Any = json.loads(text)
    except ValueError:
        return text.strip()[:_MAX_TEXT], ""
    if isinstance(status, dict) and status.get("kind") == "Status":
        return str(status.get("message") or ""), str(status.get("reason") or "")
    return text.strip()[:_MAX_TEXT], ""


def api_error(status: int, body: bytes | str | None, what: str) -> ApiError:
    """The error for an HTTP ``status`` answering a request about ``what``."""
    message, reason = _server_message(body)
    detail = f": {message}" if message else ""
    if status == 401:
        return Unauthorized(
            status,
            f"the cluster rejected the credentials (401 Unauthorized) while reading {what}{detail}; "
            "check the kubeconfig user or refresh the token",
            reason,
            message,
        )
    if status == 403:
        return Forbidden(status, f"forbidden: cannot read {what}{detail}", reason, message)
    if status == 404:
        return NotFound(status, f"not found: {what}{detail}", reason, message)
    return ApiError(status, f"the API server answered {status} for {what}{detail}", reason, message)
