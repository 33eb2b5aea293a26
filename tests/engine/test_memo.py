"""Each expression runs at most once per (expression, value) in one workload, failures included.

A ``replicasPath`` that hits the 10 s deadline made one ``describe`` take 30 s (QA #11): the
desired count, the component nodes, resources and the gang minimum each evaluated it again. The
workload's memo keeps results and errors alike; these tests count the evaluations.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.engine.conftest import karta_dict, root
from workload_map.engine import Workload
from workload_map.engine.errors import ExtractionError
from workload_map.engine.runner import Evaluations, Expression

FAILING = 'error("too slow")'
STATUS_FAILING = '.status.x | error("bad phase")'

KARTA = karta_dict(
    root(
        statusDefinition={
            "phaseDefinition": {"path": STATUS_FAILING},
            "statusMappings": {"running": [{"byPhase": "Running"}]},
        }
    ),
    {
        "name": "workers",
        "ownerRef": "thing",
        "kind": {"group": "batch", "version": "v1", "kind": "Job"},
        "specDefinition": {"podTemplateSpecPath": ".spec.template"},
        "scaleDefinition": {"replicasPath": FAILING},
        "podSelector": {"replicaSelector": {"keyPath": '.metadata.labels["idx"] | tostring'}},
    },
    gang={
        "podGroups": [
            {
                "name": "all",
                "members": [
                    {
                        "componentName": "workers",
                        "groupByKeyPaths": ['.metadata.labels["idx"] | tostring'],
                    }
                ],
            }
        ]
    },
)
OBJ = {
    "apiVersion": "example.com/v1",
    "kind": "Thing",
    "metadata": {"name": "t", "uid": "u1"},
    "spec": {"template": {"spec": {"containers": [{"name": "c"}]}}},
}
PODS = [{"kind": "Pod", "metadata": {"name": f"p{i}", "labels": {"idx": str(i)}}} for i in range(2)]


@pytest.fixture
def counted() -> Iterator[dict[str, int]]:
    """Counts evaluations per expression text (the slot ``evaluate`` is wrapped)."""
    counts: dict[str, int] = {}
    wrapped: list[tuple[Expression, Any]] = []

    def wrap(expression: Expression) -> None:
        inner = expression.evaluate

        def counting(value: Any) -> list[Any]:
            counts[expression.text] = counts.get(expression.text, 0) + 1
            return inner(value)

        wrapped.append((expression, inner))
        expression.evaluate = counting

    counted.wrap = wrap  # type: ignore[attr-defined]
    yield counts
    for expression, inner in wrapped:
        expression.evaluate = inner


def _workload(pods: list[dict[str, Any]] | None, counts: Any) -> Workload:
    wl = Workload(KARTA, OBJ, pods)
    for text in (FAILING, STATUS_FAILING, '.metadata.labels["idx"] | tostring'):
        counted.wrap(wl.structure.expressions.get(text))  # type: ignore[attr-defined]
    return wl


@pytest.mark.parametrize("pods", [None, PODS], ids=["file", "pods"])
def test_a_failing_expression_runs_once_per_describe(
    counted: dict[str, int], pods: list[dict[str, Any]] | None
) -> None:
    wl = _workload(pods, counted)
    view = wl.describe()
    wl.explain()
    wl.pod_groups()
    with pytest.raises(ExtractionError, match="too slow"):
        wl.resources()  # a view without room for errors raises (once more, not evaluated)
    assert counted[FAILING] == 1
    assert counted[STATUS_FAILING] == 1
    assert any("too slow" in e for e in view["errors"])
    assert any("bad phase" in e for e in view["errors"])
    if pods is not None:
        # the replica key and the group key are the same expression: once per pod
        assert counted['.metadata.labels["idx"] | tostring'] == len(pods)


def test_the_error_is_raised_again_with_the_same_message(counted: dict[str, int]) -> None:
    wl = _workload(None, counted)
    messages = []
    for _ in range(3):
        with pytest.raises(ExtractionError) as info:
            wl.scales("workers")
        messages.append(str(info.value))
    assert counted[FAILING] == 1
    assert len(set(messages)) == 1 and "too slow" in messages[0]


def test_the_memo_tells_values_apart_by_identity() -> None:
    memo = Evaluations()
    expression = Expression(".a")
    first, second = {"a": 1}, {"a": 1}
    assert memo(expression, first) == [1]
    second["a"] = 2
    assert memo(expression, second) == [2]
    assert memo(expression, first) == [1]
