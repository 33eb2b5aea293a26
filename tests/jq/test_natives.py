"""Native builtins with hand-checked expectations (gojq v0.12.18 behaviour), no oracle needed."""

from __future__ import annotations

import copy
import math
from typing import Any

import pytest

from workload_map.jq.builtins import registry
from workload_map.jq.builtins.paths import Allocator, delpaths, getpath, setpath
from workload_map.jq.encode import dumps
from workload_map.jq.errors import JqHaltError, JqRuntimeError


def call(name: str, inp: Any, *args: Any) -> Any:
    # getpath/1 is a special form (path mode too); its value level is paths.getpath
    fn = getpath if (name, len(args)) == ("getpath", 1) else registry.native(name, len(args))
    return fn(inp, *args)


def err(name: str, inp: Any, *args: Any) -> str:
    with pytest.raises(JqRuntimeError) as e:
        call(name, inp, *args)
    return e.value.message


def test_registry_covers_gojq_value_builtins() -> None:
    names = {b.name for b in registry.entries() if b.kind == "value"}
    for name in ["length", "keys", "has", "add", "tonumber", "tostring", "contains", "indices",
                 "ltrimstr", "trim", "implode", "split", "ascii_downcase", "tojson", "fromjson",
                 "flatten", "min", "_sort_by", "_group_by", "join", "transpose", "bsearch",
                 "setpath", "delpaths", "gmtime", "mktime", "strftime", "strptime",
                 "_match", "_capture", "@base64d", "format", "floor", "pow", "fma", "frexp",
                 "significand", "isnormal", "error", "halt_error", "toboolean", "abs"]:  # fmt: skip
        assert name in names, name
    assert registry.lookup("_range", 3).kind == "stream"  # type: ignore[union-attr]
    assert registry.lookup("getpath", 1).kind == "special"  # type: ignore[union-attr]


def test_length_and_friends() -> None:
    assert [call("length", v) for v in [None, -5, "日本", [1], {"a": 1}]] == [0, 5, 2, 1, 1]
    assert err("length", True) == "length cannot be applied to: boolean (true)"
    assert call("utf8bytelength", "日本") == 6
    assert err("abs", "abc") == 'abs cannot be applied to: string ("abc")'
    assert call("keys", {"b": 1, "a": 2}) == ["a", "b"]
    assert call("has", [1, 2], 1.5) is True
    assert err("has", {"a": 1}, 0) == 'has(0) cannot be applied to: object ({"a":1})'


def test_add_and_entries() -> None:
    assert call("add", [1, None, 2.5]) == 3.5
    assert call("add", ["a", None, "b"]) == "ab"
    assert call("add", {"x": [1], "y": [2]}) == [1, 2]
    assert call("add", []) is None
    assert err("add", ["a", 1]) == 'cannot add: string ("a") and number (1)'
    assert call("to_entries", {"b": 1, "a": 2}) == [
        {"key": "a", "value": 2},
        {"key": "b", "value": 1},
    ]
    assert call("from_entries", [{"name": "a", "Value": 1}, {"key": False, "Key": "b"}]) == {
        "a": 1,
        "b": None,
    }
    assert err("from_entries", [{"key": 1}]).endswith(
        "expected a string for object key but got: number (1)"
    )


def test_tonumber_tostring() -> None:
    assert call("tonumber", "100000000000000000001") == 100000000000000000001
    assert call("tonumber", "1.") == 1.0 and call("tonumber", ".5") == 0.5
    assert err("tonumber", " 1") == 'tonumber cannot be applied to " 1": invalid number'
    assert err("tonumber", "nan") == 'tonumber cannot be applied to "nan": invalid number'
    assert call("tostring", {"b": [1.0], "a": "x"}) == '{"a":"x","b":[1]}'
    assert call("toboolean", "true") is True
    assert err("toboolean", "yes") == 'toboolean cannot be applied to "yes": invalid boolean'


def test_strings() -> None:
    assert call("indices", "ababa", "aba") == [0, 2]
    assert call("index", "äbc", "b") == 1 and call("rindex", "ababa", "aba") == 2
    assert call("indices", [1, 2, 1, 2], [1, 2]) == [0, 2]
    assert call("ltrimstr", "foobar", "foo") == "bar"
    assert err("ltrimstr", 1, "a") == 'ltrimstr("a") cannot be applied to: number (1)'
    assert call("trimstr", "xaxx", "x") == "ax"
    assert call("trim", "\u00a0 x \n") == "x" and call("ltrim", " x ") == "x "
    assert call("implode", [97, -1, 0xD800]) == "a\ufffd\ufffd"
    assert err("implode", ["a"]) == 'implode cannot be applied to: array (["a"])'
    assert call("split", "a,b,,c", ",") == ["a", "b", "", "c"]
    assert call("ascii_upcase", "abc-ä") == "ABC-ä"
    assert call("contains", "foobar", "bar") is True
    assert call("contains", [1, [2, 3]], [[2]]) is True
    assert err("contains", True, False) == "contains(false) cannot be applied to: boolean (true)"
    assert call("join", ["a", 1, None, True], "-") == "a-1--true"
    assert err("join", [[1]], ",") == "join cannot be applied to an array including: array ([1])"


