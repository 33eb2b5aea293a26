"""`strptime` as gojq has it (itchyny/timefmt-go's Parse, not libc's): numeric `%z` offsets,
nanoseconds kept, weekday and day of year always filled."""

from __future__ import annotations

import time as _time

from workload_map.jq.builtins.instants import (
    COMPOSITIONS,
    LONG_DAYS,
    LONG_MONTHS,
    SHORT_DAYS,
    SHORT_MONTHS,
    Instant,
    civil_instant,
    local_zone,
)
from workload_map.jq.encode import dumps

__all__ = ["parse_time"]

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
            if b in COMPOSITIONS:
                for ch in COMPOSITIONS[b]:
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
            month, j = _parse_any(src, j, LONG_MONTHS, "B")
        elif b in "bh":
            month, j = _parse_any(src, j, SHORT_MONTHS, b)
        elif b == "A":
            weekday, j = _parse_any(src, j, LONG_DAYS, "A")
        elif b == "a":
            weekday, j = _parse_any(src, j, SHORT_DAYS, "a")
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
            t = civil_instant(year, 1, yday, hour, minute, second, ns, False)
            return Instant(t.unix - off, ns, off, zone)
        if weekstart >= 0:
            if weekstart == 4:
                if not has_iso_year:
                    raise _ParseError('use "%G" to parse ISO year for "%V"')
            elif has_iso_year:
                raise _ParseError('use "%Y" to parse non-ISO year for "%U" or "%W"')
            if weekstart > 0 and weekday == 1:
                week += 1
            base = civil_instant(year, 1, -weekstart, hour, minute, second, ns, False)
            base_wd = base.fields()[6]
            shift = week * 7 - base_wd + weekday - 1
            return Instant(base.unix + shift * 86400 - off, ns, off, zone)
        day = 1
    t = civil_instant(year, month, day, hour, minute, second, ns, False)
    return Instant(t.unix - off, ns, off, zone)


def _zone_offset(name: str) -> int:
    local_off, local_name = local_zone(int(_time.time()))
    return local_off if name == local_name else 0


def _go_quote(c: str) -> str:
    if c == "'":
        return "'\\''"
    return f"'{c}'"


def _go_quote_str(s: str) -> str:
    return dumps(s, None)
