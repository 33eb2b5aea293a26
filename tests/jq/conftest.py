"""Fixtures of the jq tests: the work-counting deadline clock (workclock.py)."""

from tests.jq.workclock import work_clock

__all__ = ["work_clock"]
