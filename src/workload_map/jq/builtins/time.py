"""Date builtins as gojq has them: `gmtime localtime mktime strftime strflocaltime strptime now`.

gojq formats and parses with itchyny/timefmt-go rather than libc, keeps nanoseconds (fractional
seconds survive `gmtime`/`mktime`), always fills weekday and day of year, and accepts numeric
`%z` offsets. Broken-down time is `[year, month0, mday, hours, minutes, seconds(float), wday,
yday0]`. Calendar arithmetic is proleptic Gregorian on integers, so any year works; the local
zone (for `localtime`/`strflocaltime`) comes from the C library (the `TZ` environment variable).
"""

from __future__ import annotations

import math
import time as _time
from typing import Any, NamedTuple

from workload_map.jq.builtins.conversions import wrap_error
from workload_map.jq.builtins.registry import builtin
from workload_map.jq.values import is_number, to_float, to_int, type_error

__all__ = ["format_time", "parse_time"]

_LONG_MONTHS = [
    "January", "February", "March", "April", "May", "June",
    "July", "August", "September", "October", "November", "December",
]  # fmt: skip
_SHORT_MONTHS = [m[:3] for m in _LONG_MONTHS]
_LONG_DAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]
_SHORT_DAYS = [d[:3] for d in _LONG_DAYS]
_COMPOSITIONS = {
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


def _local_zone(unix: int) -> tuple[int, str]:
    try:
        tm = _time.localtime(unix)
    except (OverflowError, OSError, ValueError):
        return 0, "UTC"
    return tm.tm_gmtoff or 0, tm.tm_zone or ""


def _instant(unix: int, ns: int, local: bool) -> Instant:
    if local:
        offset, zone = _local_zone(unix)
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


def _epoch_to_instant(v: float, local: bool) -> Instant:
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


def _to_array(t: Instant) -> list[Any]:
    y, m, d, hh, mm, ss, wd, yd = t.fields()
    return [y, m - 1, d, hh, mm, float(ss) + float(t.ns) / 1e9, wd, yd - 1]


def _date(y: int, mon: int, d: int, hh: int, mm: int, ss: int, ns: int, local: bool) -> Instant:
    """Go's time.Date: out-of-range fields carry over (month 13 = January next year)."""
    carry, ns = divmod(ns, 1_000_000_000)
    ss += carry
    y += (mon - 1) // 12
    mon = (mon - 1) % 12 + 1
    wall = (_days_from_civil(y, mon, 1) + d - 1) * 86400 + hh * 3600 + mm * 60 + ss
    if not local:
        return Instant(wall, ns, 0, "UTC")
    offset, _ = _local_zone(wall)
    unix = wall - offset
    offset2, zone = _local_zone(unix)
    if offset2 != offset:
        unix = wall - offset2
        offset2, zone = _local_zone(unix)
    return Instant(unix, ns, offset2, zone)


def _array_to_instant(a: list[Any], local: bool) -> Instant:
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
    return _date(parts[0], parts[1] + 1, parts[2], parts[3], parts[4], parts[5], ns, local)


# ---------------------------------------------------------------------------------------------
# strftime (timefmt-go's Format)


def _go_div(a: int, b: int) -> int:
    """Go's integer division (truncating toward zero)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def _go_mod(a: int, b: int) -> int:
    return a - b * _go_div(a, b)


def _digit(n: int) -> str:
    """timefmt-go's ``byte(n)|'0'``: a digit for 0-9; for a negative year, the byte Go writes
    (not UTF-8 past 0x7f: gojq prints it as U+FFFD)."""
    b = (n % 256) | 0x30
    return chr(b) if b < 0x80 else "\ufffd"


def _digits(num: int, places: int) -> str:
    out = []
    for div in (1000, 100, 10)[3 - (places - 1) :] if places > 1 else ():
        out.append(_digit(_go_div(num, div)))
        num = _go_mod(num, div)
    out.append(_digit(num))
    return "".join(out)


def _pad_int(num: int, width: int, pad: str | None) -> str:
    """timefmt-go's appendInt: the padded widths 2 and 4 write digit bytes directly (so a
    negative number prints as gojq prints it), other widths pad Go's decimal text."""
    if num >= 0:  # the common case: the same as padding the decimal text
        text = str(num)
        return text if pad is None else text.rjust(width, pad)
    if pad is not None:
        if width == 2 and num < 10000:
            if num < 10:
                return pad + _digits(num, 1)
            return _digits(num, 2 if num < 100 else 3 if num < 1000 else 4)
        if width == 4 and num < 10000:
            if num < 1000:
                places = 1 if num < 10 else 2 if num < 100 else 3
                return pad * (4 - places) + _digits(num, places)
            return _digits(num, 4)
        if width not in (2, 4):
            text = str(num)
            pads = max(width - 1, 0)
            return pad * (pads - min(len(text) - 1, pads)) + text
    if num < 100:
        return _digits(num, 1 if num < 10 else 2)
    if num < 10000:
        return _digits(num, 3 if num < 1000 else 4)
    return str(num)


