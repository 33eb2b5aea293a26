"""Kubernetes resource quantities: exact parsing and human formatting.

``"500m"``, ``"1.5Gi"``, ``"2e3"``, ``"8"`` are parsed exactly and rounded up the way the API
server's ``MilliValue``/``Value`` do: CPU to millicores, everything else to whole units (bytes,
devices). Formatting gives back the short forms ``kubectl`` shows.

Text and integers are read as an integer ratio (numerator, denominator): ``fractions`` (and its
import, ~4M instructions of every command that evaluates a workload) is loaded only when a
caller asks for the ``Fraction`` itself (:func:`parse_quantity`) or gives a float.
"""

from __future__ import annotations

import functools
import math
import re
from typing import TYPE_CHECKING

from workload_map.engine.errors import EngineError

if TYPE_CHECKING:
    from fractions import Fraction

__all__ = [
    "format_bytes",
    "format_millis",
    "parse_quantity",
    "to_millis",
    "to_units",
]

_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
#: decimal suffixes as (numerator, denominator)
_DECIMAL = {
    "n": (1, 10**9),
    "u": (1, 10**6),
    "m": (1, 10**3),
    "": (1, 1),
    "k": (10**3, 1),
    "M": (10**6, 1),
    "G": (10**9, 1),
    "T": (10**12, 1),
    "P": (10**15, 1),
    "E": (10**18, 1),
}


@functools.cache
def _pattern() -> re.Pattern[str]:
    """Every quantity's grammar; compiled (~2.8M instructions) only for a text that is not a
    plain whole number with an optional suffix (see :func:`_plain`)."""
    return re.compile(
        r"^([+-]?)(\d+(?:\.\d*)?|\.\d+)(?:([eE][+-]?\d+)|(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E))?$"
    )


_MAX_DIGITS = 64
_MAX_EXPONENT = 64


def _short(value: str) -> str:
    return repr(value if len(value) <= 40 else value[:40] + "…")


def parse_quantity(value: object) -> Fraction:
    """The exact value of a quantity given as a string or a JSON number."""
    from fractions import Fraction

    if isinstance(value, float):
        if not math.isfinite(value):
            raise EngineError(f"invalid quantity {value!r}")
        return Fraction(str(value))
    return Fraction(*_ratio(value))


def _ratio(value: object) -> tuple[int, int]:
    """(numerator, denominator > 0) of a quantity given as a string or an integer (floats go
    through :func:`parse_quantity`)."""
    if isinstance(value, bool):
        raise EngineError(f"invalid quantity {value!r}")
    if isinstance(value, int):
        return int(value), 1
    if not isinstance(value, str):
        raise EngineError(f"invalid quantity {value!r}: expected a string or a number")
    text = value.strip()
    return _plain(text) or _parsed(value, text)


def _plain(text: str) -> tuple[int, int] | None:
    """The ratio of an unsigned ASCII whole number with an optional suffix ("4", "500m",
    "8Gi": nearly every quantity a pod requests), as :func:`_parsed` reads it; None for any
    other text, which :func:`_parsed` reads (or refuses)."""
    if not text.isascii():
        return None
    if text.isdigit():
        digits, suffix = text, ""
    elif text[-2:] in _BINARY:
        digits, suffix = text[:-2], text[-2:]
    elif text[-1:] in _DECIMAL:
        digits, suffix = text[:-1], text[-1:]
    else:
        return None
    if not digits.isdigit() or len(digits) > _MAX_DIGITS:
        return None
    if suffix in _BINARY:
        return int(digits) * _BINARY[suffix], 1
    times, per = _DECIMAL[suffix]
    return int(digits) * times, per


def _parsed(value: str, text: str) -> tuple[int, int]:
    """The ratio of ``text`` (``value`` stripped) by the whole grammar."""
    match = _pattern().match(text)
    if not match:
        raise EngineError(f"invalid quantity {_short(value)}")
    sign, digits, exponent, suffix = match.groups()
    # bounded like the API server's int64 quantities, so a hostile text cannot take forever
    if len(digits) > _MAX_DIGITS or (exponent and len(exponent) > 4):
        raise EngineError(f"invalid quantity {_short(value)}: out of range")
    whole, _, fraction = digits.partition(".")
    numerator = int(whole + fraction or "0")
    denominator = 10 ** len(fraction)
    if exponent:
        power = int(exponent[1:])
        if abs(power) > _MAX_EXPONENT:
            raise EngineError(f"invalid quantity {_short(value)}: out of range")
        if power >= 0:
            numerator *= 10**power
        else:
            denominator *= 10**-power
    elif suffix:
        if suffix in _BINARY:
            numerator *= _BINARY[suffix]
        else:
            times, per = _DECIMAL[suffix]
            numerator *= times
            denominator *= per
    return (-numerator if sign == "-" else numerator), denominator


def _ceil_ratio(numerator: int, denominator: int) -> int:
    return -(-numerator // denominator)


def to_millis(value: object) -> int:
    """Millicores (rounded up, as ``Quantity.MilliValue``)."""
    if type(value) is str:
        return _millis_of_text(value)
    if isinstance(value, float):
        return math.ceil(parse_quantity(value) * 1000)
    numerator, denominator = _ratio(value)
    return _ceil_ratio(numerator * 1000, denominator)


def to_units(value: object) -> int:
    """Whole units (bytes, devices), rounded up as ``Quantity.Value``."""
    if type(value) is str:
        return _units_of_text(value)
    if isinstance(value, float):
        return math.ceil(parse_quantity(value))
    return _ceil_ratio(*_ratio(value))


# A cluster repeats a few dozen quantity strings across every pod ("2", "8Gi", "500m"), and
# exact parsing is the hot spot of summing 100k pods' requests.
@functools.lru_cache(maxsize=4096)
def _millis_of_text(value: str) -> int:
    numerator, denominator = _ratio(value)
    return _ceil_ratio(numerator * 1000, denominator)


@functools.lru_cache(maxsize=4096)
def _units_of_text(value: str) -> int:
    return _ceil_ratio(*_ratio(value))


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
        size = _DECIMAL[suffix][0]
        if count % size == 0:
            return f"{count // size}{suffix}"
    return str(count)
