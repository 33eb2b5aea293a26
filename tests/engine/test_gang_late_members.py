"""Alpha (``podGroups``) gangs whose member is an ancestor of components created after admission.

A grouping component whose own scale is the pods of one replica (an LWS ``group`` of ``size``)
counts the pods of its descendants, those ``created-after-admission`` names too; the minimum of
each replica's group must leave them out, report them (``createdLater``) and reserve their
requests (``minResources``), per group instance, with pods known and from the spec alone.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from tests.engine.conftest import karta_dict, root
from workload_map.engine import Workload
from workload_map.model.extensions import CREATED_LATER, GANG_MIN_MEMBER

SET = "example.com/set"
GROUP = "example.com/group-index"
ROLE = "example.com/role"


def _karta(late: str | None) -> dict[str, Any]:
    """A Thing of ``.spec.groups`` groups of ``.spec.size`` pods: one head, size-1 helpers."""
    karta = karta_dict(
        root(),
        {
            "name": "group",
            "ownerRef": "thing",
            "scaleDefinition": {"replicasPath": ".spec.size"},
            "podSelector": {"replicaSelector": {"keyPath": f'.metadata.labels["{GROUP}"]'}},
        },
        {
            "name": "head",
            "ownerRef": "group",
            "specDefinition": {"podTemplateSpecPath": ".spec.head"},
            "scaleDefinition": {"replicasPath": ".spec.groups"},
            "podSelector": {
                "componentTypeSelector": {"keyPath": f'.metadata.labels["{ROLE}"]', "value": "head"}
            },
        },
        {
            "name": "helper",
            "ownerRef": "group",
            "specDefinition": {"podTemplateSpecPath": ".spec.helper"},
            "scaleDefinition": {"replicasPath": ".spec.groups * (.spec.size - 1)"},
            "podSelector": {
                "componentTypeSelector": {
                    "keyPath": f'.metadata.labels["{ROLE}"]',
                    "value": "helper",
                }
            },
        },
        gang={
            "podGroups": [
                {
                    "name": "group",
                    "members": [
                        {
                            "componentName": "group",
                            "groupByKeyPaths": [
                                f'.metadata.labels["{SET}"]',
                                f'.metadata.labels["{GROUP}"]',
                            ],
                        }
                    ],
                }
            ]
        },
    )
    if late is not None:
        karta["metadata"]["annotations"] = {CREATED_LATER + "helper": late}
    return karta


def _template(cpu: str, gpus: int) -> dict[str, Any]:
    requests: dict[str, Any] = {"cpu": cpu}
    if gpus:
        requests["nvidia.com/gpu"] = str(gpus)
    return {
        "spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": requests}}]}
    }


def _obj(groups: int, size: int, policy: str = "Later") -> dict[str, Any]:
    return {
        "apiVersion": "example.com/v1",
        "kind": "Thing",
        "metadata": {"name": "t", "namespace": "ns", "uid": "u"},
        "spec": {
            "groups": groups,
            "size": size,
            "policy": policy,
            "head": _template("2", 0),
            "helper": _template("4", 1),
        },
    }


def _pods(groups: int, size: int, helpers: bool) -> list[dict[str, Any]]:
    out = []
    for g in range(groups):
        for w in range(size if helpers else 1):
            labels = {SET: "t", GROUP: str(g), ROLE: "head" if w == 0 else "helper"}
            out.append(
                {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "metadata": {
                        "name": f"t-{g}-{w}",
                        "namespace": "ns",
                        "labels": labels,
                        "ownerReferences": [
                            {
                                "apiVersion": "example.com/v1",
                                "kind": "Thing",
                                "name": "t",
                                "uid": "u",
                                "controller": True,
                            }
                        ],
                    },
                    "spec": {"containers": [{"name": "c"}]},
                    "status": {"phase": "Pending"},
                }
            )
    return out


LATER = '.spec.policy == "Later"'


@pytest.mark.parametrize("pods_known", [False, True])
def test_late_descendants_lower_each_groups_own_scale(pods_known: bool) -> None:
    obj = _obj(groups=3, size=4)
    pods = _pods(3, 4, helpers=False) if pods_known else None
    groups = Workload(_karta(LATER), obj, pods).pod_groups()
    assert len(groups) == 3
    for group in groups:
        assert group.min_member == 1, group.rule
        assert group.created_later == 3
        assert "less 3 created after admission" in group.rule
        # every pod of one group is reserved for: its head and its 3 helpers
        assert group.min_resources is not None
        assert group.min_resources["cpuMillis"] == 2000 + 3 * 4000
        assert group.min_resources["byResource"] == {"nvidia.com/gpu": 3}


@pytest.mark.parametrize("pods_known", [False, True])
def test_without_late_pods_each_group_needs_all_of_its_pods(pods_known: bool) -> None:
    obj = _obj(groups=2, size=3, policy="Together")
    pods = _pods(2, 3, helpers=True) if pods_known else None
    for karta in (_karta(LATER), _karta(None)):
        groups = Workload(karta, obj, pods).pod_groups()
        assert [(g.min_member, g.created_later, g.min_resources) for g in groups] == [
            (3, 0, None),
            (3, 0, None),
        ]


def test_the_helpers_arriving_later_join_the_same_group() -> None:
    obj = _obj(groups=2, size=3)
    wl = Workload(_karta(LATER), obj, _pods(2, 3, helpers=True))
    groups = wl.pod_groups()
    assert [len(g.pods) for g in groups] == [3, 3]
    assert [g.min_member for g in groups] == [1, 1]


def test_a_group_of_one_pod_has_nothing_created_later() -> None:
    groups = Workload(_karta(LATER), _obj(groups=2, size=1), None).pod_groups()
    assert [(g.min_member, g.created_later, g.min_resources) for g in groups] == [
        (1, 0, None),
        (1, 0, None),
    ]


def test_uneven_requests_over_groups_reserve_nothing_but_still_lower_the_minimum() -> None:
    # 5 helpers over 2 groups: not one per-group count, so no per-group reservation is stated
    karta = _karta(LATER)
    helper = karta["spec"]["structureDefinition"]["childComponents"][2]
    helper["scaleDefinition"]["replicasPath"] = "5"
    groups = Workload(karta, _obj(groups=2, size=4), _pods(2, 4, helpers=False)).pod_groups()
    assert [g.min_member for g in groups] == [1, 1]  # 4 - ceil(5 / 2)
    assert all(g.created_later == 3 and g.min_resources is None for g in groups)


def test_the_catalog_lws_under_leader_ready_needs_its_leader_alone() -> None:
    from workload_map.catalog import catalog

    obj: dict[str, Any] = {
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "metadata": {"name": "vllm", "namespace": "serving", "uid": "u-lws"},
        "spec": {
            "replicas": 2,
            "startupPolicy": "LeaderReady",
            "leaderWorkerTemplate": {"size": 4, "workerTemplate": _template("8", 1)},
        },
    }
    karta = catalog.for_api_version("leaderworkerset.x-k8s.io/v1", "LeaderWorkerSet")
    assert karta is not None
    ready = Workload(karta, obj).pod_groups()
    assert [(g.min_member, g.created_later) for g in ready] == [(1, 3), (1, 3)]
    assert all(g.min_resources and g.min_resources["cpuMillis"] == 32000 for g in ready)
    created = copy.deepcopy(obj)
    created["spec"]["startupPolicy"] = "LeaderCreated"
    groups = Workload(karta, created).pod_groups()
    assert [(g.min_member, g.created_later, g.min_resources) for g in groups] == [
        (4, 0, None),
        (4, 0, None),
    ]
    del created["spec"]["startupPolicy"]  # the API's default is LeaderCreated
    assert [g.min_member for g in Workload(karta, created).pod_groups()] == [4, 4]


# -- gang-min-member on the alpha form: each group's own minimum ---------------------------------
def _stated(expr: str) -> dict[str, Any]:
    karta = _karta(None)
    karta["metadata"]["annotations"] = {GANG_MIN_MEMBER: expr}
    return karta


@pytest.mark.parametrize("pods_known", [False, True])
def test_a_stated_minimum_applies_to_each_alpha_group(pods_known: bool) -> None:
    obj = _obj(groups=3, size=4)
    obj["spec"]["min"] = 2
    pods = _pods(3, 4, helpers=True) if pods_known else None
    groups = Workload(_stated(".spec.min"), obj, pods).pod_groups()
    assert [g.min_member for g in groups] == [2, 2, 2]
    assert all("stated by the workload (.spec.min = 2)" in g.rule for g in groups)


def test_a_stated_minimum_is_capped_at_one_groups_pods() -> None:
    obj = _obj(groups=2, size=3)
    obj["spec"]["min"] = 10
    (first, second) = Workload(_stated(".spec.min"), obj, _pods(2, 3, helpers=True)).pod_groups()
    assert (first.min_member, second.min_member) == (3, 3)
    assert "capped at the 3 pods of the group" in first.rule


def test_a_stated_null_keeps_the_computed_minimum_and_validates_clean() -> None:
    from workload_map import load_karta
    from workload_map.model.extensions import check

    karta = _stated('if .spec.policy == "Later" then 1 else null end')
    obj = _obj(groups=2, size=3, policy="Together")
    assert [g.min_member for g in Workload(karta, obj).pod_groups()] == [3, 3]
    obj["spec"]["policy"] = "Later"
    assert [g.min_member for g in Workload(karta, obj).pod_groups()] == [1, 1]
    assert check(load_karta(karta)) == []  # no extension-no-pod-group warning on the alpha form


def test_a_stated_minimum_without_gang_instructions_still_warns() -> None:
    from workload_map import load_karta
    from workload_map.model.extensions import check

    karta = _stated("1")
    del karta["spec"]["optimizationInstructions"]
    codes = [f.code for f in check(load_karta(karta))]
    assert [str(c) for c in codes] == ["extension-no-pod-group"]
