"""What a group's keys pin, decided once per definition where the definition decides it.

A LeaderWorkerSet's group key ``group-index`` reads the same label as the replica selector of
both its pod components (and neither has an instance selector): every group pins one replica
of ``group`` and no instance, so alpha_groups takes its minimum without checking each group's
pods (``gang_rules._replica_dimension``). Where the definition does not decide it, every group
is checked (``gang_minimums.dimensions``). Either way the groups are the same.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from workload_map.catalog import catalog
from workload_map.engine import Workload, gang_minimums
from workload_map.engine.gang_rules import _reads
from workload_map.engine.structure import load_definition, prepare

LWS = "leaderworkerset.sigs.k8s.io"
_DATA = Path(__file__).parents[2] / "src/workload_map/catalog/data"


def _lws_dict() -> dict[str, Any]:
    text = (_DATA / "leaderworkerset-x-k8s-io-leaderworkerset-v1.yaml").read_text()
    out: dict[str, Any] = yaml.safe_load(text)
    return out


def _obj(replicas: int, size: int) -> dict[str, Any]:
    template = {"spec": {"containers": [{"name": "c"}]}}
    return {
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "metadata": {"name": "lws", "namespace": "ns", "uid": "u-lws"},
        "spec": {
            "replicas": replicas,
            "leaderWorkerTemplate": {
                "size": size,
                "leaderTemplate": template,
                "workerTemplate": template,
            },
        },
    }


def _pods(replicas: int, size: int, **extra: str) -> list[dict[str, Any]]:
    pods = []
    for group in range(replicas):
        for worker in range(size):
            labels = {
                f"{LWS}/name": "lws",
                f"{LWS}/group-index": str(group),
                f"{LWS}/worker-index": str(worker),
                **extra,
            }
            meta: dict[str, Any] = {"name": f"lws-{group}-{worker}", "labels": labels}
            if worker:
                meta["annotations"] = {f"{LWS}/leader-name": f"lws-{group}"}
            pods.append({"apiVersion": "v1", "kind": "Pod", "metadata": meta})
    return pods


def _decided(karta: Any) -> list[str | None]:
    structure = prepare(load_definition(karta), validate=False)
    gang = structure.karta.gang_scheduling
    assert gang is not None
    return [_reads(structure, m).replica_of for d in gang.pod_groups for m in d.members]


def _groups(karta: Any, pods: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    got = Workload(karta, _obj(3, 3), pods, owned=True).gangs
    return [
        (g.name, g.pods, g.keys, g.min_member, g.rule, g.error, g.created_later) for g in got.groups
    ]


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls = [0]
    real = gang_minimums.dimensions

    def counted(members: Any) -> Any:
        calls[0] += 1
        return real(members)

    monkeypatch.setattr(gang_minimums, "dimensions", counted)
    return calls


def test_the_catalog_leaderworkerset_decides_its_groups_replica() -> None:
    karta = catalog.get("leaderworkerset.x-k8s.io", "v1", "LeaderWorkerSet")
    assert _decided(karta) == ["group"]


def test_its_groups_are_not_checked_pod_by_pod(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _counting(monkeypatch)
    karta = load_definition(_lws_dict())
    groups = _groups(karta, _pods(3, 3))
    assert calls[0] == 0
    assert [g[0] for g in groups] == ["pg-u-lws-lws-0", "pg-u-lws-lws-1", "pg-u-lws-lws-2"]
    assert {g[4] for g in groups} == {"one replica of group: its own scale (3 pods)"}


def test_the_decided_groups_are_those_checked_pod_by_pod(monkeypatch: pytest.MonkeyPatch) -> None:
    """The same groups, minimums and rules with the definition's decision as without it
    (a copy of the definition whose member reads are made with the decision left out)."""
    pods = _pods(3, 3) + _pods(1, 2, extra="x")[:1]  # and a group of a leader alone
    pods[-1]["metadata"]["labels"][f"{LWS}/group-index"] = "7"
    decided = _groups(load_definition(_lws_dict()), pods)
    monkeypatch.setattr("workload_map.engine.gang_rules._replica_dimension", lambda *_: None)
    calls = _counting(monkeypatch)
    checked = _groups(load_definition(_lws_dict()), pods)
    assert calls[0] == 4
    assert decided == checked


def _variant(change: str) -> dict[str, Any]:
    karta = copy.deepcopy(_lws_dict())
    structure = karta["spec"]["structureDefinition"]
    group, leader, _worker = structure["childComponents"]
    member = karta["spec"]["optimizationInstructions"]["gangScheduling"]["podGroups"][0]
    member = member["members"][0]
    if change == "key is not the replica selector":
        member["groupByKeyPaths"] = [f'.metadata.labels["{LWS}/name"]']
    elif change == "replica selector on another label":
        group["podSelector"]["replicaSelector"]["keyPath"] = '.metadata.labels["other"]'
    elif change == "an instance selector":
        leader["instanceIdPath"] = ".metadata.name"
        leader["podSelector"]["componentInstanceSelector"] = {
            "idPath": f'.metadata.labels["{LWS}/name"]'
        }
    elif change == "a computed key":
        member["groupByKeyPaths"][1] = f'.metadata.labels["{LWS}/group-index"] // "x"'
    elif change == "the leader's own replica selector":
        leader["podSelector"]["replicaSelector"] = {"keyPath": f'.metadata.labels["{LWS}/name"]'}
    return karta


@pytest.mark.parametrize(
    "change",
    [
        "key is not the replica selector",
        "replica selector on another label",
        "an instance selector",
        "a computed key",
        "the leader's own replica selector",
    ],
)
def test_where_the_definition_does_not_decide_every_group_is_checked(
    change: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    karta = _variant(change)
    assert _decided(karta) == [None]
    calls = _counting(monkeypatch)
    groups = _groups(load_definition(karta), _pods(3, 3, other="o"))
    assert calls[0] == len(groups) > 0
