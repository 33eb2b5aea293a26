"""workload_map.jq: a jq engine with gojq v0.12.18 semantics, compiled to Python closures.

Every path in a Karta definition is a jq program evaluated against workload objects and pods::

    from workload_map import jq
    prog = jq.compile(".spec.replicatedJobs[].name")   # cached by text
    prog.all(obj)      # every output
    prog.first(obj)    # the first output or None, lazily

Values are plain Python JSON (None, bool, int, float, str, list, dict); inputs are never mutated.
Object keys iterate in sorted order, integers are exact, errors use gojq's texts and carry the
offset of the failing term.
"""

from __future__ import annotations

from workload_map.jq import ast, errors
from workload_map.jq.errors import *  # noqa: F403  (the error classes, listed in errors.__all__)
from workload_map.jq.parser import parse as _parse
from workload_map.jq.paths import (
    Path,
    PathKey,
    constant_path,
    defaulted_path,
    delpaths,
    getpath,
    setpath,
)
from workload_map.jq.program import (
    DEFAULT_LIMITS,
    DEFINITION_LIMITS,
    Limits,
    Program,
    SlowEvaluation,
    compile,
)
from workload_map.jq.safety import (
    SafetyRule,
    Violation,
    is_writable,
    karta_violations,
    unwritable,
    writability,
)

__all__ = [
    "DEFAULT_LIMITS",
    "DEFINITION_LIMITS",
    "Limits",
    "Path",
    "PathKey",
    "Program",
    "SafetyRule",
    "SlowEvaluation",
    "Violation",
    "compile",
    "constant_path",
    "defaulted_path",
    "delpaths",
    "getpath",
    "is_writable",
    "karta_violations",
    "parse",
    "setpath",
    "unwritable",
    "writability",
]
__all__ += errors.__all__  # the error classes, listed once in their module


def parse(program: str) -> ast.Node:
    """Parse ``program`` into its syntax tree (``workload_map.jq.ast``); raises JqParseError."""
    return _parse(program)
