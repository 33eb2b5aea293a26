"""The one builtin registry: nothing registered at import, an indexed builtin's entry made on its
first lookup, the whole registry on a listing or a name the index lacks, groups loaded on first call, the generated index in step with the marks, the safety rules reading its effects."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
import types
from collections.abc import Callable
from pathlib import Path

import pytest

import workload_map.jq as jq
from workload_map.jq import safety
from workload_map.jq.builtins import index, marks, registry
from workload_map.jq.builtins.registry import Builtin, builtin
from workload_map.jq.compiler import compile_program

_GROUP_MODULES = sorted(registry.GROUPS.values())


def _fresh(code: str) -> dict[str, object]:
    """Run ``code`` in a new interpreter (a clean sys.modules); it prints one JSON value."""
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    result: dict[str, object] = json.loads(out.stdout)
    return result


_PROBE = """
import json, sys
{setup}
from workload_map.jq.builtins import registry
from workload_map.jq.lexer import Lexer
groups = sorted(m for m in {groups!r} if m in sys.modules)
print(json.dumps({{"built": registry.built(), "groups": groups, "re2": "re2" in sys.modules,
                  "lexer": Lexer.compiled, "safety": "workload_map.jq.safety" in sys.modules}}))
"""


# the value-level paths are jq's public path API (jq.getpath/setpath), imported with it
_AT_IMPORT = ["workload_map.jq.builtins.conversions", "workload_map.jq.builtins.paths"]


def test_importing_the_package_builds_no_registry_and_loads_no_group() -> None:
    # nor compiles the lexer's patterns, nor imports the Karta safety rules (PEP 562)
    seen = _fresh(_PROBE.format(setup="import workload_map.jq", groups=_GROUP_MODULES))
    assert seen == {
        "built": False,
        "groups": _AT_IMPORT,
        "re2": False,
        "lexer": False,
        "safety": False,
    }


def test_a_program_loads_only_the_groups_it_calls() -> None:
    setup = (
        "import workload_map.jq as jq\n"
        "assert jq.compile('.a | length').all({'a': [1, 2]}) == [2]\n"
        "assert jq.compile('now | type').all(None) == ['number']"
    )
    seen = _fresh(_PROBE.format(setup=setup, groups=_GROUP_MODULES))
    assert seen == {
        # natives only: their entries come from the index, builtin.jq is not read
        "built": False,
        "groups": sorted(
            [*_AT_IMPORT, "workload_map.jq.builtins.collections", "workload_map.jq.builtins.time"]
        ),
        "re2": False,
        "lexer": True,
        "safety": False,
    }


def test_natives_make_only_their_entries_and_a_jq_builtin_builds_the_registry() -> None:
    code = """
