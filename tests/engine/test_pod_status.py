"""One readiness rule (engine/pod_status.py) for every consumer: a table of pods run through
``pod_is_ready``, ``describe``'s pod entries and counts, the shared evaluation's counts
(``summarize``) and the resources view.

The rule: the pod's Ready condition is True. The counts add kubectl's and the Job controller's
rule on top: only active pods (not finished, not terminating) are counted, so a terminating
pod still Ready shows ``ready: true`` in its entry but is not in ``ready``.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import pytest

from tests.engine.conftest import karta_dict, root
from workload_map.engine import Workload
from workload_map.engine.pod_status import (
    PodReading,
    pod_is_ready,
    pod_reason,
    read_pod,
    scheduling_message,
)

KARTA = karta_dict(
    root(
        specDefinition={"podTemplateSpecPath": ".spec.template"},
        scaleDefinition={"replicasPath": ".spec.replicas // 1"},
    )
)
OBJ = {
    "apiVersion": "example.com/v1",
    "kind": "Thing",
    "metadata": {"name": "d", "uid": "u1"},
    "spec": {"replicas": 1, "template": {"spec": {"containers": [{"name": "c"}]}}},
}
OWNER = {
    "apiVersion": "example.com/v1",
    "kind": "Thing",
    "name": "d",
    "uid": "u1",
    "controller": True,
}


def _ready(status: str) -> dict[str, Any]:
    return {"type": "Ready", "status": status}


def _pod(status: Any, *, deleting: bool = False) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": "p", "ownerReferences": [OWNER]}
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    pod: dict[str, Any] = {"kind": "Pod", "metadata": meta, "spec": {"containers": [{"name": "c"}]}}
    if status is not None:
        pod["status"] = status
    return pod


def _running(*conds: Any) -> dict[str, Any]:
    return {"phase": "Running", "conditions": list(conds)}


#: (case, pod, its Ready condition is True, counted as ready)
CASES = [
    ("ready", _pod(_running(_ready("True"))), True, True),
    ("not ready", _pod(_running(_ready("False"))), False, False),
    (
        "no Ready condition",
        _pod(_running({"type": "PodScheduled", "status": "True"})),
        False,
        False,
    ),
    ("no conditions", _pod({"phase": "Pending"}), False, False),
    ("no status", _pod(None), False, False),
    ("status unreadable", _pod("Running"), False, False),
    (
        "conditions not a list",
        _pod({"phase": "Running", "conditions": {"Ready": "True"}}),
        False,
        False,
    ),
    ("a condition not an object", _pod(_running("Ready", None, 1)), False, False),
    ("Ready in lower case", _pod(_running(_ready("true"))), False, False),
    ("Ready unknown", _pod(_running(_ready("Unknown"))), False, False),
    ("a later Ready True", _pod(_running(_ready("False"), _ready("True"))), True, True),
    ("terminating, still Ready", _pod(_running(_ready("True")), deleting=True), True, False),
    ("terminating, not Ready", _pod(_running(_ready("False")), deleting=True), False, False),
    (
        "Succeeded",
        _pod({"phase": "Succeeded", "conditions": [{**_ready("False"), "reason": "PodCompleted"}]}),
        False,
        False,
    ),
    (
        "Succeeded, Ready left True",
        _pod({"phase": "Succeeded", "conditions": [_ready("True")]}),
        True,
        False,
    ),
    (
        "Failed, Ready left True",
        _pod({"phase": "Failed", "conditions": [_ready("True")]}),
        True,
        False,
    ),
    # a caller's dict subclass passes through to_plain untouched; before one rule, summarize
    # read only exact dicts and counted this pod not ready while its entry said ready
    (
        "status an OrderedDict",
        _pod(OrderedDict(phase="Running", conditions=[OrderedDict(type="Ready", status="True")])),
        True,
        True,
    ),
]


@pytest.mark.parametrize(
    ("pod", "ready", "counted"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_every_consumer_reads_one_readiness_rule(
    pod: dict[str, Any], ready: bool, counted: bool
) -> None:
    assert pod_is_ready(pod) is ready
    wl = Workload(KARTA, OBJ, [pod])
    described = wl.describe()
    (node,) = described["components"]
    (entry,) = node["pods"]
    assert entry["ready"] is ready  # describe's entry: the condition
    # the counts: describe's (workload and node), summarize's and the resources view's
    assert described["pods"]["ready"] == int(counted)
    assert node["replicas"]["ready"] == int(counted)
    assert wl.summary().totals.ready == int(counted)
    (component,) = wl.summary().components
    assert component.tally.ready == int(counted)
    assert wl.resources()["components"]["thing"]["instances"][""]["readyPods"] == int(counted)


UNSCHEDULABLE = {
    "type": "PodScheduled",
    "status": "False",
    "reason": "Unschedulable",
    "message": "0/2 nodes are available: 2 Insufficient nvidia.com/gpu.",
}


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        (_running(_ready("True")), PodReading(True, None, None)),
        (
            {"phase": "Pending", "conditions": [UNSCHEDULABLE, _ready("False")]},
            PodReading(False, "Unschedulable", UNSCHEDULABLE["message"]),
        ),
        # the pod's own reason before its Ready condition's
        (
            {
                "phase": "Failed",
                "reason": "Evicted",
                "conditions": [{**_ready("False"), "reason": "X"}],
            },
            PodReading(False, "Evicted", None),
        ),
        (
            _running({**_ready("False"), "reason": "ContainersNotReady"}),
            PodReading(False, "ContainersNotReady", None),
        ),
        # a blank message is none; a PodScheduled False without a reason gives the next one
        (
            _running({"type": "PodScheduled", "status": "False", "message": " "}, _ready("False")),
            PodReading(False, None, None),
        ),
        # a pod that succeeded is fine, whatever its Ready condition says
        (
            {"phase": "Succeeded", "conditions": [{**_ready("False"), "reason": "PodCompleted"}]},
            PodReading(False, None, None),
        ),
    ],
)
def test_one_reading_gives_what_each_reader_gives(status: Any, expected: PodReading) -> None:
    pod = _pod(status)
    assert read_pod(pod) == expected
    assert (pod_is_ready(pod), pod_reason(pod), scheduling_message(pod)) == expected
