"""Value-mode compilation of terms: literals, variables, strings, indexes, slices,
iteration, arrays and objects.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from workload_map.jq import ast
from workload_map.jq import values as jv
from workload_map.jq.builtins import registry
from workload_map.jq.calls import native_call
from workload_map.jq.closures import (
    IDENTITY,
    KEYED,
    PACE,
    Code,
    Env,
    One,
    Path,
    Run,
    Scope,
    annotate,
    charge,
    collect,
    const_code,
    costly,
    from_one,
    invalid_path,
    paced,
    paced_long,
)
from workload_map.jq.combinators import (
    comma_code,
    flatten_comma,
    missing_format,
    pipe_all,
    pipe_code,
    try_code,
)
from workload_map.jq.errors import JqError, JqRuntimeError
from workload_map.jq.fieldchains import (
    SUFFIX_NODES,
    index_chain,
    index_path,
    iterate_paths,
    long_suffix_chain,
    suffix_step,
    with_identity_target,
)
from workload_map.jq.pathmode import recurse_children_paths, recurse_children_run
from workload_map.jq.patterns import PatternCompiler


def _format(name: str) -> Any:
    """The function of ``@name`` (``@base64``…), or the one raising gojq's error for an unknown one."""
    entry = registry.lookup(name, 0)
    return registry.implementation(entry) if entry is not None else missing_format(name)


def _optional_iterate(base: One, guarded: Code) -> Code:
    """``T[]?`` with a single-valued ``T`` (``.status.conditions[]?``, the status matchers'
    staple) as one step: the elements, or nothing when ``T`` is not iterable (the only error
    ``?`` guards here is the iteration's own, a catchable type error), with no generator
    between ``?`` and each element. Path mode keeps the composed form."""

    def run(v: Any, env: Env) -> Iterable[Any]:
        t = base(v, env)
        tt = type(t)
        if tt is list:
            items: Iterable[Any] = t
        elif tt is dict:
            items = t.values() if len(t) <= 1 else [t[k] for k in sorted(t)]
        else:
            return ()
        # paced(), inlined for the common short container: the consumer runs once per element
        ctx = env[0]
        n = len(t)
        if n > PACE:
            return paced_long(items, n, ctx)
        ctx.ticks -= n
        if ctx.ticks <= 0:
            ctx.check()
        return items

    return Code(run, None, guarded.paths)


