"""Compiler semantics against gojq v0.12.18: evaluation order of generators, reduce/foreach,
try/catch, label/break, destructuring, closures, the gojq-vs-jq differences
(GOJQ-DIFFERENCES.md §0, §4) and compile errors.

The expected outputs in CASES were produced by running each program through gojq v0.12.18
(``gojq -c``); the differential test in test_differential*.py keeps checking new programs.
"""

from __future__ import annotations

import io
from typing import Any

import pytest

from workload_map import jq
from workload_map.jq import decode, encode

CASES: list[tuple[str, str, list[str], str, str]] = [
    ("[(1,2) + (10,20)]", "null", ["[11,12,21,22]"], "", ""),
    ("[pow(2,3; 1,2)]", "null", ["[2,3,4,9]"], "", ""),
    (
        "[{a:(1,2), b:(3,4)}]",
        "null",
        ['[{"a":1,"b":3},{"a":1,"b":4},{"a":2,"b":3},{"a":2,"b":4}]'],
        "",
        "",
    ),
    ("[{(1,2|tostring): (3,4)}]", "null", ['[{"1":3},{"1":4},{"2":3},{"2":4}]'], "", ""),
    ('["\\(1,2) \\(3,4)"]', "null", ['["1 3","2 3","1 4","2 4"]'], "", ""),
    ("def f(a; $b): [a, $b]; [f(1,2; 3,4)]", "null", ["[[1,2,3],[1,2,4]]"], "", ""),
    ("def f($a; $b): [$a, $b]; [f(1,2; 3,4)]", "null", ["[[1,3],[1,4],[2,3],[2,4]]"], "", ""),
    ("[range(0,1;3,4)]", "null", ["[0,1,2,0,1,2,3,1,2,1,2,3]"], "", ""),
    ("[limit(1,2; 1,2,3)]", "null", ["[1,1,2]"], "", ""),
    ("[.[0,1][0,1]]", "[[1,2],[3,4]]", ["[1,3,2,4]"], "", ""),
    (".a[.k]", '{"a":{"x":1},"k":"x"}', ["1"], "", ""),
    ("reduce range(5) as $x (0; .+$x | select($x!=2))", "null", ["8"], "", ""),
    (
        "[foreach range(5) as $x (0; .+$x|select($x!=2); [$x,.])]",
        "null",
        ["[[0,0],[1,1],[3,4],[4,8]]"],
        "",
        "",
    ),
    ("[foreach .[] as $x (0, 1; . + $x)]", "[1,2]", ["[1,3,2,4]"], "", ""),
    ("reduce empty as $x (3; . + 1)", "null", ["3"], "", ""),
    ("[limit(5; 1 | repeat(.*2))]", "null", ["[2,2,2,2,2]"], "", ""),
    ("[1|while(. < 5; .+1)]", "null", ["[1,2,3,4]"], "", ""),
    ("[1|until(. > 5; .+1)]", "null", ["[6]"], "", ""),
    ("[limit(3; 1 | recurse(.+1))]", "null", ["[1,2,3]"], "", ""),
    ("[2 | recurse(if . < 20 then . * . else empty end; . < 100)]", "null", ["[2,4,16]"], "", ""),
    ("[label $f | 1, break $f, 2]", "null", ["[1]"], "", ""),
    ("[label $a | label $b | 1, break $a, 2], 3", "null", ["[1]", "3"], "", ""),
    ('try error("x") catch .', "null", ['"x"'], "", ""),
    ("try error(null) catch .", "null", ["null"], "", ""),
    ('try error({"a":1}) catch .a', "null", ["1"], "", ""),
    ("[.[]?]", "null", ["[]"], "", ""),
    ('try (1, error("x"), 3) catch .', "null", ["1", '"x"'], "", ""),
    ('[(1, error("x"), 3)?]', "null", ["[1]"], "", ""),
    ('[error("x") // 1]', "null", [], "runtime", "error: x"),
    ('[(1, error("x")) // 2]', "null", [], "runtime", "error: x"),
    ("[(null, false) // 3]", "null", ["[3]"], "", ""),
    ("[(null, 1, false, 2) // 3]", "null", ["[1,2]"], "", ""),
    ("[empty // 3]", "null", ["[3]"], "", ""),
    ("first(empty)", "null", [], "", ""),
    ('[first(1, error("x"))]', "null", ["[1]"], "", ""),
    ('isempty(1, error("x"))', "null", ["false"], "", ""),
    ("[nth(1; 10, 20, 30)]", "null", ["[20]"], "", ""),
    ("try nth(-1; 1) catch .", "null", ['"nth doesn\'t support negative index"'], "", ""),
    ("try limit(-1; 1) catch .", "null", ['"limit doesn\'t support negative count"'], "", ""),
    ("[limit(0; 1, 2)]", "null", ["[]"], "", ""),
    ("[skip(1; 1, 2, 3)]", "null", ["[2,3]"], "", ""),
    ("[1, [2]] as [$a, [$b]] | $a + $b", "null", ["3"], "", ""),
    ('{"a": 1, "b": [2]} as {$a, b: [$c]} | [$a, $c]', "null", ["[1,2]"], "", ""),
    ('{"a": 1} as {"a": $x} | $x', "null", ["1"], "", ""),
    ('{"a": 1} as {("a"): $x} | $x', "null", ["1"], "", ""),
    ('{"a": 1} as {$a: $x} | [$a, $x]', "null", ["[1,1]"], "", ""),
    (
        "[[1,2],[3]] | [.[] as [$a, $b] ?// [$c] | [$a, $b, $c]]",
        "null",
        ["[[1,2,null],[3,null,null]]"],
        "",
        "",
    ),
    (
        '[[3]] | [.[] as [$a] ?// [$b] | if $a != null then error("err: \\($a)") else {$a,$b} end]',
        "null",
        ['[{"a":null,"b":3}]'],
        "",
        "",
    ),
    (". as [$a] | $a", "null", ["null"], "", ""),
    (
        'try ("x" as [$a] | $a) catch .',
        "null",
        ['"expected an array but got: string (\\"x\\")"'],
        "",
        "",
    ),
    ("def f: def g: 3; g; f", "null", ["3"], "", ""),
    (
        "def fac: if . <= 1 then 1 else . * (. - 1 | fac) end; 25 | fac",
        "null",
        ["15511210043330985984000000"],
        "",
        "",
    ),
    ("def f(x): x * 2; f(1)", "null", ["2"], "", ""),
    ("1 as $x | def f: $x; 2 as $x | f", "null", ["1"], "", ""),
    ("def f(g): def h: g; h; 5 | f(. + 1)", "null", ["6"], "", ""),
    ("[-1 as $x | 1, $x]", "null", ["[1,-1]"], "", ""),
    ("1 | . + 2 as $x | -$x", "null", ["-3"], "", ""),
    ("{x: 1 + 2, y: false or true, z: null // 3}", "null", ['{"x":3,"y":true,"z":3}'], "", ""),
    ("if . then 1 end", "null", ["null"], "", ""),
    ("[if (true, false) then 1 else 2 end]", "null", ["[1,2]"], "", ""),
    ("[(true, false) and (true, false)]", "null", ["[true,false,false]"], "", ""),
    ("[(true, false) or (true, false)]", "null", ["[true,true,false]"], "", ""),
    ("[.[]?] | not", "null", ["false"], "", ""),
    ("9007199254740993 + 1", "null", ["9007199254740994"], "", ""),
    ("100000000000000000000000000000 + 1", "null", ["100000000000000000000000000001"], "", ""),
    ("-9223372036854775808 - 1", "null", ["-9223372036854775809"], "", ""),
    ("[1.0, 1e1000, -0]", "null", ["[1,1.7976931348623157e+308,0]"], "", ""),
    ('"abc" | .[1]', "null", ['"b"'], "", ""),
    ("[.[1.7]?]", "null", ["[null]"], "", ""),
    (".[1.7]", "[0,1,2]", ["1"], "", ""),
    (".[-0.5:]", "[0,1,2]", ["[0,1,2]"], "", ""),
    ('{"b":1,"a":2} | [.[]]', "null", ["[2,1]"], "", ""),
    ('{"b":1,"a":2} | keys', "null", ['["a","b"]'], "", ""),
    ('[{"b":1,"a":2} | to_entries[] | .key]', "null", ['["a","b"]'], "", ""),
    ('"x" as $x | {$x, y: 1}', "null", ['{"x":"x","y":1}'], "", ""),
    ('{"a b": 1} | {"a b"}', "null", ['{"a b":1}'], "", ""),
    (
        '[{"\\(.bar[])"}]',
        '{"foo": [0, 1], "bar": ["x", "y"], "x": 10, "y": 20}',
        ['[{"x":10},{"y":20}]'],
        "",
        "",
    ),
    ('@base64 "x\\(1+1)y"', "null", ['"xMg==y"'], "", ""),
    ('@json "x\\([1,2])"', "null", ['"x[1,2]"'], "", ""),
    ('@sh "echo \\(1, "a b")"', "null", ['"echo 1"', "\"echo 'a b'\""], "", ""),
    ("[.[] | tostring]?", "null", [], "", ""),
    ('"\\u00e9" | length', "null", ["1"], "", ""),
    ('[splits("a")]?', "null", [], "", ""),
    ("{} | .a.b.c", "null", ["null"], "", ""),
    ('try .foo.bar.baz? catch "caught"', '{"foo": 128}', ['"caught"'], "", ""),
    ("[.[].name?]", '[1, {"name": 2}, 3, {"name": 4}]', ["[2,4]"], "", ""),
    ("[paths]", "null", ["[]"], "", ""),
    ("[paths]", '{"a":[{"b":1}]}', ['[["a"],["a",0],["a",0,"b"]]'], "", ""),
    ('[paths(type == "number")]', '{"a":[{"b":1}]}', ['[["a",0,"b"]]'], "", ""),
    ("[..]", '{"a":[{"b":1}]}', ['[{"a":[{"b":1}]},[{"b":1}],{"b":1},1]'], "", ""),
    ("$__loc__", "null", [], "compile", "variable not defined: $__loc__"),
    ("{$__loc__}", "null", [], "compile", "variable not defined: $__loc__"),
    ("foo(1)", "null", [], "compile", "function not defined: foo/1"),
    ("break $x", "null", [], "compile", "label not defined: $x"),
    ("@foo", "null", [], "runtime", "format not defined: @foo"),
    ('@foo "x"', "null", ['"x"'], "", ""),
    ("try @foo catch .", "null", ['"format not defined: @foo"'], "", ""),
    ("[.[]?] | add", "null", ["null"], "", ""),
    ("[1,2] | IN(2)", "null", ["false"], "", ""),
    ("2 | IN(1,2)", "null", ["true"], "", ""),
    ('[{"a":1},{"a":2}] | INDEX(.a)', "null", ['{"1":{"a":1},"2":{"a":2}}'], "", ""),
    ("[3,1,2] | sort_by(-.)", "null", ["[3,2,1]"], "", ""),
    (
        '[{"a":2,"b":1},{"a":1,"b":2}] | min_by(.a), max_by(.a), group_by(.a), unique_by(.b)',
        "null",
        [
            '{"a":1,"b":2}',
            '{"a":2,"b":1}',
            '[[{"a":1,"b":2}],[{"a":2,"b":1}]]',
            '[{"a":2,"b":1},{"a":1,"b":2}]',
        ],
        "",
        "",
    ),
    ("[[1,2],[3,4]] | combinations", "null", ["[1,3]", "[1,4]", "[2,3]", "[2,4]"], "", ""),
    ("[0,1] | [combinations(2)]", "null", ["[[0,0],[0,1],[1,0],[1,1]]"], "", ""),
    (
        '[1,[2,{"a":[3]}]] | walk(if type == "number" then . + 1 else . end)',
        "null",
        ['[2,[3,{"a":[4]}]]'],
        "",
        "",
    ),
    ('{"a":1,"b":null} | with_entries(select(.value != null))', "null", ['{"a":1}'], "", ""),
    ('{"a":1,"b":2} | map_values(. * 10)', "null", ['{"a":10,"b":20}'], "", ""),
    ("[1,2,3] | map_values(empty)", "null", ["[]"], "", ""),
    ('"a-b-c" | [splits("-")]', "null", ['["a","b","c"]'], "", ""),
    ('"abc" | sub("(?<x>b)"; "[\\(.x)]")', "null", ['"a[b]c"'], "", ""),
    ('"abc" | [sub("(?<x>b)"; "1", "2")]', "null", ['["a1c","a2c"]'], "", ""),
    ('"aXbXc" | gsub("x"; "-"; "i")', "null", ['"a-b-c"'], "", ""),
    ('"test 123 abc 456" | [scan("[0-9]+")]', "null", ['["123","456"]'], "", ""),
    ('"xyz" | capture("(?<a>x)(?<b>y)")', "null", ['{"a":"x","b":"y"}'], "", ""),
    ('"abc" | test("B"; "i")', "null", ["true"], "", ""),
    ("[1,[2,[3]]] | flatten", "null", ["[1,2,3]"], "", ""),
    ("[1,2,3] | tostream", "null", ["[[0],1]", "[[1],2]", "[[2],3]", "[[2]]"], "", ""),
    (
        '[{"a":[1,{"b":2}]} | tostream]',
        "null",
        ['[[["a",0],1],[["a",1,"b"],2],[["a",1,"b"]],[["a",1]],[["a"]]]'],
        "",
        "",
    ),
    ("[[[0],1],[[1,0],2],[[1,0]],[[1]]] | fromstream(.[])", "null", ["[1,[2]]"], "", ""),
    ("[1 | truncate_stream([[0],1],[[1,0],2],[[1,0]],[[1]])]", "null", ["[[[0],2],[[0]]]"], "", ""),
    ('[{"a":1}, {"b":2}] | add', "null", ['{"a":1,"b":2}'], "", ""),
    ("add(1, 2, 3)", "null", ["6"], "", ""),
    ("[range(5)] | .[1:3]", "null", ["[1,2]"], "", ""),
    ('"abcdef" | .[2:4]', "null", ['"cd"'], "", ""),
    ("[limit(3; range(10))]", "null", ["[0,1,2]"], "", ""),
    ("[range(5;0;-2)]", "null", ["[5,3,1]"], "", ""),
    ("[range(0; 1; 0.3)]", "null", ["[0,0.3,0.6,0.8999999999999999]"], "", ""),
    ('1 | [.[]?, "x"]', "null", ['["x"]'], "", ""),
]


