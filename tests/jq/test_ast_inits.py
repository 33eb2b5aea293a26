"""The syntax nodes' ``__init__`` functions come written out from ``jq/ast_inits.py`` (bytecode),
not compiled from text on a class's first use (~0.4M instructions per class, docs/cli.md)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from workload_map.jq import ast, ast_inits
from workload_map.jq.parser import parse

ROOT = Path(__file__).resolve().parents[2]
CLASSES = [c for c in vars(ast).values() if isinstance(c, type) and c.__base__ is ast._Node]


def test_the_written_inits_are_what_the_classes_say() -> None:
    # after adding a node class or changing its fields: workload_map.jq.ast.write_inits()
    assert Path(ast_inits.__file__).read_text(encoding="utf-8") == ast.inits_text()


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_each_class_builds_as_the_generated_init_would(cls: type[Any]) -> None:
    assert cls.__init__ is not ast._Node.__init__
    generated = ast._specialised_init(cls)
    values = [f"v{i}" for i in range(len(cls.FIELDS))]
    made = cls(*values)
    assert [getattr(made, f) for f in cls.FIELDS] == values
    required = [f for f in cls.FIELDS if f not in cls.DEFAULTS]
    bare = cls(**{f: f for f in required})
    assert {f: getattr(bare, f) for f in cls.FIELDS} == {**cls.DEFAULTS, **{f: f for f in required}}
    assert cls.__init__.__defaults__ == generated.__defaults__
    assert cls.__init__.__code__.co_varnames == generated.__code__.co_varnames


def test_a_class_the_file_does_not_know_gets_its_init_on_first_use() -> None:
    @ast.node
    class Extra:
        left: Any
        offset: int = -1

    assert Extra.__init__ is ast._Node.__init__
    made = Extra("x")
    assert (made.left, made.offset) == ("x", -1)
    assert type(made).__init__ is not ast._Node.__init__


def test_parsing_compiles_no_text() -> None:
    """A fresh process parses the catalog's JobSet programs without ``exec`` of any text."""
    code = (
        "import builtins\n"
        "calls = []\n"
        "real = builtins.exec\n"
        "def counted(source, *rest):\n"
        "    calls.append(source)\n"
        "    return real(source, *rest)\n"
        "from workload_map.jq.parser import parse\n"
        "builtins.exec = counted\n"
        "tree = parse('.spec.replicatedJobs[]? | (.replicas // 1) * ([.a, .b // 1] | min)')\n"
        "tree = parse('if .a then {b: [.c[]?]} elif .d then -1 else \"x\\\\(.e)\" end')\n"
        "tree = parse('reduce .[] as [$a, {b: $c}] (0; . + $a) | try error catch .')\n"
        "print(len([c for c in calls if isinstance(c, str)]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT / "src")},
        timeout=120,
        check=False,
    )
    assert done.stdout.strip() == "0", done.stdout + done.stderr
    assert parse(".a") == ast.Index(ast.Identity(), ast.Literal("a", "string"))
