"""The compiler's base layer: its state, errors and the node-type dispatch.

The compiler is split into layers (patterns, terms, control) that all compile sub-nodes
through ``CompilerCore.compile``; a node type ``RecurseAll`` compiles with the method
``c_recurse_all``, looked up on the first node of that type (nothing is registered at import).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from workload_map.jq.closures import Code, Scope
from workload_map.jq.errors import JqCompileError

# (compiler class, node type) -> compile method, filled on first use
DISPATCH: dict[tuple[type, type], Callable[[Any, Any, Scope], Code]] = {}


def method_name(node_type: type) -> str:
    """``RecurseAll`` -> ``c_recurse_all``: the compile method of a node type."""
    name = node_type.__name__
    return "c_" + "".join(
        f"_{c.lower()}" if c.isupper() and i else c.lower() for i, c in enumerate(name)
    )


class CompilerCore:
    """State shared by the compiler layers and the dispatch to the per-node methods."""

    def __init__(self, source: str | None) -> None:
        self.source = source
        # whether evaluation can loop, recurse or read the environment (needs its own Ctx)
        self.needs_ctx = False

    def error(self, message: str, node: Any) -> JqCompileError:
        return JqCompileError(message, offset=getattr(node, "offset", None), program=self.source)

    # The registry's answers, given by the full compiler (``compiler.Compiler``, which imports the
    # registry): the special forms the registry loads by name cannot import it back.
    def native(self, name: str, arity: int) -> Callable[..., Any]:
        """The function of the value or stream builtin ``name/arity``."""
        raise NotImplementedError

    def builtin_names(self) -> list[str]:
        """Every builtin a program can call, as ``name/arity`` (what ``builtins`` yields)."""
        raise NotImplementedError

    def compile(self, node: Any, scope: Scope) -> Code:
        key = (type(self), type(node))
        method = DISPATCH.get(key)
        if method is None:
            found = getattr(type(self), method_name(type(node)), None)
            if found is None:  # pragma: no cover - every parser node has its method
                raise self.error(f"cannot compile {type(node).__name__}", node)
            method = DISPATCH[key] = found
        code: Code = method(self, node, scope)
        return code