def run(program: str, value: Any = None, **kwargs: Any) -> list[Any]:
    return jq.compile(program).all(value, **kwargs)


@pytest.mark.parametrize(("program", "text", "outputs", "kind", "error"), CASES)
def test_matches_gojq(program: str, text: str, outputs: list[str], kind: str, error: str) -> None:
    value = decode.loads(text)
    if kind == "compile":
        with pytest.raises((jq.JqCompileError, jq.JqParseError)) as info:
            jq.compile(program)
        assert error.endswith(info.value.message) or info.value.message in error
        return
    got: list[str] = []
    err: jq.JqError | None = None
    try:
        for x in jq.compile(program).iter(value):
            got.append(encode.dumps(x, None))
    except jq.JqError as e:
        err = e
    assert got == outputs
    if kind == "runtime":
        assert err is not None, "expected a runtime error"
        assert err.message == error
    else:
        assert err is None


def test_reduce_and_foreach_keep_state_when_update_is_empty() -> None:
    assert run("reduce range(5) as $x (0; .+$x | select($x!=2))") == [8]
    assert run("[foreach range(5) as $x (0; .+$x|select($x!=2); [$x,.])]") == [
        [[0, 0], [1, 1], [3, 4], [4, 8]]
    ]


def test_update_with_several_outputs_uses_the_last() -> None:
    assert run("reduce (1, 2) as $x (0; . + $x, . * 10)") == [0]
    assert run("reduce (1, 2) as $x (0; . * 10, . + $x)") == [3]


