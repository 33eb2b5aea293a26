"""Path mode and updates: path(), paths, getpath/setpath/delpaths, del, pick, assignment and
update operators, gojq's "intact value" rule for computed values, Program.paths.

The expected outputs in CASES were produced by gojq v0.12.18 (``gojq -c``).
"""

from __future__ import annotations

import pytest

from workload_map import jq
from workload_map.jq import decode, encode

CASES: list[tuple[str, str, list[str], str, str]] = [
    ("path(1)", "null", [], "runtime", "invalid path against: number (1)"),
    ("path(null)", "null", ["[]"], "", ""),
    ("path(null)", '{"a":1}', [], "runtime", "invalid path against: null"),
    (
        'path(.a|{"b":1}|.b)',
        '{"a":{"b":1}}',
        [],
        "runtime",
        'invalid path against: object ({"b":1})',
    ),
    (
        "path(tostring|.a)",
        '{"a":1}',
        [],
        "runtime",
        'expected an object but got: string ("{\\"a\\":1}")',
    ),
    ("path(tojson|.[])", "[[1]]", [], "runtime", 'cannot iterate over: string ("[[1]]")'),
    ("path(first(.[0], 1))", "[1]", ["[0]"], "", ""),
    ("path(.a|.)", '{"a":1}', ['["a"]'], "", ""),
    ("[path(if .a then .b else .c end)]", "null", ['[["c"]]'], "", ""),
    ("[path(.[0]|select(. > 1))]", "[3]", ["[[0]]"], "", ""),
    (
        'path(getpath(["a","b"]))',
        '{"a":1}',
        [],
        "runtime",
        'getpath(["a","b"]) cannot be applied to: object ({"a":1})',
    ),
    ('path(getpath(["a","b"]))', "null", ['["a","b"]'], "", ""),
    ("path(last(.[]))", "[1,2]", [], "runtime", "invalid path against: number (2)"),
    ("[path(limit(1;.[]))]", "[1,2]", ["[[0]]"], "", ""),
    ("[path(..)]", "null", ["[[]]"], "", ""),
    ("[path(..)]", '{"a":[1]}', ['[[],["a"],["a",0]]'], "", ""),
    ("[path(.a // .b)]", "null", ['[["b"]]'], "", ""),
    ("[path(.a // .b)]", '{"a":0}', ['[["a"]]'], "", ""),
    ("[path(.a // .b)]", '{"a":false,"b":null}', ['[["b"]]'], "", ""),
    ("[path(empty)]", "null", ["[]"], "", ""),
    ("path(.[0] as $x | .[$x])", "[1]", ["[1]"], "", ""),
    (
        'path(reduce ("a") as $k (.; .[$k]))',
        '{"a":1}',
        [],
        "runtime",
        "invalid path against: number (1)",
    ),
    ("1 as $x | path($x)", "null", [], "runtime", "invalid path against: number (1)"),
    ("path(.a.b.c)", "{}", ['["a","b","c"]'], "", ""),
    ("path(.[1:])", "[0,1]", ['[{"end":null,"start":1}]'], "", ""),
    ("path(.[1:][0])", "[0,1]", ['[{"end":null,"start":1},0]'], "", ""),
    (
        "path(to_entries)",
        '{"a":1}',
        [],
        "runtime",
        'invalid path against: array ([{"key":"a","value":1}])',
    ),
    ("path(.[0]?)", "[1]", ["[0]"], "", ""),
    ('try path(error("x")) catch .', "null", ['"x"'], "", ""),
    ("path(.[0]|first(.[]))", "[[1]]", ["[0,0]"], "", ""),
    ("path(def f: .a; f)", "{}", ['["a"]'], "", ""),
    ("path(.a|map(.))", '{"a":[1,2]}', [], "runtime", "invalid path against: array ([1,2])"),
    ("[path(.[0,1][0,1])]", "[[1,2],[3,4]]", ["[[0,0],[1,0],[0,1],[1,1]]"], "", ""),
    ("[path(.a[] | select(.b > 1) | .b)]", '{"a":[{"b":1},{"b":2}]}', ['[["a",1,"b"]]'], "", ""),
    ("[path(.a, .b?, .c[]?)]", '{"a":1}', ['[["a"],["b"]]'], "", ""),
    ("[path(.[]?)]", "3", ["[]"], "", ""),
    ("try path(.[]) catch .", "3", ['"cannot iterate over: number (3)"'], "", ""),
    ("[paths]", "null", ["[]"], "", ""),
    ("[paths]", '{"a":[{"b":1}],"c":2}', ['[["a"],["a",0],["a",0,"b"],["c"]]'], "", ""),
    ('[paths(type == "number")]', '{"a":[{"b":1}],"c":2}', ['[["a",0,"b"],["c"]]'], "", ""),
    ("[paths]", '{"b":1,"a":{"d":1,"c":2}}', ['[["a"],["a","c"],["a","d"],["b"]]'], "", ""),
    ('.[1:] = ["x"]', "[1,2,3]", ['[1,"x"]'], "", ""),
    (".[] |= empty", "[1,2,3]", ["[]"], "", ""),
    ("(.[] | select(. > 1)) |= . * 10", "[1,2,3]", ["[1,20,30]"], "", ""),
    (".b.c += 1", '{"a":1}', ['{"a":1,"b":{"c":1}}'], "", ""),
    (".a += 1", "{}", ['{"a":1}'], "", ""),
    (".a[2].b = 1", "null", ['{"a":[null,null,{"b":1}]}'], "", ""),
    (".[0][5] = 1", "[[1,2]]", ["[[1,2,null,null,null,1]]"], "", ""),
    (".[1:] |= map(. * 2)", "[1,2,3]", ["[1,4,6]"], "", ""),
    ("del(.a[0], .a[1])", '{"a":[1,2]}', ['{"a":[]}'], "", ""),
    ("del(.[0,2])", "[1,2,3]", ["[2]"], "", ""),
    ("del(.a)", "null", ["{}"], "", ""),
    ("del(.a)", '{"a":1,"b":2}', ['{"b":2}'], "", ""),
    (
        ".[-1] = 1",
        "null",
        [],
        "runtime",
        "setpath([-1]; 1) cannot be applied to null: array index should not be negative: -1",
    ),
    (".[-1] = 1", "[3]", ["[1]"], "", ""),
    (".a = (1, 2)", '{"a":1}', ['{"a":1}', '{"a":2}'], "", ""),
    ("(.a, .b) = (10, 20)", '{"a":1,"b":2}', ['{"a":10,"b":10}', '{"a":20,"b":20}'], "", ""),
    ("(.a, .b) |= . + 1", '{"a":1,"b":2}', ['{"a":2,"b":3}'], "", ""),
    (".a //= 3", '{"a":null}', ['{"a":3}'], "", ""),
    (".a //= 3 | .b //= 4", '{"a":false,"b":1}', ['{"a":3,"b":1}'], "", ""),
    (".a -= 1 | .a *= 2 | .a /= 4 | .a %= 3", '{"a":5}', ['{"a":2}'], "", ""),
    (".a[1:] = []", '{"a":[1,2,3]}', ['{"a":[1]}'], "", ""),
    ("pick(.a.b)", '{"a":{"b":1,"c":2}}', ['{"a":{"b":1}}'], "", ""),
    ("pick(.[1])", "[1,2,3]", ["[null,2]"], "", ""),
    (
        "try pick(.[-1]) catch .",
        "[1,2,3]",
        ['"setpath([-1]; 3) cannot be applied to null: array index should not be negative: -1"'],
        "",
        "",
    ),
    ("pick(.a[].b)", '{"a":[{"b":1,"c":2}]}', ['{"a":[{"b":1}]}'], "", ""),
    ("to_entries", '{"a":1}', ['[{"key":"a","value":1}]'], "", ""),
    ("with_entries(.value += 1)", '{"a":1,"b":2}', ['{"a":2,"b":3}'], "", ""),
    ("getpath([1,0])", "[[0,1],[1,2]]", ["1"], "", ""),
    (
        'try getpath(["a","b"]) catch .',
        '{"a":1}',
        ['"getpath([\\"a\\",\\"b\\"]) cannot be applied to: object ({\\"a\\":1})"'],
        "",
        "",
    ),
    ('getpath(["a",0,"b"])', "null", ["null"], "", ""),
    ('setpath(["a",1]; 5)', "null", ['{"a":[null,5]}'], "", ""),
    (
        "try setpath([-1]; 1) catch .",
        "null",
        ['"setpath([-1]; 1) cannot be applied to null: array index should not be negative: -1"'],
        "",
        "",
    ),
    ('delpaths([["a"], ["b"]])', '{"a":1}', ["{}"], "", ""),
    ("[getpath(paths)]", '{"a":[1,{"b":2}]}', ['[[1,{"b":2}],1,{"b":2},2]'], "", ""),
    ("[paths(..)] | length", '{"a":{"b":{"c":1}}}', ["6"], "", ""),
    (".a[] += 1", '{"a":[1,2]}', ['{"a":[2,3]}'], "", ""),
    (".a |= empty", '{"a":1}', ["{}"], "", ""),
    (".a |= with_entries(.key |= ascii_upcase)", '{"a":{"b":1}}', ['{"a":{"B":1}}'], "", ""),
    ("map(select(. != null) |= . + 1)", "[1,null,2]", ["[2,null,3]"], "", ""),
    (".a |= map(select(. != 2))", '{"a":[1,2,3]}', ['{"a":[1,3]}'], "", ""),
    (".[] |= first(.[])", "[[1,2],[3]]", ["[1,3]"], "", ""),
    ('.["a"].b = 1', "{}", ['{"a":{"b":1}}'], "", ""),
    ("to_entries | map(select(.key > 0)) | from_entries?", "[1,2,3]", [], "", ""),
    (".a as $x | path(.a)", '{"a":1}', ['["a"]'], "", ""),
]


