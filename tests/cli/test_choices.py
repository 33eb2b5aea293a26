"""The command line's fixed words are written out in cli/choices.py so that a shell's <TAB>
loads no model or engine; this keeps them from drifting from the vocabulary they stand for."""

from __future__ import annotations

from workload_map.cli.choices import PHASES
from workload_map.model import STATUS_ORDER


def test_get_phases_are_the_karta_phase_vocabulary_after_undefined() -> None:
    assert PHASES == ("Undefined", *STATUS_ORDER)
