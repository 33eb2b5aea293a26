"""--test-order: modules and their tests reversed or shuffled (replayable), modules kept whole."""

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


def test_parallel_workers_share_the_order_and_the_jq_clock_scale(tmp_path: Path) -> None:
    """Under pytest-xdist (`make unit`) each worker collects and reorders: one seed for all (else
    xdist refuses: different tests collected), and each worker's jq deadlines see the scale."""
    import subprocess
    import sys

    for name in ("a", "b"):
        # the CPU clock under the scale is injected (each look a millisecond, as in
        # test_jq_clock_scale.py): at 1000x the budget runs out by the looks counted
        (tmp_path / f"test_{name}.py").write_text(
            "import itertools\n"
            "from workload_map import jq\n"
            "from workload_map.jq import cpuclock\n"
            + "".join(f"def test_{name}{i}():\n    pass\n" for i in range(6))
            + f"def test_{name}_budget(monkeypatch):\n"
            "    looks = itertools.count()\n"
            "    monkeypatch.setattr(cpuclock, 'clock', lambda: next(looks) * 0.001)\n"
            "    jq.compile('[range(20000)] | length').all(None, limits=jq.Limits(timeout=1.0))\n"
        )
    root = Path(__file__).resolve().parents[1]
    plugins = ["-p", "no:cacheprovider", "-p", "tests.conftest"]
    options = ["-n", "2", "--test-order=shuffle", "--jq-clock-scale=1000"]
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", *plugins, str(tmp_path), *options],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert "Different tests were collected" not in run.stdout, run.stdout[-3000:]
    assert run.stdout.startswith("test order: shuffle:"), run.stdout[-3000:]
    assert run.stdout.splitlines()[-1].startswith("2 failed, 12 passed"), run.stdout[-3000:]
    assert run.stdout.count("JqDeadlineError") >= 2
