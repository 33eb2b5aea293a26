"""Karta safety rules over the whole tree, and writability of paths."""

from __future__ import annotations

import pytest

from workload_map import jq


@pytest.mark.parametrize(
    ("program", "expected"),
    [
        (".a = 1", [("modifying operator '=' is not allowed", 3, "=")]),
        (".a |= 1", [("modifying operator '|=' is not allowed", 3, "|=")]),
        (".a += 1", [("modifying operator '+=' is not allowed", 3, "+=")]),
        (".a -= 1", [("modifying operator '-=' is not allowed", 3, "-=")]),
        (".a *= 1", [("modifying operator '*=' is not allowed", 3, "*=")]),
        (".a /= 1", [("modifying operator '/=' is not allowed", 3, "/=")]),
        (".a %= 1", [("modifying operator '%=' is not allowed", 3, "%=")]),
        (".a //= 1", [("modifying operator '//=' is not allowed", 3, "//=")]),
        ("del(.x)", [("del function is not allowed", 0, "del")]),
        ("[del(.x)]", [("del function is not allowed", 1, "del")]),
        ("{a: (.x |= 1)}", [("modifying operator '|=' is not allowed", 8, "|=")]),
        ("[.. | .x]", [("recursive descent '..' is not allowed", 1, "..")]),
        (
            "range(3)",
            [("function 'range' may produce excessive output and is not allowed", 0, "range")],
        ),
        (
            "[paths]",
            [("function 'paths' may produce excessive output and is not allowed", 1, "paths")],
        ),
        (
            "recurse",
            [("function 'recurse' may produce excessive output and is not allowed", 0, "recurse")],
        ),
        (
            "walk(.)",
            [("function 'walk' may produce excessive output and is not allowed", 0, "walk")],
        ),
        (
            "repeat(.)",
            [("function 'repeat' may produce excessive output and is not allowed", 0, "repeat")],
        ),
        (
            "if .a then del(.b) else .c |= 1 end",
            [
                ("del function is not allowed", 11, "del"),
                ("modifying operator '|=' is not allowed", 27, "|="),
            ],
        ),
        (
            "reduce range(3) as $x (.; .)",
            [("function 'range' may produce excessive output and is not allowed", 7, "range")],
        ),
        ("def f: ..; f", [("recursive descent '..' is not allowed", 7, "..")]),
        ('"\\(del(.a))"', [("del function is not allowed", 3, "del")]),
        (". as [$a] | $a | .x = 1", [("modifying operator '=' is not allowed", 20, "=")]),
    ],
)
def test_violations(program: str, expected: list[tuple[str, int, str]]) -> None:
    found = jq.karta_violations(program)
    assert [(v.message, v.offset, v.construct) for v in found] == expected
    assert all(isinstance(v, jq.Violation) for v in found)


@pytest.mark.parametrize(
    "program",
    [
        ".spec.replicatedJobs[].name",
        '.metadata.labels["jobset.sigs.k8s.io/replicatedjob-name"]',
        ".spec.x // .spec.y // 1",
        ".spec.replicas | tonumber?",
        ".spec.services | to_entries[] | .key",
        'any(.status.conditions[]; .type == "Failed" and .status == "True")',
        "all(.a[]; . > 1)",
        '[.items[] | select(.kind == "Pod")]',
        "{requests: .spec.resources}",
        '.a | ascii_downcase == "x"',
        "if .a then .b else .c end",
        "first(.a[])",
        "limit(2; .a[])",
        ".a[1:3]",
    ],
)
def test_catalog_style_expressions_are_accepted(program: str) -> None:
    assert jq.karta_violations(program) == []


def test_parse_errors_propagate() -> None:
    with pytest.raises(jq.JqParseError):
        jq.karta_violations(".a |")
    with pytest.raises(jq.JqParseError):
        jq.is_writable("{")


@pytest.mark.parametrize(
    "program",
    [
        ".",
        ".a",
        ".a.b[0]",
        ".a[]",
        ".a[]?",
        '.a["x"]',
        ".a | .b",
        ".a, .b",
        ".a // .b",
        ".items[] | select(.id == 1) | .name",
        "if .a then .b elif .c then .d else .e end",
        "if .a then .b end",
        "first(.a[])",
        "limit(1; .a[])",
        'getpath(["a", "b"])',
        "empty",
        ". as $x | .a",
        "label $out | .a",
        "try .a",
        "recurse(.children[]) | .name",
        "..",
    ],
)
def test_writable(program: str) -> None:
    assert jq.is_writable(program), jq.writability(program)
    assert jq.writability(program) is None


@pytest.mark.parametrize(
    ("program", "reason"),
    [
        ("{a: .b}", "object construction is not a location"),
        ("[.a]", "array construction is not a location"),
        (".a + 1", "operator '+' computes a value"),
        (".a | tostring", "'tostring' computes a value"),
        ("1", "a literal is not a location"),
        ("null", "a literal is not a location"),
        ('"x"', "a literal is not a location"),
        ("$__loc__", "variable $__loc__ is not a location"),
        (".a // 1", "a literal is not a location"),
        ("if .a then .b else 1 end", "a literal is not a location"),
        ("reduce .[] as $x (0; .)", "reduce/foreach computes a value"),
        ("try .a catch .b", "a catch handler computes a value"),
        (".a | length", "'length' computes a value"),
        ("def f: .a; f", "function definitions are not supported in a writable path"),
        ("-.a", "operator '-' computes a value"),
        ('"\\(.a)"', "a string is computed"),
        (".a = 1", "operator '=' computes a value"),
        # REFERENCE §2.4b: negative indexes and slices are not writable locations (QA #13)
        (".a[-1]", "a negative index is not a writable location"),
        (".a[-1].b", "a negative index is not a writable location"),
        (".a[1:]", "a slice is not a writable location"),
        (".a[1:2]", "a slice is not a writable location"),
        (".a[:-1] | .[0]", "a slice is not a writable location"),
    ],
)
def test_not_writable(program: str, reason: str) -> None:
    assert not jq.is_writable(program)
    text = jq.writability(program)
    assert text is not None and text.startswith(reason)
    assert "offset" in text


