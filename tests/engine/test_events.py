"""The events section's order and summary (engine/events.py): pure, from Event dicts."""

from __future__ import annotations

from typing import Any

from workload_map.engine.events import event_count, event_time, events_view
from workload_map.model.views import to_json


def _ev(kind: str, name: str, reason: str, last: str, **extra: Any) -> dict[str, Any]:
    return {
        "involvedObject": {"kind": kind, "name": name, "uid": f"u-{name}"},
        "type": extra.pop("type", "Warning"),
        "reason": reason,
        "message": extra.pop("message", f"{reason} of {name}"),
        "lastTimestamp": last,
        **extra,
    }


def test_gang_scheduling_then_create_then_others_newest_first() -> None:
    warnings = [
        _ev("Pod", "web-1", "FailedScheduling", "2026-01-01T00:09:00Z"),  # not in a gang
        _ev("Pod", "w-0", "FailedScheduling", "2026-01-01T00:01:00Z"),
        _ev("Job", "j-1", "FailedCreate", "2026-01-01T00:02:00Z"),
        _ev("Job", "j-0", "FailedCreate", "2026-01-01T00:03:00Z"),
        _ev("Pod", "w-1", "BackOff", "2026-01-01T00:08:00Z"),
    ]
    view = events_view([], warnings, gang_pods={"w-0", "w-1"})
    assert [(w.rank, w.objects) for w in view.warnings] == [
        ("gangScheduling", ("w-0",)),
        ("create", ("j-0",)),
        ("create", ("j-1",)),
        ("other", ("web-1",)),
        ("other", ("w-1",)),
    ]


def test_one_line_per_reason_kind_and_message_with_summed_counts() -> None:
    message = "0/8 nodes are available: 8 Insufficient nvidia.com/gpu."
    warnings = [
        _ev(
            "Pod",
            f"w-{i}",
            "FailedScheduling",
            f"2026-01-01T00:0{i}:00Z",
            message=message,
            count=i + 1,
        )
        for i in range(5)
    ]
    (line,) = events_view([], warnings, gang_pods={f"w-{i}" for i in range(5)}).warnings
    assert line.objects == ("w-0", "w-1", "w-2", "w-3", "w-4")
    assert line.count == 15 and line.last_time == "2026-01-01T00:04:00Z"


def test_own_events_oldest_first_and_events_k8s_io_fields() -> None:
    own = [
        _ev("JobSet", "t", "B", "2026-01-01T00:02:00Z", type="Normal"),
        {  # events.k8s.io/v1 names: regarding, note, series, reportingController, eventTime
            "regarding": {"kind": "JobSet", "name": "t"},
            "type": "Warning",
            "reason": "A",
            "note": "from the new API",
            "eventTime": "2026-01-01T00:00:00.000000Z",
            "series": {"count": 4, "lastObservedTime": "2026-01-01T00:01:00.000000Z"},
            "reportingController": "jobset-controller",
        },
    ]
    view = events_view(own, [])
    assert [(e.reason, e.count, e.source) for e in view.items] == [
        ("A", 4, "jobset-controller"),
        ("B", 1, ""),
    ]
    assert view.items[0].message == "from the new API"
    assert view.items[0].first_time == "2026-01-01T00:00:00.000000Z"
    assert to_json(view)["items"][0]["lastTime"] == "2026-01-01T00:01:00.000000Z"
    assert "note" not in to_json(view)


def test_times_and_counts_fall_back() -> None:
    assert event_time({"metadata": {"creationTimestamp": "2026-01-01T00:00:00Z"}}) == (
        "2026-01-01T00:00:00Z"
    )
    assert event_time({}) is None
    assert event_count({"count": 0}) == 1 and event_count({"count": True}) == 1
    assert event_count({"deprecatedCount": 3}) == 3


def test_refusals_of_generated_pods_are_one_line() -> None:
    message = 'Error creating: pods "train-workers-1-{}" is forbidden: exceeded quota'
    warnings = [
        _ev(
            "Job",
            "train-workers-1",
            "FailedCreate",
            f"2026-01-01T00:0{i}:00Z",
            message=message.format(suffix),
        )
        for i, suffix in enumerate(("dp6fn", "r5g9k", "x2x9p"))
    ]
    (line,) = events_view([], warnings).warnings
    assert line.count == 3 and line.objects == ("train-workers-1",)
    assert line.message == message.format("x2x9p")  # the newest one's words