def _pad_str(s: str, width: int, pad: str | None, explicit: bool, upper: bool, swap: bool) -> str:
    if swap:
        s = s.lower() if len(s) > 1 and s[1] < "a" else s.upper()
    elif upper:
        s = s.upper()
    if width > len(s) and pad is not None:
        s = (pad if explicit else " ") * (width - len(s)) + s
    return s


def _iso_week(y: int, yday: int, wd: int) -> tuple[int, int]:
    # ISO weeks start on Monday; week 1 holds the year's first Thursday
    wd_mon = (wd + 6) % 7  # Monday = 0
    thursday_yday = yday - wd_mon + 3
    if thursday_yday < 1:
        py = y - 1
        plen = 366 if (py % 4 == 0 and (py % 100 != 0 or py % 400 == 0)) else 365
        return py, (thursday_yday + plen - 1) // 7 + 1
    ylen = 366 if (y % 4 == 0 and (y % 100 != 0 or y % 400 == 0)) else 365
    if thursday_yday > ylen:
        return y + 1, 1
    return y, (thursday_yday - 1) // 7 + 1


def format_time(t: Instant, fmt: str) -> str:
    """timefmt-go's Format of `t` with a strftime `fmt`."""
    fields = t.fields()
    out: list[str] = []
    i, n = 0, len(fmt)
    while i < n:
        c = fmt[i]
        if c != "%":
            out.append(c)
            i += 1
            continue
        start = i
        i += 1
        if i == n:
            out.append("%")
            break
        pad: str | None = "0"
        explicit = upper = swap = False
        width = 0
        while i < n and fmt[i] in "-_0^#":
            f = fmt[i]
            if f == "-":
                pad, explicit = None, True
            elif f == "_":
                pad, explicit = " ", True
            elif f == "0":
                pad, explicit = "0", True
            elif f == "^":
                upper = True
            else:
                swap = True
            i += 1
        if i < n and fmt[i].isdigit():
            while i < n and fmt[i].isdigit():
                width = min(width * 10 + int(fmt[i]), 1024)
                i += 1
            if pad is None:
                pad, explicit = " ", True
        if i == n:
            out.append(_pad_str(fmt[start:], width, pad, explicit, False, False))
            break
        b = fmt[i]
        i += 1
        if b == ":":
            colons = 1
            while i < n and fmt[i] == ":":
                colons += 1
                i += 1
            if i < n and fmt[i] == "z" and colons <= 3:
                out.append(_format_offset(t.offset, colons, width, pad))
                i += 1
            else:
                out.append(fmt[start:i])
            continue
        if b in _COMPOSITIONS:
            for ch in _COMPOSITIONS[b]:
                if ch.isalpha():
                    out.append(_directive(t, fields, ch, 0, "0", False, upper, False))
                else:
                    out.append(ch)
            continue
        text = _directive(t, fields, b, width, pad, explicit, upper, swap)
        if text is None:
            out.append(_pad_str(fmt[start : i - 1], width - 1, pad, explicit, False, False))
            out.append(b)
        else:
            out.append(text)
    return "".join(out)


