"""Parser: every grammar form, gojq's precedence, error texts and offsets, deep nesting."""

from __future__ import annotations

import pytest

from workload_map import jq
from workload_map.jq import ast
from workload_map.jq.parser import MAX_DEPTH


def shape(program: str) -> str:
    """The canonical text of a program (precedence made explicit by the formatter)."""
    return ast.format(jq.parse(program))


@pytest.mark.parametrize(
    "program",
    [
        ".",
        "..",
        ".foo",
        ".foo.bar",
        '."foo"',
        '."a b"',
        '.["a"]',
        ".[0]",
        ".[-1]",
        ".[]",
        ".[]?",
        ".a[]?.b",
        ".[1:2]",
        ".[1:]",
        ".[:2]",
        ".a.[0]",
        '.a."b"',
        ".e0",
        ".and",
        "$x",
        "null",
        "true",
        "false",
        "1",
        "1.5",
        ".5",
        "1e3",
        "100000000000000000000000",
        '"abc"',
        '"a\\(1 + 2)b"',
        '"\\u00e9\\ud83d\\ude00"',
        "@base64",
        '@base64 "x\\(.)"',
        "[]",
        "[1, 2]",
        "{}",
        "{a: 1}",
        '{a, $x, "a b", (1): 2, if: 3, and: 4}',
        '{"\\(1)": 2}',
        "{$x: 1}",
        "{a: 1 | 2, b: 3}",
        "{a: 1,}",
        "{x: 1 + 2, y: false or true, z: null // 3}",
        "-1",
        "-.a",
        "+1",
        "1 + 2 * 3",
        "1 - 2 - 3",
        "1 // 2 // 3",
        ". as $x | $x",
        '. as [$a, {b: $c, $d, "e": $f, (1): $g}] | $a',
        ". as [$a] ?// $a | $a",
        "reduce .[] as $x (0; . + $x)",
        "foreach .[] as $x (0; . + $x)",
        "foreach .[] as $x (0; . + $x; [$x, .])",
        "if . then 1 end",
        "if . then 1 else 2 end",
        "if . then 1 elif . then 2 else 3 end",
        "try .a",
        "try .a catch .b",
        "label $out | 1, break $out",
        "def f: 1; f",
        "def f(g; $x): g + $x; f(.; 1)",
        "def f: def g: 2; g; f",
        "f(1; 2)",
        "a::b",
        ".a = 1",
        ".a |= 1",
        ".a += 1",
        ".a -= 1",
        ".a *= 1",
        ".a /= 1",
        ".a %= 1",
        ".a //= 1",
        "1 == 2",
        "1 != 2",
        "1 < 2",
        "1 <= 2",
        "1 > 2",
        "1 >= 2",
        "true and false or true",
        "1, 2 | 3",
        "module {a: 1}; .",
    ],
)
def test_every_grammar_form_parses_and_round_trips(program: str) -> None:
    tree = jq.parse(program)
    assert jq.parse(ast.format(tree)) == tree


@pytest.mark.parametrize(
    ("program", "canonical"),
    [
        ("1, 2 | 3", "1, 2 | 3"),
        ("1 | 2, 3", "1 | 2, 3"),
        ("1, 2 as $x | $x, 3", "1, (2 as $x | $x, 3)"),
        (". + 2 as $x | $x", ". + 2 as $x | $x"),
        ("-1 as $x | 1, $x", "-1 as $x | 1, $x"),
        ("1, def f: 2; f | 3", "1, (def f: 2; f | 3)"),
        ("1, label $x | 2 | 3", "1, (label $x | 2 | 3)"),
        ("try 3 catch 1 + 1", "try 3 catch 1 + 1"),
        ("(try 3 catch 1) + 1", "try 3 catch 1 + 1"),
        ("try .a + 1", "try .a + 1"),
        ("try .a catch .b[0]", "try .a catch .b[0]"),
        ("reduce .[] + 1 as $x (0; .)", "reduce .[] + 1 as $x (0; .)"),
        (".a = 1 // 2", ".a = 1 // 2"),
        (".a // .b = 1", ".a // .b = 1"),
        ("1 + 2 * 3", "1 + 2 * 3"),
        ("(1 + 2) * 3", "(1 + 2) * 3"),
        ("1 - (2 - 3)", "1 - (2 - 3)"),
        ("1 // (2 // 3)", "1 // 2 // 3"),
        ("(1 // 2) // 3", "(1 // 2) // 3"),
        ("-.a[0]", "-.a[0]"),
        ("-.a?", "-.a?"),
        ("true or false and false", "true or false and false"),
        ("(true or false) and false", "(true or false) and false"),
        ('."a".b', ".a.b"),
        ('.["a"]', ".a"),
    ],
)
def test_precedence_matches_gojq(program: str, canonical: str) -> None:
    assert shape(program) == canonical
    assert jq.parse(canonical) == jq.parse(program)


