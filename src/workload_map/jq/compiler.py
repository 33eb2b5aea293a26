"""Compile a jq tree into Python closures: no tree walking while a program runs.

Every node becomes a ``Code`` with three entry points:

* ``run(v, env)`` — an iterable of the node's outputs for input ``v``;
* ``one(v, env)`` — set only for nodes that always produce exactly one output (field chains,
  arithmetic on such nodes, literals, single-valued natives): the hot path, no generator;
* ``paths(v, p, env)`` — path mode: pairs ``(value, path)`` where ``path`` is a tuple, or
  ``None`` when the value was computed rather than found (gojq's "intact" check).

``env`` is a tuple: slot 0 is the run's ``Ctx`` (deadline, depth, hooks), the other slots hold
variables and closures, laid out at compile time. Functions are resolved as gojq does: local
definitions, then the one builtin registry (``workload_map.jq.builtins.registry``: closure
specials, ``builtin.jq`` definitions compiled lazily once per process, value natives).

Chains (``a | b | …``, ``a, b, …``, ``1 + 2 + …``, ``a and b and …``, ``a // b // …``, long suffix
chains) are compiled from flat lists, never by recursion along the chain, and run without one
Python frame per link: comma and operator chains loop, pipes and ``//`` fold into balanced trees.

The compiler is layered over several modules: ``closures`` (Code, Ctx, scopes), ``dispatch``,
``patterns``, ``terms`` (term nodes), ``fieldchains``, ``combinators``, ``pathmode``, ``calls`` and
``specials`` (closure builtins); this module adds operators and control flow, function
definitions and calls, the lazily compiled ``builtin.jq`` library and the entry points.
"""

from __future__ import annotations

import _thread
from collections.abc import Callable, Generator, Iterable, Iterator
from typing import Any

from workload_map.jq import ast
from workload_map.jq import values as jv
from workload_map.jq.builtins import registry
from workload_map.jq.builtins.paths import Allocator
from workload_map.jq.calls import at_call_site, func_call, native_call, param_call
from workload_map.jq.closures import (
    IDENTITY,
    NOTHING,
    Code,
    Ctx,
    Env,
    FuncInfo,
    Path,
    Scope,
    TailCall,
    annotate,
    catchable,
    const_code,
    from_one,
    invalid_path,
    label_ids,
    root_scope,
    tick,
)
from workload_map.jq.combinators import (
    BINOPS,
    OP_GROUP,
    alt_all,
    arith_chain,
    binary_code,
    bind_one,
    comma_code,
    flatten_nodes,
    if_code,
    logic_chain,
    map_code,
    pipe_all,
    pipe_code,
)
from workload_map.jq.errors import JqBreak, JqCompileError, JqError, JqRuntimeError
from workload_map.jq.fieldchains import chain_constant_path
from workload_map.jq.pathmode import modify_paths, setpath_at
from workload_map.jq.terms import TermCompiler
from workload_map.jq.trees import parse

__all__ = ["Code", "Ctx", "compile_program", "compile_tree"]

# --- the compiler --------------------------------------------------------------------------------


