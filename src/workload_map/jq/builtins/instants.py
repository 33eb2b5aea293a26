"""Instants for the date builtins: a point in time seen in a zone, the proleptic Gregorian
calendar on integers, the local zone from the C library, and the names of months and days."""

from __future__ import annotations

import math
import time as _time
from typing import Any, NamedTuple

from workload_map.jq.values import is_number, to_float, to_int

__all__ = [
    "COMPOSITIONS",
    "LONG_DAYS",
    "LONG_MONTHS",
    "SHORT_DAYS",
    "SHORT_MONTHS",
    "Instant",
    "array_to_instant",
    "civil_instant",
    "epoch_to_instant",
    "local_zone",
    "to_array",
]

LONG_MONTHS = [
    "January", "February", "March", "April", "May", "June",
    "July", "August", "September", "October", "November", "December",
]  # fmt: skip
SHORT_MONTHS = [m[:3] for m in LONG_MONTHS]
LONG_DAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]
SHORT_DAYS = [d[:3] for d in LONG_DAYS]
COMPOSITIONS = {
    "c": "a b e H:M:S Y",
    "+": "a b e H:M:S Z Y",
    "F": "Y-m-d",
    "D": "m/d/y",
    "x": "m/d/y",
    "v": "e-b-Y",
    "T": "H:M:S",
    "X": "H:M:S",
    "r": "I:M:S p",
    "R": "H:M",
}
_TIME_ARRAY_ERROR = "expected an array of 8 numbers"


# ---------------------------------------------------------------------------------------------
# calendar


def _days_from_civil(y: int, m: int, d: int) -> int:
    y -= m <= 2
    era = y // 400
    yoe = y - era * 400
    doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def _civil_from_days(z: int) -> tuple[int, int, int]:
    z += 719468
    era = z // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    y = yoe + era * 400
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    m = mp + (3 if mp < 10 else -9)
    return y + (m <= 2), m, d


class Instant(NamedTuple):
    """A point in time (`unix` seconds + `ns`) seen in a zone (`offset` seconds, `zone` name);
    a NamedTuple, immutable as the frozen dataclass it was, ~7x cheaper to create at import."""

    unix: int
    ns: int
    offset: int
    zone: str

    def fields(self) -> tuple[int, int, int, int, int, int, int, int]:
        """(year, month 1-12, day, hour, minute, second, weekday 0=Sun, yday 1-366)."""
        local = self.unix + self.offset
        days, secs = divmod(local, 86400)
        y, m, d = _civil_from_days(days)
        yday = days - _days_from_civil(y, 1, 1) + 1
        return y, m, d, secs // 3600, secs // 60 % 60, secs % 60, (days + 4) % 7, yday

    def epoch(self) -> float:
        # Go's Time.Unix() is an int64: instants past its range wrap as gojq's do
        return float(_wrap64(self.unix)) + float(self.ns) / 1e9


def local_zone(unix: int) -> tuple[int, str]:
    try:
        tm = _time.localtime(unix)
    except (OverflowError, OSError, ValueError):
        return 0, "UTC"
    return tm.tm_gmtoff or 0, tm.tm_zone or ""


def _instant(unix: int, ns: int, local: bool) -> Instant:
    if local:
        offset, zone = local_zone(unix)
        return Instant(unix, ns, offset, zone)
    return Instant(unix, ns, 0, "UTC")


_I64 = 1 << 63
# seconds from Go's absolute epoch (March 1 of year -292277022399) to the Unix epoch: Go's
# calendar arithmetic runs on an unsigned 64-bit count of seconds from that epoch
_UNIX_TO_ABSOLUTE = 9223372028710203048


def _go_int64(x: float) -> int:
    """Go's int64(x) on amd64: NaN and values out of range become the minimum int64."""
    if x != x or not -9.223372036854775808e18 <= x < 9.223372036854775808e18:
        return -_I64
    return int(x)


def _wrap64(n: int) -> int:
    return ((n + _I64) % (1 << 64)) - _I64


def epoch_to_instant(v: float, local: bool) -> Instant:
    """gojq's epochToTime, with Go's integer overflows, so that instants past Go's range wrap
    (and print) exactly as gojq's do."""
    # gojq: time.Unix(int64(v), int64((v - math.Floor(v)) * 1e9)) (so -1.5 is -0.5 s)
    sec = _go_int64(v)
    ns = _go_int64((v - math.floor(v)) * 1e9 if math.isfinite(v) else math.nan)
    if ns < 0 or ns >= 1_000_000_000:
        # Go's division truncates toward zero
        n = ns // 1_000_000_000 if ns >= 0 else -(-ns // 1_000_000_000)
        sec = _wrap64(sec + n)
        ns -= n * 1_000_000_000
        if ns < 0:
            ns += 1_000_000_000
            sec = _wrap64(sec - 1)
    sec = (sec + _UNIX_TO_ABSOLUTE) % (1 << 64) - _UNIX_TO_ABSOLUTE
    return _instant(sec, ns, local)


def to_array(t: Instant) -> list[Any]:
    y, m, d, hh, mm, ss, wd, yd = t.fields()
    return [y, m - 1, d, hh, mm, float(ss) + float(t.ns) / 1e9, wd, yd - 1]


def civil_instant(
    y: int, mon: int, d: int, hh: int, mm: int, ss: int, ns: int, local: bool
) -> Instant:
    """Go's time.Date: out-of-range fields carry over (month 13 = January next year)."""
    carry, ns = divmod(ns, 1_000_000_000)
    ss += carry
    y += (mon - 1) // 12
    mon = (mon - 1) % 12 + 1
    wall = (_days_from_civil(y, mon, 1) + d - 1) * 86400 + hh * 3600 + mm * 60 + ss
    if not local:
        return Instant(wall, ns, 0, "UTC")
    offset, _ = local_zone(wall)
    unix = wall - offset
    offset2, zone = local_zone(unix)
    if offset2 != offset:
        unix = wall - offset2
        offset2, zone = local_zone(unix)
    return Instant(unix, ns, offset2, zone)


def array_to_instant(a: list[Any], local: bool) -> Instant:
    parts = [0] * 8
    ns = 0
    for i in range(min(len(a), 8)):
        x = a[i]
        if not is_number(x):
            raise ValueError(_TIME_ARRAY_ERROR)
        if i == 5:
            f = to_float(x)
            if not math.isfinite(f):
                parts[5] = to_int(f) or 0
            else:
                parts[5] = int(f)
                ns = int((f - math.floor(f)) * 1e9)
        else:
            parts[i] = to_int(x) or 0
    return civil_instant(parts[0], parts[1] + 1, parts[2], parts[3], parts[4], parts[5], ns, local)