@pytest.mark.parametrize(("program", "text", "outputs", "kind", "error"), CASES)
def test_matches_gojq(program: str, text: str, outputs: list[str], kind: str, error: str) -> None:
    got: list[str] = []
    err: jq.JqError | None = None
    try:
        for x in jq.compile(program).iter(decode.loads(text)):
            got.append(encode.dumps(x, None))
    except jq.JqError as e:
        err = e
    assert got == outputs
    if kind:
        assert err is not None and err.message == error
    else:
        assert err is None


def test_program_paths() -> None:
    obj = {"spec": {"jobs": [{"name": "a"}, {"name": "b", "x": 1}]}}
    assert jq.compile(".spec.jobs[].name").paths(obj) == [
        ["spec", "jobs", 0, "name"],
        ["spec", "jobs", 1, "name"],
    ]
    assert jq.compile(".spec.jobs[] | select(.x) | .name").paths(obj) == [
        ["spec", "jobs", 1, "name"]
    ]
    assert jq.compile(".missing // .spec.jobs[0]").paths(obj) == [["spec", "jobs", 0]]
    assert jq.compile(".spec.jobs[0] // .missing").paths(obj) == [["spec", "jobs", 0]]
    with pytest.raises(jq.JqRuntimeError, match=r"invalid path against: string \(\"A\"\)"):
        jq.compile(".spec.jobs[0].name | ascii_upcase").paths(obj)


