"""Date builtins as gojq has them: `gmtime localtime mktime strftime strflocaltime strptime now`.

gojq formats and parses with itchyny/timefmt-go rather than libc, keeps nanoseconds (fractional
seconds survive `gmtime`/`mktime`), always fills weekday and day of year, and accepts numeric
`%z` offsets. Broken-down time is `[year, month0, mday, hours, minutes, seconds(float), wday,
yday0]`. Calendar arithmetic is proleptic Gregorian on integers, so any year works; the local
zone (for `localtime`/`strflocaltime`) comes from the C library (the `TZ` environment variable).
"""

from __future__ import annotations

import time as _time
from typing import Any

from workload_map.jq.builtins.conversions import wrap_error
from workload_map.jq.builtins.instants import (
    array_to_instant,
    epoch_to_instant,
    to_array,
)
from workload_map.jq.builtins.marks import builtin
from workload_map.jq.builtins.timeformat import format_time
from workload_map.jq.builtins.timeparse import parse_time
from workload_map.jq.values import is_number, to_float, type_error

__all__: list[str] = []

# ---------------------------------------------------------------------------------------------
# natives


@builtin("gmtime", 0)
def f_gmtime(v: Any) -> Any:
    if not is_number(v):
        raise type_error("gmtime", v)
    return to_array(epoch_to_instant(to_float(v), False))


@builtin("localtime", 0)
def f_localtime(v: Any) -> Any:
    if not is_number(v):
        raise type_error("localtime", v)
    return to_array(epoch_to_instant(to_float(v), True))


@builtin("mktime", 0)
def f_mktime(v: Any) -> Any:
    if type(v) is not list:
        raise type_error("mktime", v)
    try:
        return array_to_instant(v, False).epoch()
    except ValueError as e:
        raise wrap_error("mktime", v, str(e)) from None


def _strftime(name: str, v: Any, fmt: Any, local: bool) -> Any:
    if is_number(v):
        v = to_array(epoch_to_instant(to_float(v), local))
    if type(v) is not list or type(fmt) is not str:
        raise type_error(name, v, fmt)
    try:
        t = array_to_instant(v, local)
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
    return to_array(epoch_to_instant(t.epoch(), False))


@builtin("now", 0)
def f_now(_v: Any) -> Any:
    ns = _time.time_ns()
    return float(ns // 1_000_000_000) + float(ns % 1_000_000_000) / 1e9
