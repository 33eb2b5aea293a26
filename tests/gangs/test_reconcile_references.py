"""The reconciler reads a native member's group reference inline for plain pods (a resync
reads every pod's): whatever shape ``spec.schedulingGroup`` has, the actions are those of the
same pods read through ``pod_reference`` (pods that are Mappings but not dicts take it)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import workload_map as wm
from tests.gangs import custom
from tests.gangs.cases import opted
from tests.gangs.test_reconcile import admitted
from workload_map.gangs import plan
from workload_map.gangs.config import COSCHEDULING_LABEL
from workload_map.gangs.reconcile import Actions, reconcile


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
