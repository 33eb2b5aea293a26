"""workload_map.jq: a jq engine with gojq v0.12.18 semantics, compiled to Python closures.

Every path in a Karta definition is a jq program evaluated against workload objects and pods::

    from workload_map import jq
    prog = jq.compile(".spec.replicatedJobs[].name")   # cached by text
    prog.all(obj)      # every output
    prog.first(obj)    # the first output or None, lazily

Values are plain Python JSON (None, bool, int, float, str, list, dict); inputs are never mutated.
Object keys iterate in sorted order, integers are exact, errors use gojq's texts and carry the
offset of the failing term. JSON text is read and written byte for byte as gojq does
(``loads``, ``iter_values``, ``dumps``; ``valid_text`` reads a lone surrogate as U+FFFD).

Builtins are registered one way (``jq.builtins.registry``): a function marked
``@builtin(name, arity, kind=..., effect=...)`` in a group module (``kind`` "value": called with
the input and the argument values; "stream": the same, yielding; "special": given the compiler,
the argument closures and the call node), or a ``def`` in ``builtins/builtin.jq``. A new or
moved builtin needs ``registry.write_index()`` (a test says so): the generated ``index.py`` lets
the registry, built on the first lookup, import a group the first time a program calls it. The
compiler, ``builtins`` and the Karta safety rules (``effect``) all read this one registry.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from workload_map.jq import ast, errors
from workload_map.jq.encode import dumps
from workload_map.jq.errors import *  # noqa: F403  (the error classes, listed in errors.__all__)
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
from workload_map.jq.trees import fresh_trees, keep_trees
from workload_map.jq.trees import parse as _parse
from workload_map.jq.values import valid_text

if TYPE_CHECKING:
    from workload_map.jq.builtins.control import INPUT_FILENAME
    from workload_map.jq.builtins.formats import decode_bytes
    from workload_map.jq.decode import JsonDecodeError, iter_values, loads
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
    "INPUT_FILENAME",
    "JsonDecodeError",
    "Limits",
    "Path",
    "PathKey",
    "Program",
    "SafetyRule",
    "SlowEvaluation",
    "Violation",
    "compile",
    "constant_path",
    "decode_bytes",
    "defaulted_path",
    "delpaths",
    "dumps",
    "fresh_trees",
    "getpath",
    "is_writable",
    "iter_values",
    "karta_violations",
    "keep_trees",
    "loads",
    "parse",
    "setpath",
    "unwritable",
    "valid_text",
    "writability",
]
__all__ += errors.__all__  # the error classes, listed once in their module


def parse(program: str) -> ast.Node:
    """Parse ``program`` into its syntax tree (``workload_map.jq.ast``); raises JqParseError."""
    return _parse(program)


# The package's one lazy boundary (PEP 562): evaluating expressions, what every command does,
# needs neither the Karta safety rules (and their enum) nor the builtin groups that `wlmap jq`
# reads from (``formats``, ``control``: the registry imports them on a program's first call of one
# of their builtins), nor the JSON text reader (``decode``: `wlmap jq`'s input and ``fromjson``).
# Measured with ``-X importtime``: safety 2.3 ms, formats 4.1 ms (it brings urllib.parse),
# control 1.1 ms, against about 85 ms for the package; decode's six regular expressions are
# 5.1M instructions of a live ``get``'s 470M (callgrind, docs/cli.md).
_LAZY = {
    **dict.fromkeys(("JsonDecodeError", "iter_values", "loads"), "workload_map.jq.decode"),
    **dict.fromkeys(
        ("SafetyRule", "Violation", "is_writable", "karta_violations", "unwritable", "writability"),
        "workload_map.jq.safety",
    ),
    "decode_bytes": "workload_map.jq.builtins.formats",
    "INPUT_FILENAME": "workload_map.jq.builtins.control",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
