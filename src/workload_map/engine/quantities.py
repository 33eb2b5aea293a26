"""Kubernetes resource quantities: exact parsing and human formatting.

``"500m"``, ``"1.5Gi"``, ``"2e3"``, ``"8"`` are parsed exactly (``Fraction``) and rounded up the
way the API server's ``MilliValue``/``Value`` do: CPU to millicores, everything else to whole
units (bytes, devices). Formatting gives back the short forms ``kubectl`` shows.
"""

from __future__ import annotations

import functools
import math
import re
from fractions import Fraction

from workload_map.engine.errors import EngineError

__all__ = [
    "format_bytes",
    "format_millis",
    "parse_quantity",
    "to_millis",
    "to_units",
]

_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {
    "n": Fraction(1, 10**9),
    "u": Fraction(1, 10**6),
    "m": Fraction(1, 10**3),
    "": Fraction(1),
    "k": Fraction(10**3),
    "M": Fraction(10**6),
    "G": Fraction(10**9),
    "T": Fraction(10**12),
    "P": Fraction(10**15),
    "E": Fraction(10**18),
}
_QUANTITY = re.compile(
    r"^([+-]?)(\d+(?:\.\d*)?|\.\d+)(?:([eE][+-]?\d+)|(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E))?$"
)


_MAX_DIGITS = 64
_MAX_EXPONENT = 64


def _short(value: str) -> str:
    return repr(value if len(value) <= 40 else value[:40] + "…")


def parse_quantity(value: object) -> Fraction:
    """The exact value of a quantity given as a string or a JSON number."""
    if isinstance(value, bool):
        raise EngineError(f"invalid quantity {value!r}")
    if isinstance(value, int):
        return Fraction(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise EngineError(f"invalid quantity {value!r}")
        return Fraction(str(value))
    if not isinstance(value, str):
        raise EngineError(f"invalid quantity {value!r}: expected a string or a number")
    match = _QUANTITY.match(value.strip())
    if not match:
        raise EngineError(f"invalid quantity {_short(value)}")
    sign, digits, exponent, suffix = match.groups()
    # bounded like the API server's int64 quantities, so a hostile text cannot take forever
    if len(digits) > _MAX_DIGITS or (exponent and len(exponent) > 4):
        raise EngineError(f"invalid quantity {_short(value)}: out of range")
    number = Fraction(digits)
    if exponent:
        power = int(exponent[1:])
        if abs(power) > _MAX_EXPONENT:
            raise EngineError(f"invalid quantity {_short(value)}: out of range")
        number *= Fraction(10) ** power
    elif suffix:
        number *= _BINARY[suffix] if suffix in _BINARY else _DECIMAL[suffix]
    return -number if sign == "-" else number


def to_millis(value: object) -> int:
    """Millicores (rounded up, as ``Quantity.MilliValue``)."""
    if type(value) is str:
        return _millis_of_text(value)
    return math.ceil(parse_quantity(value) * 1000)


def to_units(value: object) -> int:
    """Whole units (bytes, devices), rounded up as ``Quantity.Value``."""
    if type(value) is str:
        return _units_of_text(value)
    return math.ceil(parse_quantity(value))


# A cluster repeats a few dozen quantity strings across every pod ("2", "8Gi", "500m"), and
# exact parsing through Fraction is the hot spot of summing 100k pods' requests.
@functools.lru_cache(maxsize=4096)
def _millis_of_text(value: str) -> int:
    return math.ceil(parse_quantity(value) * 1000)


@functools.lru_cache(maxsize=4096)
def _units_of_text(value: str) -> int:
    return math.ceil(parse_quantity(value))


def format_millis(millis: int) -> str:
    """CPU as kubectl writes it: ``"500m"``, ``"2"``."""
    return str(millis // 1000) if millis % 1000 == 0 else f"{millis}m"


def format_bytes(count: int) -> str:
    """Memory in binary units when exact (``"4Gi"``), else decimal (``"1500M"``), else bytes."""
    if count == 0:
        return "0"
    for suffix, size in reversed(_BINARY.items()):
        if count % size == 0:
            return f"{count // size}{suffix}"
    for suffix in ("E", "P", "T", "G", "M", "k"):
        size = int(_DECIMAL[suffix])
        if count % size == 0:
            return f"{count // size}{suffix}"
    return str(count)
