"""Results shared between workloads holding equal values where an expression reads
(engine/equal_inputs.py): shared when they are, never when they are not, and the same answers
as each workload's own evaluation."""

from __future__ import annotations

import copy
import random
from typing import Any

import pytest

from tests.catalog.conftest import FIXTURES, objects_in
from workload_map.catalog import catalog
from workload_map.engine import ExtractionError, Workload
from workload_map.engine import equal_inputs as shared
from workload_map.engine.equal_inputs import SharedEvaluations, keyer
from workload_map.engine.runner import Evaluations, Expression


@pytest.fixture(autouse=True)
def _fresh_table() -> None:
    shared.clear()


def _job(name: str, spec: dict[str, Any], status: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": "ns", "uid": f"uid-{name}"},
        "spec": spec,
        "status": status,
    }


_FOUND = catalog.resolve("batch/v1", "Job")


def _karta() -> Any:
    """The one definition (a process's workloads of a kind share theirs, and its memo)."""
    assert _FOUND is not None
    return _FOUND[0]


SPEC = {"parallelism": 2, "completions": 2, "template": {"spec": {"containers": [{"name": "c"}]}}}


def test_workloads_with_the_same_status_objects_share_its_evaluation() -> None:
    status = {"active": 2, "ready": 2}
    a = Workload(_karta(), _job("a", SPEC, status), [], owned=True, shared_inputs=True)
    b = Workload(_karta(), _job("b", SPEC, status), [], owned=True, shared_inputs=True)
    assert a.status() is b.status()  # made once
    assert a.status() == Workload(_karta(), _job("c", SPEC, dict(status)), []).status()


def test_other_values_are_evaluated_for_themselves() -> None:
    running = Workload(_karta(), _job("a", SPEC, {"active": 2, "ready": 2}), [], shared_inputs=True)
    failed = Workload(
        _karta(),
        _job(
            "b",
            SPEC,
            {"failed": 2, "conditions": [{"type": "Failed", "status": "True"}]},
        ),
        [],
        shared_inputs=True,
    )
    assert running.phases() == ["Running"] and failed.phases() == ["Failed"]


def test_equal_but_distinct_objects_are_not_taken_for_the_same() -> None:
    # the table keys objects and arrays by identity (scalars by value): an equal copy of the
    # conditions is evaluated again (and agrees)
    def status() -> dict[str, Any]:
        return {"active": 2, "ready": 2, "conditions": [{"type": "Suspended", "status": "False"}]}

    one = Workload(_karta(), _job("a", SPEC, status()), [], shared_inputs=True)
    two = Workload(_karta(), _job("b", SPEC, status()), [], shared_inputs=True)
    assert one.status() == two.status() and one.status() is not two.status()


def test_without_shared_inputs_nothing_is_shared() -> None:
    status = {"active": 2, "ready": 2}
    a = Workload(_karta(), _job("a", SPEC, status), [])
    b = Workload(_karta(), _job("b", SPEC, status), [])
    assert type(a.extractor.run) is Evaluations
    assert a.status() == b.status() and a.status() is not b.status()


def test_results_are_shared_by_the_values_read_and_failures_are_not() -> None:
    run = SharedEvaluations()
    expression = Expression("[.spec.a // 1, .spec.b] | min")
    assert not expression.direct
    first = run(expression, {"spec": {"a": 3, "b": 2}, "metadata": {"name": "x"}})
    again = SharedEvaluations()(expression, {"spec": {"a": 3, "b": 2}, "other": 1})
    assert first == [2] and again is first  # scalars keyed by value
    assert SharedEvaluations()(expression, {"spec": {"a": 3, "b": 1}}) == [1]
    assert SharedEvaluations()(expression, {"spec": {"a": 3.0, "b": 3}}) == [3.0]
    broken = Expression('.spec.a | ascii_downcase == "x"')
    for _ in range(2):  # an error is raised each time, never kept as a result
        with pytest.raises(ExtractionError):
            SharedEvaluations()(broken, {"spec": {"a": 5}})


def test_bound_references_are_never_shared() -> None:
    run = SharedEvaluations({"runtime": {"x": 1}})
    expression = Expression("[.spec.a // 1, .spec.b] | min")
    run(expression, {"spec": {"a": 1, "b": 1}})
    assert not shared._TABLE


def test_keys_tell_scalars_apart_by_type_and_objects_by_identity() -> None:
    key = keyer((("a",), ("b", "c")))
    inner: dict[str, Any] = {"c": [1]}
    assert key({"a": 1, "b": inner}) != key({"a": True, "b": inner})
    assert key({"a": 1, "b": inner}) != key({"a": 1.0, "b": inner})
    assert key({"a": 1, "b": inner}) != key({"a": 1, "b": {"c": [1]}})
    assert key({"a": 1, "b": inner}) == key({"a": 1, "b": {"c": inner["c"]}, "d": 2})
    assert key({"a": None}) == key({"b": None}) == key({"b": {}})  # null all the way
    assert key({"a": 1, "b": "text"}) is None  # the way to c is no object: not keyed


def _fixture_workloads() -> list[tuple[Any, dict[str, Any]]]:
    out = []
    kartas: dict[tuple[str, str], Any] = {}  # one definition per kind, as in a process
    for path in sorted(FIXTURES.glob("*.yaml")):
        for obj in objects_in(path):
            if not isinstance(obj, dict):
                continue
            kind = (str(obj.get("apiVersion")), str(obj.get("kind")))
            if kind not in kartas:
                found = catalog.resolve(*kind)
                kartas[kind] = found[0] if found is not None else None
            karta = kartas[kind]
            if karta is not None and not karta.spec.structure_definition.references:
                out.append((karta, obj))
    return out


def _summary(wl: Workload) -> Any:
    try:
        return ("ok", wl.summary(), wl.phases(), wl.extractor.problems)
    except ExtractionError as err:
        return ("error", str(err))


def test_a_fleet_sharing_its_values_reads_as_each_workload_alone() -> None:
    # copies of every fixture that share their spec and status objects, in shuffled order,
    # with other metadata: each summary is what the workload alone gives
    workloads = _fixture_workloads()
    assert len(workloads) > 30
    fleet = []
    for karta, obj in workloads:
        for n in range(3):
            copied = {
                **obj,
                "metadata": {**copy.deepcopy(obj.get("metadata") or {}), "uid": f"u{n}"},
            }
            fleet.append((karta, copied))
    random.Random(7).shuffle(fleet)
    for karta, obj in fleet:
        together = Workload(karta, obj, [], owned=True, validate=False, shared_inputs=True)
        alone = Workload(karta, copy.deepcopy(obj), [], owned=True, validate=False)
        assert _summary(together) == _summary(alone), obj.get("kind")