class Compiler(TermCompiler):
    """The full compiler: operators, control flow, definitions and calls."""

    def native(self, name: str, arity: int) -> Callable[..., Any]:
        return registry.native(name, arity)

    def builtin_names(self) -> list[str]:
        return registry.names()

    # --- operators ---------------------------------------------------------------------------
    def c_unary(self, node: ast.Unary, scope: Scope) -> Code:
        operand = self.compile(node.operand, scope)
        fn = jv.negate if node.op == "-" else registry.native("_plus", 0)
        if node.op == "-" and operand.const is not NOTHING and jv.is_number(operand.const):
            return const_code(jv.negate(operand.const))
        return map_code(operand, fn, node.offset)

    def c_pipe(self, node: ast.Pipe, scope: Scope) -> Code:
        # a pipe chain is compiled as a list (no recursion along the chain)
        items = flatten_nodes(node, ast.Pipe)
        codes: list[Code] = []
        i, n = 0, len(items)
        while i < n:
            if i + 1 < n:
                entries = self._entries_field(items[i], items[i + 1], scope)
                if entries is not None:
                    codes.append(entries)
                    i += 2
                    continue
            codes.append(self.compile(items[i], scope))
            i += 1
        return pipe_all(codes)

    def _entries_field(self, left: Any, right: Any, scope: Scope) -> Code | None:
        """``to_entries[] | .key`` (or ``.value``) without building the entry objects."""
        if not (
            isinstance(left, ast.Iterate)
            and isinstance(left.target, ast.Call)
            and left.target.name == "to_entries"
            and not left.target.args
            and isinstance(right, ast.Index)
            and isinstance(right.target, ast.Identity)
            and isinstance(right.key, ast.Literal)
            and right.key.value in ("key", "value")
            and scope.lookup_callable("to_entries", 0) is None
        ):
            return None
        to_entries = registry.native("to_entries", 0)
        want_key = right.key.value == "key"
        offset = left.target.offset

        def run(v: Any, env: Env) -> Iterable[Any]:
            if type(v) is dict:
                keys = sorted(v)
                return keys if want_key else [v[k] for k in keys]
            try:
                items = to_entries(v)
            except JqError as e:
                annotate(e, offset)
                raise
            field = "key" if want_key else "value"
            return [item[field] for item in items]

        generic = pipe_code(self.compile(left, scope), self.compile(right, scope))
        return Code(run, None, generic.paths)

    def c_comma(self, node: ast.Comma, scope: Scope) -> Code:
        return comma_code([self.compile(x, scope) for x in flatten_nodes(node, ast.Comma)])

    def c_alt(self, node: ast.Alt, scope: Scope) -> Code:
        # `a // b // c` nests to the right; `//` is associative, so long chains fold balanced
        items: list[Any] = []
        n: Any = node
        while isinstance(n, ast.Alt):
            items.append(n.left)
            n = n.right
        items.append(n)
        return alt_all([self.compile(x, scope) for x in items])

    def c_binary(self, node: ast.Binary, scope: Scope) -> Code:
        # `1 + 2 - 3 …` and `a and b and …` nest to the left: walk the spine in a loop
        group = OP_GROUP[node.op]
        operands: list[Any] = []
        ops: list[tuple[str, int]] = []
        n: Any = node
        while isinstance(n, ast.Binary) and OP_GROUP[n.op] == group:
            operands.append(n.right)
            ops.append((n.op, n.offset))
            n = n.left
        operands.append(n)
        operands.reverse()
        ops.reverse()
        codes = [self.compile(x, scope) for x in operands]
        if len(codes) == 2:
            return binary_code(node.op, codes[0], codes[1], node.offset)
        if group == "and" or group == "or":
            return logic_chain(group == "and", codes)
        return arith_chain(codes, ops)

    def c_update(self, node: ast.Update, scope: Scope) -> Code:
        lhs = self.compile(node.left, scope)
        rhs = self.compile(node.right, scope)
        op = node.op
        offset = node.offset
        lhs_paths = lhs.paths

        def all_paths(v: Any, env: Env) -> Iterator[list[Any]]:
            for x, p in lhs_paths(v, (), env):
                if p is None:
                    raise invalid_path(x)
                yield list(p)

        if op == "=":
            const_path = chain_constant_path(node.left)
            if const_path is not None:
                # gojq turns `.a[0] = x` into `setpath(["a", 0]; x)` (and its error texts)
                fixed = const_path

                def run_const(v: Any, env: Env) -> Iterator[Any]:
                    for x in rhs.run(v, env):
                        yield setpath_at(v, fixed, x, offset, Allocator())

                return Code(run_const)

            def run_assign(v: Any, env: Env) -> Iterator[Any]:
                for x in rhs.run(v, env):
                    acc = v
                    allocator = Allocator()
                    for p in all_paths(v, env):
                        acc = setpath_at(acc, p, x, offset, allocator)
                    yield acc

            return Code(run_assign)
        if op == "|=":

            def run_modify(v: Any, env: Env) -> Iterator[Any]:
                yield modify_paths(v, env, all_paths, rhs.run, offset)

            return Code(run_modify)
        fn = BINOPS.get(op[:-1])

        def run_arith(v: Any, env: Env) -> Iterator[Any]:
            for x in rhs.run(v, env):
                if fn is None:  # "//="

                    def upd(old: Any, env: Env, x: Any = x) -> tuple[Any]:
                        return (x if old is None or old is False else old,)

                else:

                    def upd(old: Any, env: Env, x: Any = x) -> tuple[Any]:
                        try:
                            return (fn(old, x),)
                        except JqError as e:
                            annotate(e, offset)
                            raise

                yield modify_paths(v, env, all_paths, upd, offset)

        return Code(run_arith)

    # --- control -----------------------------------------------------------------------------
    def c_if(self, node: ast.If, scope: Scope) -> Code:
        branches = [(node.cond, node.then), *node.elifs]
        otherwise = self.compile(node.otherwise, scope) if node.otherwise is not None else IDENTITY
        code = otherwise
        for cond_node, then_node in reversed(branches):
            code = if_code(self.compile(cond_node, scope), self.compile(then_node, scope), code)
        return code

    def c_reduce(self, node: ast.Reduce, scope: Scope) -> Code:
        self.needs_ctx = True
        source = self.compile(node.source, scope)
        binder, inner = self.pattern_binder([node.pattern], scope, node)
        init = self.compile(node.init, scope)
        update = self.compile(node.update, inner)
        u_run = update.run

        def run(v: Any, env: Env) -> Iterator[Any]:
            ctx = env[0]
            for acc in init.run(v, env):
                for x in source.run(v, env):
                    for env2 in binder(x, env):
                        ctx.ticks -= 1
                        if ctx.ticks <= 0:
                            ctx.check()
                        last = NOTHING
                        for y in u_run(acc, env2):
                            last = y
                        if last is not NOTHING:
                            acc = last
                yield acc

        return Code(run)

    def c_foreach(self, node: ast.Foreach, scope: Scope) -> Code:
        self.needs_ctx = True
        source = self.compile(node.source, scope)
        binder, inner = self.pattern_binder([node.pattern], scope, node)
        init = self.compile(node.init, scope)
        update = self.compile(node.update, inner)
        extract = self.compile(node.extract, inner) if node.extract is not None else None

        def run(v: Any, env: Env) -> Iterator[Any]:
            ctx = env[0]
            for acc in init.run(v, env):
                for x in source.run(v, env):
                    for env2 in binder(x, env):
                        tick(ctx)
                        for y in update.run(acc, env2):
                            acc = y
                            if extract is None:
                                yield y
                            else:
                                yield from extract.run(y, env2)

        return Code(run)

    def c_bind(self, node: ast.Bind, scope: Scope) -> Code:
        source = self.compile(node.source, scope)
        binder, inner = self.pattern_binder(list(node.patterns), scope, node)
        body = self.compile(node.body, inner)
        b_run, b_paths = body.run, body.paths
        if len(node.patterns) == 1:
            if source.one is not None and isinstance(node.patterns[0], ast.PVar):
                s1 = source.one

                def run1(v: Any, env: Env) -> Iterable[Any]:
                    return b_run(v, (*env, s1(v, env)))

                def paths1(v: Any, p: Path | None, env: Env) -> Iterable[tuple[Any, Path | None]]:
                    return b_paths(v, p, (*env, s1(v, env)))

                if body.tail is not None:
                    b_tail = body.tail

                    def tail1(v: Any, env: Env) -> Generator[Any, None, TailCall | None]:
                        return (yield from b_tail(v, (*env, s1(v, env))))

                    return Code(run1, body.one and bind_one(body.one, s1), paths1, tail=tail1)
                if body.one is not None:
                    bo = body.one

                    def one1(v: Any, env: Env) -> Any:
                        return bo(v, (*env, s1(v, env)))

                    return from_one(one1, paths1)
                return Code(run1, None, paths1)

            def run(v: Any, env: Env) -> Iterator[Any]:
                for x in source.run(v, env):
                    for env2 in binder(x, env):
                        yield from b_run(v, env2)

            def paths(v: Any, p: Path | None, env: Env) -> Iterator[tuple[Any, Path | None]]:
                for x in source.run(v, env):
                    for env2 in binder(x, env):
                        yield from b_paths(v, p, env2)

            return Code(run, None, paths)
        alternatives = self.alternative_binders(list(node.patterns), scope, node)

        def run_alt(v: Any, env: Env) -> Iterator[Any]:
            for x in source.run(v, env):
                last = len(alternatives) - 1
                for i, bind in enumerate(alternatives):
                    try:
                        for env2 in bind(x, env):
                            yield from b_run(v, env2)
                        break
                    except JqRuntimeError as e:
                        if not catchable(e) or i == last:
                            raise

        return Code(run_alt)

    def c_label(self, node: ast.Label, scope: Scope) -> Code:
        inner = scope.bind_label(node.name)
        body = self.compile(node.body, inner)

        def run(v: Any, env: Env) -> Iterator[Any]:
            token = next(label_ids)
            try:
                yield from body.run(v, (*env, token))
            except JqBreak as b:
                if b.label_id != token:
                    raise

        def paths(v: Any, p: Path | None, env: Env) -> Iterator[tuple[Any, Path | None]]:
            token = next(label_ids)
            try:
                yield from body.paths(v, p, (*env, token))
            except JqBreak as b:
                if b.label_id != token:
                    raise

        return Code(run, None, paths)

    def c_break(self, node: ast.Break, scope: Scope) -> Code:
        slot = scope.lookup("label", node.name)
        if slot is None:
            raise self.error(f"label not defined: ${node.name}", node)

        def run(v: Any, env: Env) -> Iterator[Any]:
            raise JqBreak(env[slot])
            yield  # pragma: no cover

        def paths(v: Any, p: Path | None, env: Env) -> Iterator[tuple[Any, Path | None]]:
            raise JqBreak(env[slot])
            yield  # pragma: no cover

        return Code(run, None, paths)

    # --- functions ---------------------------------------------------------------------------
    def c_with_defs(self, node: ast.WithDefs, scope: Scope) -> Code:
        self.needs_ctx = True
        for d in node.defs:
            scope = self.define(d, scope)
        return self.compile(node.body, scope)

    def define(self, d: ast.FuncDef, scope: Scope) -> Scope:
        info = FuncInfo(d.name, d.params, scope.size)
        outer = scope.bind_func(info)
        inner = outer
        for param in d.params:
            inner = inner.bind_param(param.lstrip("$"))
        for param in d.params:
            if param.startswith("$"):
                inner = inner.bind_var(param[1:])
        info.body = self.compile(d.body, inner)
        return outer

    def c_call(self, node: ast.Call, scope: Scope) -> Code:
        name, arity = node.name, len(node.args)
        found = scope.lookup_callable(name, arity)
        if found is not None:
            kind, value = found
            if kind == "param":
                return param_call(value)
            return self.call_func(value, node, scope)
        return self.call_global(node, scope)

    def call_global(self, node: ast.Call, scope: Scope) -> Code:
        name, arity = node.name, len(node.args)
        key = (name, arity)
        entry = registry.lookup(name, arity)
        if entry is None:
            raise self.error(f"function not defined: {name}/{arity}", node)
        kind = entry.kind
        if entry.needs_ctx:  # can loop, recurse or read the run's context (its mark says)
            self.needs_ctx = True
        if kind == "jq":
            info = _builtin_func(key)
            assert info is not None
            return self.call_func(info, node, scope)
        fn = registry.implementation(entry)
        args = [self.compile(a, scope) for a in node.args]
        if kind == "special":
            code: Code = fn(self, args, node)
            return code
        return native_call(fn, args, node.offset, kind == "stream")

    def call_func(self, info: FuncInfo, node: ast.Call, scope: Scope) -> Code:
        args = [self.compile(a, scope) for a in node.args]
        code = func_call(info, args, node.offset)
        if info.builtin:
            return at_call_site(code, node.offset)
        return code


