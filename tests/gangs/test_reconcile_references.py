"""The reconciler reads a native member's group reference inline for plain pods (a resync
reads every pod's): whatever shape ``spec.schedulingGroup`` has, the actions are those of the
same pods read through ``pod_reference`` (pods that are Mappings but not dicts take it)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import pytest

import workload_map as wm
from tests.gangs import custom
from tests.gangs.cases import opted
from tests.gangs.test_reconcile import admitted
from workload_map.gangs import plan
from workload_map.gangs.config import COSCHEDULING_LABEL, VOLCANO_GROUP_ANNOTATION
from workload_map.gangs.plans import COSCHEDULING_API, NATIVE_API, VOLCANO_API
from workload_map.gangs.reconcile import Actions, pod_reference, reconcile


class _Frozen(Mapping[str, Any]):
    """A read-only, non-dict view of a pod (nested objects too)."""

    def __init__(self, data: Mapping[str, Any]) -> None:
        self._data = {k: _Frozen(v) if isinstance(v, dict) else v for k, v in data.items()}

    def __getitem__(self, key: str) -> Any:
        return self._data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)


def _shapes(obj: dict[str, Any]) -> list[dict[str, Any]]:
    pods = [admitted(obj, "p0", k) for k in range(6)]
    odd: list[Any] = [
        {},  # empty: no reference
        {"podGroupName": 5},  # not a name
        {"podGroupName": "someone-elses"},  # another group
        None,
        "a string",
    ]
    for pod, group in zip(pods[1:], odd, strict=False):
        pod["spec"]["schedulingGroup"] = group
    pods[0]["metadata"].setdefault("labels", {})[COSCHEDULING_LABEL] = "a-label-group"
    return pods


def _seen(actions: Actions) -> tuple[Any, ...]:
    return (
        sorted(o["metadata"]["name"] for o in actions.create),
        [(d.reason, d.message, d.warning) for d in actions.decisions],
        dict(actions.missed),
        [p["metadata"]["name"] for p in actions.delete_pods],
    )


def test_odd_references_read_as_pod_reference_reads_them() -> None:
    obj = opted(custom.partset("r", [6]))
    karta = wm.load_karta(custom.karta(1))
    pods = _shapes(obj)
    plain = reconcile(plan(karta, obj, pods), pods, [])
    viewed = reconcile(plan(karta, obj, pods), [_Frozen(p) for p in pods], [])
    assert _seen(plain) == _seen(viewed)
    # five of the six missed the group: the empty, the number, another group, None, a string
    assert sum(len(v) for v in plain.missed.values()) == 5


_LABEL, _NOTE = COSCHEDULING_LABEL, VOLCANO_GROUP_ANNOTATION
# (spec, labels, annotations) -> the reference the reader decides
_DECISIONS: list[tuple[Any, Any, Any, tuple[str, str] | None]] = [
    ({"containers": []}, None, None, None),  # the common case: nothing anywhere
    ({}, {"app": "x"}, {"note": "y"}, None),  # other labels and notes only
    (None, None, None, None),  # no spec at all
    ("a string", None, None, None),  # a spec that is no object
    ({"schedulingGroup": {"podGroupName": "g"}}, None, None, (NATIVE_API, "g")),
    ({"schedulingGroup": {"podGroupName": ""}}, None, None, (NATIVE_API, "")),
    ({"schedulingGroup": {}}, None, None, None),  # an empty group: no name
    ({"schedulingGroup": {"podGroupName": 5}}, None, None, None),  # not a name
    ({"schedulingGroup": "g"}, None, None, None),  # a group that is no object
    ({}, {_LABEL: "c"}, None, (COSCHEDULING_API, "c")),
    ({}, {_LABEL: ""}, None, None),  # an empty label joins nothing
    ({}, {_LABEL: 7}, None, None),
    ({}, None, {_NOTE: "v"}, (VOLCANO_API, "v")),
    ({}, {}, {_NOTE: ""}, None),
    # the native group wins over the label, the label over the note
    ({"schedulingGroup": {"podGroupName": "g"}}, {_LABEL: "c"}, {_NOTE: "v"}, (NATIVE_API, "g")),
    (
        {"schedulingGroup": {"podGroupName": 5}},
        {_LABEL: "c"},
        {_NOTE: "v"},
        (COSCHEDULING_API, "c"),
    ),
    ({"schedulingGroup": {}}, {_LABEL: ""}, {_NOTE: "v"}, (VOLCANO_API, "v")),
]


@pytest.mark.parametrize("frozen", [False, True], ids=["dicts", "mappings"])
@pytest.mark.parametrize(("spec", "labels", "notes", "want"), _DECISIONS)
def test_the_reader_decides_each_kind_of_reference(
    spec: Any, labels: Any, notes: Any, want: tuple[str, str] | None, frozen: bool
) -> None:
    meta: dict[str, Any] = {"name": "p"}
    if labels is not None:
        meta["labels"] = labels
    if notes is not None:
        meta["annotations"] = notes
    pod: dict[str, Any] = {"metadata": meta}
    if spec is not None:
        pod["spec"] = spec
    assert pod_reference(_Frozen(pod) if frozen else pod) == want
