"""Whether the partition would keep every pod (``engine.evaluations._keeps_all``), the
gang resync's per-pod check before it shares or makes an evaluation, agrees with the rule as
stated one pod at a time, for any list of pods, well-formed or not (its checks are ordered for
speed: the order must not change an answer), and the planner shares evaluations only of plain
pods."""

from __future__ import annotations

import copy
from types import MappingProxyType
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import workload_map as wm
from tests.gangs import custom
from tests.gangs.cases import opted
from tests.gangs.owners import new_pod
from workload_map.engine import evaluations
from workload_map.engine.evaluations import Evaluations
from workload_map.engine.partition import partition_listed
from workload_map.gangs import plan

ODD = st.one_of(
    st.sampled_from(["", "x"]),
    st.none(),
    st.integers(0, 2),
    st.booleans(),
    st.just(["l"]),
    st.just({"k": "v"}),
)


def _alike(draw: st.DrawFn, items: st.SearchStrategy[Any]) -> list[Any]:
    """Often copies of one pod (a workload's pods look alike), one of them maybe replaced by
    another (the one pod that differs), else pods drawn apart."""
    how = draw(st.integers(0, 2))
    if how == 0:
        return draw(st.lists(items, max_size=5))
    one = draw(items)
    out = [copy.deepcopy(one) for _ in range(draw(st.integers(1, 5)))]
    if how == 2:  # one field of one copy set to something else
        path = draw(st.sampled_from(PATHS))
        value = draw(st.one_of(ODD, st.sampled_from(["v1", "Pod", "Succeeded", "w-uid", True])))
        where: Any = out[draw(st.integers(0, len(out) - 1))]
        for step in path[:-1]:
            where = where.get(step) if type(where) is dict else None
            if type(where) is list:
                where = where[0] if where else None
        if type(where) is dict:
            where[path[-1]] = value
    return out


#: the fields the check reads
PATHS = [
    ("apiVersion",),
    ("kind",),
    ("items",),
    ("metadata",),
    ("metadata", "uid"),
    ("metadata", "ownerReferences"),
    ("metadata", "ownerReferences", "uid"),
    ("metadata", "ownerReferences", "kind"),
    ("metadata", "ownerReferences", "controller"),
]


def _outcome(fn: Any, *args: Any) -> Any:
    try:
        return fn(*args)
    except Exception as err:  # the same error either way
        return type(err)


# -- engine.evaluations: whether the partition keeps every pod -------------------------------

WORKLOAD = {
    "apiVersion": "batch/v1",
    "kind": "Job",
    "metadata": {"name": "j", "namespace": "ns", "uid": "w-uid"},
}


@st.composite
def owned_pods(draw: st.DrawFn) -> Any:
    """A pod whose first owner reference is mostly the workload's controller reference (or a
    Job of a JobSet's), with something odd in one field now and then."""
    odd = draw(st.integers(0, 5)) == 0

    def field(good: Any) -> Any:
        return draw(ODD) if odd and draw(st.integers(0, 4)) == 0 else good

    ref: Any = {
        "apiVersion": "batch/v1",
        "kind": field(draw(st.sampled_from(["Job", "Job", "Job", "JobSet"]))),
        "name": "j",
        "uid": field(draw(st.sampled_from(["w-uid", "w-uid", "w-uid", "other-uid"]))),
        "controller": field(draw(st.sampled_from([True, True, True, True, False, 1, None]))),
    }
    more = draw(st.lists(st.just({"kind": "Job", "uid": "w-uid"}), max_size=1))
    refs: Any = [field(ref), *more]
    own = draw(
        st.sampled_from(["p-uid", "p-uid", "p-uid", "w-uid"])
    )  # (the workload's own: a cycle)
    meta: Any = {"name": "p", "namespace": "ns", "uid": field(own)}
    if draw(st.integers(0, 5)):
        meta["ownerReferences"] = field(refs)
    pod: dict[str, Any] = {"apiVersion": field("v1"), "kind": field("Pod"), "metadata": field(meta)}
    if draw(st.integers(0, 9)) == 0:
        pod["apiVersion"] = draw(st.sampled_from([None, ""]))
    if draw(st.integers(0, 9)) == 0:
        pod["items"] = field([])
    return pod


@st.composite
def owned_lists(draw: st.DrawFn) -> list[Any]:
    return _alike(draw, owned_pods())


def _keeps_all_per_pod(obj: dict[str, Any], uid: str, pods: list[Any]) -> bool | None:
    """The rule one pod at a time: a Pod whose controller reference names the workload is
    kept by its chain, the others are partitioned."""
    rest = _rest_per_pod(pods, uid, obj["kind"])
    if not rest:
        return True
    split = partition_listed(obj, rest)
    if split is None:
        return None
    return not split[1] and len(split[0]) == len(rest)


def _rest_per_pod(pods: list[Any], uid: str = "w-uid", kind: str = "Job") -> list[Any]:
    rest = []
    for pod in pods:
        meta = pod.get("metadata") if type(pod) is dict else None
        refs = meta.get("ownerReferences") if type(meta) is dict else None
        ref = refs[0] if type(refs) is list and refs else None
        if not (
            type(ref) is dict
            and ref.get("controller") is True
            and ref.get("uid") == uid
            and ref.get("kind") == kind
            and meta.get("uid") != uid  # type: ignore[union-attr]
            and pod.get("kind") == "Pod"
            and (pod.get("apiVersion") or "v1") == "v1"
            and type(pod.get("items")) is not list
        ):
            rest.append(pod)
    return rest


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(owned_lists())
def test_keeps_all_matches_the_per_pod_rule(listed: list[Any]) -> None:
    expected = _outcome(_keeps_all_per_pod, WORKLOAD, "w-uid", listed)
    assert _outcome(evaluations._keeps_all, WORKLOAD, "w-uid", listed) == expected
    assert _outcome(evaluations._keeps_all, WORKLOAD, "w-uid", tuple(listed)) == expected


# -- the planner: an evaluation is shared only of the watch caches' plain objects -------------


@pytest.mark.parametrize("plain", [True, False])
def test_the_planner_shares_evaluations_of_plain_pods_only(
    plain: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    karta = wm.load_karta(custom.karta(2))
    obj = opted(custom.partset("ps", [2, 2]))
    pods: list[Any] = [
        new_pod(obj, name=f"ps-{part}-{i}", labels={"example.wlmap.io/part": part})
        for part in ("a", "b")
        for i in range(2)
    ]
    if not plain:
        pods[-1] = MappingProxyType(pods[-1])  # (not one of the caches' dicts)
    asked: list[Any] = []
    real = Evaluations.workload
    monkeypatch.setattr(
        Evaluations, "workload", lambda self, *a, **kw: asked.append(a) or real(self, *a, **kw)
    )
    shared = plan(karta, obj, pods, evaluations=Evaluations())
    alone = plan(karta, obj, pods)
    assert len(asked) == (1 if plain else 0)
    assert [g.name for g in shared.gangs] == [g.name for g in alone.gangs]
    assert shared.objects == alone.objects
