"""jq's operators as functions (``_add/2``, ``_equal/2``, ``_index/2``, …): gojq's internal names,
which builtin.jq definitions and ``path`` rewrites call."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from workload_map.jq import values
from workload_map.jq.builtins.marks import builtin
from workload_map.jq.errors import JqRuntimeError
from workload_map.jq.values import compare, is_number, type_error_preview

__all__: list[str] = []


def _op(name: str, fn: Callable[[Any, Any], Any]) -> Callable[[Any, Any, Any], Any]:
    """``_name/2``: the operator on the two argument values (the input is not used)."""

    def native(_v: Any, a: Any, b: Any) -> Any:
        return fn(a, b)

    return builtin(name, 2)(native)


# families built from tables are found by the registry one level into a module's tuples
_ARITHMETIC = (
    _op("_add", values.add),
    _op("_subtract", values.subtract),
    _op("_multiply", values.multiply),
    _op("_divide", values.divide),
    _op("_modulo", values.modulo),
)
_COMPARISONS = (
    _op("_equal", lambda a, b: compare(a, b) == 0),
    _op("_notequal", lambda a, b: compare(a, b) != 0),
    _op("_greater", lambda a, b: compare(a, b) > 0),
    _op("_less", lambda a, b: compare(a, b) < 0),
    _op("_greatereq", lambda a, b: compare(a, b) >= 0),
    _op("_lesseq", lambda a, b: compare(a, b) <= 0),
)


@builtin("_index", 2)
def f_index(_v: Any, a: Any, k: Any) -> Any:
    return values.index(a, k)


@builtin("_slice", 3)
def f_slice(_v: Any, a: Any, end: Any, start: Any) -> Any:
    return values.slice(a, start, end)


@builtin("_plus", 0)
def f_plus(v: Any) -> Any:
    if is_number(v):
        return v
    raise JqRuntimeError(f"cannot plus: {type_error_preview(v)}")


@builtin("_negate", 0)
def f_negate(v: Any) -> Any:
    return values.negate(v)


@builtin("_alternative", 2)
def f_alternative(_v: Any, a: Any, b: Any) -> Any:
    return b if a is None or a is False else a
