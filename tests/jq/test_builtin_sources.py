"""builtin.jq is split per definition and each parsed on first call: the split must give exactly
the definitions a parse of the whole file gives, and a program parses only what it calls."""

from __future__ import annotations

from pathlib import Path

import pytest

import workload_map.jq as jq
from workload_map.jq import ast, compiler
from workload_map.jq.builtins import registry
from workload_map.jq.parser import parse

BUILTIN_JQ = Path(compiler.__file__).with_name("builtins") / "builtin.jq"


def _whole() -> dict[tuple[str, int], ast.FuncDef]:
    tree = parse(BUILTIN_JQ.read_text(encoding="utf-8") + " .")
    assert isinstance(tree, ast.WithDefs)
    return {(d.name, len(d.params)): compiler._without_offsets(d) for d in tree.defs}


def test_the_split_gives_every_definition_as_the_whole_parse_does() -> None:
    whole = _whole()
    assert {b.key for b in registry.entries() if b.kind == "jq"} == set(whole)
    for key, definition in whole.items():
        assert compiler._builtin_def(key) == definition, key


def test_a_program_parses_only_the_definitions_it_calls(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(compiler, "_BUILTIN_DEFS", {})
    monkeypatch.setattr(compiler, "_BUILTIN_FUNCS", {})
    assert list(jq.compile("[.[] | IN(2, 3)]").all([1, 2, 3])) == [[False, True, True]]
    parsed = set(compiler._BUILTIN_DEFS)
    assert ("IN", 1) in parsed
    assert len(parsed) < sum(b.kind == "jq" for b in registry.entries()) // 4


def test_builtins_lists_them_without_parsing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(compiler, "_BUILTIN_DEFS", {})
    names = registry.names()
    assert "with_entries/1" in names and "IN/2" in names
    assert compiler._BUILTIN_DEFS == {}
