"""Value-mode combinators: comma, pipe, ``//``, try, if and the operator chains.

Chains are built from flat lists and fold into loops or balanced trees (no frame per link).
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Callable, Generator, Iterable, Iterator
from typing import Any

from workload_map.jq import ast
from workload_map.jq import values as jv
from workload_map.jq.closures import (
    IDENTITY,
    NOTHING,
    Code,
    Ctx,
    Env,
    One,
    Path,
    Scope,
    Tail,
    TailCall,
    annotate,
    catchable,
    from_one,
    run_tail,
)
from workload_map.jq.errors import JqError, JqRuntimeError

# operands whose operations cost their size
_CONTAINERS = (list, dict)


def missing_format(name: str) -> Callable[..., Any]:
    def fail(v: Any, *, meter: Any = None) -> Any:
        raise JqRuntimeError(f"format not defined: {name}")

    return fail


def bind_one(bo: One, s1: One) -> One:
    def one(v: Any, env: Env) -> Any:
        return bo(v, (*env, s1(v, env)))

    return one


def scope_with_slots(scope: Scope, slots: dict[str, int]) -> Scope:
    inner = scope
    for name in sorted(slots, key=slots.__getitem__):
        inner = inner.bind_var(name)
    return inner


def env_with(env: Env, acc: dict[int, Any], base: int, count: int) -> Env:
    values = [None] * count
    for slot, val in acc.items():
        values[slot - base] = val
    return (*env, *values)


def flatten_nodes(node: Any, kind: Any) -> list[Any]:
    """The operands of a chain of ``kind`` nodes (``Pipe``, ``Comma``), in order, iteratively."""
    items: list[Any] = []
    stack: list[Any] = [node]
    while stack:
        n: Any = stack.pop()
        if type(n) is kind:
            stack.append(n.right)
            stack.append(n.left)
        else:
            items.append(n)
    return items


def flatten_comma(node: Any) -> list[Any]:
    return flatten_nodes(node, ast.Comma)


def comma_code(codes: list[Code]) -> Code:
    """Outputs of each code in turn (a flat loop, however long the comma chain)."""
    runs = [c.run for c in codes]
    pathss = [c.paths for c in codes]

    def run(v: Any, env: Env) -> Iterator[Any]:
        for r in runs:
            yield from r(v, env)

    def paths(v: Any, p: Path | None, env: Env) -> Iterator[tuple[Any, Path | None]]:
        for f in pathss:
            yield from f(v, p, env)

    last = codes[-1]
    if last.tail is None:
        return Code(run, None, paths)
    first_runs, last_tail = runs[:-1], last.tail

    def tail(v: Any, env: Env) -> Generator[Any, None, TailCall | None]:
        for r in first_runs:
            yield from r(v, env)
        return (yield from last_tail(v, env))

    return Code(run, None, paths, tail=tail)


def pipe_all(codes: list[Code]) -> Code:
    """``c0 | c1 | …``. Short chains nest to the right like the tree; long ones are folded as a
    balanced tree so that running them nests only log2(n) closures or generators."""
    n = len(codes)
    if n <= 8:
        code = codes[-1]
        for c in reversed(codes[:-1]):
            code = pipe_code(c, code)
        return code
    mid = n // 2
    return pipe_code(pipe_all(codes[:mid]), pipe_all(codes[mid:]))


def alt_all(codes: list[Code]) -> Code:
    if len(codes) == 1:
        return codes[0]
    if len(codes) == 2:
        return _alt(codes[0], codes[1])
    mid = len(codes) // 2
    return _alt(alt_all(codes[:mid]), alt_all(codes[mid:]))


def _alt(left: Code, right: Code) -> Code:
    l_run, r_run = left.run, right.run

    # gojq: errors on the left propagate (they are not treated as "no value")
    def run(v: Any, env: Env) -> Iterator[Any]:
        found = False
        for x in l_run(v, env):
            if x is not None and x is not False:
                found = True
                yield x
        if not found:
            yield from r_run(v, env)

    def paths(v: Any, p: Path | None, env: Env) -> Iterator[tuple[Any, Path | None]]:
        found = False
        for x, xp in left.paths(v, p, env):
            if x is not None and x is not False:
                found = True
                yield x, xp
        if not found:
            yield from right.paths(v, p, env)

    if left.one is not None and right.one is not None:
        l1, r1 = left.one, right.one

        def one(v: Any, env: Env) -> Any:
            x = l1(v, env)
            if x is None or x is False:
                return r1(v, env)
            return x

        return from_one(one, paths)
    return Code(run, None, paths)


def map_code(operand: Code, fn: Callable[[Any], Any], offset: int) -> Code:
    if operand.one is not None:
        o1 = operand.one

        def one(v: Any, env: Env) -> Any:
            try:
                return fn(o1(v, env))
            except JqError as e:
                annotate(e, offset)
                raise

        return from_one(one)
    o_run = operand.run

    def run(v: Any, env: Env) -> Iterator[Any]:
        try:
            for x in o_run(v, env):
                yield fn(x)
        except JqError as e:
            annotate(e, offset)
            raise

    return Code(run)


def pipe_code(left: Code, right: Code) -> Code:
    if left is IDENTITY:
        return right
    if right is IDENTITY:
        return left
    l_run, r_run = left.run, right.run
    l_paths, r_paths = left.paths, right.paths

    def paths(v: Any, p: Path | None, env: Env) -> Iterator[tuple[Any, Path | None]]:
        for x, xp in l_paths(v, p, env):
            yield from r_paths(x, xp, env)

    if left.one is not None and right.one is not None:
        l1, r1 = left.one, right.one

        def one(v: Any, env: Env) -> Any:
            return r1(l1(v, env), env)

        return from_one(one, paths)
    if left.one is not None:
        l1 = left.one

        def run_l1(v: Any, env: Env) -> Iterable[Any]:
            return r_run(l1(v, env), env)

        tail_l1: Tail | None = None
        if right.tail is not None:
            r_tail = right.tail

            def tail_l1(v: Any, env: Env) -> Generator[Any, None, TailCall | None]:
                return (yield from r_tail(l1(v, env), env))

        return Code(run_l1, None, paths, tail=tail_l1)
    if right.one is not None:
        r1 = right.one

        def run_r1(v: Any, env: Env) -> Iterable[Any]:
            return map(r1, l_run(v, env), itertools.repeat(env))

        return Code(run_r1, None, paths)

    def run(v: Any, env: Env) -> Iterator[Any]:
        for x in l_run(v, env):
            yield from r_run(x, env)

    return Code(run, None, paths)


def try_code(body: Code, handler: Code | None) -> Code:
    b_run, b_paths = body.run, body.paths

    def run(v: Any, env: Env) -> Iterator[Any]:
        try:
            yield from b_run(v, env)
        except JqRuntimeError as e:
            if not catchable(e):
                raise
            if handler is not None:
                yield from handler.run(e.value, env)

    def paths(v: Any, p: Path | None, env: Env) -> Iterator[tuple[Any, Path | None]]:
        try:
            yield from b_paths(v, p, env)
        except JqRuntimeError as e:
            if not catchable(e):
                raise
            if handler is not None:
                yield from handler.paths(e.value, None, env)

    return Code(run, None, paths)


def if_code(cond: Code, then: Code, otherwise: Code) -> Code:
    truthy = jv.truthy
    if cond.one is not None:
        c1 = cond.one
        if then.one is not None and otherwise.one is not None:
            t1, o1 = then.one, otherwise.one

            def one(v: Any, env: Env) -> Any:
                c = c1(v, env)
                if c is None or c is False:
                    return o1(v, env)
                return t1(v, env)

            def paths1(v: Any, p: Path | None, env: Env) -> Iterable[tuple[Any, Path | None]]:
                c = c1(v, env)
                if c is None or c is False:
                    return otherwise.paths(v, p, env)
                return then.paths(v, p, env)

            return from_one(one, paths1)

        def run1(v: Any, env: Env) -> Iterable[Any]:
            c = c1(v, env)
            if c is None or c is False:
                return otherwise.run(v, env)
            return then.run(v, env)

        def paths_1(v: Any, p: Path | None, env: Env) -> Iterable[tuple[Any, Path | None]]:
            c = c1(v, env)
            if c is None or c is False:
                return otherwise.paths(v, p, env)
            return then.paths(v, p, env)

        tail_1: Tail | None = None
        if then.tail is not None or otherwise.tail is not None:

            def tail_1(v: Any, env: Env) -> Generator[Any, None, TailCall | None]:
                c = c1(v, env)
                if c is None or c is False:
                    return (yield from run_tail(otherwise, v, env))
                return (yield from run_tail(then, v, env))

        return Code(run1, None, paths_1, tail=tail_1)

    def run(v: Any, env: Env) -> Iterator[Any]:
        for c in cond.run(v, env):
            if truthy(c):
                yield from then.run(v, env)
            else:
                yield from otherwise.run(v, env)

    def paths(v: Any, p: Path | None, env: Env) -> Iterator[tuple[Any, Path | None]]:
        for c in cond.run(v, env):
            if truthy(c):
                yield from then.paths(v, p, env)
            else:
                yield from otherwise.paths(v, p, env)

    return Code(run, None, paths)


def binary_code(op: str, left: Code, right: Code, offset: int) -> Code:
    if op in ("and", "or"):
        return _logic(op, left, right)
    fn = BINOPS[op]
    if left.one is not None and right.one is not None:
        l1, r1 = left.one, right.one
        if op in ("==", "!=") and (type(right.const) is str or right.const is None):
            # equality with a string or null constant is plain Python equality
            rc = right.const
            if op == "==":

                def one_eq(v: Any, env: Env) -> Any:
                    return l1(v, env) == rc

                return from_one(one_eq)

            def one_ne(v: Any, env: Env) -> Any:
                return l1(v, env) != rc

            return from_one(one_ne)
        if right.const is not NOTHING:
            rc = right.const
            fast_c = _scalar_comparison(op, l1, rc, fn, offset)
            if fast_c is not None:
                return from_one(fast_c)

            def one_c(v: Any, env: Env) -> Any:
                try:
                    x = l1(v, env)
                    out = fn(x, rc)
                except JqError as e:
                    annotate(e, offset)
                    raise
                if type(x) in _CONTAINERS:
                    env[0].check()
                return out

            return from_one(one_c)

        py = _ORDER.get(op) or _EQUALITY.get(op)
        if py is not None:
            return from_one(_comparison(l1, r1, py, fn, offset))
        fast = _INT_OPS.get(op)
        if fast is not None:
            int_op = fast

            def one_int(v: Any, env: Env) -> Any:
                try:
                    r = r1(v, env)
                    x = l1(v, env)
                    if type(x) is int and type(r) is int:
                        return int_op(x, r)
                    out = fn(x, r)
                except JqError as e:
                    annotate(e, offset)
                    raise
                if type(x) in _CONTAINERS:
                    env[0].check()
                return out

            return from_one(one_int)

        def one(v: Any, env: Env) -> Any:
            try:
                r = r1(v, env)
                x = l1(v, env)
                out = fn(x, r)
            except JqError as e:
                annotate(e, offset)
                raise
            if type(x) in _CONTAINERS:
                env[0].check()
            return out

        return from_one(one)
    l_run, r_run = left.run, right.run

    def run(v: Any, env: Env) -> Iterator[Any]:
        ctx = env[0]
        try:
            for r in r_run(v, env):
                for x in l_run(v, env):
                    out = fn(x, r)
                    if type(x) in _CONTAINERS:
                        # an operation on containers costs their size (deep equality,
                        # merges): the clock is looked at after each one
                        ctx.check()
                    yield out
        except JqError as e:
            annotate(e, offset)
            raise

    return Code(run)


_ORDER = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}
_EQUALITY = {"==": operator.eq, "!=": operator.ne}


def _comparison(
    l1: One, r1: One, py: Callable[[Any, Any], Any], fn: Callable[[Any, Any], Any], offset: int
) -> One:
    """``x OP y`` for a comparison of two single-valued operands: two ints or two strings
    compare as in Python (jq's order agrees on them), anything else by jq's total order,
    with a deadline check after comparing containers (deep equality costs their size)."""

    def one(v: Any, env: Env) -> Any:
        y = r1(v, env)
        x = l1(v, env)
        tx = type(x)
        if tx is type(y) and (tx is int or tx is str):
            return py(x, y)
        try:
            out = fn(x, y)
        except JqError as e:
            annotate(e, offset)
            raise
        if tx in _CONTAINERS:
            env[0].check()
        return out

    return one


def _scalar_comparison(
    op: str, l1: One, rc: Any, fn: Callable[[Any, Any], Any], offset: int
) -> One | None:
    """``x OP c`` for a comparison with a scalar constant (``.n > 0``, ``.suspend == true``),
    the status matchers' staple: when ``x`` has the constant's exact type the answer is
    Python's own (an int with an int, a float with a non-NaN float, a bool by identity), else
    jq's total order decides. Comparing with a scalar never walks a container, so no deadline
    check is needed after it."""
    tc = type(rc)
    if tc is bool and op in ("==", "!="):
        if op == "==":

            def one_is(v: Any, env: Env) -> Any:
                return l1(v, env) is rc

            return one_is

        def one_is_not(v: Any, env: Env) -> Any:
            return l1(v, env) is not rc

        return one_is_not
    py = _ORDER.get(op) or _EQUALITY.get(op)
    if py is None or not (tc is int or (tc is float and rc == rc) or tc is str):
        return None

    def one_cmp(v: Any, env: Env) -> Any:
        x = l1(v, env)
        if type(x) is tc and x == x:  # NaN sorts below every number in jq
            return py(x, rc)
        try:
            return fn(x, rc)
        except JqError as e:
            annotate(e, offset)
            raise

    return one_cmp


# operators that chain to the left at one precedence level
OP_GROUP = {"+": "+", "-": "+", "*": "*", "/": "*", "%": "*", "and": "and", "or": "or"}
OP_GROUP.update({op: op for op in ("==", "!=", "<", "<=", ">", ">=")})


def arith_chain(codes: list[Code], ops: list[tuple[str, int]]) -> Code:
    """``a + b - c …`` (three or more operands) without nesting closures: as the nested form,
    operands are evaluated last first (the last one varies slowest) and folded left."""
    n = len(codes)
    fns = [(BINOPS[op], offset) for op, offset in ops]
    # an operand's own unannotated error takes the offset of the operator on its right-hand
    # side's nesting (operand 0 shares operator 1's)
    where = [ops[0][1], *(offset for _op, offset in ops)]

    def fold(vals: list[Any], ctx: Ctx) -> Any:
        acc = vals[0]
        for i, (fn, offset) in enumerate(fns, 1):
            container = type(acc) in _CONTAINERS
            try:
                acc = fn(acc, vals[i])
            except JqError as e:
                annotate(e, offset)
                raise
            if container:
                ctx.check()
        return acc

    if all(c.one is not None for c in codes):
        ones: list[One] = [c.one for c in codes]  # type: ignore[misc]

        def one(v: Any, env: Env) -> Any:
            vals = [None] * n
            i = n - 1
            try:
                while i >= 0:
                    vals[i] = ones[i](v, env)
                    i -= 1
            except JqError as e:
                annotate(e, where[i])
                raise
            return fold(vals, env[0])

        return from_one(one)
    runs = [c.run for c in codes]

    def run(v: Any, env: Env) -> Iterator[Any]:
        # nested loops, the last operand outermost, as an odometer of iterators
        vals: list[Any] = [None] * n
        its: list[Iterator[Any]] = [iter(())] * n
        i = n - 1
        try:
            its[i] = iter(runs[i](v, env))
            while True:
                x = next(its[i], NOTHING)
                if x is NOTHING:
                    i += 1
                    if i == n:
                        return
                    continue
                vals[i] = x
                if i == 0:
                    yield fold(vals, env[0])
                else:
                    i -= 1
                    its[i] = iter(runs[i](v, env))
        except JqError as e:
            annotate(e, where[min(i, n - 1)])
            raise

    return Code(run)


def logic_chain(is_and: bool, codes: list[Code]) -> Code:
    """``a and b and …`` / ``a or b or …`` (three or more operands), short-circuiting left to
    right without nesting closures."""
    if all(c.one is not None for c in codes):
        ones: list[One] = [c.one for c in codes]  # type: ignore[misc]

        stop = not is_and  # what a deciding operand makes the whole chain

        def one(v: Any, env: Env) -> Any:
            for f in ones:
                y = f(v, env)
                # a false operand decides `and`, a true one decides `or`
                if (y is None or y is False) is is_and:
                    return stop
            return is_and

        return from_one(one)
    runs = [c.run for c in codes]
    n = len(codes)

    def run(v: Any, env: Env) -> Iterator[Any]:
        # stage i turns each truth value of stages 0..i-1 into its own outputs
        stack: list[Iterator[Any]] = [iter(runs[0](v, env))]
        while stack:
            y = next(stack[-1], NOTHING)
            if y is NOTHING:
                stack.pop()
                continue
            t = not (y is None or y is False)
            depth = len(stack)
            if depth == n:
                yield t
            elif t is not is_and:
                stack.append(iter((t,)))
            else:
                stack.append(iter(runs[depth](v, env)))

    return Code(run)


def _logic(op: str, left: Code, right: Code) -> Code:
    is_and = op == "and"
    if left.one is not None and right.one is not None:
        l1, r1 = left.one, right.one
        if is_and:

            def one_and(v: Any, env: Env) -> Any:
                x = l1(v, env)
                if x is None or x is False:
                    return False
                y = r1(v, env)
                return not (y is None or y is False)

            return from_one(one_and)

        def one_or(v: Any, env: Env) -> Any:
            x = l1(v, env)
            if not (x is None or x is False):
                return True
            y = r1(v, env)
            return not (y is None or y is False)

        return from_one(one_or)

    def run(v: Any, env: Env) -> Iterator[Any]:
        for x in left.run(v, env):
            t = not (x is None or x is False)
            if t != is_and:
                yield t
                continue
            for y in right.run(v, env):
                yield not (y is None or y is False)

    return Code(run)


def _cmp(pred: Callable[[int], bool]) -> Callable[[Any, Any], bool]:
    compare = jv.compare

    def fn(a: Any, b: Any) -> bool:
        return pred(compare(a, b))

    return fn


def _equals(a: Any, b: Any) -> bool:
    return jv.equals(a, b)


def _not_equals(a: Any, b: Any) -> bool:
    return not jv.equals(a, b)


_INT_OPS: dict[str, Callable[[int, int], int]] = {
    "+": int.__add__,
    "-": int.__sub__,
    "*": jv.int_multiply,  # capped: a product of huge ints could run past any deadline
}

BINOPS: dict[str, Callable[[Any, Any], Any]] = {
    "+": jv.add,
    "-": jv.subtract,
    "*": jv.multiply,
    "/": jv.divide,
    "%": jv.modulo,
    "==": _equals,
    "!=": _not_equals,
    "<": _cmp(lambda c: c < 0),
    "<=": _cmp(lambda c: c <= 0),
    ">": _cmp(lambda c: c > 0),
    ">=": _cmp(lambda c: c >= 0),
}
