"""What a pod's status says of it: Ready or not, why it is not fine, the scheduler's message.

The readers every view shares: ``describe``'s pod entries and the shared evaluation's ready
counts (``summary.py``) read readiness here, so they cannot disagree on a pod. Pods come from
anywhere (files, the watch caches, client objects turned into dicts), so each field is checked
for its type: something unreadable is not ready and gives no reason. Mappings are accepted, not
only dicts (``to_plain`` passes a caller's dict subclass through untouched).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

__all__ = ["PodReading", "pod_is_ready", "pod_reason", "read_pod", "scheduling_message"]


def _conditions(pod: Mapping[str, Any]) -> list[Any]:
    """The pod's ``status.conditions`` as found (entries unchecked), else an empty list."""
    # ``type(...) is dict`` first: a Mapping check is an ABC call, and this runs per pod
    status = pod.get("status")
    conds = (
        status.get("conditions") if type(status) is dict or isinstance(status, Mapping) else None
    )
    return conds if type(conds) is list or isinstance(conds, list) else []


def pod_is_ready(pod: Mapping[str, Any]) -> bool:
    """The readiness rule: the pod's ``Ready`` condition is ``True`` (whatever its phase: the
    counts add their own rule, active pods only)."""
    # _conditions inlined: the shared evaluation runs this per pod of a fleet
    status = pod.get("status")
    conds = (
        status.get("conditions") if type(status) is dict or isinstance(status, Mapping) else None
    )
    if type(conds) is not list and not isinstance(conds, list):
        return False
    for c in conds:
        if (
            (type(c) is dict or isinstance(c, Mapping))
            and c.get("type") == "Ready"
            and c.get("status") == "True"
        ):
            return True
    return False


def _text(value: Any) -> str | None:
    """A non-empty string field, else None (objects from anywhere may hold anything)."""
    return value if isinstance(value, str) and value else None


def _terminated_reason(statuses: Any) -> str | None:
    """What kubectl shows for a container that ended badly: the kubelet's reason (OOMKilled,
    Error, ...), else ``Signal:N`` / ``ExitCode:N``; a clean exit is no reason."""
    for cs in statuses if isinstance(statuses, list) else ():
        state = cs.get("state") if isinstance(cs, Mapping) else None
        ended = state.get("terminated") if isinstance(state, Mapping) else None
        if not isinstance(ended, Mapping):
            continue
        reason, code, signal = (
            _text(ended.get("reason")),
            ended.get("exitCode"),
            ended.get("signal"),
        )
        if reason == "Completed" and not code:
            continue
        if reason:
            return reason
        if isinstance(signal, int) and signal:
            return f"Signal:{signal}"
        if isinstance(code, int) and code:
            return f"ExitCode:{code}"
    return None


#: What a pod entry shows of the pod's status (:func:`read_pod`). Fields given as types:
#: string annotations would each be a ForwardRef, built by ``compile`` (docs/cli.md#start-up).
PodReading = NamedTuple(  # noqa: UP014
    "PodReading", [("ready", bool), ("reason", str | None), ("message", str | None)]
)


def pod_reason(pod: Mapping[str, Any]) -> str | None:
    """Why a pod is not fine: unscheduled, pod reason, a container's waiting reason, how a
    container ended (OOMKilled, as kubectl shows it), not ready."""
    return read_pod(pod).reason


def scheduling_message(pod: Mapping[str, Any]) -> str | None:
    """Why the scheduler cannot place the pod, in its words ("0/16 nodes are available: 16
    Insufficient nvidia.com/gpu."): the message of its ``PodScheduled`` condition while that is
    False (kubectl shows the same text under the pod's FailedScheduling event)."""
    return read_pod(pod).message


def read_pod(pod: Mapping[str, Any]) -> PodReading:
    """:func:`pod_is_ready`, :func:`pod_reason` and :func:`scheduling_message` of one pod, its
    conditions read in one pass (``describe`` reads all three for every pod it lists)."""
    unscheduled: Mapping[str, Any] | None = None  # the first PodScheduled False
    unscheduled_reason: str | None = None  # the first reason of a PodScheduled False
    not_ready_reason: str | None = None  # the first reason of a Ready False
    for c in _conditions(pod):
        if type(c) is not dict and not isinstance(c, Mapping):
            continue
        kind = c.get("type")
        if kind == "PodScheduled" and c.get("status") == "False":
            if unscheduled is None:
                unscheduled = c
            if unscheduled_reason is None:
                unscheduled_reason = _text(c.get("reason"))
        elif kind == "Ready" and not_ready_reason is None and c.get("status") == "False":
            not_ready_reason = _text(c.get("reason"))
    message = _text(unscheduled.get("message")) if unscheduled is not None else None
    return PodReading(
        pod_is_ready(pod),
        unscheduled_reason or _status_reason(pod, not_ready_reason),
        message if message is not None and message.strip() else None,
    )


def _status_reason(pod: Mapping[str, Any], not_ready_reason: str | None) -> str | None:
    """The reason after an unscheduled one: the pod's, a waiting container's, an ended
    container's (not in a pod that succeeded), else its Ready condition's (same)."""
    status = pod.get("status")
    if type(status) is not dict and not isinstance(status, Mapping):
        return not_ready_reason
    if _text(status.get("reason")):
        return _text(status.get("reason"))
    for key in ("initContainerStatuses", "containerStatuses"):
        statuses = status.get(key)
        for cs in statuses if isinstance(statuses, list) else ():
            state = cs.get("state") if isinstance(cs, Mapping) else None
            waiting = state.get("waiting") if isinstance(state, Mapping) else None
            if isinstance(waiting, Mapping) and _text(waiting.get("reason")):
                return _text(waiting.get("reason"))
    if status.get("phase") == "Succeeded":
        return None
    return _terminated_reason(status.get("containerStatuses")) or not_ready_reason
