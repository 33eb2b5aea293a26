"""Instance paths read directly agree with the jq engine (property tests).

``Extractor`` reads ``PREFIX[]?.REST`` paths (``.spec.replicatedJobs[]?.name``) with a direct
walk (``iterated_reader``) that gives up, for the jq engine to decide, on anything but objects,
arrays and null where it expects them. The reference is the jq engine itself: for any object,
the reader gives up or gives exactly the engine's outputs, and never where the engine fails.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from workload_map.catalog import catalog
from workload_map.engine import Workload
from workload_map.engine.errors import ExtractionError
from workload_map.engine.extract import iterated_reader
from workload_map.engine.runner import Expression

KEYS = ["a", "b", "name"]
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-2, 2), st.sampled_from(["", "x"]))
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(KEYS), inner, max_size=3)
    ),
    max_leaves=12,
)


@st.composite
def expressions(draw: st.DrawFn) -> str:
    """An iterated path, spelled in the ways definitions spell keys, or a near miss."""

    def keys(low: int) -> str:
        out = ""
        for key in draw(st.lists(st.sampled_from(KEYS), min_size=low, max_size=3)):
            out += draw(st.sampled_from([f".{key}", f'."{key}"', f'["{key}"]']))
        return out

    prefix = keys(0) or "."
    iterate = draw(st.sampled_from(["[]", "[]?", "[0]", ""]))
    text = f"{prefix}{iterate}{keys(0)}" if prefix != "." else f".{iterate}{keys(0)}"
    if text in (".", ".[0]", ".."):
        text = ".a[]"
    return text


def _engine(text: str, value: Any) -> list[Any] | ExtractionError:
    try:
        return Expression(text)._slow(value)
    except ExtractionError as err:
        return err


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(expressions(), st.dictionaries(st.sampled_from(KEYS), VALUES, max_size=3))
def test_iterated_reads_agree_with_the_jq_engine(text: str, obj: Any) -> None:
    reader = iterated_reader(Expression(text))
    if reader is None:
        return
    got = reader(obj)
    if got is not None:
        assert got == _engine(text, obj)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(VALUES, max_size=4), st.sampled_from([".a[]?.b", ".a[].b.name", ".a[]?"]))
def test_arrays_of_anything_are_read_or_left_to_the_engine(items: list[Any], text: str) -> None:
    obj = {"a": items}
    reader = iterated_reader(Expression(text))
    assert reader is not None
    got = reader(obj)
    if got is not None:
        assert got == _engine(text, obj)
    # objects and nulls all the way: read without the engine
    plain = all(
        i is None or (type(i) is dict and type(i.get("b")) in (dict, type(None))) for i in items
    )
    assert got is not None or not plain


def test_instance_paths_are_iterated_computed_ones_are_not() -> None:
    assert iterated_reader(Expression(".spec.replicatedJobs[]?.name")) is not None
    assert iterated_reader(Expression('.spec["tasks"][].template')) is not None
    assert iterated_reader(Expression(".spec.x")) is None  # a constant path: read directly
    assert iterated_reader(Expression(".spec.xs[] | .n")) is None
    assert iterated_reader(Expression("(.spec.xs[].n)?")) is None
    assert iterated_reader(Expression(".spec.xs[]?.n // 1")) is None
    assert iterated_reader(Expression(".spec.xs[$i]")) is None
    assert iterated_reader(Expression(".spec.xs[0].n")) is None


def test_a_jobset_reads_its_instances_without_the_engine() -> None:
    """What a JobSet's instances are, read directly, with the scale through the engine."""
    karta = catalog.get("jobset.x-k8s.io", "v1alpha2", "JobSet")
    job = {"parallelism": 2, "template": {"spec": {"containers": []}}}
    obj = {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {"name": "js", "uid": "u"},
        "spec": {"replicatedJobs": [{"name": "d", "template": {"spec": job}}, {"name": "w"}]},
    }
    instances = Workload(karta, obj).instances("replicatedjob")
    assert list(instances) == ["d", "w"]
    assert instances["d"].pod_template_spec == {"spec": {"containers": []}}
    assert instances["d"].describes_pods and not instances["w"].describes_pods
    assert instances["d"].desired_pods() == 2
    bad = {**obj, "spec": {"replicatedJobs": [{"name": "d"}, "w"]}}
    try:
        Workload(karta, bad).instances("replicatedjob")
    except ExtractionError as err:
        assert "instanceIdPath" in str(err)
    else:
        raise AssertionError("a job that is a string is an error")
