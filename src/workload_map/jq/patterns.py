"""Destructuring patterns (``as [$a, {b: $c}]`` and ``?//`` alternatives) compiled to binders."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from workload_map.jq import ast
from workload_map.jq import values as jv
from workload_map.jq.closures import Env, Scope, const_code
from workload_map.jq.combinators import env_with, scope_with_slots
from workload_map.jq.dispatch import CompilerCore
from workload_map.jq.errors import JqRuntimeError


class PatternCompiler(CompilerCore):
    """Compiles binding patterns into env-extending binders."""

    def pattern_vars(self, pattern: Any, out: list[str]) -> None:
        if isinstance(pattern, ast.PVar):
            if pattern.name not in out:
                out.append(pattern.name)
        elif isinstance(pattern, ast.PArray):
            for e in pattern.elements:
                self.pattern_vars(e, out)
        else:
            for key, sub, _computed in pattern.entries:
                if isinstance(key, ast.Var) and not _computed:
                    if key.name not in out:
                        out.append(key.name)
                if sub is not None:
                    self.pattern_vars(sub, out)

    def pattern_binder(
        self, patterns: list[Any], scope: Scope, node: Any
    ) -> tuple[Callable[[Any, Env], Iterable[Env]], Scope]:
        names: list[str] = []
        for p in patterns:
            self.pattern_vars(p, names)
        inner = scope
        slots: dict[str, int] = {}
        for n in names:
            slots[n] = inner.size
            inner = inner.bind_var(n)
        if len(patterns) == 1 and isinstance(patterns[0], ast.PVar):

            def bind_simple(x: Any, env: Env) -> tuple[Env]:
                return ((*env, x),)

            return bind_simple, inner
        matcher = self.pattern_matcher(patterns[0], scope, slots)
        base = scope.size
        count = len(names)

        def bind(x: Any, env: Env) -> Iterator[Env]:
            for assigned in matcher(x, env, {}):
                values = [None] * count
                for slot, val in assigned.items():
                    values[slot - base] = val
                yield (*env, *values)

        return bind, inner

    def alternative_binders(
        self, patterns: list[Any], scope: Scope, node: Any
    ) -> list[Callable[[Any, Env], Iterable[Env]]]:
        names: list[str] = []
        for p in patterns:
            self.pattern_vars(p, names)
        slots = {n: scope.size + i for i, n in enumerate(names)}
        base = scope.size
        count = len(names)
        out: list[Callable[[Any, Env], Iterable[Env]]] = []
        for p in patterns:
            matcher = self.pattern_matcher(p, scope, slots)

            def bind(
                x: Any, env: Env, matcher: Callable[..., Iterator[dict[int, Any]]] = matcher
            ) -> Iterator[Env]:
                for assigned in matcher(x, env, {}):
                    values = [None] * count
                    for slot, val in assigned.items():
                        values[slot - base] = val
                    yield (*env, *values)

            out.append(bind)
        return out

    def pattern_matcher(
        self, pattern: Any, scope: Scope, slots: dict[str, int]
    ) -> Callable[[Any, Env, dict[int, Any]], Iterator[dict[int, Any]]]:
        """A generator of slot assignments; key queries see the variables bound so far."""
        if isinstance(pattern, ast.PVar):
            slot = slots[pattern.name]

            def m_var(x: Any, env: Env, acc: dict[int, Any]) -> Iterator[dict[int, Any]]:
                out = dict(acc)
                out[slot] = x
                yield out

            return m_var
        if isinstance(pattern, ast.PArray):
            subs = [self.pattern_matcher(e, scope, slots) for e in pattern.elements]

            def m_array(x: Any, env: Env, acc: dict[int, Any]) -> Iterator[dict[int, Any]]:
                if x is not None and type(x) is not list:
                    raise JqRuntimeError(
                        f"expected an array but got: {jv.type_error_preview(x)}",
                        offset=pattern.offset,
                    )

                def rec(i: int, acc: dict[int, Any]) -> Iterator[dict[int, Any]]:
                    if i == len(subs):
                        yield acc
                        return
                    for a in subs[i](jv.index(x, i), env, acc):
                        yield from rec(i + 1, a)

                yield from rec(0, acc)

            return m_array
        # object pattern: key queries are evaluated with the variables bound so far in scope
        entries: list[tuple[Any, Any, int | None]] = []
        for key, sub, computed in pattern.entries:
            var_slot: int | None = None
            if isinstance(key, ast.Var) and not computed:
                var_slot = slots[key.name]
                key_code = const_code(key.name)
            else:
                key_code = self.compile(key, scope_with_slots(scope, slots))
            sub_m = self.pattern_matcher(sub, scope, slots) if sub is not None else None
            entries.append((key_code, sub_m, var_slot))
        offset = pattern.offset

        def m_object(x: Any, env: Env, acc: dict[int, Any]) -> Iterator[dict[int, Any]]:
            if x is not None and type(x) is not dict:
                raise JqRuntimeError(
                    f"expected an object but got: {jv.type_error_preview(x)}", offset=offset
                )

            def rec(i: int, acc: dict[int, Any]) -> Iterator[dict[int, Any]]:
                if i == len(entries):
                    yield acc
                    return
                key_code, sub_m, var_slot = entries[i]
                full = env_with(env, acc, scope.size, len(slots))
                for k in key_code.run(x, full):
                    if type(k) is not str:
                        raise JqRuntimeError(
                            f"expected a string for object key but got: {jv.type_error_preview(k)}",
                            offset=offset,
                        )
                    val = x.get(k) if x is not None else None
                    acc2 = acc
                    if var_slot is not None:
                        acc2 = dict(acc)
                        acc2[var_slot] = val
                    if sub_m is None:
                        yield from rec(i + 1, acc2)
                    else:
                        for a in sub_m(val, env, acc2):
                            yield from rec(i + 1, a)

            yield from rec(0, acc)

        return m_object