def test_binding_tree_shapes() -> None:
    tree = jq.parse("1, 2 as $x | $x, 3")
    assert isinstance(tree, ast.Comma)
    assert isinstance(tree.right, ast.Bind)
    assert isinstance(tree.right.body, ast.Comma)
    tree = jq.parse("try 3 catch 1 + 1")
    assert isinstance(tree, ast.Binary) and isinstance(tree.left, ast.Try)
    tree = jq.parse(".a.b?")
    assert isinstance(tree, ast.Optional) and isinstance(tree.target, ast.Index)


def test_number_literals() -> None:
    assert jq.parse("100000000000000000001") == ast.Literal(100000000000000000001, "number")
    lit = jq.parse("1e1000")
    assert isinstance(lit, ast.Literal) and lit.value == float("inf")
    assert jq.parse("1.0").value == 1.0  # type: ignore[union-attr]
    assert type(jq.parse("1.0").value) is float  # type: ignore[union-attr]
    assert type(jq.parse("10").value) is int  # type: ignore[union-attr]


def test_strings_and_escapes() -> None:
    assert jq.parse('"\\n\\t\\"\\\\\\/"') == ast.Literal('\n\t"\\/', "string")
    assert jq.parse('"\\ud83d\\ude00"') == ast.Literal("\U0001f600", "string")
    assert jq.parse('"\\ud83d"') == ast.Literal("\ufffd", "string")
    tree = jq.parse('"a\\(1)b\\(2)"')
    assert isinstance(tree, ast.Str)
    assert [p if isinstance(p, str) else "Q" for p in tree.parts] == ["a", "Q", "b", "Q"]
    assert jq.parse('"x\\("y\\(1)z")w"') == jq.parse(ast.format(jq.parse('"x\\("y\\(1)z")w"')))


def test_comments_and_backslash_continuation() -> None:
    assert jq.compile("1 # comment\n+ 1").all(None) == [2]
    # a backslash before the newline carries the comment on to the next line
    assert jq.compile("1 # comment \\\n+ 5\n+ 1").all(None) == [2]
    assert jq.compile("1 # comment \\\\\n+ 1").all(None) == [2]
    assert jq.compile("1 # a\r\n+ 1").all(None) == [2]


@pytest.mark.parametrize(
    ("program", "message", "offset", "token"),
    [
        (".a = 1 = 2", 'unexpected token "="', 8, "="),
        ("1 == 2 == 3", 'unexpected token "=="', 9, "=="),
        ("{", "unexpected EOF", 1, ""),
        (".a[", "unexpected EOF", 3, ""),
        ('"abc', "unterminated string literal", 4, ""),
        ('"\\x"', 'invalid escape sequence "\\x" in string literal', 3, "\\x"),
        ("1..2", 'invalid token "1.."', 3, "1.."),
        ("0..[empty]", 'invalid token "0.."', 3, "0.."),
        ("1a", 'invalid token "1a"', 2, "1a"),
        (")", 'unexpected token ")"', 1, ")"),
        ("{@base64: 1}", 'unexpected token "@base64"', 8, "@base64"),
        ("if . then 1", "unexpected EOF", 11, ""),
        (".a | | .b", 'unexpected token "|"', 6, "|"),
        ("$", 'unexpected token "$"', 1, "$"),
        ("{(1,2)}", 'unexpected token "}"', 7, "}"),
        (".é", 'unexpected token "é"', 2, "é"),
        ("def true: .; 1", 'unexpected token "true"', 8, "true"),
        ('"\\(1;2)"', 'unexpected token ";"', 5, ";"),
        ("1 +", "unexpected EOF", 3, ""),
    ],
)
def test_parse_errors(program: str, message: str, offset: int, token: str) -> None:
    with pytest.raises(jq.JqParseError) as info:
        jq.parse(program)
    assert info.value.message == message
    assert info.value.offset == offset
    assert info.value.token == token
    assert info.value.program == program


