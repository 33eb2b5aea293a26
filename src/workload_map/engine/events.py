"""The events of ``wlmap describe`` (live): the workload's own events, as ``kubectl describe``
lists them, and a summary of the warnings of the objects and pods it owns.

Pure: the events come in as Kubernetes ``Event`` objects (core ``v1``; ``events.k8s.io/v1``
field names are read too), already chosen by the caller (:mod:`workload_map.cluster.events`
reads them). The summary puts first what explains a workload that does not start:

1. ``FailedScheduling`` of the pods of its gangs (the scheduler says why the gang waits),
2. ``FailedCreate`` of its owned objects (a Job, ReplicaSet or StatefulSet that cannot make its
   pods: quota, admission, a bad template),
3. every other warning,

each by last time, newest first. Warnings of one reason, kind and message are one line with the
objects they concern and the sum of their counts, so fifty pods refused for the same reason take
one line, not fifty.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping
from typing import Any

from workload_map.model.views import View, json_field

__all__ = [
    "EventEntry",
    "EventsView",
    "WarningSummary",
    "event_count",
    "event_time",
    "events_view",
    "warning_rank",
]

#: the summary's ranks (``WarningSummary.rank``), in the order they are listed
GANG_SCHEDULING = "gangScheduling"
CREATE = "create"
OTHER = "other"
_RANK_ORDER = {GANG_SCHEDULING: 0, CREATE: 1, OTHER: 2}


class EventEntry(View):
    """One event of the workload itself, as ``kubectl describe`` lists it."""

    type: str = json_field("type", description="Normal or Warning")
    reason: str = json_field("reason")
    message: str = json_field("message")
    count: int = json_field("count", description="how often it happened (1 when not counted)")
    first_time: str | None = json_field("firstTime")
    last_time: str | None = json_field("lastTime")
    source: str = json_field("source", description="the reporting component (kubectl's FROM)")


class WarningSummary(View):
    """The warnings of one reason, kind and message over the workload's objects and pods."""

    rank: str = json_field(
        "rank",
        description="gangScheduling (FailedScheduling of a gang's pod), create (FailedCreate "
        "of an owned object) or other: the summary is ordered by rank, then newest first",
    )
    reason: str = json_field("reason")
    kind: str = json_field("kind", description="the kind of the objects concerned")
    message: str = json_field("message")
    objects: tuple[str, ...] = json_field("objects", description="their names, sorted")
    count: int = json_field("count", description="the sum of the events' counts")
    last_time: str | None = json_field("lastTime")


class EventsView(View):
    """The ``events`` key of ``wlmap describe -o json`` (live only)."""

    items: tuple[EventEntry, ...] = json_field(
        "items", description="the workload's own events, oldest first (as kubectl lists them)"
    )
    warnings: tuple[WarningSummary, ...] = json_field(
        "warnings", description="the warnings of the objects and pods it owns, summarised"
    )
    note: str | None = json_field(
        "note", omit="none", default=None, description="why events are missing or partial"
    )


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _time(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def event_time(event: Mapping[str, Any]) -> str | None:
    """When ``event`` last happened (RFC 3339), from whichever field its writer filled."""
    series = event.get("series")
    series = series if isinstance(series, Mapping) else {}
    for value in (
        event.get("lastTimestamp"),
        series.get("lastObservedTime"),
        event.get("eventTime"),
        event.get("deprecatedLastTimestamp"),
        event.get("firstTimestamp"),
        (event.get("metadata") or {}).get("creationTimestamp"),
    ):
        if _time(value):
            return str(value)
    return None


def _first_time(event: Mapping[str, Any]) -> str | None:
    for value in (
        event.get("firstTimestamp"),
        event.get("deprecatedFirstTimestamp"),
        event.get("eventTime"),
    ):
        if _time(value):
            return str(value)
    return event_time(event)


def event_count(event: Mapping[str, Any]) -> int:
    """How often ``event`` happened: its count, its series' count, else 1."""
    series = event.get("series")
    for value in (
        event.get("count"),
        series.get("count") if isinstance(series, Mapping) else None,
        event.get("deprecatedCount"),
    ):
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return 1


def _involved(event: Mapping[str, Any]) -> Mapping[str, Any]:
    ref = event.get("involvedObject") or event.get("regarding")
    return ref if isinstance(ref, Mapping) else {}


def _source(event: Mapping[str, Any]) -> str:
    source = event.get("source")
    if isinstance(source, Mapping) and _text(source.get("component")):
        host = _text(source.get("host"))
        return _text(source.get("component")) + (f", {host}" if host else "")
    return _text(event.get("reportingComponent")) or _text(event.get("reportingController"))


def warning_rank(event: Mapping[str, Any], gang_pods: Collection[str]) -> str:
    """The summary rank of a warning (see the module doc)."""
    reason = _text(event.get("reason"))
    ref = _involved(event)
    if reason == "FailedScheduling" and ref.get("kind") == "Pod" and ref.get("name") in gang_pods:
        return GANG_SCHEDULING
    if reason == "FailedCreate":
        return CREATE
    return OTHER


#: a generated object name in a message (``pods "train-workers-1-dp6fn"``): one line for the
#: same refusal of every pod a controller tries, not one per random suffix. Text, compiled (and
#: kept) by ``re`` at its first use: a command that reads no event compiles it never
_GENERATED = r'"([a-z0-9]([-a-z0-9.]*[a-z0-9])?)-[a-z0-9]{5}"'


def _message_key(message: str) -> str:
    return re.sub(_GENERATED, r'"\1-*"', message)


def _entry(event: Mapping[str, Any]) -> EventEntry:
    return EventEntry(
        type=_text(event.get("type")) or "Normal",
        reason=_text(event.get("reason")),
        message=_text(event.get("message") or event.get("note")).strip(),
        count=event_count(event),
        first_time=_first_time(event),
        last_time=event_time(event),
        source=_source(event),
    )


def events_view(
    own: Iterable[Mapping[str, Any]],
    warnings: Iterable[Mapping[str, Any]],
    *,
    gang_pods: Collection[str] = (),
    note: str | None = None,
) -> EventsView:
    """The events section from the workload's own events and its objects' warnings.

    ``gang_pods``: the names of the pods in the workload's gangs (their ``FailedScheduling``
    comes first). Own events are listed oldest first, as kubectl does.
    """
    items = sorted((_entry(e) for e in own), key=lambda e: e.last_time or "")
    groups: dict[tuple[str, str, str, str], dict[str, Any]] = {}
    for event in warnings:
        ref = _involved(event)
        entry = _entry(event)
        rank = warning_rank(event, gang_pods)
        key = (rank, entry.reason, _text(ref.get("kind")), _message_key(entry.message))
        group = groups.setdefault(
            key, {"objects": set(), "count": 0, "last": None, "message": entry.message}
        )
        group["objects"].add(_text(ref.get("name")))
        group["count"] += entry.count
        if entry.last_time and (group["last"] is None or entry.last_time > group["last"]):
            group["last"] = entry.last_time
            group["message"] = entry.message  # the newest one's own words
    summary = [
        WarningSummary(
            rank=rank,
            reason=reason,
            kind=kind,
            message=group["message"],
            objects=tuple(sorted(group["objects"])),
            count=group["count"],
            last_time=group["last"],
        )
        for (rank, reason, kind, _), group in groups.items()
    ]
    # by rank, then newest first (a stable sort on time, then on rank)
    summary.sort(key=lambda s: s.last_time or "", reverse=True)
    summary.sort(key=lambda s: _RANK_ORDER[s.rank])
    return EventsView(items=tuple(items), warnings=tuple(summary), note=note)
