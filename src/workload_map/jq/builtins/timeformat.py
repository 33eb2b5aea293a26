"""`strftime` as gojq has it (itchyny/timefmt-go's Format, not libc's)."""

from __future__ import annotations

from typing import Any

from workload_map.jq.builtins.instants import (
    COMPOSITIONS,
    LONG_DAYS,
    LONG_MONTHS,
    SHORT_DAYS,
    SHORT_MONTHS,
    Instant,
)

__all__ = ["format_time"]

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
        if b in COMPOSITIONS:
            for ch in COMPOSITIONS[b]:
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
        return _pad_str(LONG_MONTHS[mon - 1], width, p, explicit, upper, swap)
    if b in "bh":
        return _pad_str(SHORT_MONTHS[mon - 1], width, p, explicit, upper, swap)
    if b == "A":
        return _pad_str(LONG_DAYS[wd], width, p, explicit, upper, swap)
    if b == "a":
        return _pad_str(SHORT_DAYS[wd], width, p, explicit, upper, swap)
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
