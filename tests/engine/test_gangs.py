"""Gangs: grouping, names, minimums, and the reference's subtree-scale rule (§8 items 33, 36, 37)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.engine.conftest import karta_dict, root, workload
from workload_map.engine import ExtractionError, Workload
from workload_map.engine.gangs import is_dns1123_subdomain

OBJ_META = {"apiVersion": "example.com/v1", "kind": "Thing", "metadata": {"name": "x", "uid": "u1"}}


def _child(
    name: str,
    owner: str = "thing",
    *,
    pods: bool = True,
    scale: dict[str, str] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    out: dict[str, Any] = {"name": name, "ownerRef": owner, **extra}
    if pods:
        out["specDefinition"] = {"podSpecPath": f".spec.{name}.pod"}
        out.setdefault("podSelector", {})["componentTypeSelector"] = {
            "keyPath": ".metadata.labels.role",
            "value": name,
        }
    if scale:
        out["scaleDefinition"] = scale
    return out


def _wl(
    *children: dict[str, Any],
    spec: dict[str, Any],
    gang: Any = None,
    pods: Any = None,
    root_scale: dict[str, str] | None = None,
    validate: bool = True,
) -> Workload:
    r = root(scaleDefinition=root_scale) if root_scale else root()
    spec = dict(spec)
    for child in children:  # the object describes each pod-bearing child's pods
        if "specDefinition" in child and isinstance(spec.get(child["name"]), dict):
            spec[child["name"]] = {"pod": {"containers": [{"name": "c"}]}, **spec[child["name"]]}
    return Workload(
        karta_dict(r, *children, gang=gang), {**OBJ_META, "spec": spec}, pods, validate=validate
    )


def _pod(name: str, **labels: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": labels}}


# -- CalculateSubtreeScale (reference rule) ------------------------------------------------------
def test_min_replicas_preferred_zero_falls_back_missing_is_zero() -> None:
    spec = {"a": {"r": 4, "m": 2}, "b": {"r": 3, "m": 0}, "c": {}}
    scale = {"replicasPath": ".spec.{n}.r", "minReplicasPath": ".spec.{n}.m"}
    children = [_child(n, scale={k: v.format(n=n) for k, v in scale.items()}) for n in "abc"]
    wl = _wl(*children, spec=spec)
    assert [wl.subtree_scale(n) for n in "abc"] == [2, 3, 0]


def test_parent_times_sum_of_children() -> None:
    wl = _wl(
        _child("group", pods=False, scale={"replicasPath": ".spec.group.r"}),
        _child("worker", "group", scale={"replicasPath": ".spec.worker.r"}),
        _child("master", "group", scale={"replicasPath": ".spec.master.r"}),
        spec={"group": {"r": 2}, "worker": {"r": 4}, "master": {"r": 1}},
    )
    assert wl.subtree_scale("group") == 10
    assert wl.subtree_scale("thing") == 10  # the root has no scale: it carries the sum


def test_array_children_sum_then_multiply() -> None:
    child = _child(
        "w",
        "group",
        scale={"replicasPath": ".spec.w[].r"},
        instanceIdPath=".spec.w[].n",
        podSelector={"componentInstanceSelector": {"idPath": ".metadata.labels.n"}},
    )
    wl = _wl(
        _child("group", pods=False, scale={"replicasPath": ".spec.g"}),
        child,
        spec={"g": 2, "w": [{"n": "a", "r": 3}, {"n": "b", "r": 2}]},
    )
    assert wl.subtree_scale("w") == 5
    assert wl.subtree_scale("group") == 10
    assert wl.subtree_scale("w", "b") == 2


def test_children_without_scale_use_the_parents() -> None:
    wl = _wl(
        _child("group", pods=False, scale={"replicasPath": ".spec.g"}),
        _child("a", "group"),
        _child("b", "group"),
        spec={"g": 3},
    )
    assert wl.subtree_scale("group") == 3


def test_no_scale_anywhere_counts_leaves() -> None:
    wl = _wl(
        _child("mid", pods=False),
        _child("a", "mid"),
        _child("b", "mid"),
        _child("c", "mid"),
        spec={},
    )
    assert wl.subtree_scale("thing") == 3


def test_no_scale_anywhere_counts_only_pod_bearing_leaves() -> None:
    # the reference's leaves are components with a pod definition: a childless grouping
    # component adds nothing
    wl = _wl(
        _child("mid", pods=False),
        _child("a", "mid"),
        _child("empty", "mid", pods=False),
        spec={},
    )
    assert wl.subtree_scale("thing") == 1
    assert wl.subtree_scale("empty") == 0


def test_by_leaves_with_instances_and_specific_ids() -> None:
    child = _child(
        "svc",
        instanceIdPath=".spec.s | to_entries[] | .key",
        podSelector={"componentInstanceSelector": {"idPath": ".metadata.labels.s"}},
    )
    wl = _wl(child, spec={"s": {"api": {}, "cache": {}, "worker": {}}})
    assert wl.subtree_scale("svc") == 3
    assert wl.subtree_scale("svc", "cache") == 1
    with pytest.raises(ExtractionError, match="instance id nope not found"):
        wl.subtree_scale("svc", "nope")
    with pytest.raises(ExtractionError, match="instance id is empty"):
        wl.subtree_scale("svc", "")


def test_map_instance_by_definition() -> None:
    child = _child(
        "svc",
        instanceIdPath=".spec.s | to_entries[] | .key",
        scale={"replicasPath": ".spec.s[] | .r", "minReplicasPath": ".spec.s[] | .m"},
        podSelector={"componentInstanceSelector": {"idPath": ".metadata.labels.s"}},
    )
    wl = _wl(child, spec={"s": {"processor": {"r": 5, "m": 2}, "api": {"r": 1}}})
    assert wl.subtree_scale("svc", "processor") == 2
    assert wl.subtree_scale("svc") == 3
    with pytest.raises(ExtractionError, match="instance id zzz not found"):
        wl.subtree_scale("svc", "zzz")


# -- grouping --------------------------------------------------------------------------------------
GANG_FILTERS = {
    "podGroups": [
        {
            "name": "gpu",
            "members": [
                {
                    "componentName": "w",
                    "filters": ['.metadata.labels.tier == "gpu"'],
                    "groupByKeyPaths": [".metadata.labels.g"],
                }
            ],
        },
        {
            "name": "cpu",
            "members": [
                {
                    "componentName": "w",
                    "filters": ['.metadata.labels.tier == "cpu"'],
                    "groupByKeyPaths": ['.metadata.labels.g + "-cpu"'],
                }
            ],
        },
        {"name": "any", "members": [{"componentName": "thing", "groupByKeyPaths": ['"fallback"']}]},
    ]
}


def _grouped(pods: list[dict[str, Any]], gang: Any = GANG_FILTERS) -> dict[str, str | None]:
    wl = _wl(
        _child("w", scale={"replicasPath": ".spec.w.r"}), spec={"w": {"r": 2}}, gang=gang, pods=pods
    )
    assignments = {e["pod"]: e["gang"]["group"] for e in wl.explain()}
    return assignments


def test_filters_choose_between_groups_and_fall_back_to_the_ancestor() -> None:
    got = _grouped(
        [
            _pod("p1", role="w", tier="gpu", g="x"),
            _pod("p2", role="w", tier="cpu", g="x"),
            _pod("p3", role="w", tier="other", g="x"),
            _pod("p4", role="w", g="x"),
        ]
    )
    assert got == {
        "p1": "pg-u1-x",
        "p2": "pg-u1-x-cpu",
        "p3": "pg-u1-fallback",
        "p4": "pg-u1-fallback",
    }


def test_filter_with_several_results_is_an_error_and_non_booleans_are_false() -> None:
    gang = {
        "podGroups": [
            {
                "name": "g",
                "members": [
                    {"componentName": "w", "filters": [".metadata.labels[]"], "groupByKeyPaths": []}
                ],
            }
        ]
    }
    wl = _wl(_child("w"), spec={"w": {}}, gang=gang, pods=[_pod("p", role="w", x="y")])
    [entry] = wl.explain()
    assert (
        entry["gang"]["group"] is None
        and "expected single query result, got 2" in entry["gang"]["reason"]
    )
    gang["podGroups"][0]["members"][0]["filters"] = [".metadata.labels.role"]
    wl = _wl(_child("w"), spec={"w": {}}, gang=gang, pods=[_pod("p", role="w")])
    assert wl.explain()[0]["gang"]["reason"] == "the filters of every candidate pod group failed"


def test_filters_are_and_ed() -> None:
    gang = {
        "podGroups": [
            {
                "name": "g",
                "members": [
                    {
                        "componentName": "w",
                        "filters": ['.metadata.labels.a == "1"', '.metadata.labels.b == "1"'],
                        "groupByKeyPaths": [],
                    }
                ],
            }
        ]
    }
    wl = _wl(
        _child("w"),
        spec={"w": {}},
        gang=gang,
        pods=[_pod("yes", role="w", a="1", b="1"), _pod("no", role="w", a="1", b="2")],
    )
    assert {e["pod"]: e["gang"]["group"] for e in wl.explain()} == {"yes": "pg-u1", "no": None}


def test_group_key_errors_leave_the_pod_ungrouped() -> None:
    gang = {
        "podGroups": [
            {
                "name": "g",
                "members": [
                    {"componentName": "w", "groupByKeyPaths": [".metadata.labels.missing"]}
                ],
            }
        ]
    }
    wl = _wl(_child("w"), spec={"w": {}}, gang=gang, pods=[_pod("p", role="w")])
    assert wl.pod_groups() == []
    assert (
        'failed to extract group key from path ".metadata.labels.missing"'
        in wl.explain()[0]["gang"]["reason"]
    )


def test_no_gang_instructions() -> None:
    wl = _wl(_child("w"), spec={"w": {}}, pods=[_pod("p", role="w")])
    assert wl.pod_groups() == []
    assert wl.explain()[0]["gang"]["reason"] == "the definition has no gang-scheduling instructions"


def test_invalid_names_are_flagged() -> None:
    gang = {
        "podGroups": [
            {
                "name": "g",
                "members": [{"componentName": "w", "groupByKeyPaths": [".metadata.labels.g"]}],
            }
        ]
    }
    wl = _wl(_child("w"), spec={"w": {}}, gang=gang, pods=[_pod("p", role="w", g="Bad_Key")])
    [group] = wl.pod_groups()
    assert group.name == "pg-u1-Bad_Key" and "DNS-1123" in (group.error or "")
    assert (
        is_dns1123_subdomain("pg-abc-0.x")
        and not is_dns1123_subdomain("-a")
        and not is_dns1123_subdomain("a" * 254)
    )


# -- minimum members ------------------------------------------------------------------------------
def test_group_spanning_components_counts_them_all() -> None:
    gang = {
        "podGroups": [
            {
                "name": "job",
                "members": [
                    {"componentName": "master", "groupByKeyPaths": [".metadata.labels.job"]},
                    {"componentName": "worker", "groupByKeyPaths": [".metadata.labels.job"]},
                ],
            }
        ]
    }
    wl = _wl(
        _child("master", scale={"replicasPath": ".spec.master.r // 1"}),
        _child("worker", scale={"replicasPath": ".spec.worker.r"}),
        spec={"master": {}, "worker": {"r": 3}},
        gang=gang,
        pods=[_pod("w0", role="worker", job="j"), _pod("m0", role="master", job="j")],
    )
    [group] = wl.pod_groups()
    # the reference would take the first pod's own component: worker -> 3
    assert group.min_member == 4 and sorted(group.pods) == ["m0", "w0"]


def test_leader_worker_group_is_size_and_reference_rule_differs() -> None:
    wl = workload("leaderworker")
    assert {g.name: g.min_member for g in wl.pod_groups()} == {
        "pg-4444-dddd-vllm-0": 3,
        "pg-4444-dddd-vllm-1": 3,
    }
    assert wl.subtree_scale("group") == 3 * (2 + 4)  # the reference's inconsistent 18


def test_replica_share_without_own_scale_divides_by_observed_replicas() -> None:
    gang = {
        "podGroups": [
            {
                "name": "r",
                "members": [{"componentName": "w", "groupByKeyPaths": [".metadata.labels.r"]}],
            }
        ]
    }
    child = _child(
        "w",
        scale={"replicasPath": ".spec.w.r"},
        podSelector={"replicaSelector": {"keyPath": ".metadata.labels.r"}},
    )
    wl = _wl(
        child,
        spec={"w": {"r": 6}},
        gang=gang,
        pods=[_pod(f"p{i}", role="w", r=str(i % 3)) for i in range(6)],
    )
    assert [(g.name, g.min_member) for g in wl.pod_groups()] == [
        ("pg-u1-0", 2),
        ("pg-u1-1", 2),
        ("pg-u1-2", 2),
    ]


def test_v2_group_without_subgroups_and_bad_topology() -> None:
    gang = {"podGroup": {"name": "all", "topology": {"topologyName": "t"}}}
    wl = _wl(
        _child("a", scale={"replicasPath": ".spec.a.r"}),
        _child("b"),
        spec={"a": {"r": 2}, "b": {}},
        gang=gang,
        pods=[_pod("p", role="a"), _pod("q", role="zzz")],
    )
    [group] = wl.pod_groups()
    assert (group.name, group.min_member, group.pods) == ("pg-u1-all", 3, ("p",))
    assert group.error is not None and "at least one" in group.error


def test_v2_unknown_subgroup_component_is_reported() -> None:
    gang = {
        "podGroup": {
            "name": "all",
            "subGroups": [{"componentName": "ghost"}, {"componentName": "a"}],
        }
    }
    # our validator rejects it; a definition evaluated without validation still gets a clear answer
    wl = _wl(_child("a"), spec={"a": {}}, gang=gang, pods=[_pod("p", role="a")], validate=False)
    [group] = wl.pod_groups()
    subs = {s.name: s for s in group.sub_groups}
    assert subs["ghost"].error == "subgroup component 'ghost' is not defined"
    assert subs["a"].pods == ("p",) and group.min_member == 1
