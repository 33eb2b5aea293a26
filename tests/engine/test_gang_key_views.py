"""A group key's view is made once per definition, (path, value): every workload of a fleet
has the same replica indexes, so their groups share the views; the memo is bounded (a fleet's
workload names beyond the bound are made per workload, with the same value)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from workload_map.catalog import catalog
from workload_map.engine import Workload, gang_rules
from workload_map.engine.structure import load_definition

LWS = "leaderworkerset.sigs.k8s.io"
_DATA = Path(__file__).parents[2] / "src/workload_map/catalog/data"
_LWS_FILE = "leaderworkerset-x-k8s-io-leaderworkerset-v1.yaml"


def _lws(name: str, replicas: int = 3, size: int = 2) -> tuple[dict[str, Any], list[Any]]:
    template = {"spec": {"containers": [{"name": "c"}]}}
    obj = {
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "metadata": {"name": name, "namespace": "ns", "uid": f"u-{name}"},
        "spec": {
            "replicas": replicas,
            "leaderWorkerTemplate": {"size": size, "workerTemplate": template},
        },
    }
    pods = []
    for group in range(replicas):
        for worker in range(size):
            labels = {
                f"{LWS}/name": name,
                f"{LWS}/group-index": str(group),
                f"{LWS}/worker-index": str(worker),
            }
            meta: dict[str, Any] = {"name": f"{name}-{group}-{worker}", "labels": labels}
            if worker:
                meta["annotations"] = {f"{LWS}/leader-name": f"{name}-{group}"}
            pods.append({"apiVersion": "v1", "kind": "Pod", "metadata": meta})
    return obj, pods


#: the workloads made (their definition's prepared structure lives as long as one of them)
_KEPT: list[Workload] = []


#: one definition, as a fleet's workloads have
_KARTA = catalog.get("leaderworkerset.x-k8s.io", "v1", "LeaderWorkerSet")


def _keys(name: str, karta: Any = _KARTA) -> list[Any]:
    workload = Workload(karta, *_lws(name), owned=True)
    _KEPT.append(workload)
    return [a.keys for a in workload.gangs.assignments]


def test_workloads_of_a_definition_share_key_views() -> None:
    one, two = _keys("a"), _keys("b")
    # the group index's view is the same object in both workloads; the names differ
    assert [k[1] for k in one] == [k[1] for k in two]
    assert all(x[1] is y[1] for x, y in zip(one, two, strict=True))
    assert [k[0].value for k in one] == ["a"] * 6
    assert [k[0].value for k in two] == ["b"] * 6
    assert [k[1].value for k in one] == ["0", "0", "1", "1", "2", "2"]


def test_the_shared_views_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gang_rules, "_MAX_VIEWS", 0)
    # a definition of its own (loaded again): no views kept yet
    karta = load_definition(yaml.safe_load((_DATA / _LWS_FILE).read_text()))
    one, two = _keys("c", karta), _keys("d", karta)
    assert all(x[1] is not y[1] for x, y in zip(one, two, strict=True))
    assert [k[1] for k in one] == [k[1] for k in two]  # equal views, made per workload
    assert [k[0].value for k in two] == ["d"] * 6


def test_a_shared_view_is_immutable() -> None:
    one, two = _keys("e"), _keys("f")
    shared = one[0][1]
    assert shared is two[0][1]
    with pytest.raises(AttributeError):
        shared.value = "9"  # type: ignore[misc]
    assert shared.value == "0"


def _everything(name: str, karta: Any) -> tuple[Any, Any]:
    from workload_map.model.views import to_json

    workload = Workload(karta, *_lws(name, replicas=5), owned=True)
    _KEPT.append(workload)
    return to_json(workload.gangs.groups), to_json(workload.gangs.assignments)


@pytest.mark.parametrize("bound", [0, 1, 3])
def test_the_bound_changes_no_result(monkeypatch: pytest.MonkeyPatch, bound: int) -> None:
    expected = [_everything(name, _KARTA) for name in ("g", "h", "i")]
    monkeypatch.setattr(gang_rules, "_MAX_VIEWS", bound)
    # a definition of its own, whose views fill up within the first workload (or never)
    karta = load_definition(yaml.safe_load((_DATA / _LWS_FILE).read_text()))
    assert [_everything(name, karta) for name in ("g", "h", "i")] == expected