def test_try_does_not_catch_limits_halt_or_break() -> None:
    with pytest.raises(jq.JqHaltError):
        run("try halt_error catch .", "bye")
    with pytest.raises(jq.JqLimitError):
        run("try (def f: f; f) catch .", None, limits=jq.Limits(100, 5, 50))
    assert run("[label $out | try (1, break $out) catch 99]") == [[1]]


def test_error_values_pass_through_catch() -> None:
    assert run("try error({a: 1}) catch .a") == [1]
    assert run("[.[] | try error catch .]", [None, 1, "x"]) == [[None, 1, "x"]]
    with pytest.raises(jq.JqRuntimeError) as info:
        run("error({a: 1})")
    assert info.value.value == {"a": 1}


def test_runtime_errors_carry_the_offset_of_the_failing_term() -> None:
    with pytest.raises(jq.JqRuntimeError) as info:
        run(".a | .b | tonumber", {"a": {"b": "x"}})
    assert info.value.offset == 10
    assert info.value.program == ".a | .b | tonumber"
    with pytest.raises(jq.JqRuntimeError) as info:
        run("1, .x.y", {"x": 3})
    assert info.value.offset == 5
    assert info.value.message == "expected an object but got: number (3)"


def test_compile_errors() -> None:
    with pytest.raises(jq.JqCompileError, match=r"function not defined: foo/1") as info:
        jq.compile(". | foo(1)")
    assert info.value.offset == 4
    with pytest.raises(jq.JqCompileError, match=r"variable not defined: \$x"):
        jq.compile("$x")
    with pytest.raises(jq.JqCompileError, match=r"label not defined: \$out"):
        jq.compile("break $out")
    with pytest.raises(jq.JqCompileError, match=r"function not defined: keys_unsorted/0"):
        jq.compile("keys_unsorted")
    with pytest.raises(jq.JqCompileError, match=r"function not defined: leaf_paths/0"):
        jq.compile("leaf_paths")
    with pytest.raises(jq.JqCompileError, match=r"input\(s\)/0 is not allowed"):
        jq.compile("[inputs]")
    with pytest.raises(jq.JqCompileError, match=r"function not defined: f/2"):
        jq.compile("def f(a): a; f(1; 2)")


