"""How a long step counts its work against the evaluation's deadline as it goes.

A program's steps tick the deadline (``closures.Ctx``): every few hundred steps it looks at the
clock. Some single steps are long: serialising a large or deep value (``tojson``, ``tostring``,
string interpolation, the ``@`` formats), sorting and grouping a large array. Without counting
inside them, a few hundred such steps run between two looks at the clock and the evaluation
overruns its deadline many times over. Each of them takes a ``Meter`` (the evaluation's
``Ctx``; None outside an evaluation) and spends *units* on it as it works, a unit being about
the cost of one evaluation step (a microsecond or so): one node written by the Python encoder,
one comparison of jq values, ``ELEMENTS_PER_UNIT`` elements handled at C speed. A step spends
at most ``SPAN`` units of work between two calls of ``spend``, so the deadline is looked at
within about ``SPAN`` plus the evaluation's own tick interval.

This module imports nothing of the package: the encoder, the values and the builtins all use it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, Protocol

__all__ = [
    "CHARS_PER_UNIT",
    "ELEMENTS_PER_UNIT",
    "SPAN",
    "Meter",
    "sort_metered",
    "text_slices",
]

#: the most units a long step works between two calls of ``Meter.spend``
SPAN = 256
#: elements a C-speed pass (the C encoder, a sort by native keys) handles per unit of work
ELEMENTS_PER_UNIT = 32
#: characters a C-speed string pass (escaping, translating, encoding) handles per unit of work
CHARS_PER_UNIT = 1024


class Meter(Protocol):
    """What a long step reports its work to (``closures.Ctx``)."""

    def spend(self, units: int) -> None:
        """Count ``units`` of work; raises the deadline error once the deadline has passed."""


def sort_metered(xs: list[Any], key: Callable[[Any], Any] | None, meter: Meter | None) -> list[Any]:
    """``sorted(xs, key=key)`` for a key compared at C speed, its n log n comparisons spent on
    ``meter`` before it starts. One C call: such a sort costs about what building its n
    elements cost the evaluation (a comparison at C speed is some twenty times cheaper than an
    evaluation step), so it cannot take the evaluation far past its deadline; a sort by jq's
    ``compare`` (a Python call per comparison) counts each comparison instead."""
    if meter is not None:
        n = len(xs)
        meter.spend(n * n.bit_length() // ELEMENTS_PER_UNIT)
    return sorted(xs, key=key)


def text_slices(s: str, meter: Meter | None) -> Iterator[str]:
    """``s`` in slices of ``SPAN * CHARS_PER_UNIT`` characters, each spent on ``meter`` before
    it is handed out, for a character-wise pass (``"".join(p.translate(t) for p in …)``)."""
    step = SPAN * CHARS_PER_UNIT
    if meter is None or len(s) <= step:
        if meter is not None:
            meter.spend(len(s) // CHARS_PER_UNIT)
        yield s
        return
    for i in range(0, len(s), step):
        meter.spend(SPAN)
        yield s[i : i + step]
