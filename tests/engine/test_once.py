"""``engine.once``: a cached property computed once, and what it holds read without computing."""

from __future__ import annotations

from workload_map.engine.once import cached_property, computed


class _Counted:
    def __init__(self) -> None:
        self.calls = 0

    @cached_property
    def value(self) -> list[int]:
        self.calls += 1
        return [self.calls]


def test_computed_reads_the_held_value_and_never_computes_it() -> None:
    obj = _Counted()
    assert computed(obj, "value") is None
    assert obj.calls == 0  # reading what is held computed nothing
    first = obj.value
    assert computed(obj, "value") is first
    assert obj.value is first and obj.calls == 1