def test_local_definitions_shadow_builtins_and_are_lexically_scoped() -> None:
    assert run("def select(f): 42; select(false)") == [42]
    assert run("def f: 1; def g: f; def f: 2; g") == [1]
    assert run("def f(x): x | x; 3 | f(. * 2)") == [12]
    assert run("def r(n): if n > 0 then n, r(n - 1) else empty end; [r(3)]") == [[3, 2, 1]]


def test_recursion_depth_is_bounded_by_the_limit() -> None:
    assert run("def f: if . < 200 then . + 1 | f else . end; f", 0) == [200]
    with pytest.raises(jq.JqLimitError, match="depth"):
        run("def f: 1 + (. + 1 | f); f", 0, limits=jq.Limits(10, 5, 100))


def test_variables_from_python() -> None:
    prog = jq.compile(".a + $x", variables=["$x"])
    assert prog.all({"a": 1}, variables={"$x": 2}) == [3]
    assert prog.all({"a": 1}, variables={"x": 5}) == [6]
    with pytest.raises(jq.JqError, match="not bound"):
        prog.all({"a": 1})
    assert jq.compile("[$a, $b]", variables=("a", "$b")).first(
        None, variables={"a": 1, "b": 2}
    ) == [
        1,
        2,
    ]


def test_env_and_builtins() -> None:
    assert run("$ENV | type") == ["object"]
    assert run("env | type") == ["object"]
    names = run("builtins")[0]
    assert "map/1" in names and "getpath/1" in names and "splits/2" in names
    assert "input/0" not in names and "leaf_paths/0" not in names
    assert not any(n.startswith("_") for n in names)


