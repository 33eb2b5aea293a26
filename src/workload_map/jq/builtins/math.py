"""gojq's math builtins: float64 in, float64 out, with Go's `math` package edge values.

Python's `math` raises where Go returns NaN or ±Inf (`sqrt(-1)`, `log(0)`, `exp(1000)`), rounds
half to even in `round`, and returns ints from `floor`/`ceil`; these wrappers give Go's answers.
Bessel functions come from the C library (glibc), which Go's ports agree with.
"""

from __future__ import annotations

import functools
import math
import struct
from collections.abc import Callable
from fractions import Fraction
from typing import Any

from workload_map.jq.builtins.marks import builtin
from workload_map.jq.errors import JqLimitError
from workload_map.jq.values import to_float, type_error

__all__: list[str] = []

# Go's exact constants 1/Ln10 and 1/Ln2 rounded once (1 / math.log(10) rounds twice)
_INV_LN10 = 0.43429448190325182765112891891660508229439700580366656611445378316586464920887
_INV_LN2 = 1.4426950408889634073599246810018921374266459541529859341354494069311092191811851
_INF = math.inf
_NAN = math.nan


def _num(name: str, v: Any) -> float:
    t = type(v)
    if t is bool or not isinstance(v, (int, float)):
        raise type_error(name, v)
    return to_float(v)


def _bits(x: float) -> int:
    return int(struct.unpack("<Q", struct.pack("<d", x))[0])


def _from_bits(b: int) -> float:
    return float(struct.unpack("<d", struct.pack("<Q", b & 0xFFFFFFFFFFFFFFFF))[0])