def test_value_helpers_do_not_mutate() -> None:
    obj = {"a": {"b": [1, 2]}}
    assert jq.getpath(obj, ["a", "b", 1]) == 2
    assert jq.getpath(obj, ["x", "y"]) is None
    new = jq.setpath(obj, ["a", "b", 0], 9)
    assert new == {"a": {"b": [9, 2]}} and obj == {"a": {"b": [1, 2]}}
    created = jq.setpath({}, ["a", "b", "c"], 1)
    assert created == {"a": {"b": {"c": 1}}}
    assert jq.delpaths(obj, [["a", "b", 0]]) == {"a": {"b": [2]}}
    assert obj == {"a": {"b": [1, 2]}}


def test_assignment_through_alternative_writes_the_existing_side() -> None:
    prog = jq.compile("(.primary // .fallback) = $v", variables=["$v"])
    assert prog.first({"fallback": 1}, variables={"v": 5}) == {"fallback": 5}
    assert prog.first({"primary": 1, "fallback": 2}, variables={"v": 5}) == {
        "primary": 5,
        "fallback": 2,
    }


def test_zip_assignment_as_the_reference_runner_does_it() -> None:
    obj = {"items": [{"id": 1, "name": "a"}, {"id": 2, "name": "b"}]}
    paths = jq.compile(".items[] | select(.id == 1) | .name").paths(obj)
    assert paths == [["items", 0, "name"]]
    out = obj
    for p, v in zip(paths, ["z"], strict=True):
        out = jq.setpath(out, p, v)
    assert out["items"][0]["name"] == "z" and obj["items"][0]["name"] == "a"


def test_update_of_deep_values() -> None:
    value: object = 0
    for _ in range(300):
        value = [value]
    out = jq.compile("(.. | numbers) |= . + 1").first(value)
    for _ in range(300):
        assert isinstance(out, list)
        out = out[0]
    assert out == 1


@pytest.mark.parametrize("suffix", [".a[0]", ".a[]", ".a[]?", ".a?[0]?", '["a"][]'])
def test_long_suffix_chains_keep_their_paths(suffix: str) -> None:
    # chains longer than 16 suffixes are compiled as a balanced pipe of stages (QA #3)
    depth = 40
    value: object = "leaf"
    for _ in range(depth):
        value = {"a": [value], "b": 1}
    program = "." + (suffix * depth).lstrip(".")
    expected = ["a", 0] * depth
    assert jq.compile(program).paths(value) == [expected]
    assert jq.compile(program).all(value) == ["leaf"]
    assert jq.compile(f"{program} |= ascii_upcase").first(value) == jq.setpath(
        value, expected, "LEAF"
    )