def test_debug_and_stderr_go_to_the_hook() -> None:
    out = io.StringIO()
    assert jq.compile('debug, stderr, debug("m"), ("s" | stderr)').all(1, stderr=out.write) == [
        1,
        1,
        1,
        "s",
    ]
    assert out.getvalue() == '["DEBUG:",1]\n1["DEBUG:","m"]\ns'


def test_first_is_lazy() -> None:
    assert jq.compile("first(range(1e9))").first(None) == 0
    assert jq.compile("range(1e9)").first(None) == 0
    assert jq.compile("limit(3; repeat(1))").all(None) == [1, 1, 1]
    assert jq.compile("isempty(repeat(1))").all(None) == [False]
    assert jq.compile("any(range(1e9); . == 5)").all(None) == [True]


def test_compile_cache_returns_the_same_program() -> None:
    assert jq.compile(".a.b") is jq.compile(".a.b")
    assert jq.compile(".a", variables=["$x"]) is not jq.compile(".a")


def test_inputs_are_never_mutated() -> None:
    value = {"a": [1, 2, {"b": 3}], "c": {"d": 4}}
    snapshot = encode.dumps(value, None)
    run(
        '.a[2].b = 9, .c |= del(.d), (.a[] |= empty), .a += [1], walk(if type == "number" then . + 1 else . end)',
        value,
    )
    run(
        'to_entries, with_entries(.value = 1), map_values(1), setpath(["a", 0]; 5), delpaths([["c"]])',
        value,
    )
    assert encode.dumps(value, None) == snapshot


