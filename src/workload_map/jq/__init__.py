"""workload_map.jq: a jq engine with gojq v0.12.18 semantics, compiled to Python closures.

Every path in a Karta definition is a jq program evaluated against workload objects and pods::

    from workload_map import jq
    prog = jq.compile(".spec.replicatedJobs[].name")   # cached by text
    prog.all(obj)      # every output
    prog.first(obj)    # the first output or None, lazily

Values are plain Python JSON (None, bool, int, float, str, list, dict); inputs are never mutated.
Object keys iterate in sorted order, integers are exact, errors use gojq's texts and carry the
offset of the failing term.

Builtins are registered one way (``jq.builtins.registry``): a function marked
``@builtin(name, arity, kind=..., effect=...)`` in a group module (``kind`` "value": called with
the input and the argument values; "stream": the same, yielding; "special": given the compiler,
the argument closures and the call node), or a ``def`` in ``builtins/builtin.jq``. A new or
moved builtin needs ``registry.write_index()`` (a test says so): the generated ``index.py`` lets
the registry, built on the first lookup, import a group the first time a program calls it. The
compiler, ``builtins`` and the Karta safety rules (``effect``) all read this one registry.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

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

if TYPE_CHECKING:
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


#: the Karta safety rules, imported on first use (PEP 562): evaluating expressions, what every
#: command does, needs neither them nor their enum
_SAFETY = frozenset(
    {"SafetyRule", "Violation", "is_writable", "karta_violations", "unwritable", "writability"}
)


def __getattr__(name: str) -> Any:
    if name not in _SAFETY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from workload_map.jq import safety

    value = getattr(safety, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