import json
import workload_map.jq as jq
from workload_map.jq.builtins import registry
seen = {}
jq.compile('.a | length')
seen["natives"] = [registry.built(), sorted(map(list, registry._REGISTRY)), len(registry._JQ_SOURCES)]
before = registry.lookup("length", 0)
assert jq.compile('with_entries(.)').all({'a': 1}) == [{'a': 1}]
seen["jq"] = [registry.built(), len(registry._JQ_SOURCES) > 0, registry.lookup("length", 0) is before]
print(json.dumps(seen))
"""
    seen = _fresh(code)
    assert seen == {"natives": [False, [["length", 0]], 0], "jq": [True, True, True]}
    unknown = "import json, workload_map.jq as jq\n"
    unknown += "from workload_map.jq.builtins import registry\n"
    unknown += "try:\n    jq.compile('nosuch(1)')\nexcept jq.JqCompileError as e:\n"
    unknown += "    print(json.dumps({'built': registry.built(), 'error': e.message}))\n"
    assert _fresh(unknown) == {"built": True, "error": "function not defined: nosuch/1"}


@pytest.mark.parametrize("module", _GROUP_MODULES)
def test_every_group_marks_something(module: str) -> None:
    assert marks.marked(importlib.import_module(module))


def test_the_index_is_what_the_marks_say() -> None:
    # after adding or moving a builtin: registry.write_index()
    assert Path(index.__file__).read_text(encoding="utf-8") == registry.index_text()


def test_every_entry_resolves_to_an_implementation_of_its_kind() -> None:
    kinds: dict[str, int] = {}
    for entry in registry.entries():
        kinds[entry.kind] = kinds.get(entry.kind, 0) + 1
        if entry.kind == "jq":
            source = registry.jq_source(entry.key)
            assert source is not None and source.startswith(f"def {entry.name}"), entry
        else:
            assert callable(registry.implementation(entry)), entry
    assert set(kinds) == {"value", "stream", "special", "jq"}
    with pytest.raises(TypeError, match=r"test/1 is defined in builtin\.jq"):
        registry.implementation(registry.lookup("test", 1))  # type: ignore[arg-type]
    with pytest.raises(KeyError):
        registry.native("select", 1)  # a special form, not a value native
    assert all(n > 0 for n in kinds.values())


def test_one_lookup_serves_compiler_listing_and_safety() -> None:
    listed = registry.names()
    assert jq.compile("builtins").all(None) == [listed]
    assert "getpath/1" in listed and "with_entries/1" in listed and "sin/0" in listed
    assert "input/0" not in listed and not any(n.startswith(("_", "@", "$")) for n in listed)
    for entry in registry.entries():
        if not entry.effect:
            continue
        program = f"${entry.name[1:]}" if entry.name.startswith("$") else entry.name
        rules = {v.rule.value for v in jq.karta_violations(program)}
        assert rules == {entry.effect}, entry


def test_safety_refuses_a_builtin_by_its_effect_mark(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(
        registry._REGISTRY, ("spy", 1), Builtin("spy", 1, "control", "value", "logging")
    )
    # the verdicts are memoised by program text: forget them around the change
    safety._forbidden.cache_clear()
    safety._violations.cache_clear()
    try:
        found = jq.karta_violations("spy(1)")
    finally:
        monkeypatch.undo()
        safety._forbidden.cache_clear()
        safety._violations.cache_clear()
    assert [(v.rule, v.construct, v.offset) for v in found] == [(jq.SafetyRule.LOGGING, "spy", 0)]
    assert jq.karta_violations("spy(1)") == []


def _marked_in(module: str) -> Callable[[object], object]:
    # a function counts for the module that defines it, when it is marked
    def native(v: object) -> object:
        return v

    native.__module__ = module
    return native


def test_a_name_marked_twice_is_refused() -> None:
    module = types.ModuleType("twice")
    module.one = builtin("same", 0)(_marked_in("twice"))  # type: ignore[attr-defined]
    module.other = builtin("same", 0)(_marked_in("twice"))  # type: ignore[attr-defined]
    with pytest.raises(RuntimeError, match="same/0 is registered twice"):
        marks.marked(module)


def test_marks_are_found_in_a_family_table_and_imports_are_not_counted() -> None:
    module = types.ModuleType("family")
    # only in a table, never a global of its own: found as it was marked, not by a scan
    module.FAMILY = tuple(  # type: ignore[attr-defined]
        builtin(name, 0)(_marked_in("family")) for name in ("a", "b")
    )
    module.imported = registry.native("length", 0)  # type: ignore[attr-defined]
    assert sorted(marks.marked(module)) == [("a", 0), ("b", 0)]
    assert sorted(marks.marked(types.ModuleType("nothing"))) == []


def test_unknown_kinds_and_effects_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown kind"):
        builtin("x", 0, kind="macro")
    with pytest.raises(ValueError, match="effect"):
        builtin("x", 0, effect="network")


@pytest.mark.parametrize(
    ("program", "needs_ctx"),
    [
        ("select(.a) | map(.b) | any | not", False),
        ("first(.[]) | getpath([0]) | [path(.x)] | isempty(empty)", False),
        ("length, keys, now", False),
        ("limit(1; .[])", True),
        ("range(3)", True),
        ("[.[] | tostream]", True),
        ("_range(0; 3; 1)", True),
    ],
)
def test_a_program_gets_a_context_when_a_builtin_it_calls_is_marked_so(
    program: str, needs_ctx: bool
) -> None:
    assert compile_program(jq.parse(program), program)[1] is needs_ctx