def test_fast_paths_agree_with_generic_paths() -> None:
    pod = {
        "metadata": {"labels": {"a/b": "x"}, "name": "p"},
        "spec": {"containers": [{"name": "c"}]},
    }
    assert jq.compile('.metadata.labels["a/b"]').first(pod) == "x"
    assert jq.compile(".metadata.missing.deeper").first(pod) is None
    assert jq.compile(".spec.containers[0].name").first(pod) == "c"
    with pytest.raises(jq.JqRuntimeError, match=r"expected an object but got: string \(\"p\"\)"):
        jq.compile(".metadata.name.x").first(pod)
    with pytest.raises(jq.JqRuntimeError, match="expected an array but got: object"):
        jq.compile(".metadata[0]").first(pod)
    assert jq.compile('.spec.containers[] | .name == "c"').all(pod) == [True]
    assert jq.compile(".metadata.name != null").all(pod) == [True]
    assert jq.compile("1 == 1.0").all(None) == [True]
    assert jq.compile('.x == "1"').all({"x": 1}) == [False]


def test_tail_calls_do_not_nest() -> None:
    # gojq optimises tail calls; these recurse 100000 times
    assert run("def f: . as $x | $x, ($x + 1 | f); last(limit(100000; f))", 0) == [99999]
    assert run("100000 as $x | def f: if . == $x then . else . + 1 | f end; f", 0) == [100000]
    assert run("def f: def g: if . < 50000 then . + 1 | f else . end; g; f", 0) == [50000]
    # calls that are not in tail position still see every output in order
    assert run("def f: . as $x | $x, (if $x < 3 then $x + 1 | f else empty end), $x; [f]", 0) == [
        [0, 1, 2, 3, 3, 2, 1, 0]
    ]
    assert run("def f: ., if . < 2 then . + (1, 2) | f else empty end; [f]", 0) == [[0, 1, 2, 3, 2]]
    assert run("def f: if .a then .a | f end; [{}, {a: {}} | f | ., 0]", 0) == [[{}, 0, {}, 0]]


@pytest.mark.parametrize(
    ("program", "expected"),
    [
        ('[limit("a"; 1, 2)]', 'cannot subtract: string ("a") and number (1)'),
        ('[limit("a"; empty)]', []),
        ("[limit(null; 1)]", "error: limit doesn't support negative count"),
        ('[skip("a"; 1)]', 'cannot subtract: string ("a") and number (1)'),
        ('[nth("a"; 1)]', 'cannot subtract: string ("a") and number (1)'),
        ("[nth(null; 1)]", "error: nth doesn't support negative index"),
        ("[limit(1.5; 1, 2, 3)]", [1, 2]),
        ("[skip(1.5; 1, 2, 3)]", [2, 3]),
        ("[nth(1.5; 1, 2, 3)]", [2]),
        ("[limit(nan; 1, 2)]", "error: limit doesn't support negative count"),
        ("[skip(null; 1)]", "error: skip doesn't support negative count"),
        ("[limit(0; 1)]", []),
        ("[skip(0; 1, 2)]", [1, 2]),
        ("[nth(0; 1, 2)]", [1]),
        # QA #12, gojq v0.12.18: `gojq: error: nth doesn't support negative index`
        ("nth(-1; 1, 2)", "error: nth doesn't support negative index"),
        ("limit(-1; 1, 2)", "error: limit doesn't support negative count"),
        ("[try nth(-1; 1, 2) catch .]", ["nth doesn't support negative index"]),
    ],
)
def test_counting_builtins_follow_gojq(program: str, expected: Any) -> None:
    """limit/skip/nth count down with `. - 1` as gojq's jq definitions do (checked with gojq)."""
    if isinstance(expected, str):
        with pytest.raises(jq.JqRuntimeError) as info:
            run(program)
        assert info.value.message == expected
    else:
        assert run(program) == [expected]


