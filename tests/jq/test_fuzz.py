"""A short seeded round of the grammar fuzzer (the long one is `make fuzz`).

The round runs on the work-counting deadline clock (``workclock``): the deadline is a number of
profile events, and the property of `make fuzz` (no evaluation past twice its deadline) is
checked by counting work, with the most work between two looks at the clock bounded, never by
CPU seconds.
"""

from __future__ import annotations

from tests.jq.fuzz import run
from tests.jq.workclock import WorkClock

DEADLINE = 500_000  # profile events
FACTOR = 2.0
#: the most work between two looks at the clock (tests/jq/test_deadline_work.py's bound)
GAP = 200_000


def test_short_fuzz_round(work_clock: WorkClock) -> None:
    report = run(
        count=600,
        seed=20261201,
        deadline=work_clock.seconds(DEADLINE),
        factor=FACTOR,
        work=work_clock,
    )
    assert report.cases >= 600 and report.programs > 200
    # every failure is a jq error, never another Python exception
    assert report.crashes == []
    # a compile error or a jq error is an answer too, but most programs must run
    assert report.jq_errors + report.compile_errors < report.cases
    assert report.peak_bytes < 256 * 1024 * 1024
    # no evaluation went past twice its deadline, and none worked long without a look
    assert report.overruns == []
    assert report.longest_gap < GAP, report.longest_gap_program
