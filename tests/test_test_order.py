"""--test-order: modules and their tests reversed or shuffled (replayable), modules kept whole.

That every pytest-xdist worker reorders alike (one seed, drawn by the controller) is checked
end to end by ``test_run_tests.py``'s run of `make test`'s runner."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import _reordered


@dataclass
class _Item:
    path: Path
    name: str


ITEMS: list[Any] = [_Item(Path(f"m{m}.py"), f"m{m}::t{t}") for m in range(4) for t in range(5)]


def _names(items: list[Any]) -> list[str]:
    return [i.name for i in items]


def _modules_whole(items: list[Any]) -> bool:
    seen: list[Path] = []
    for item in items:
        if not seen or seen[-1] != item.path:
            if item.path in seen:
                return False
            seen.append(item.path)
    return True


def test_reverse_reverses_modules_and_tests() -> None:
    items, used = _reordered(ITEMS, "reverse")
    assert used == "reverse" and _names(items) == _names(ITEMS)[::-1]


def test_shuffle_is_replayable_by_its_seed_and_keeps_modules_whole() -> None:
    first, used = _reordered(ITEMS, "shuffle:7")
    again, _ = _reordered(ITEMS, used)
    assert used == "shuffle:7" and _names(first) == _names(again)
    assert sorted(_names(first)) == sorted(_names(ITEMS)) and _names(first) != _names(ITEMS)
    assert _modules_whole(first)
    unseeded, printed = _reordered(ITEMS, "shuffle")
    assert printed.startswith("shuffle:") and _names(_reordered(ITEMS, printed)[0]) == _names(
        unseeded
    )


@pytest.mark.parametrize("bad", ["sideways", "shuffle:x"])
def test_a_bad_order_is_a_usage_error_naming_it(bad: str) -> None:
    with pytest.raises(pytest.UsageError, match="--test-order"):
        _reordered(ITEMS, bad)
