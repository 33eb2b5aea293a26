"""A plain quantity ("4", "500m", "8Gi": an unsigned ASCII whole number with an optional
suffix) is read without the quantity grammar's pattern, whose compilation a command that sums
ordinary requests then never pays; every other text still goes through the pattern."""

from __future__ import annotations

import itertools

import pytest

from tests.fresh import fresh_python
from workload_map.engine import quantities
from workload_map.engine.errors import EngineError

SUFFIXES = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei", "n", "u", "m", "k", "M", "G", "T", "P", "E"]
ODD_SUFFIXES = ["e", "e3", "E3", "e-2", "K", "i", "Mi ", "mi", "KI", "EE", "Gii", " m", "\u00b2"]
NUMBERS = [
    "0",
    "4",
    "007",
    "1.5",
    ".5",
    "5.",
    "+4",
    "-4",
    "\u0663",
    "4\u0663",
    "",
    "9" * 64,
    "9" * 65,
]


def _texts() -> list[str]:
    out = [n + s for n, s in itertools.product(NUMBERS, SUFFIXES + ODD_SUFFIXES)]
    return [*out, " 4 ", "\t8Gi\n", "4\n", "Ki", "m", "abc", "4 4", "0x10", "1_000"]


def _reference(text: str) -> tuple[int, int] | str:
    """What the whole grammar makes of ``text``: its ratio, or the refusal's message."""
    try:
        return quantities._parsed(text, text.strip())
    except EngineError as exc:
        return str(exc)


@pytest.mark.parametrize("text", _texts())
def test_a_plain_reading_is_the_grammars(text: str) -> None:
    plain = quantities._plain(text.strip())
    assert plain is None or plain == _reference(text)
    try:
        got: tuple[int, int] | str = quantities._ratio(text)
    except EngineError as exc:
        got = str(exc)
    assert got == _reference(text)


def test_ordinary_requests_are_plain() -> None:
    for text in ("1", "4", "500m", "8Gi", "250Mi", "2k", "0"):
        assert quantities._plain(text) is not None, text
    for text in ("1.5", "-1", "+1", "2e3", "\u0663", ""):
        assert quantities._plain(text) is None, text
    assert (quantities.to_millis("500m"), quantities.to_units("8Gi")) == (500, 8 * 2**30)
    assert (quantities.to_millis(" 2 "), quantities.to_units("1500m")) == (2000, 2)


def test_summing_plain_requests_compiles_no_pattern() -> None:
    code = (
        "import re\n"
        "from workload_map.engine.quantities import to_millis, to_units\n"
        "print(to_millis('1'), to_units('4'), to_millis('500m'), to_units('8Gi'))\n"
        "print(sum('Ki|Mi' in str(key) for key in re._cache))\n"
        "print(to_millis('1.5'), sum('Ki|Mi' in str(key) for key in re._cache))\n"
    )
    done = fresh_python(code)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n") == ["1000 4 500 8589934592", "0", "1500 1", ""]
