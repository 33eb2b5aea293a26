"""The compiler's base layer: its state, errors and the node-type dispatch.

The compiler is split into layers (patterns, terms, control) that all compile sub-nodes
through ``CompilerCore.compile``; the dispatch table is filled in by the top layer.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from workload_map.jq.closures import Code, Scope
from workload_map.jq.errors import JqCompileError

# Node type -> compile method; filled by ``workload_map.jq.compiler`` once it is defined.
DISPATCH: dict[type, Callable[[Any, Any, Scope], Code]] = {}


class CompilerCore:
    """State shared by the compiler layers and the dispatch to the per-node methods."""

    def __init__(self, source: str | None) -> None:
        self.source = source
        # whether evaluation can loop, recurse or read the environment (needs its own Ctx)
        self.needs_ctx = False

    def error(self, message: str, node: Any) -> JqCompileError:
        return JqCompileError(message, offset=getattr(node, "offset", None), program=self.source)

    def compile(self, node: Any, scope: Scope) -> Code:
        method = DISPATCH.get(type(node))
        if method is None:  # pragma: no cover - every parser node is dispatched
            raise self.error(f"cannot compile {type(node).__name__}", node)
        code: Code = method(self, node, scope)
        return code
