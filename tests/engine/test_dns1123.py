"""``is_dns1123_subdomain`` read with string methods gives the answers of the rule's regular
expression (that it compiles none: tests/engine/test_patterns_on_demand.py)."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from workload_map.engine.gangs import is_dns1123_subdomain

#: the rule as Kubernetes writes it (IsDNS1123Subdomain), at most 253 characters
RULE = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")


def _rule(name: str) -> bool:
    return len(name) <= 253 and RULE.fullmatch(name) is not None


@settings(max_examples=1000, deadline=None)
@given(st.text(alphabet="ab09-.A_\n é٣", max_size=12))
def test_the_same_answers_as_the_rule(name: str) -> None:
    assert is_dns1123_subdomain(name) == _rule(name)


def test_lengths_and_labels() -> None:
    for name in ("a" * 253, "a" * 254, "a." * 126 + "a", "a." * 126 + "ab", "", ".", "a.", ".a"):
        assert is_dns1123_subdomain(name) == _rule(name), name
    assert is_dns1123_subdomain("pg-abc-0.x")
    assert not is_dns1123_subdomain("a..b")
    assert not is_dns1123_subdomain("a\n")