def test_json() -> None:
    assert call("tojson", [1.0, "\x7f"]) == '[1,"\\u007f"]'
    assert dumps(call("fromjson", "[1.0, 1e1000]"), None) == "[1.0,1e1000]"
    assert err("fromjson", "[1,2") == 'fromjson cannot be applied to "[1,2": unexpected EOF'
    assert err("fromjson", "") == 'fromjson cannot be applied to "": EOF'
    assert err("fromjson", "1 2") == 'fromjson cannot be applied to: string ("1 2")'


def test_sorting_and_grouping() -> None:
    data = [3, "a", None, [1], {"a": 1}, True, False, 1.5]
    assert call("sort", data) == [None, False, True, 1.5, 3, "a", [1], {"a": 1}]
    assert call("_sort_by", ["b", "a", "c"], [[2], [1], [2]]) == ["a", "b", "c"]
    assert call("_group_by", [1, 2, 3, 4], [[1], [0], [1], [0]]) == [[2, 4], [1, 3]]
    assert call("_unique_by", ["a", "bb", "c"], [[1], [2], [1]]) == ["a", "bb"]
    assert call("_min_by", ["x", "y"], [[1], [1]]) == "x"
    assert call("_max_by", ["x", "y"], [[1], [1]]) == "y"
    assert call("unique", [2, 1, 2, 1.0]) == [1, 2]
    assert call("min", []) is None
    assert err("_sort_by", [1], []) == "sort_by([]) cannot be applied to [1]: length mismatch"
    assert call("flatten", [1, [2, [3]]], 1) == [1, 2, [3]]
    assert err("flatten", [1], -1) == "flatten depth should not be negative: -1"
    assert call("transpose", [[1, 2], [3]]) == [[1, 3], [2, None]]
    assert call("bsearch", [1, 2, 3], 0) == -1


def test_range_stream() -> None:
    assert list(registry.native("_range", 3)(None, 0, 5, 2)) == [0, 2, 4]
    assert list(registry.native("_range", 3)(None, 5, 0, -2)) == [5, 3, 1]
    assert list(registry.native("_range", 3)(None, 0, 3, 0)) == []


def test_paths_never_mutate_the_input() -> None:
    doc = {"a": [1, {"b": 2}], "c": {"d": 3}}
    before = copy.deepcopy(doc)
    assert setpath(doc, ["a", 1, "b"], 9) == {"a": [1, {"b": 9}], "c": {"d": 3}}
    assert setpath(doc, ["x", 2], 1) == {**before, "x": [None, None, 1]}
    assert delpaths(doc, [["a", 0], ["c", "d"]]) == {"a": [{"b": 2}], "c": {}}
    assert call("getpath", doc, ["a", 1, "b"]) == 2
    assert call("getpath", doc, ["z", "y"]) is None
    assert doc == before
    assert err("getpath", {"a": 1}, ["a", "b"]) == (
        'getpath(["a","b"]) cannot be applied to: object ({"a":1})'
    )
    assert err("getpath", [1], ["a"]) == (
        'getpath(["a"]) cannot be applied to [1]: expected an object but got: array ([1])'
    )
    assert err("setpath", [], [-1], 1) == (
        "setpath([-1]; 1) cannot be applied to []: array index should not be negative: -1"
    )
    assert err("setpath", [], [536870912], 1).endswith("array index too large: 536870912")
    assert delpaths([0, 1, 2, 3], [[1], [2]]) == [0, 3]
    assert delpaths([0, 1, 2, 3], [[{"start": 1, "end": 3}]]) == [0, 3]
    assert setpath([0, 1, 2], [{"start": 1, "end": 2}], ["x", "y"]) == [0, "x", "y", 2]
    assert delpaths(None, [["a"]]) == {}  # gojq returns its nil map


def test_allocator_updates_in_place_after_the_first_copy() -> None:
    data = list(range(5))
    alloc = Allocator()
    out: Any = data
    for i in range(5):
        out = setpath(out, [i], 0, alloc)
    assert out == [0] * 5 and data == [0, 1, 2, 3, 4]


def test_deep_paths() -> None:
    deep = setpath(None, [0] * 10000, 0)
    assert call("flatten", deep) == [0]
    assert delpaths(deep, [[0] * 10000]) is not None


