"""fromjson: a JSON text read back into a value.

Its own group, so the JSON text reader (:mod:`workload_map.jq.decode`, six regular expressions
compiled at import: 5.1M instructions) loads only for a program that calls it; the other
conversions load with every program (docs/cli.md, start-up).
"""

from __future__ import annotations

from typing import Any

from workload_map.jq import decode
from workload_map.jq.builtins.conversions import wrap_error
from workload_map.jq.builtins.marks import builtin
from workload_map.jq.values import type_error

__all__: list[str] = []


@builtin("fromjson", 0)
def f_fromjson(v: Any) -> Any:
    if type(v) is not str:
        raise type_error("fromjson", v)
    pos = decode.skip_whitespace(v, 0)
    try:
        if pos == len(v):
            raise decode.JsonDecodeError("EOF", pos)  # Go's decoder on empty input
        value, end = decode.decode_at(v, pos)
    except decode.JsonDecodeError as e:
        raise wrap_error("fromjson", v, e.message) from None
    if decode.skip_whitespace(v, end) != len(v):
        raise type_error("fromjson", v)
    return value