class TermCompiler(PatternCompiler):
    """Compiles the term nodes (everything below operators and control flow)."""

    # --- simple terms ------------------------------------------------------------------------
    def c_identity(self, node: ast.Identity, scope: Scope) -> Code:
        return IDENTITY

    def c_literal(self, node: ast.Literal, scope: Scope) -> Code:
        return const_code(node.value)

    def c_var(self, node: ast.Var, scope: Scope) -> Code:
        name = node.name
        slot = scope.lookup("var", name)
        if slot is None:
            variable = registry.lookup("$" + name, 0)  # a builtin variable: $ENV
            if variable is not None:
                return registry.implementation(variable)(self, [], node)  # type: ignore[no-any-return]
            raise self.error(f"variable not defined: ${name}", node)

        def one(v: Any, env: Env) -> Any:
            return env[slot]

        return from_one(one)

    def c_format(self, node: ast.Format, scope: Scope) -> Code:
        fn = _format(node.name)
        return native_call(fn, [], node.offset, False)

    def c_str(self, node: ast.Str, scope: Scope) -> Code:
        if node.fmt is not None:
            fmt = _format(node.fmt)
        else:
            fmt = registry.native("tostring", 0)
        parts: list[Any] = []
        for part in node.parts:
            parts.append(part if isinstance(part, str) else self.compile(part, scope))
        if all(isinstance(p, str) or p.one is not None for p in parts):
            ones = [p if isinstance(p, str) else p.one for p in parts]

            def one(v: Any, env: Env) -> Any:
                meter = env[0]  # the text of a large value counts its work as it goes
                vals = [
                    x if isinstance(x, str) else fmt(x(v, env), meter=meter) for x in reversed(ones)
                ]
                vals.reverse()
                return "".join(vals)

            return from_one(one)

        def run(v: Any, env: Env) -> Iterator[Any]:
            def rec(i: int) -> Iterator[list[str]]:
                # last interpolation varies slowest (gojq folds left with "+")
                if i < 0:
                    yield []
                    return
                part = parts[i]
                if isinstance(part, str):
                    for rest in rec(i - 1):
                        rest.append(part)
                        yield rest
                    return
                for x in part.run(v, env):
                    s = fmt(x, meter=env[0])
                    for rest in rec(i - 1):
                        rest.append(s)
                        yield rest

            for pieces in rec(len(parts) - 1):
                yield "".join(pieces)

        return Code(run)

    def c_recurse_all(self, node: ast.RecurseAll, scope: Scope) -> Code:
        self.needs_ctx = True
        return Code(recurse_children_run, None, recurse_children_paths)

    # --- suffixes ----------------------------------------------------------------------------
    def _const_key_chain(self, node: Any) -> tuple[Any, list[Any], list[int]] | None:
        """``.a.b[0]``: the base node, the constant keys (strings and ints) on top of it and
        the offset of each key's term."""
        keys: list[Any] = []
        offsets: list[int] = []
        while isinstance(node, ast.Index) and isinstance(node.key, ast.Literal):
            k = node.key.value
            if node.key.kind == "string" or (type(k) is int and k >= 0):
                keys.append(k)
                offsets.append(node.offset)
                node = node.target
            else:
                break
        if not keys:
            return None
        keys.reverse()
        offsets.reverse()
        return node, keys, offsets

    def c_index(self, node: ast.Index, scope: Scope) -> Code:
        chain = self._const_key_chain(node)
        offset = node.offset
        if chain is not None:
            base_node, keys, offsets = chain
            if type(base_node) in SUFFIX_NODES and long_suffix_chain(base_node):
                base = self._suffix_chain(base_node, scope)
            else:
                base = self.compile(base_node, scope)
            return index_chain(base, keys, offsets)
        target = self.compile(node.target, scope)
        key = self.compile(node.key, scope)
        t_one, k_one = target.one, key.one
        t_run, k_run = target.run, key.run
        t_paths = target.paths
        index = jv.index

        if t_one is not None and k_one is not None:

            def one(v: Any, env: Env) -> Any:
                try:
                    k = k_one(v, env)  # gojq evaluates the key first
                    t = t_one(v, env)
                    out = index(t, k)
                except JqError as e:
                    annotate(e, offset)
                    raise
                if type(k) is list and costly(t, out):
                    charge(env[0], t, out)  # `.[$array]` searches the whole input
                return out

            def paths1(v: Any, p: Path | None, env: Env) -> Iterator[tuple[Any, Path | None]]:
                k = k_one(v, env)
                for t, tp in t_paths(v, p, env):
                    yield index_path(t, tp, k, offset)

            return from_one(one, paths1)

        def run(v: Any, env: Env) -> Iterator[Any]:
            try:
                for k in k_run(v, env):
                    for t in t_run(v, env):
                        yield index(t, k)
            except JqError as e:
                annotate(e, offset)
                raise

        def paths(v: Any, p: Path | None, env: Env) -> Iterator[tuple[Any, Path | None]]:
            for k in k_run(v, env):
                for t, tp in t_paths(v, p, env):
                    yield index_path(t, tp, k, offset)

        return Code(run, None, paths)

    def _suffix_chain(self, node: Any, scope: Scope) -> Code:
        """A long chain of suffixes (``.[]?.a[0][]…``) as a pipe of one-suffix stages, compiled
        in a loop and folded balanced (see ``pipe_all``)."""
        stages: list[Code] = []
        while True:
            step = suffix_step(node)
            if step is None:
                break
            kind, below = step
            if kind == "keys":
                _base, keys, offsets = self._const_key_chain(node)  # type: ignore[misc]
                stages.append(index_chain(IDENTITY, keys, offsets))
            elif kind == "iterate":
                stages.append(
                    self.c_iterate(ast.Iterate(ast.Identity(), offset=node.offset), scope)
                )
            else:  # a suffix guarded by `?`
                last = self.compile(with_identity_target(node.target), scope)
                stages.append(try_code(last, None))
            node = below
        stages.append(self.compile(node, scope))
        stages.reverse()
        return pipe_all(stages)

    def c_slice(self, node: ast.Slice, scope: Scope) -> Code:
        target = self.compile(node.target, scope)
        start = self.compile(node.start, scope) if node.start is not None else const_code(None)
        end = self.compile(node.end, scope) if node.end is not None else const_code(None)
        offset = node.offset
        slice_ = jv.slice

        def run(v: Any, env: Env) -> Iterator[Any]:
            try:
                for s in start.run(v, env):
                    for e in end.run(v, env):
                        for t in target.run(v, env):
                            yield slice_(t, s, e)
            except JqError as err:
                annotate(err, offset)
                raise

        def paths(v: Any, p: Path | None, env: Env) -> Iterator[tuple[Any, Path | None]]:
            for s in start.run(v, env):
                for e in end.run(v, env):
                    for t, tp in target.paths(v, p, env):
                        try:
                            w = slice_(t, s, e)
                        except JqError as err:
                            annotate(err, offset)
                            raise
                        if tp is None:
                            raise invalid_path(t)
                        yield w, (*tp, {"start": s, "end": e})

        if target.one is not None and start.one is not None and end.one is not None:
            t1, s1, e1 = target.one, start.one, end.one

            def one(v: Any, env: Env) -> Any:
                try:
                    s = s1(v, env)
                    e = e1(v, env)
                    return slice_(t1(v, env), s, e)
                except JqError as err:
                    annotate(err, offset)
                    raise

            return from_one(one, paths)
        return Code(run, None, paths)

    def c_iterate(self, node: ast.Iterate, scope: Scope) -> Code:
        if type(node.target) in SUFFIX_NODES and long_suffix_chain(node):
            return self._suffix_chain(node, scope)
        target = self.compile(node.target, scope)
        offset = node.offset
        iterate = jv.iterate

        if target.one is not None:
            t1 = target.one

            def run1(v: Any, env: Env) -> Iterable[Any]:
                try:
                    t = t1(v, env)
                    it = iterate(t)
                except JqError as e:
                    annotate(e, offset)
                    raise
                # paced(), inlined for the common short container: the body runs per element
                ctx = env[0]
                n = len(t)
                if n > PACE:
                    return paced_long(it, n, ctx)
                ctx.ticks -= n
                if ctx.ticks <= 0:
                    ctx.check()
                return it

            run: Run = run1
        else:
            t_run = target.run

            def run_many(v: Any, env: Env) -> Iterator[Any]:
                ctx = env[0]
                for t in t_run(v, env):
                    try:
                        it = iterate(t)
                    except JqError as e:
                        annotate(e, offset)
                        raise
                    yield from paced(it, len(t), ctx)

            run = run_many

        def paths(v: Any, p: Path | None, env: Env) -> Iterator[tuple[Any, Path | None]]:
            for t, tp in target.paths(v, p, env):
                yield from iterate_paths(t, tp, offset)

        return Code(run, None, paths)

    def c_optional(self, node: ast.Optional, scope: Scope) -> Code:
        # gojq: `T.key?` / `T[]?` guards only the last suffix, applied to T's outputs.
        if type(node.target) in SUFFIX_NODES and long_suffix_chain(node):
            return self._suffix_chain(node, scope)
        target = node.target
        if (
            not node.guards_all
            and isinstance(target, (ast.Index, ast.Slice, ast.Iterate))
            and not isinstance(target.target, ast.Identity)
        ):
            base = self.compile(target.target, scope)
            last = self.compile(with_identity_target(target), scope)
            guarded = pipe_code(base, try_code(last, None))
            if isinstance(target, ast.Iterate) and base.one is not None:
                return _optional_iterate(base.one, guarded)
            return guarded
        return try_code(self.compile(target, scope), None)

    def c_try(self, node: ast.Try, scope: Scope) -> Code:
        body = self.compile(node.body, scope)
        handler = self.compile(node.catch, scope) if node.catch is not None else None
        return try_code(body, handler)

    # --- constructors ------------------------------------------------------------------------
    def c_array(self, node: ast.Array, scope: Scope) -> Code:
        if node.body is None:

            def empty_one(v: Any, env: Env) -> Any:
                return []

            return from_one(empty_one)
        items = flatten_comma(node.body)
        if len(items) > 1:
            codes = [self.compile(x, scope) for x in items]
            if all(c.one is not None for c in codes):
                ones = [c.one for c in codes]

                def one_n(v: Any, env: Env) -> Any:
                    return [o(v, env) for o in ones]  # type: ignore[misc]

                return from_one(one_n)
            body = comma_code(codes)
        else:
            body = self.compile(node.body, scope)
        b_run = body.run
        if body.one is not None:
            b1 = body.one

            def one1(v: Any, env: Env) -> Any:
                return [b1(v, env)]

            return from_one(one1)

        def one(v: Any, env: Env) -> Any:
            return collect(b_run(v, env), env[0])

        return from_one(one)

    def c_object(self, node: ast.Object, scope: Scope) -> Code:
        entries: list[tuple[Code, Code]] = []
        for e in node.entries:
            key_node = e.key
            if e.computed:
                key = self.compile(key_node, scope)
            elif isinstance(key_node, ast.Var):
                if e.value is None:
                    key = const_code(key_node.name)
                else:
                    key = self.compile(key_node, scope)
            else:
                key = self.compile(key_node, scope)
            if e.value is not None:
                val = self.compile(e.value, scope)
            elif isinstance(key_node, ast.Var):
                val = self.compile(key_node, scope)
            elif isinstance(key_node, ast.Literal):
                val = index_chain(IDENTITY, [key_node.value], [key_node.offset])
            else:
                # {"\(x)"}: the value is .[key] of each key
                val = KEYED
            entries.append((key, val))
        offset = node.offset

        def check_key(k: Any) -> str:
            if type(k) is not str:
                raise JqRuntimeError(
                    f"expected a string for object key but got: {jv.type_error_preview(k)}",
                    offset=offset,
                )
            return k

        if all(k.one is not None and v.one is not None and v is not KEYED for k, v in entries):
            const_keys = [k.const for k, _ in entries]
            if all(type(k) is str for k in const_keys):
                pairs = [(k, v.one) for k, (_, v) in zip(const_keys, entries, strict=True)]

                def one_const(v: Any, env: Env) -> Any:
                    return {k: f(v, env) for k, f in pairs}  # type: ignore[misc]

                return from_one(one_const)
            ones = [(k.one, v.one) for k, v in entries]

            def one(v: Any, env: Env) -> Any:
                # gojq evaluates every key and value first and checks the keys' types when it
                # builds the object: `{(1): 2, a: error("y")}` fails with "y"
                pairs = [(kf(v, env), vf(v, env)) for kf, vf in ones]  # type: ignore[misc]
                out: dict[str, Any] = {}
                for k, x in pairs:
                    out[check_key(k)] = x
                return out

            return from_one(one)

        def run(v: Any, env: Env) -> Iterator[Any]:
            def build(acc: list[tuple[Any, Any]]) -> dict[str, Any]:
                out: dict[str, Any] = {}
                for k, x in acc:
                    out[check_key(k)] = x
                return out

            def rec(i: int, acc: list[tuple[Any, Any]]) -> Iterator[dict[str, Any]]:
                if i == len(entries):
                    yield build(acc)
                    return
                kc, vc = entries[i]
                for k in kc.run(v, env):
                    # a key with no value (`{(.): empty}`) builds nothing, so is never checked
                    if vc is KEYED:
                        xs: Any = (jv.index(v, check_key(k)),)
                    else:
                        xs = vc.run(v, env)
                    for x in xs:
                        yield from rec(i + 1, [*acc, (k, x)])

            return rec(0, [])

        return Code(run)