def test_errors_and_halt() -> None:
    with pytest.raises(JqRuntimeError) as e:
        call("error", None, {"a": 1})
    assert e.value.value == {"a": 1} and e.value.message == 'error: {"a":1}'
    with pytest.raises(JqRuntimeError) as e:
        call("error", None, None)
    assert e.value.value is None
    with pytest.raises(JqHaltError) as h:
        call("halt_error", "bye", 3)
    assert h.value.exit_code == 3 and h.value.value == "bye"


def test_regex() -> None:
    m = call("_match", "foo bar foo", "foo", "g", False)
    assert [x["offset"] for x in m] == [0, 8]
    caps = call("_match", "xyz", "(?<a>x)(q)?", None, False)[0]["captures"]
    assert caps == [
        {"name": "a", "offset": 0, "length": 1, "string": "x"},
        {"name": None, "offset": -1, "length": 0, "string": None},
    ]
    assert call("_capture", {"captures": caps}) == {"a": "x"}
    assert len(call("_match", "aaa", "a*", "g", False)) == 1  # no empty match right after one
    assert call("_match", "ā", "\\w", None, True) is False  # ASCII classes, as Go
    assert call("split", "a1b22c", "[0-9]+", None) == ["a", "b", "c"]
    assert err("_match", "a", "a", "x", False) == 'unsupported regular expression flag: "x"'
    assert err("_match", "a", "(", None, True) == (
        'invalid regular expression "(": error parsing regexp: missing closing ): `(`'
    )


def test_formats() -> None:
    assert call("@csv", [1, 'a"b', None, True]) == '1,"a""b",,true'
    assert call("@tsv", ["a\tb", "c\\"]) == "a\\tb\tc\\\\"
    assert call("@sh", "it's") == "'it'\\''s'"
    assert call("@html", "<'&\">") == "&lt;&apos;&amp;&quot;&gt;"
    assert call("@uri", "a b/é~") == "a%20b%2F%C3%A9~"
    assert call("@urid", "a%20b%C3%A9") == "a bé"
    assert call("@urid", "%ff%41") == "\ufffdA"  # never a lone surrogate
    assert call("@base64", "hi") == "aGk=" and call("@base64d", "aGk=") == "hi"
    assert err("@base64d", "a") == (
        '@base64d cannot be applied to "a": illegal base64 data at input byte 0'
    )
    assert err("@csv", [[1]]) == "@csv cannot format an array including: array ([1])"
    assert err("format", 1, "x") == "format not defined: @x"


def test_math() -> None:
    assert call("floor", 2.5) == 2 and call("round", -2.5) == -3 and call("rint", 2.5) == 2
    assert math.isnan(call("sqrt", -1)) and call("log", 0) == -math.inf
    assert call("pow", None, 0, -1) == math.inf
    assert call("frexp", 8) == [0.5, 4] and call("modf", 3.5) == [0.5, 3.0]
    assert call("significand", 8) == 1.0 and call("logb", 8) == 3.0
    assert call("fma", None, 0.1, 10, -1) == 5.551115123125783e-17
    assert call("cbrt", -3.375) == -1.5
    assert err("floor", "a") == 'floor cannot be applied to: string ("a")'
    assert err("pow", None, 1, "a") == 'pow cannot be applied to: string ("a")'
    assert call("isnormal", 1e-310) is False and call("isinfinite", -math.inf) is True


def test_dates() -> None:
    assert call("gmtime", 1425599507.123) == [2015, 2, 5, 23, 51, 47.122999906, 4, 63]
    assert call("mktime", [2015, 2, 5, 23, 51, 47.5, 4, 63]) == 1425599507.5
    assert call("mktime", [2015, 13, 1]) == 1454284800  # month 13 carries into next year
    assert call("strftime", 1425599507, "%Y-%m-%dT%H:%M:%SZ") == "2015-03-05T23:51:47Z"
    assert call("strftime", 1425599507, "%A %-d %e %j %I%p %Z %z") == (
        "Thursday 5  5 064 11PM UTC +0000"
    )
    assert call("strptime", "2015-03-05T23:51:47+09:00", "%Y-%m-%dT%H:%M:%S%z") == [
        2015, 2, 5, 14, 51, 47, 4, 63
    ]  # fmt: skip
    assert call("strptime", "10:15", "%H:%M") == [1900, 0, 1, 10, 15, 0, 1, 0]
    assert err("strptime", "x", "%Y") == (
        'strptime("%Y") cannot be applied to "x": failed to parse "x" with "%Y": cannot parse "%Y"'
    )
    assert (
        err("mktime", ["a"]) == 'mktime cannot be applied to ["a"]: expected an array of 8 numbers'
    )
