"""jq's and gojq's own test suites, read from ../shared/jq-conformance at test time.

Every case listed in DIVERGENCES.md is a strict xfail: it must fail (with the listed reason),
so a case that starts passing is noticed and taken off the list. The suites' expectations come
from gojq v0.12.19; cases where v0.12.19 changed behaviour are listed in a section checked
against the gojq v0.12.18 binary instead, when it is installed (`make gojq`).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import SHARED
from tests.jq.conformance_cases import (
    Case,
    check_against_binary,
    check_jq_case,
    check_yaml_case,
    divergences,
    jq_cases,
    yaml_cases,
)
from tests.jq.gojq_oracle import gojq_path

pytestmark = pytest.mark.shared

DIVERGENCES = divergences(Path(__file__).with_name("DIVERGENCES.md"))


GOJQ = gojq_path()


def _params(cases: list[Case]) -> list[object]:
    params: list[object] = []
    for case in cases:
        marks = []
        div = DIVERGENCES.get(case.id)
        if div is not None and not (div.against_binary and GOJQ is not None):
            marks.append(pytest.mark.xfail(strict=True, reason=div.reason))
        params.append(pytest.param(case, id=case.id, marks=marks))
    return params


def _check(case: Case) -> None:
    div = DIVERGENCES.get(case.id)
    if div is not None and div.against_binary and GOJQ is not None:
        check_against_binary(case, GOJQ)
    elif case.source == "jq":
        check_jq_case(case)
    else:
        check_yaml_case(case)


JQ_CASES = jq_cases(SHARED) if SHARED else []
YAML_CASES = yaml_cases(SHARED) if SHARED else []


def test_suites_present(shared_dir: Path) -> None:
    assert len(JQ_CASES) > 1500 and len(YAML_CASES) == 627
    known = {c.id for c in JQ_CASES} | {f"test.yaml#{i}" for i in range(842)}
    stale = sorted(set(DIVERGENCES) - known)
    assert not stale, f"DIVERGENCES.md lists unknown case ids: {stale}"


@pytest.mark.parametrize("case", _params(JQ_CASES))
def test_jq_suite(case: Case, shared_dir: Path) -> None:
    _check(case)


@pytest.mark.parametrize("case", _params(YAML_CASES))
def test_gojq_suite(case: Case, shared_dir: Path) -> None:
    _check(case)
