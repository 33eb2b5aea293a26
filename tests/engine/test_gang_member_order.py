"""A pod group lists its members by name; members given in order are kept as given.

``PodGroup.__post_init__`` runs for every group built (one per LeaderWorkerSet replica): it
checks the order in one pass and sorts only members that are out of order.
"""

from __future__ import annotations

import builtins
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from workload_map.engine import gang_views
from workload_map.engine.gang_views import PodGroup


def _counting_sorted(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return builtins.sorted(*args, **kwargs)

    # a module global shadows the builtin for the module's own code
    monkeypatch.setattr(gang_views, "sorted", counted, raising=False)
    return calls


def test_members_in_order_are_kept_without_a_sort(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _counting_sorted(monkeypatch)
    pods = ("lws-0-0", "lws-0-0-1", "lws-0-0-2", "lws-0-0-3")
    group = PodGroup(name="pg-u-lws-0-0", min_member=4, pods=pods)
    assert group.pods is pods
    assert calls == []


def test_members_out_of_order_are_sorted_once(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _counting_sorted(monkeypatch)
    group = PodGroup(name="pg-u-js", min_member=3, pods=("js-0-10", "js-0-2", "js-0-1"))
    assert group.pods == ("js-0-1", "js-0-10", "js-0-2")
    assert calls == [1]


@given(st.lists(st.sampled_from(["a", "b", "b", "c", "a-1", ""]), max_size=6))
def test_members_are_listed_sorted(names: list[str]) -> None:
    group = PodGroup(name="pg", min_member=len(names), pods=tuple(names))
    assert group.pods == tuple(sorted(names))