@pytest.mark.parametrize("program", ["", "   ", "# only a comment", "def f: 1;"])
def test_missing_query_is_a_compile_error(program: str) -> None:
    with pytest.raises(jq.JqCompileError, match=r'missing query \(try "\."\)'):
        jq.compile(program)


@pytest.mark.parametrize(
    "program",
    [
        "[" * 10000 + "]" * 10000,
        "(" * 10000 + "1" + ")" * 10000,
        "-" * 10000 + "1",
        "try " * 5000 + "1",
        "{a:" * 3000 + "1" + "}" * 3000,
        "if true then " * 10000 + "1" + " end" * 10000,
        ". as " + "[" * 10000 + "$x" + "]" * 10000 + " | $x",
        '"\\(' * 10000 + "1" + ')"' * 10000,
        "f(" * 10000 + "1" + ")" * 10000,
        ". as $x | " * 10000 + "1",
    ],
    ids=[
        "brackets",
        "parens",
        "negations",
        "try",
        "objects",
        "if",
        "pattern",
        "interp",
        "call",
        "bind",
    ],
)
def test_deep_programs_fail_cleanly(program: str) -> None:
    with pytest.raises(
        jq.JqParseError, match=f"too deep \\(more than {MAX_DEPTH} nested levels\\)"
    ):
        jq.parse(program)


def test_nesting_limit_is_exact() -> None:
    assert jq.compile("[" * MAX_DEPTH + "1" + "]" * MAX_DEPTH + " | flatten").all(None) == [[1]]
    with pytest.raises(jq.JqParseError, match="too deep"):
        jq.parse("[" * (MAX_DEPTH + 1) + "1" + "]" * (MAX_DEPTH + 1))


N = 2000
CHAINS = {
    # flat chains are loops, not nesting: gojq runs them all (QA #3)
    "array literal": ("[" + ",".join(map(str, range(N))) + "] | length", None, [N]),
    "plus": ("+".join(["1"] * N), None, [N]),
    "minus and times": ("1" + "-1*1" * N, None, [1 - N]),
    "pipe": (" | ".join(["."] * N), 7, [7]),
    "pipe of updates": (" | ".join([". + 1"] * N), 0, [N]),
    "fields": ("." + ".".join(["a"] * N), {"a": None}, [None]),
    "indexes": ("." + "[0]" * N, None, [None]),
    "optional indexes": ("[." + "[0]?" * N + "]", [[1]], [[]]),
    "iterations": ("[." + "[]?" * N + "]", [[[1]]], [[]]),
    "and": (" and ".join(["true"] * N), None, [True]),
    "or": (" or ".join(["false"] * N), None, [False]),
    "alternative": (" // ".join(["null"] * N) + " // 1", None, [1]),
    "comma": ("[" + ", ".join(["1"] * N) + "] | add", None, [N]),
    "object value pipe": ("{a: " + " | ".join([". + 1"] * N) + "}", 0, [{"a": N}]),
    "multi-valued plus": ("[(0, 1)" + " + (0, 1)" * 11 + "] | length", None, [2**12]),
    "multi-valued and": ("[(true, false)" + " and (true, false)" * N + "] | length", None, [N + 2]),
}


@pytest.mark.parametrize("name", list(CHAINS))
def test_long_chains_are_not_nesting(name: str) -> None:
    program, value, expected = CHAINS[name]
    assert jq.compile(program).all(value, limits=jq.Limits(None, 30, 1000)) == expected


def test_nesting_below_the_limit_parses_and_runs() -> None:
    depth = MAX_DEPTH // 4
    program = "[" * depth + "1" + "]" * depth
    value = jq.compile(program).first(None)
    for _ in range(depth):
        assert isinstance(value, list)
        value = value[0]
    assert value == 1


def test_nodes_carry_offsets() -> None:
    tree = jq.parse(".a | foo(1)")
    assert isinstance(tree, ast.Pipe)
    assert tree.right.offset == 5
    assert tree.offset == 3
