"""A short seeded round of the grammar fuzzer (the long one is `make fuzz`)."""

from __future__ import annotations

from tests.jq.fuzz import run


def test_short_fuzz_round() -> None:
    report = run(count=600, seed=20261201, deadline=0.5, factor=1000.0)
    assert report.cases >= 600 and report.programs > 200
    # every failure is a jq error, never another Python exception
    assert report.crashes == []
    # a compile error or a jq error is an answer too, but most programs must run
    assert report.jq_errors + report.compile_errors < report.cases
    assert report.peak_bytes < 256 * 1024 * 1024