def test_writability_agrees_with_path_mode() -> None:
    obj = {"a": {"b": 1}, "items": [{"id": 1, "name": "x"}]}
    for program in [".a.b", ".items[] | select(.id == 1) | .name", ".a // .x", "first(.items[])"]:
        assert jq.is_writable(program)
        jq.compile(program).paths(obj)
    for program in [".a | tostring", "{x: .a}", ".a.b + 1"]:
        assert not jq.is_writable(program)
        with pytest.raises(jq.JqRuntimeError, match="invalid path"):
            jq.compile(program).paths(obj)


@pytest.mark.parametrize(
    ("program", "offset", "construct", "rule"),
    [
        ("$ENV.HOME", 0, "$ENV", jq.SafetyRule.ENVIRONMENT),
        ("{a: $ENV}", 4, "$ENV", jq.SafetyRule.ENVIRONMENT),
        ("env.AWS_SECRET_ACCESS_KEY", 0, "env", jq.SafetyRule.ENVIRONMENT),
        ("input", 0, "input", jq.SafetyRule.INPUT),
        ("[inputs]", 1, "inputs", jq.SafetyRule.INPUT),
        ("input_filename", 0, "input_filename", jq.SafetyRule.INPUT),
        ("halt", 0, "halt", jq.SafetyRule.HALT),
        ('.a | halt_error("x")', 5, "halt_error", jq.SafetyRule.HALT),
        ("debug", 0, "debug", jq.SafetyRule.LOGGING),
        ('debug("msg")', 0, "debug", jq.SafetyRule.LOGGING),
        (".a | stderr", 5, "stderr", jq.SafetyRule.LOGGING),
        ("until(false; .)", 0, "until", jq.SafetyRule.UNBOUNDED_LOOP),
        ("[while(true; .)]", 1, "while", jq.SafetyRule.UNBOUNDED_LOOP),
        ("def f: f; f", 0, "def f", jq.SafetyRule.RECURSIVE_DEF),
        (".a | def f(g): g | f(g); f(.)", 5, "def f", jq.SafetyRule.RECURSIVE_DEF),
        ("def f: def g: f; g; f", 0, "def f", jq.SafetyRule.RECURSIVE_DEF),
    ],
)
def test_workload_map_security_rules(
    program: str, offset: int, construct: str, rule: jq.SafetyRule
) -> None:
    found = jq.karta_violations(program)
    assert [(v.offset, v.construct, v.rule) for v in found] == [(offset, construct, rule)]
    assert not rule.in_reference
    assert "(a workload-map security rule)" in found[0].message
    assert "offset" not in found[0].message


def test_reference_rules_say_so() -> None:
    assert [v.rule for v in jq.karta_violations("[.. | del(.a)] | .b = range(2)")] == [
        jq.SafetyRule.RECURSIVE_DESCENT,
        jq.SafetyRule.DELETE,
        jq.SafetyRule.MODIFYING_OPERATOR,
        jq.SafetyRule.EXCESSIVE_OUTPUT,
    ]
    assert all(v.rule.in_reference for v in jq.karta_violations("repeat(.) | .a |= 1"))


@pytest.mark.parametrize(
    "program",
    ["def f: .a; def g: f | f; g", "def f(x): x | x; f(.a)", "$__loc__", "limit(3; .[])"],
)
def test_non_recursive_definitions_are_accepted(program: str) -> None:
    assert jq.karta_violations(program) == []


def test_every_catalog_expression_passes_the_rules() -> None:
    from workload_map.catalog.registry import Catalog
    from workload_map.model.shape import iter_jq_fields

    count = 0
    for karta in Catalog().list():
        for field in iter_jq_fields(karta):
            count += 1
            assert jq.karta_violations(field.expression) == [], (karta.name, field.path)
    assert count > 100


def test_unwritable_is_data() -> None:
    bad = jq.unwritable(".a | tostring")
    assert bad is not None
    assert (bad.message, bad.offset, bad.construct, bad.rule) == (
        "'tostring' computes a value",
        5,
        "tostring",
        jq.SafetyRule.NOT_A_LOCATION,
    )
    assert jq.unwritable(".a.b[0]") is None


def test_a_violation_is_an_immutable_value() -> None:
    found = jq.karta_violations("1 | debug")
    assert len(found) == 1
    v = found[0]
    same = jq.Violation(v.message, v.offset, v.construct, v.rule)
    assert v == same and hash(v) == hash(same) and len({v, same}) == 1
    assert v != jq.Violation(v.message, v.offset + 1, v.construct, v.rule)
    assert jq.Violation("m", 0, "c").rule is jq.SafetyRule.EXCESSIVE_OUTPUT
    assert repr(v).startswith(f"Violation(message={v.message!r}, offset=4, construct='debug'")
    with pytest.raises(AttributeError, match="immutable"):
        v.offset = 0  # type: ignore[misc]