def _directive(
    t: Instant,
    fields: tuple[int, int, int, int, int, int, int, int],
    b: str,
    width: int,
    p: str | None,
    explicit: bool,
    upper: bool,
    swap: bool,
) -> Any:
    y, mon, d, hh, mm, ss, wd, yday = fields
    if b == "Y":
        return _pad_int(y, width or 4, p)
    if b == "y":
        return _pad_int(_go_mod(y, 100), max(width, 2), p)
    if b == "C":
        return _pad_int(_go_div(y, 100), max(width, 2), p)
    if b == "g":
        return _pad_int(_go_mod(_iso_week(y, yday, wd)[0], 100), max(width, 2), p)
    if b == "G":
        return _pad_int(_iso_week(y, yday, wd)[0], width or 4, p)
    if b == "m":
        return _pad_int(mon, max(width, 2), p)
    if b == "B":
        return _pad_str(_LONG_MONTHS[mon - 1], width, p, explicit, upper, swap)
    if b in "bh":
        return _pad_str(_SHORT_MONTHS[mon - 1], width, p, explicit, upper, swap)
    if b == "A":
        return _pad_str(_LONG_DAYS[wd], width, p, explicit, upper, swap)
    if b == "a":
        return _pad_str(_SHORT_DAYS[wd], width, p, explicit, upper, swap)
    if b == "w":
        return _pad_int(wd, width, p)
    if b == "u":
        return _pad_int(wd or 7, width, p)
    if b == "V":
        return _pad_int(_iso_week(y, yday, wd)[1], max(width, 2), p)
    if b == "U":
        return _pad_int((yday + 6 - wd) // 7, max(width, 2), p)
    if b == "W":
        week = yday
        if wd > 0:
            week -= wd - 7
        return _pad_int(week // 7, max(width, 2), p)
    if b in "de":
        return _pad_int(d, max(width, 2), " " if (b == "e" and not explicit) else p)
    if b == "j":
        return _pad_int(yday, max(width, 3), p)
    if b in "Hk":
        return _pad_int(hh, max(width, 2), " " if (b == "k" and not explicit) else p)
    if b in "Il":
        return _pad_int(hh % 12 or 12, max(width, 2), " " if (b == "l" and not explicit) else p)
    if b in "pP":
        sw = (not (upper or swap)) if b == "P" else swap
        return _pad_str("AM" if hh < 12 else "PM", width, p, explicit, upper, sw)
    if b == "M":
        return _pad_int(mm, max(width, 2), p)
    if b == "S":
        return _pad_int(ss, max(width, 2), p)
    if b == "s":
        return _pad_int(t.unix, width, " " if not explicit else p)
    if b == "f":
        return _pad_int(t.ns // 1000, width or 6, p)
    if b == "Z" and t.zone:
        return _pad_str(t.zone, width, p, explicit, upper, swap)
    if b in "Zz":
        return _format_offset(t.offset, 0, width, p)
    if b == "t":
        return _pad_str("\t", width, p, explicit, False, False)
    if b == "n":
        return _pad_str("\n", width, p, explicit, False, False)
    if b == "%":
        return _pad_str("%", width, p, explicit, False, False)
    return None


def _format_offset(offset: int, colons: int, width: int = 0, pad: str | None = "0") -> str:
    """timefmt-go's `%z` (`%:z`, `%::z`, `%:::z`), including its padding and width rules."""
    buf: list[str] = [pad] * (width - 1) if pad is not None and width > 1 else []
    j = len(buf)
    buf.append("-" if offset < 0 else "+")
    offset = abs(offset)
    k = len(buf)
    buf.extend(_pad_int(offset // 3600, 2, pad))
    if buf[k] == " ":
        buf[k - 1], buf[k] = buf[k], buf[k - 1]
    rest = offset % 3600
    if colons <= 2 or rest != 0:
        if colons:
            buf.append(":")
        buf.extend(f"{rest // 60:02d}")
        sec = rest % 60
        if colons == 2 or (colons == 3 and sec != 0):
            buf.extend(f":{sec:02d}")
    cut = min(len(buf) - j - 1, j)
    if cut > 0:
        buf = buf[: j - cut] + buf[j:]
        if pad == "0":
            buf[0], buf[j - cut] = buf[j - cut], buf[0]
    return "".join(buf)


# ---------------------------------------------------------------------------------------------
# strptime (timefmt-go's Parse)


class _ParseError(Exception):
    pass


def _parse_number(src: str, j: int, size: int, lo: int, hi: int, f: str) -> tuple[int, int]:
    value = 0
    i = j
    end = min(j + size, len(src))
    while i < end and "0" <= src[i] <= "9":
        value = value * 10 + ord(src[i]) - 48
        i += 1
    if i == j or value < lo or value > hi:
        raise _ParseError(f'cannot parse "%{f}"')
    return value, i


def _parse_any(src: str, j: int, names: list[str], f: str) -> tuple[int, int]:
    for idx, name in enumerate(names):
        if src[j : j + len(name)].lower() == name.lower():
            return idx + 1, j + len(name)
    raise _ParseError(f'cannot parse "%{f}"')


def parse_time(src: str, fmt: str) -> Instant:
    """timefmt-go's Parse (UTC unless the text has a zone); raises ValueError with its cause."""
    from workload_map.jq.encoding import dumps

    try:
        return _parse(src, fmt)
    except _ParseError as e:
        raise ValueError(
            f"failed to parse {dumps(src, None)} with {dumps(fmt, None)}: {e}"
        ) from None


def _parse(src: str, fmt: str) -> Instant:
    year, month, day, hour, minute, second, ns = 1900, 1, 0, 0, 0, 0, 0
    j = 0
    week, weekday, yday = 0, 0, 0
    century, weekstart = -1, -1
    pm = has_iso_year = has_offset = False
    offset: int | None = None
    zone = "UTC"
    n = len(src)
    items: list[str] = []
    i = 0
    # expand compositions first: timefmt treats their letters as directives, others as literals
    while i < len(fmt):
        c = fmt[i]
        if c == "%":
            i += 1
            if i == len(fmt):
                raise _ParseError('stray "%"')
            b = fmt[i]
            if b in _COMPOSITIONS:
                for ch in _COMPOSITIONS[b]:
                    items.append("%" + ch if ch.isalpha() else ch)
            elif b == ":":
                k = i
                while k < len(fmt) and fmt[k] == ":":
                    k += 1
                colons = k - i
                if k < len(fmt) and fmt[k] == "z" and colons <= 2:
                    items.append("%" + ":" * colons + "z")
                    i = k
                else:
                    raise _ParseError(f"expected 'z' after \"%{':' * min(colons, 2)}\"")
            else:
                items.append("%" + b)
        else:
            items.append(c)
        i += 1
    for item in items:
        if len(item) == 1:
            if j >= n or src[j] != item:
                raise _ParseError(f"expected {_go_quote(item)}")
            j += 1
            continue
        b = item[-1]
        if b == "Y":
            year, j = _parse_number(src, j, 4, 0, 9999, "Y")
        elif b == "y":
            year, j = _parse_number(src, j, 2, 0, 99, "y")
            year += 2000 if year < 69 else 1900
        elif b == "C":
            century, j = _parse_number(src, j, 2, 0, 99, "C")
        elif b == "g":
            year, j = _parse_number(src, j, 2, 0, 99, "g")
            year += 2000
            has_iso_year = True
        elif b == "G":
            year, j = _parse_number(src, j, 4, 0, 9999, "G")
            has_iso_year = True
        elif b == "m":
            month, j = _parse_number(src, j, 2, 1, 12, "m")
        elif b == "B":
            month, j = _parse_any(src, j, _LONG_MONTHS, "B")
        elif b in "bh":
            month, j = _parse_any(src, j, _SHORT_MONTHS, b)
        elif b == "A":
            weekday, j = _parse_any(src, j, _LONG_DAYS, "A")
        elif b == "a":
            weekday, j = _parse_any(src, j, _SHORT_DAYS, "a")
        elif b == "w":
            weekday, j = _parse_number(src, j, 1, 0, 6, "w")
            weekday += 1
        elif b == "u":
            weekday, j = _parse_number(src, j, 1, 1, 7, "u")
            weekday = weekday % 7 + 1
        elif b in "VUW":
            week, j = _parse_number(src, j, 2, 1 if b == "V" else 0, 53, b)
            weekstart = {"V": 4, "U": 0, "W": 1}[b]
            weekday = weekday or (1 if b == "U" else 2)
        elif b in "de":
            if b == "e" and j < n and src[j] == " ":
                j += 1
            day, j = _parse_number(src, j, 2, 1, 31, b)
        elif b == "j":
            yday, j = _parse_number(src, j, 3, 1, 366, "j")
        elif b in "Hk":
            if b == "k" and j < n and src[j] == " ":
                j += 1
            hour, j = _parse_number(src, j, 2, 0, 23, b)
        elif b in "Il":
            if b == "l" and j < n and src[j] == " ":
                j += 1
            hour, j = _parse_number(src, j, 2, 1, 12, b)
            if hour == 12:
                hour = 0
        elif b in "pP":
            ampm, j = _parse_any(src, j, ["AM", "PM"], b)
            pm = ampm == 2
        elif b == "M":
            minute, j = _parse_number(src, j, 2, 0, 59, "M")
        elif b == "S":
            second, j = _parse_number(src, j, 2, 0, 60, "S")
        elif b == "s":
            unix, j = _parse_number(src, j, 10, 0, (1 << 63) - 1, "s")
            year, month, day, hour, minute, second, _w, _y = Instant(unix, 0, 0, "").fields()
        elif b == "f":
            k = j
            micro, j = _parse_number(src, j, 6, 0, 999999, "f")
            micro *= 10 ** (6 - (j - k))
            ns = micro * 1000
        elif b == "Z":
            k = j
            while j < n and "A" <= src[j] <= "Z":
                j += 1
            name = src[k:j]
            if len(name) < 3 and name != "Z":
                raise _ParseError(f'cannot parse {_go_quote_str(name)} with "%Z"')
            zone = name
            if not has_offset:
                offset = 0 if name in ("UTC", "GMT", "Z") else _zone_offset(name)
        elif b == "z":
            colons = len(item) - 2
            if j >= n:
                raise _ParseError('cannot parse "%' + ":" * colons + 'z"')
            if src[j] == "Z":
                offset, zone, j = 0, "UTC", j + 1
            elif src[j] in "+-":
                sign = -1 if src[j] == "-" else 1
                k = j
                try:
                    oh, j = _parse_number(src, j + 1, 2, 0, 23, "z")
                except _ParseError:
                    raise _ParseError('cannot parse "%' + ":" * colons + 'z"') from None
                if j != k + 3:
                    raise _ParseError('cannot parse "%' + ":" * colons + 'z"')
                if j < n and src[j] == ":":
                    j += 1
                elif colons > 0:
                    raise _ParseError("expected ':' for \"%" + ":" * colons + 'z"')
                om = 0
                k = j
                try:
                    om, j2 = _parse_number(src, j, 2, 0, 59, "z")
                    if j2 == k + 2:
                        j = j2
                    else:
                        om = 0
                except _ParseError:
                    if colons > 0:
                        raise _ParseError('cannot parse "%' + ":" * colons + 'z"') from None
                offset = sign * (oh * 3600 + om * 60)
                has_offset = True
                zone = ""
            else:
                raise _ParseError('cannot parse "%' + ":" * colons + 'z"')
        elif b in "tn":
            k = j
            while j < n and src[j] in " \t\n\v\f\r":
                j += 1
            if k == j:
                raise _ParseError(f'expected a space for "%{b}"')
        elif b == "%":
            if j >= n or src[j] != "%":
                raise _ParseError("expected '%'")
            j += 1
        else:
            raise _ParseError(f'unexpected format "%{b}"')
    if j < n:
        from workload_map.jq.encoding import dumps

        raise _ParseError(f"unparsed string {dumps(src[j:], None)}")
    if pm:
        hour += 12
    if century >= 0:
        year = century * 100 + year % 100
    off = offset or 0
    if day == 0:
        if yday > 0:
            if has_iso_year:
                raise _ParseError('use "%Y" to parse non-ISO year for "%j"')
            t = _date(year, 1, yday, hour, minute, second, ns, False)
            return Instant(t.unix - off, ns, off, zone)
        if weekstart >= 0:
            if weekstart == 4:
                if not has_iso_year:
                    raise _ParseError('use "%G" to parse ISO year for "%V"')
            elif has_iso_year:
                raise _ParseError('use "%Y" to parse non-ISO year for "%U" or "%W"')
            if weekstart > 0 and weekday == 1:
                week += 1
            base = _date(year, 1, -weekstart, hour, minute, second, ns, False)
            base_wd = base.fields()[6]
            shift = week * 7 - base_wd + weekday - 1
            return Instant(base.unix + shift * 86400 - off, ns, off, zone)
        day = 1
    t = _date(year, month, day, hour, minute, second, ns, False)
    return Instant(t.unix - off, ns, off, zone)


def _zone_offset(name: str) -> int:
    local_off, local_name = _local_zone(int(_time.time()))
    return local_off if name == local_name else 0


def _go_quote(c: str) -> str:
    if c == "'":
        return "'\\''"
    return f"'{c}'"


def _go_quote_str(s: str) -> str:
    from workload_map.jq.encoding import dumps

    return dumps(s, None)


# ---------------------------------------------------------------------------------------------
# natives


@builtin("gmtime", 0)
def f_gmtime(v: Any) -> Any:
    if not is_number(v):
        raise type_error("gmtime", v)
    return _to_array(_epoch_to_instant(to_float(v), False))


@builtin("localtime", 0)
def f_localtime(v: Any) -> Any:
    if not is_number(v):
        raise type_error("localtime", v)
    return _to_array(_epoch_to_instant(to_float(v), True))


@builtin("mktime", 0)
def f_mktime(v: Any) -> Any:
    if type(v) is not list:
        raise type_error("mktime", v)
    try:
        return _array_to_instant(v, False).epoch()
    except ValueError as e:
        raise wrap_error("mktime", v, str(e)) from None


def _strftime(name: str, v: Any, fmt: Any, local: bool) -> Any:
    if is_number(v):
        v = _to_array(_epoch_to_instant(to_float(v), local))
    if type(v) is not list or type(fmt) is not str:
        raise type_error(name, v, fmt)
    try:
        t = _array_to_instant(v, local)
    except ValueError as e:
        raise wrap_error(name, v, str(e), fmt) from None
    return format_time(t, fmt)


@builtin("strftime", 1)
def f_strftime(v: Any, fmt: Any) -> Any:
    return _strftime("strftime", v, fmt, False)


@builtin("strflocaltime", 1)
def f_strflocaltime(v: Any, fmt: Any) -> Any:
    return _strftime("strflocaltime", v, fmt, True)


@builtin("strptime", 1)
def f_strptime(v: Any, fmt: Any) -> Any:
    if type(v) is not str or type(fmt) is not str:
        raise type_error("strptime", v, fmt)
    try:
        t = parse_time(v, fmt)
    except ValueError as e:
        raise wrap_error("strptime", v, str(e), fmt) from None
    return _to_array(_epoch_to_instant(t.epoch(), False))


@builtin("now", 0)
def f_now(_v: Any) -> Any:
    ns = _time.time_ns()
    return float(ns // 1_000_000_000) + float(ns % 1_000_000_000) / 1e9