# --- builtin.jq: each function parsed and compiled on first use -----------------------------------

_BUILTIN_DEFS: dict[tuple[str, int], ast.FuncDef] = {}
_BUILTIN_FUNCS: dict[tuple[str, int], FuncInfo] = {}
_BUILTIN_LOCK = _thread.RLock()  # threading.RLock, without importing threading


def _builtin_def(key: tuple[str, int]) -> ast.FuncDef | None:
    found = _BUILTIN_DEFS.get(key)
    if found is None:
        source = registry.jq_source(key)
        if source is None:
            return None
        tree = _without_offsets(parse(source + " ."))
        assert isinstance(tree, ast.WithDefs) and len(tree.defs) == 1
        found = _BUILTIN_DEFS[key] = tree.defs[0]
    return found


def _without_offsets(node: Any) -> Any:
    """A copy of a builtin.jq tree with every offset -1 (they are not the user's program)."""
    if isinstance(node, tuple):
        return tuple(_without_offsets(x) for x in node)
    fields = getattr(type(node), "FIELDS", None)
    if fields is None:
        return node
    changes = {f: _without_offsets(getattr(node, f)) for f in fields if f != "offset"}
    if "offset" in fields:
        changes["offset"] = -1
    return node.replace(**changes)


def _builtin_func(key: tuple[str, int]) -> FuncInfo | None:
    info = _BUILTIN_FUNCS.get(key)
    if info is not None and info.body is not None:
        return info
    with _BUILTIN_LOCK:
        return _compile_builtin(key)


