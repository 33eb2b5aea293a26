"""Regular expressions with Go's RE2 semantics (gojq uses Go `regexp`), via google-re2.

RE2 gives the same syntax and matching as Go: no backreferences or look-around, ASCII-only
`\\w \\d \\s \\b`, leftmost-first. Two Go behaviours are reproduced on top: global matching skips
an empty match right after the previous match, and `split/2` follows Go's `Regexp.Split`.
Flags are gojq's: `g` global, `i` case-insensitive, `m` dot matches newline (`(?s)`); any other
flag is `unsupported regular expression flag: "…"`. Offsets and lengths count code points.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import re2  # type: ignore[import-untyped]

from workload_map.jq import values
from workload_map.jq.builtins.marks import builtin
from workload_map.jq.encode import dumps
from workload_map.jq.errors import JqLimitError, JqRuntimeError
from workload_map.jq.values import type_error, type_error_preview, valid_text

__all__ = ["compile_regexp", "f_capture", "f_match"]

_OPTIONS = re2.Options()
_OPTIONS.log_errors = False
_CACHE: dict[tuple[str, str], Any] = {}
_MAX_MATCHES = values.MAX_ARRAY_LENGTH // 16  # each match is an object of four fields and a list

# RE2 (C++) error codes → Go regexp/syntax wording
_GO_CODES = {
    "missing )": "missing closing )",
    "missing ]": "missing closing ]",
    "unexpected )": "unexpected )",
    "missing (": "unexpected )",
    "trailing \\": "trailing backslash at end of expression",
    "no argument for repetition operator": "missing argument to repetition operator",
    "invalid repetition size": "invalid repeat count",
    "bad repetition operator": "invalid nested repetition operator",
    "invalid perl operator": "invalid or unsupported Perl syntax",
    "invalid named capture group": "invalid named capture",
}


def _go_error(raw: Any) -> str:
    text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)
    code, sep, arg = text.partition(": ")
    if not sep:
        code, arg = text, ""
    return f"error parsing regexp: {_GO_CODES.get(code, code)}: `{arg}`"


def compile_regexp(pattern: str, flags: str) -> Any:
    """Compile with gojq's flag rules; errors carry gojq's messages."""
    key = (pattern, flags)
    r = _CACHE.get(key)
    if r is not None:
        return r
    if any(c not in "gim" for c in flags):
        raise JqRuntimeError(f"unsupported regular expression flag: {dumps(flags, None)}")
    re_text = valid_text(pattern)  # RE2 takes UTF-8: a caller's lone surrogate reads as U+FFFD
    if "i" in flags:
        re_text = "(?i)" + re_text
    if "m" in flags:
        re_text = "(?s)" + re_text
    try:
        r = re2.compile(re_text, options=_OPTIONS)
    except re2.error as e:
        raise JqRuntimeError(
            f"invalid regular expression {dumps(re_text, None)}: {_go_error(e.args[0])}"
        ) from None
    if len(_CACHE) > 512:
        _CACHE.clear()
    _CACHE[key] = r
    return r


def find_all(r: Any, s: str) -> Iterator[Any]:
    """Go's FindAll: every match, skipping an empty match that directly follows a match."""
    pos, n, prev_end = 0, len(s), -1
    while pos <= n:
        m = r.search(s, pos)
        if m is None:
            return
        start, end = m.span()
        accept = True
        if end == pos:
            if start == prev_end:
                accept = False
            pos += 1
        else:
            pos = end
        prev_end = end
        if accept:
            yield m


def _match_object(r: Any, m: Any, names: dict[int, str]) -> dict[str, Any]:
    start, end = m.span()
    captures: list[Any] = []
    for g in range(1, r.groups + 1):
        gs, ge = m.span(g)
        name = names.get(g)
        if gs < 0:
            captures.append({"name": name, "offset": -1, "length": 0, "string": None})
        else:
            captures.append({"name": name, "offset": gs, "length": ge - gs, "string": m.group(g)})
    return {"offset": start, "length": end - start, "string": m.group(0), "captures": captures}


@builtin("_match", 3)
def f_match(v: Any, pattern: Any, flags: Any, testing: Any) -> Any:
    name = "test" if testing is True else "match"
    fl = ""
    if flags is not None:
        if type(flags) is not str:
            raise type_error(name, "", pattern, flags)
        fl = flags
    if type(v) is not str or type(pattern) is not str:
        raise type_error(name, v, pattern, flags)
    r = compile_regexp(pattern, fl)
    v = valid_text(v)
    if testing is True:
        return r.search(v) is not None
    names = {i: n for n, i in r.groupindex.items()}
    if "g" in fl:
        out: list[Any] = []
        for m in find_all(r, v):
            if len(out) >= _MAX_MATCHES:
                raise JqLimitError(f"match: more than {_MAX_MATCHES} matches in one string")
            out.append(_match_object(r, m, names))
        return out
    m = r.search(v)
    return [] if m is None else [_match_object(r, m, names)]


@builtin("_capture", 0)
def f_capture(v: Any) -> Any:
    if type(v) is not dict:
        raise JqRuntimeError(f"expected an object but got: {type_error_preview(v)}")
    captures = v.get("captures")
    if type(captures) is not list:
        raise JqRuntimeError(f"expected an array but got: {type_error_preview(captures)}")
    out: dict[str, Any] = {}
    for c in captures:
        if type(c) is dict and type(c.get("name")) is str:
            out[c["name"]] = c.get("string")
    return out


@builtin("split", 2)
def f_split2(v: Any, pattern: Any, flags: Any) -> Any:
    if type(v) is not str:
        raise type_error("split", v)
    if type(pattern) is not str:
        raise type_error("split", "")
    fl = ""
    if flags is not None:
        if type(flags) is not str:
            raise type_error("split", flags)
        fl = flags
    r = compile_regexp(pattern, fl)
    v = valid_text(v)
    if pattern and v == "":
        return [""]
    out: list[Any] = []
    beg = end = 0
    for m in find_all(r, v):
        end = m.start()
        if m.end() != 0:
            if len(out) >= values.MAX_ARRAY_LENGTH:
                raise JqLimitError(
                    f"split: the result would exceed {values.MAX_ARRAY_LENGTH} elements"
                )
            out.append(v[beg:end])
        beg = m.end()
    if end != len(v):
        out.append(v[beg:])
    return out
