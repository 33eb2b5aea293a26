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
    "Conflict",
    "Forbidden",
    "Gone",
    "Invalid",
    "NotConfigured",
    "NotFound",
    "NotServed",
    "TooManyRequests",
    "Unauthorized",
    "Unreachable",
    "api_error",
    "relabel",
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


class NotServed(NotFound):
    """404 for a whole type: discovery remembered from an earlier command named a resource
    the server no longer serves (asked again, it does not list it)."""


class Conflict(ApiError):
    """409: the object changed since it was read (or already exists)."""


class Gone(ApiError):
    """410: the resource version asked for is no longer kept (list again)."""


class Invalid(ApiError):
    """422: the object was refused by validation."""


class TooManyRequests(ApiError):
    """429: the server asks to slow down (API priority and fairness)."""


_MAX_TEXT = 256

#: what a verb does, as the messages say it
_DOING = {
    "GET": "get",
    "LIST": "list",
    "WATCH": "watch",
    "POST": "create",
    "PUT": "update",
    "PATCH": "patch",
    "DELETE": "delete",
}


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


def api_error(status: int, body: bytes | str | None, what: str, verb: str = "read") -> ApiError:
    """The error for an HTTP ``status`` answering ``verb`` (an HTTP method, ``LIST`` or
    ``WATCH``; ``read`` when the caller does not say) on ``what`` (the object or collection:
    its path or its name); the message names both."""
    message, reason = _server_message(body)
    detail = f": {message}" if message else ""
    doing = _DOING.get(verb.upper(), verb.lower())
    if status == 401:
        return Unauthorized(
            status,
            f"the cluster rejected the credentials (401 Unauthorized) while trying to {doing} "
            f"{what}{detail}; check the kubeconfig user or refresh the token",
            reason,
            message,
        )
    if status == 403:
        return Forbidden(status, f"forbidden: cannot {doing} {what}{detail}", reason, message)
    if status == 404:
        text = (
            f"not found: {what}"
            if doing in ("read", "get")
            else f"not found: cannot {doing} {what}"
        )
        return NotFound(status, f"{text}{detail}", reason, message)
    if status == 409:
        return Conflict(status, f"conflict: cannot {doing} {what}{detail}", reason, message)
    if status == 410:
        return Gone(status, f"gone: cannot {doing} {what}{detail}", reason, message)
    if status == 422:
        return Invalid(status, f"invalid: cannot {doing} {what}{detail}", reason, message)
    if status == 429:
        return TooManyRequests(
            status,
            f"too many requests: the API server asked to slow down while trying to {doing} "
            f"{what}{detail}",
            reason,
            message,
        )
    return ApiError(
        status, f"the API server answered {status} to {doing} {what}{detail}", reason, message
    )


def relabel(error: ApiError, what: str, verb: str) -> ApiError:
    """``error`` (same class and status) with a message naming ``verb`` and ``what``: for a
    caller that knows better than the path what a request was (``list`` of a collection)."""
    body = json.dumps({"kind": "Status", "message": error.detail, "reason": error.reason})
    return api_error(error.status, body, what, verb)
