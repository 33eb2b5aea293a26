"""Special forms that reach the evaluating process: env and ``$ENV``, input/inputs (refused),
debug and stderr, builtins and modulemeta; the Karta safety rules refuse most of them by their
``effect`` mark."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import Any

from workload_map.jq import ast, encode
from workload_map.jq import values as jv
from workload_map.jq.builtins.marks import builtin
from workload_map.jq.closures import (
    Code,
    Env,
    from_one,
)
from workload_map.jq.dispatch import CompilerCore
from workload_map.jq.errors import JqRuntimeError

__all__: list[str] = []


@builtin("env", 0, kind="special", effect="environment")
@builtin("$ENV", 0, kind="special", effect="environment")
def _sp_env(c: CompilerCore, args: list[Code], node: Any) -> Code:
    c.needs_ctx = True

    def one(v: Any, env: Env) -> Any:
        return dict(env[0].environ())

    return from_one(one)


@builtin("input", 0, kind="special", effect="input", listed=False)
@builtin("inputs", 0, kind="special", effect="input", listed=False)
def _sp_input(c: CompilerCore, args: list[Code], node: ast.Call) -> Code:
    """No further inputs inside a program: gojq's error without an input iterator."""
    raise c.error("input(s)/0 is not allowed", node)


@builtin("builtins", 0, kind="special")
def _sp_builtins(c: CompilerCore, args: list[Code], node: ast.Call) -> Code:
    names = c.builtin_names()

    def one(v: Any, env: Env) -> Any:
        return list(names)

    return from_one(one)


@builtin("modulemeta", 0, kind="special")
def _sp_modulemeta(c: CompilerCore, args: list[Code], node: ast.Call) -> Code:
    """No module loader here: gojq's library error for every module name."""

    def one(v: Any, env: Env) -> Any:
        if type(v) is not str:
            raise JqRuntimeError(f"modulemeta cannot be applied to: {jv.type_error_preview(v)}")
        raise JqRuntimeError(f"cannot load module: {encode.dumps(v, None)}")

    return from_one(one)


def _stderr_write(env: Env, text: str) -> None:
    hook = env[0].stderr
    if hook is not None:
        hook(text)
    else:
        sys.stderr.write(text)


@builtin("debug", 0, kind="special", effect="logging")
def _sp_debug0(c: CompilerCore, args: list[Code], node: ast.Call) -> Code:
    def one(v: Any, env: Env) -> Any:
        _stderr_write(env, encode.dumps(["DEBUG:", v], None) + "\n")
        return v

    return from_one(one)


@builtin("debug", 1, kind="special", effect="logging")
def _sp_debug1(c: CompilerCore, args: list[Code], node: ast.Call) -> Code:
    msg = args[0]

    def run(v: Any, env: Env) -> Iterator[Any]:
        for m in msg.run(v, env):
            _stderr_write(env, encode.dumps(["DEBUG:", m], None) + "\n")
        yield v

    return Code(run)


@builtin("stderr", 0, kind="special", effect="logging")
def _sp_stderr(c: CompilerCore, args: list[Code], node: ast.Call) -> Code:
    def one(v: Any, env: Env) -> Any:
        # gojq: strings raw, other values as compact JSON, no newline
        _stderr_write(env, v if type(v) is str else encode.dumps(v, None))
        return v

    return from_one(one)
