"""Syntax trees kept as plain data (``jq.trees``) and rebuilt by ``jq.trees.parse`` instead of
parsing (``jq.trees.keep_trees``): what the command line keeps between commands."""

from __future__ import annotations

import marshal
from collections.abc import Iterator
from typing import Any

import pytest

from tests.conftest import SHARED
from tests.jq.conformance_cases import jq_cases, yaml_cases
from workload_map.jq import JqCompileError, JqParseError, ast, parser, trees

#: every construct of the syntax: the definitions' programs and jq's and gojq's suites
PROGRAMS = [
    '.metadata.name // "" | ascii_downcase',
    "[.spec.replicatedJobs[]? | {name, n: (.replicas // 1) * (.template.spec.parallelism // 1)}]",
    'def f($x): reduce .[] as [$a, $b] ($x; . + $a) ; try f(0) catch "e" | label $out | 1',
    'if . then "a\\(.b)" elif .c then @base64 "x\\(.)" else -1.5e3 end | .[1:2] |= . // null',
    "foreach (.[] | select(. > 0)) as {a: $a, $b} (0; . + 1; [$a, $b]) | $__loc__ | ..",
    '.a.b as $x | .c[.d] = $x | del(.e) | to_entries | getpath(["f"]) | .g?',
]
if SHARED:
    PROGRAMS += [case.program for case in [*jq_cases(SHARED), *yaml_cases(SHARED)]]


def _parsed() -> Iterator[tuple[str, ast.Node]]:
    for program in dict.fromkeys(PROGRAMS):
        try:
            yield program, parser.parse(program)
        except (JqParseError, JqCompileError, OverflowError):  # programs that parse
            continue


@pytest.fixture
def clean_parser(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(trees, "_KEPT", {})
    monkeypatch.setattr(trees, "_FRESH", None)
    trees.parse.cache_clear()
    yield
    trees.parse.cache_clear()


def test_a_tree_comes_back_as_it_was_parsed_offsets_included() -> None:
    seen = 0
    for program, tree in _parsed():
        kept = marshal.loads(marshal.dumps(trees.dump(tree)))
        rebuilt = trees.load(kept)
        assert rebuilt == tree, program
        assert trees.dump(rebuilt) == trees.dump(tree), program  # offsets are not in ==
        try:
            shown = ast.format(tree)
        except OverflowError:  # a literal past float's range prints from neither
            continue
        assert ast.format(rebuilt) == shown, program
        seen += 1
    assert seen >= 6


def test_a_kept_tree_is_rebuilt_without_parsing(
    clean_parser: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    program = ".spec.replicas // 1 | . * 2"
    kept = {program: trees.dump(parser.parse(program))}
    parsed: list[str] = []
    real = parser._Parser.__init__

    def spy(self: Any, source: str, *args: Any) -> None:
        parsed.append(source)
        real(self, source, *args)

    monkeypatch.setattr(parser._Parser, "__init__", spy)
    trees.keep_trees(kept)
    tree = trees.parse(program)
    assert parsed == []
    assert trees.dump(tree) == kept[program]
    assert trees.fresh_trees() == {}
    other = ".a | length"
    assert trees.parse(other) is not None
    assert parsed == [other]
    assert trees.fresh_trees() == {other: trees.dump(trees.parse(other))}


@pytest.mark.parametrize(
    "damaged",
    [
        ("NoSuchNode", 1),  # a class the syntax no longer has
        ("Pipe", ("Identity", -1)),  # a field count the class no longer has
        ("Pipe",),
    ],
)
def test_a_kept_tree_that_does_not_fit_the_syntax_is_parsed(
    clean_parser: None, damaged: tuple[Any, ...]
) -> None:
    program = ".a | .b"
    trees.keep_trees({program: damaged})
    assert trees.parse(program) == parser.parse(program)
    assert program in trees.fresh_trees()


def test_nothing_is_recorded_unless_trees_are_kept(clean_parser: None) -> None:
    trees.parse(".x")
    assert trees.fresh_trees() == {}


def test_a_tree_too_deep_to_dump_is_left_out_not_raised(clean_parser: None) -> None:
    # the parser reads a chain of any length iteratively; dump recurses, and the command line
    # calls fresh_trees after its output, where an exception would be a traceback
    deep = " | ".join(["(. + 1)"] * 3000)
    trees.keep_trees({})
    trees.parse(deep)
    trees.parse(".a")
    assert list(trees.fresh_trees()) == [".a"]
