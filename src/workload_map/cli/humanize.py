"""Numbers for people: kubectl-style ages and Kubernetes quantities (CPU, memory)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

__all__ = ["age", "cpu", "human_duration", "memory", "memory_column", "parse_timestamp"]


def parse_timestamp(value: object) -> datetime | None:
    """An RFC 3339 ``metadata.creationTimestamp``, or None."""
    if not isinstance(value, str) or not value:
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def human_duration(seconds: float) -> str:
    """kubectl's ``HumanDuration``: ``45s``, ``3m20s``, ``5h12m``, ``3d4h``, ``400d``, ``2y3d``."""
    s = int(seconds)
    if s < -1:
        return "<invalid>"
    if s < 0:
        return "0s"
    if s < 120:
        return f"{s}s"
    minutes = s // 60
    if minutes < 10:
        rest = s % 60
        return f"{minutes}m" if rest == 0 else f"{minutes}m{rest}s"
    if minutes < 180:
        return f"{minutes}m"
    hours = s // 3600
    if hours < 8:
        rest = minutes % 60
        return f"{hours}h" if rest == 0 else f"{hours}h{rest}m"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        rest = hours % 24
        return f"{hours // 24}d" if rest == 0 else f"{hours // 24}d{rest}h"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        days = (hours // 24) % 365
        years = hours // 24 // 365
        return f"{years}y" if days == 0 else f"{years}y{days}d"
    return f"{hours // 24 // 365}y"


def age(created: object, now: datetime | None = None) -> str:
    """The age of an object from its creationTimestamp, or ``<unknown>``."""
    ts = parse_timestamp(created)
    if ts is None:
        return "<unknown>"
    now = now or datetime.now(UTC)
    return human_duration((now - ts).total_seconds())


def cpu(millis: int | float | None) -> str:
    """CPU as a quantity: ``500m``, ``2``, ``1500m``."""
    if not millis:
        return "0"
    m = round(millis)
    return str(m // 1000) if m % 1000 == 0 else f"{m}m"


_BINARY = (("Ei", 2**60), ("Pi", 2**50), ("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10))
_DECIMAL = (("E", 10**18), ("P", 10**15), ("T", 10**12), ("G", 10**9), ("M", 10**6), ("k", 10**3))


def memory(value: int | float | None) -> str:
    """Bytes as a quantity: binary units when exact (``512Mi``), else decimal (``1500M``)."""
    if not value:
        return "0"
    b = round(value)
    for suffix, size in _BINARY:
        if b % size == 0:
            return f"{b // size}{suffix}"
    for suffix, size in _DECIMAL:
        if b % size == 0:
            return f"{b // size}{suffix}"
    return str(b)


def memory_column(values: Sequence[int | float | None]) -> list[str]:
    """One column of memory quantities in one unit, so rows and their TOTAL compare at a
    glance (``2048Gi`` next to ``2056Gi``, never ``2Ti`` next to ``2056Gi``): the largest
    binary unit every non-zero value is a whole number of, else the largest decimal one, else
    each value in its own exact unit. Zero and None stay ``0``."""
    exact = [round(v) for v in values if v]
    for suffix, size in (*_BINARY, *_DECIMAL):
        if exact and all(b % size == 0 for b in exact):
            return [f"{round(v) // size}{suffix}" if v else "0" for v in values]
    return [memory(v) for v in values]