def _cbrt(x: float) -> float:
    """Go's math.Cbrt (FreeBSD's algorithm), which rounds differently from C's cbrt."""
    b1, b2 = 715094163, 696219795
    c, d, e = 5.42857142857142815906e-01, -7.05306122448979611050e-01, 1.41428571428571436819e00
    f, g = 1.60714285714285720630e00, 3.57142857142857150787e-01
    if x == 0 or math.isnan(x) or math.isinf(x):
        return x
    sign = x < 0
    x = abs(x)
    t = _from_bits(_bits(x) // 3 + (b1 << 32))
    if x < 2.22507385850720138309e-308:
        t = float(1 << 54) * x
        t = _from_bits(_bits(t) // 3 + (b2 << 32))
    r = t * t / x
    s = c + r * t
    t *= g + f / (s + e + d / s)
    t = _from_bits((_bits(t) & (0xFFFFFFFFC << 28)) + (1 << 30))
    s = t * t
    r = x / s
    w = t + t
    r = (r - t) / (w + r)
    t = t + t * r
    return -t if sign else t


def _keep_zero_sign(r: float, x: float) -> float:
    return math.copysign(0.0, x) if r == 0 else r


def _floor(x: float) -> float:
    return x if not math.isfinite(x) else _keep_zero_sign(float(math.floor(x)), x)


def _ceil(x: float) -> float:
    return x if not math.isfinite(x) else _keep_zero_sign(float(math.ceil(x)), x)


def _trunc(x: float) -> float:
    return x if not math.isfinite(x) else _keep_zero_sign(float(math.trunc(x)), x)


def _round(x: float) -> float:
    if not math.isfinite(x):
        return x
    t = float(math.trunc(x))
    if abs(x - t) >= 0.5:
        t += math.copysign(1.0, x)
    return _keep_zero_sign(t, x)


def _round_even(x: float) -> float:
    return x if not math.isfinite(x) else _keep_zero_sign(float(round(x)), x)


def _significand(x: float) -> float:
    if math.isnan(x) or math.isinf(x) or x == 0.0:
        return x
    bits = struct.unpack("<Q", struct.pack("<d", x))[0]
    bits = (bits & 0x800FFFFFFFFFFFFF) | 0x3FF0000000000000
    return float(struct.unpack("<d", struct.pack("<Q", bits))[0])


def _logb(x: float) -> float:
    if x == 0:
        return -_INF
    if math.isinf(x):
        return _INF
    if math.isnan(x):
        return x
    return float(math.frexp(x)[1] - 1)


def _log(f: Callable[[float], float], x: float) -> float:
    if x == 0:
        return -_INF
    if x < 0 or math.isnan(x):
        return _NAN
    if math.isinf(x):
        return _INF
    return f(x)


def _go_log2(x: float) -> float:
    frac, exp = math.frexp(x)
    if frac == 0.5:
        return float(exp - 1)
    return math.log(frac) * _INV_LN2 + float(exp)


def _log1p(x: float) -> float:
    if x == -1:
        return -_INF
    if x < -1 or math.isnan(x):
        return _NAN
    return math.log1p(x)


def _gamma(x: float) -> float:
    if x == 0:
        return math.copysign(_INF, x)
    if math.isnan(x) or x == -_INF:
        return _NAN
    if x == _INF:
        return _INF
    if x < 0 and x == math.floor(x):
        return _NAN
    try:
        return math.gamma(x)
    except OverflowError:
        return _INF if x > 0 else 0.0


def _lgamma(x: float) -> float:
    if math.isinf(x):
        return _INF
    if math.isnan(x):
        return x
    if x <= 0 and x == math.floor(x):
        return _INF
    try:
        return math.lgamma(x)
    except OverflowError:
        return _INF


def _exp_like(f: Callable[[float], float], x: float) -> float:
    try:
        return f(x)
    except OverflowError:
        return _INF


def _sinh(x: float) -> float:
    try:
        return math.sinh(x)
    except OverflowError:
        return math.copysign(_INF, x)


def _domain(f: Callable[[float], float]) -> Callable[[float], float]:
    def g(x: float) -> float:
        try:
            return f(x)
        except ValueError:
            return _NAN
        except OverflowError:
            return _INF

    return g


def _pow(x: float, y: float) -> float:
    try:
        return math.pow(x, y)
    except OverflowError:
        # sign: negative base with odd integer exponent
        odd = y == math.floor(y) and math.fmod(y, 2) != 0
        return -_INF if (x < 0 and odd) else _INF
    except (ValueError, ZeroDivisionError):
        if x == 0 and y < 0:
            odd = y == math.floor(y) and math.fmod(y, 2) != 0
            return math.copysign(_INF, x) if odd else _INF
        return _NAN


def _fmod(x: float, y: float) -> float:
    if y == 0 or math.isinf(x) or math.isnan(x) or math.isnan(y):
        return _NAN
    return math.fmod(x, y)


def _remainder(x: float, y: float) -> float:
    if y == 0 or math.isinf(x) or math.isnan(x) or math.isnan(y):
        return _NAN
    return math.remainder(x, y)


def _drem(x: float, y: float) -> float:
    r = _remainder(x, y)
    return math.copysign(r, x) if r == 0.0 else r


def _fdim(x: float, y: float) -> float:
    if math.isnan(x) or math.isnan(y):
        return _NAN
    if x == y:
        return 0.0
    v = x - y
    return v if v > 0 else 0.0


def _fmax(x: float, y: float) -> float:
    if (math.isinf(x) and x > 0) or (math.isinf(y) and y > 0):
        return _INF
    if math.isnan(x) or math.isnan(y):
        return _NAN
    if x == 0 and x == y:
        return y if math.copysign(1, x) < 0 else x
    return x if x > y else y


def _fmin(x: float, y: float) -> float:
    if (math.isinf(x) and x < 0) or (math.isinf(y) and y < 0):
        return -_INF
    if math.isnan(x) or math.isnan(y):
        return _NAN
    if x == 0 and x == y:
        return x if math.copysign(1, x) < 0 else y
    return x if x < y else y


def _go_int(x: float) -> int:
    if math.isnan(x):
        return -(1 << 63)
    if math.isinf(x):
        return (1 << 63) - 1 if x > 0 else -(1 << 63)
    return int(x)


def _ldexp(x: float, e: float) -> float:
    try:
        return math.ldexp(x, max(min(_go_int(e), 1 << 20), -(1 << 20)))
    except OverflowError:
        return math.copysign(_INF, x)


def _hypot(x: float, y: float) -> float:
    p, q = abs(x), abs(y)
    if math.isinf(p) or math.isinf(q):
        return _INF
    if math.isnan(p) or math.isnan(q):
        return _NAN
    if p < q:
        p, q = q, p
    if p == 0:
        return 0.0
    q = q / p
    return p * math.sqrt(1 + q * q)


def _fma(x: float, y: float, z: float) -> float:
    if not (math.isfinite(x) and math.isfinite(y) and math.isfinite(z)):
        return x * y + z
    try:
        return float(Fraction(x) * Fraction(y) + Fraction(z))
    except OverflowError:
        return x * y + z


@functools.cache
def _libm() -> Any:
    """The C math library, loaded on the first Bessel function call (ctypes and its library
    search are not worth their import time for programs that never call one)."""
    import ctypes

    try:
        return ctypes.CDLL("libm.so.6")
    except OSError:
        import ctypes.util

        try:
            return ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6")
        except OSError:  # pragma: no cover - glibc is always there on Linux
            return None


@functools.cache
def _libm_fn(name: str, int_order: bool) -> Callable[..., float]:
    import ctypes

    lib = _libm()
    if lib is None:  # pragma: no cover

        def missing(*_a: Any) -> float:
            return _NAN

        return missing
    fn = getattr(lib, name)
    fn.restype = ctypes.c_double
    fn.argtypes = [ctypes.c_int, ctypes.c_double] if int_order else [ctypes.c_double]
    return fn  # type: ignore[no-any-return]


def _j0(x: float) -> float:
    return _libm_fn("j0", False)(x)


def _j1(x: float) -> float:
    return _libm_fn("j1", False)(x)


def _y0(x: float) -> float:
    return _libm_fn("y0", False)(x)


def _y1(x: float) -> float:
    return _libm_fn("y1", False)(x)


def _jn(n: int, x: float) -> float:
    return _libm_fn("jn", True)(n, x)


def _yn(n: int, x: float) -> float:
    return _libm_fn("yn", True)(n, x)


_MIN_INT64 = -(1 << 63)
# orders beyond this with |x| near or above them make libm (and Go) loop |n| times
_BESSEL_LOOP_MAX = 100_000


def _bessel_order(n: float) -> int:
    """Go's ``int(n)`` on amd64, as gojq passes the order: NaN, ±inf and values out of range
    become the minimum int64."""
    if n != n or not -9.223372036854775808e18 <= n < 9.223372036854775808e18:
        return _MIN_INT64
    return int(n)


def _too_costly(name: str, order: int) -> JqLimitError:
    return JqLimitError(f"{name}: order {order} is too large to evaluate within the limits")


def _jn_go(n: float, x: float) -> float:
    """gojq's ``math.Jn(int(n), x)`` without its (uninterruptible) loops of |n| steps."""
    order = _bessel_order(n)
    if x != x:
        return x
    if math.isinf(x):
        return 0.0
    if x == 0 and order != 0:
        return 0.0
    if order == _MIN_INT64:
        # Go negates n and x: -MinInt64 overflows to MinInt64, so no recurrence step runs
        return float(_j1(abs(x)))
    if abs(order) > _BESSEL_LOOP_MAX:
        if abs(x) * 2 >= abs(order):
            raise _too_costly("jn", order)
        # (x/2)^n/n! with |x| < n/2 is far below the smallest double: Go's result is ±0
        negative = (x < 0) != (order < 0) and abs(order) % 2 == 1
        return -0.0 if negative else 0.0
    return float(_jn(order, x))


def _yn_go(n: float, x: float) -> float:
    """gojq's ``math.Yn(int(n), x)``; its recurrence stops once it reaches -inf."""
    order = _bessel_order(n)
    if order == _MIN_INT64:
        return float(_y1(x))
    if abs(order) > _BESSEL_LOOP_MAX and x == x and abs(x) * 2 >= abs(order):
        raise _too_costly("yn", order)
    return float(_yn(max(min(order, 2**31 - 1), -(2**31)), x))


_UNARY: dict[str, Callable[[float], float]] = {
    "sin": _domain(math.sin),
    "cos": _domain(math.cos),
    "tan": _domain(math.tan),
    "asin": _domain(math.asin),
    "acos": _domain(math.acos),
    "atan": math.atan,
    "sinh": _sinh,
    "cosh": lambda x: _exp_like(math.cosh, x),
    "tanh": math.tanh,
    "asinh": math.asinh,
    "acosh": _domain(math.acosh),
    "atanh": lambda x: math.copysign(_INF, x) if abs(x) == 1 else _domain(math.atanh)(x),
    "floor": _floor,
    "round": _round,
    "nearbyint": _round_even,
    "rint": _round_even,
    "ceil": _ceil,
    "trunc": _trunc,
    "significand": _significand,
    "fabs": math.fabs,
    "sqrt": _domain(math.sqrt),
    "cbrt": _cbrt,
    "exp": lambda x: _exp_like(math.exp, x),
    "exp10": lambda x: _pow(10.0, x),
    "exp2": lambda x: _exp_like(math.exp2, x),
    "expm1": lambda x: _exp_like(math.expm1, x),
    "log": lambda x: _log(math.log, x),
    "log10": lambda x: _log(math.log, x) * _INV_LN10,
    "log1p": _log1p,
    "log2": lambda x: _log(_go_log2, x),
    "logb": _logb,
    "gamma": _gamma,
    "tgamma": _gamma,
    "lgamma": _lgamma,
    "erf": math.erf,
    "erfc": math.erfc,
    "j0": lambda x: float(_j0(x)),
    "j1": lambda x: float(_j1(x)),
    "y0": lambda x: float(_y0(x)),
    "y1": lambda x: float(_y1(x)),
}

_BINARY: dict[str, Callable[[float, float], float]] = {
    "atan2": math.atan2,
    "copysign": math.copysign,
    "drem": _drem,
    "fdim": _fdim,
    "fmax": _fmax,
    "fmin": _fmin,
    "fmod": _fmod,
    "hypot": _hypot,
    "jn": _jn_go,
    "nextafter": math.nextafter,
    "nexttoward": math.nextafter,
    "remainder": _remainder,
    "ldexp": _ldexp,
    "scalb": _ldexp,
    "scalbln": _ldexp,
    "yn": _yn_go,
    "pow": _pow,
}


def _unary(name: str, f: Callable[[float], float]) -> Callable[[Any], Any]:
    def native(v: Any) -> Any:
        return f(_num(name, v))

    return builtin(name, 0)(native)


def _binary(name: str, f: Callable[[float, float], float]) -> Callable[[Any, Any, Any], Any]:
    def native(_v: Any, a: Any, b: Any) -> Any:
        return f(_num(name, a), _num(name, b))

    return builtin(name, 2)(native)


@builtin("fma", 3)
def f_fma(_v: Any, a: Any, b: Any, c: Any) -> Any:
    return _fma(_num("fma", a), _num("fma", b), _num("fma", c))


@builtin("frexp", 0)
def f_frexp(v: Any) -> Any:
    x = _num("frexp", v)
    if not math.isfinite(x) or x == 0:
        return [x, 0]
    m, e = math.frexp(x)
    return [m, e]


@builtin("modf", 0)
def f_modf(v: Any) -> Any:
    x = _num("modf", v)
    if math.isinf(x):
        return [math.copysign(0.0, x), x]
    if math.isnan(x):
        return [x, x]
    frac, whole = math.modf(x)
    return [frac, whole]


@builtin("infinite", 0)
def f_infinite(_v: Any) -> Any:
    return _INF


@builtin("nan", 0)
def f_nan(_v: Any) -> Any:
    return _NAN


def _as_float(v: Any) -> float | None:
    t = type(v)
    if t is bool or not isinstance(v, (int, float)):
        return None
    return to_float(v)


@builtin("isinfinite", 0)
def f_isinfinite(v: Any) -> Any:
    x = _as_float(v)
    return x is not None and math.isinf(x)


@builtin("isfinite", 0)
def f_isfinite(v: Any) -> Any:
    x = _as_float(v)
    return x is not None and not math.isinf(x)


@builtin("isnan", 0)
def f_isnan(v: Any) -> Any:
    x = _as_float(v)
    if x is None:
        if v is None:
            return False
        raise type_error("isnan", v)
    return math.isnan(x)


@builtin("isnormal", 0)
def f_isnormal(v: Any) -> Any:
    x = _as_float(v)
    if x is None:
        return False
    e = (struct.unpack("<Q", struct.pack("<d", x))[0] >> 52) & 0x7FF
    return 0 < e < 0x7FF


# the families' natives, found by the registry one level into this tuple
_FAMILIES = (
    *(_unary(name, f) for name, f in _UNARY.items()),
    *(_binary(name, f) for name, f in _BINARY.items()),
)
