"""The events section of the describe table, as ``kubectl describe`` prints its ``Events:``: the
workload's own events (TYPE, REASON, AGE, FROM, MESSAGE; ``3m (x5 over 10m)`` for a repeated
one), then the summary of its objects' and pods' warnings, the one that explains a stuck gang
first (:mod:`workload_map.engine.events` orders them).

Input is the ``events`` key of the describe view, so the table says what ``-o json`` says.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from workload_map.cli.humanize import human_duration, parse_timestamp
from workload_map.cli.render import Styler, format_table

__all__ = ["render_events"]

#: objects named per summary line before "+N more"
_NAMED = 3
_RANK_LABEL = {"gangScheduling": "gang", "create": "", "other": ""}


def _since(value: Any, now: datetime) -> str | None:
    ts = parse_timestamp(value)
    return None if ts is None else human_duration((now - ts).total_seconds())


def _age(event: Mapping[str, Any], now: datetime) -> str:
    """kubectl's AGE: ``3m``, or ``3m (x5 over 10m)`` for an event that repeated."""
    last = _since(event.get("lastTime"), now) or "<unknown>"
    count = event.get("count")
    if isinstance(count, int) and count > 1:
        first = _since(event.get("firstTime"), now)
        return f"{last} (x{count} over {first})" if first else f"{last} (x{count})"
    return last


def _one_line(text: Any) -> str:
    return " ".join(str(text or "").split())


def _objects(names: Sequence[str], kind: str) -> str:
    shown = ", ".join(names[:_NAMED])
    more = f" (+{len(names) - _NAMED} more)" if len(names) > _NAMED else ""
    return f"{kind} {shown}{more}".strip()


def render_events(events: Mapping[str, Any], style: Styler, now: datetime) -> str:
    """The ``Events:`` section (newline-terminated) of one describe view's ``events`` key."""
    items = [e for e in events.get("items") or [] if isinstance(e, Mapping)]
    warnings = [w for w in events.get("warnings") or [] if isinstance(w, Mapping)]
    note = events.get("note")
    lines: list[str] = []
    if not items:
        lines.append("Events:  <none>")
    else:
        lines.append("Events:")
        rows = [
            [
                style(str(e.get("type") or ""), "yellow")
                if e.get("type") == "Warning"
                else str(e.get("type") or ""),
                str(e.get("reason") or ""),
                _age(e, now),
                str(e.get("source") or ""),
                _one_line(e.get("message")),
            ]
            for e in items
        ]
        lines.extend(
            "  " + line for line in format_table(["TYPE", "REASON", "AGE", "FROM", "MESSAGE"], rows)
        )
    if warnings:
        lines.append("")
        lines.append("Warnings of its objects and pods (a gang's scheduling first):")
        rows = []
        for w in warnings:
            names = [str(n) for n in w.get("objects") or []]
            objects = _objects(names, str(w.get("kind") or ""))
            if _RANK_LABEL.get(str(w.get("rank"))):
                objects += f" [{_RANK_LABEL[str(w.get('rank'))]}]"
            rows.append(
                [
                    style(str(w.get("reason") or ""), "yellow"),
                    objects,
                    str(w.get("count") or 0),
                    _since(w.get("lastTime"), now) or "<unknown>",
                    _one_line(w.get("message")),
                ]
            )
        lines.extend(
            "  " + line
            for line in format_table(["REASON", "OBJECTS", "COUNT", "LAST", "MESSAGE"], rows)
        )
    if isinstance(note, str) and note:
        lines.append(f"  ({note})")
    return "\n".join(lines) + "\n"
