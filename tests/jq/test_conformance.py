"""jq's and gojq's own test suites, read from ../shared/jq-conformance at test time.

Every case listed in DIVERGENCES.md is a strict xfail: it must fail (with the listed reason),
so a case that starts passing is noticed and taken off the list.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import SHARED
from tests.jq.conformance_cases import (
    Case,
    check_jq_case,
    check_yaml_case,
    divergences,
    jq_cases,
    yaml_cases,
)

pytestmark = pytest.mark.shared

DIVERGENCES = divergences(Path(__file__).with_name("DIVERGENCES.md"))


def _params(cases: list[Case]) -> list[object]:
    params: list[object] = []
    for case in cases:
        marks = []
        if case.id in DIVERGENCES:
            marks.append(pytest.mark.xfail(strict=True, reason=DIVERGENCES[case.id]))
        params.append(pytest.param(case, id=case.id, marks=marks))
    return params


JQ_CASES = jq_cases(SHARED) if SHARED else []
YAML_CASES = yaml_cases(SHARED) if SHARED else []


def test_suites_present(shared_dir: Path) -> None:
    assert len(JQ_CASES) > 1500 and len(YAML_CASES) == 627
    known = {c.id for c in JQ_CASES} | {c.id for c in YAML_CASES}
    stale = sorted(set(DIVERGENCES) - known)
    assert not stale, f"DIVERGENCES.md lists unknown case ids: {stale}"


@pytest.mark.parametrize("case", _params(JQ_CASES))
def test_jq_suite(case: Case, shared_dir: Path) -> None:
    check_jq_case(case)


@pytest.mark.parametrize("case", _params(YAML_CASES))
def test_gojq_suite(case: Case, shared_dir: Path) -> None:
    check_yaml_case(case)