def test_modules_are_not_available() -> None:
    with pytest.raises(jq.JqCompileError, match='cannot load module: "a"'):
        jq.compile('import "a" as x; .')
    with pytest.raises(jq.JqCompileError, match='cannot load module: "b"'):
        jq.compile('include "b"; .')
    with pytest.raises(jq.JqRuntimeError, match='cannot load module: "m"'):
        run('"m" | modulemeta')
    assert run("module {name: 1}; 2") == [2]
    names = run("builtins")[0]
    assert len(names) == 216 and "modulemeta/0" in names


def test_errors_inside_builtins_point_at_the_users_program() -> None:
    with pytest.raises(jq.JqRuntimeError) as info:
        run('. as $x | [1] | splits("a")', "x")
    assert info.value.offset == 16
    with pytest.raises(jq.JqRuntimeError) as info:
        run('{"a": "x"} | with_entries(.value | tonumber)')
    assert info.value.offset == 35


@pytest.mark.parametrize(
    ("program", "value", "message"),
    [
        # QA #12: gojq turns constant-path assignments into setpath and reports it
        (
            ".a.b.c = 1",
            {"a": []},
            'setpath(["a","b","c"]; 1) cannot be applied to {"a":[]}: '
            "expected an object but got: array ([])",
        ),
        (
            ".a[0] = 1",
            {"a": 5},
            'setpath(["a",0]; 1) cannot be applied to {"a":5}: '
            "expected an array but got: number (5)",
        ),
        (
            ".[-5] = 1",
            [1],
            "setpath([-5]; 1) cannot be applied to [1]: array index should not be negative: -5",
        ),
        (".a.b.c |= 1", {"a": []}, "expected an object but got: array ([])"),
    ],
)
def test_assignment_errors_are_gojqs(program: str, value: Any, message: str) -> None:
    with pytest.raises(jq.JqRuntimeError) as info:
        run(program, value)
    assert info.value.message == message


@pytest.mark.parametrize(
    ("program", "value", "expected"),
    [
        # operator chains of three or more operands are evaluated in a loop (QA #3); the order
        # of their outputs is the nested form's, checked with gojq v0.12.18
        ("[(1,2) + (10,20) + (100,200)]", None, [111, 112, 121, 122, 211, 212, 221, 222]),
        (
            "[(1,2) - (10,20) * (3,4) - (100,200)]",
            None,
            [
                *(-129, -128, -159, -158, -139, -138, -179, -178),
                *(-229, -228, -259, -258, -239, -238, -279, -278),
            ],
        ),
        ("[(true,false) and (true,false) and (true,false)]", None, [True, False, False, False]),
        ("[(true,false) or (true,false) or (false,true)]", None, [True, True, False, True]),
        ("[(null,false) // (false, 1, 2) // 3]", None, [1, 2]),
        ('[try ((1,2) + "a" + 2) catch .]', None, ['cannot add: number (1) and string ("a")']),
        (
            "[.[] and .[] and .[]]",
            [True, False, None, 1],
            [True, False, False] * 7 + [True],
        ),
    ],
)
def test_operator_chains_follow_gojq(program: str, value: Any, expected: list[Any]) -> None:
    assert run(program, value) == [expected]