def _compile_builtin(key: tuple[str, int]) -> FuncInfo | None:
    info = _BUILTIN_FUNCS.get(key)
    if info is not None:
        return info  # compiled, or being compiled by this thread (recursion)
    d = _builtin_def(key)
    if d is None:
        return None
    info = FuncInfo(d.name, d.params, 1, builtin=True)
    _BUILTIN_FUNCS[key] = info
    root = root_scope(())
    inner = root.bind_func(info)
    for param in d.params:
        inner = inner.bind_param(param.lstrip("$"))
    for param in d.params:
        if param.startswith("$"):
            inner = inner.bind_var(param[1:])
    try:
        info.body = Compiler(None).compile(d.body, inner)
    except BaseException:
        del _BUILTIN_FUNCS[key]
        raise
    return info


def compile_tree(tree: ast.Node, source: str | None, variables: tuple[str, ...] = ()) -> Code:
    """Compile a parsed program; ``variables`` are the names of the program-level ``$vars``."""
    return compile_program(tree, source, variables)[0]


def compile_program(
    tree: ast.Node, source: str | None, variables: tuple[str, ...] = ()
) -> tuple[Code, bool]:
    """Compile a parsed program; also tell whether it needs a per-run context."""
    compiler = Compiler(source)
    try:
        code = compiler.compile(tree, root_scope(variables))
    except RecursionError:
        raise JqCompileError("query too deep to compile", program=source) from None
    return code, compiler.needs_ctx
