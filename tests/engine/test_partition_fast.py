"""``partition_pods``' one pass agrees with the rule read pod by pod (property tests).

``partition_pods`` decides each pod as it comes, as if the file held only pods, with the owner
label check inlined; the first object of another kind sends every pod through its chain after
the pass. The reference below is the rule as its docstring states it, one pod at a time, over
the complete file: a pod whose references may prove something (the file has other objects, or
a reference names the workload's kind or cannot be read) is decided by its chain through those
objects; otherwise, and when the chain leaves the file, its operator's owner labels decide
(``label_verdict``'s reasons). For any file, well-formed or not, both give the same
candidates and the same exclusions with the same reasons, in the same order.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from workload_map.engine import Workload, partition
from workload_map.engine.objects import plain_items
from workload_map.engine.owner_labels import label_checker
from workload_map.engine.owners import self_ref
from workload_map.engine.partition import (
    _LOOP_AT_MOST,
    _chain_verdict,
    _Index,
    partition_listed,
    partition_pods,
)

JS_NAME = "jobset.sigs.k8s.io/jobset-name"
JS_UID = "jobset.sigs.k8s.io/jobset-uid"
KF_NAME = "training.kubeflow.org/job-name"
KF_KIND = "training.kubeflow.org/operator-name"

WORKLOADS: list[dict[str, Any]] = [
    {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {"name": "js", "namespace": "ns", "uid": "u-js"},
    },
    # no uid: the uid label is evidence of some workload, never against this one
    {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "metadata": {"name": "js"}},
    # a kind label, one operator of several
    {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {"name": "pt", "namespace": "ns", "uid": "u-pt"},
    },
    # two name labels and two uid labels
    {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j", "uid": "u-j"}},
    # a kind without owner labels
    {"apiVersion": "example.com/v1", "kind": "Thing", "metadata": {"name": "t", "uid": "u-t"}},
]

#: a controller reference to another JobSet than the workloads'
OTHER_JOBSET = {
    "apiVersion": "jobset.x-k8s.io/v1alpha2",
    "kind": "JobSet",
    "name": "other",
    "uid": "u-other",
    "controller": True,
}
ODD = st.one_of(st.none(), st.integers(0, 2), st.booleans(), st.just(["x"]), st.just({"a": 1}))
LABEL_VALUES = {
    JS_NAME: ["js", "other", ""],
    JS_UID: ["u-js", "u-other"],
    KF_NAME: ["pt", "other"],
    KF_KIND: ["pytorchjob-controller", "tfjob-controller"],
    "batch.kubernetes.io/job-name": ["j", "other"],
    "job-name": ["j"],
    "controller-uid": ["u-j", "u-x"],
}


@st.composite
def labels(draw: st.DrawFn) -> Any:
    if draw(st.integers(0, 7)) == 0:
        return draw(st.one_of(st.none(), st.just("s"), st.just(["x"])))
    return {
        key: draw(st.sampled_from(good) if draw(st.integers(0, 4)) else ODD)
        for key, good in LABEL_VALUES.items()
        if draw(st.integers(0, 2)) == 0
    }


@st.composite
def reference(draw: st.DrawFn) -> Any:
    if draw(st.integers(0, 9)) == 0:
        return draw(st.one_of(st.none(), st.just("ref"), st.just(3)))
    kind = draw(st.sampled_from(["Job", "JobSet", "PyTorchJob", "ReplicaSet", "Thing"]))
    ref: dict[str, Any] = {
        "apiVersion": draw(
            st.sampled_from(["batch/v1", "jobset.x-k8s.io/v1alpha2", "kubeflow.org/v1"])
        ),
        "kind": kind,
        "name": draw(st.sampled_from(["js", "pt", "j", "t", "owner", "other"])),
    }
    if draw(st.booleans()):
        ref["uid"] = draw(st.sampled_from(["u-js", "u-pt", "u-j", "u-t", "u-owner", "u-other"]))
    if draw(st.integers(0, 3)):
        ref["controller"] = draw(st.sampled_from([True, True, False, "true"]))
    return ref


@st.composite
def pod(draw: st.DrawFn) -> Any:
    meta: Any = {"name": draw(st.sampled_from(["p0", "p1", "p2"]))}
    if draw(st.integers(0, 4)):
        meta["labels"] = draw(labels())
    if draw(st.booleans()):
        meta["ownerReferences"] = draw(
            st.one_of(st.lists(reference(), max_size=2), st.sampled_from([None, "refs", {}]))
        )
    if draw(st.integers(0, 11)) == 0:
        meta = draw(st.sampled_from([None, "m", 3]))
    obj: dict[str, Any] = {"kind": "Pod", "metadata": meta}
    version = draw(st.sampled_from(["v1", "v1", None, "", "apps/v1"]))
    if version is not None:
        obj["apiVersion"] = version
    return obj


@st.composite
def link(draw: st.DrawFn) -> Any:
    """An object of another kind (a chain link), sometimes not even an object."""
    if draw(st.integers(0, 5)) == 0:
        return draw(st.sampled_from([None, "text", 7]))
    kind = draw(st.sampled_from(["Job", "JobSet", "ReplicaSet"]))
    name = draw(st.sampled_from(["owner", "js", "other"]))
    meta: dict[str, Any] = {"name": name, "uid": f"u-{name}"}
    if draw(st.booleans()):
        meta["ownerReferences"] = draw(st.lists(reference(), max_size=1))
    return {"apiVersion": "batch/v1", "kind": kind, "metadata": meta}


def _reference_rule(
    workload: dict[str, Any], objects: list[Any]
) -> tuple[list[Any], list[tuple[Any, str]]]:
    """The rule pod by pod over the whole file (see the module docstring)."""
    items = [o for o in objects if isinstance(o, Mapping)]
    pods = [o for o in items if o.get("kind") == "Pod" and (o.get("apiVersion") or "v1") == "v1"]
    links = [o for o in items if not any(o is p for p in pods)]
    index, top, check = _Index(links), self_ref(workload), label_checker(workload)
    candidates: list[Any] = []
    excluded: list[tuple[Any, str]] = []
    for obj in pods:
        meta = obj.get("metadata")
        meta = meta if isinstance(meta, Mapping) else None
        refs = meta.get("ownerReferences") if meta is not None else None
        reason = None
        if refs and type(refs) is list:
            proves = bool(links) or any(
                type(r) is not dict or r.get("kind") == top.kind for r in refs
            )
            if proves:
                reason, reached = _chain_verdict(obj, index, top)
                if reached:
                    candidates.append(obj)
                    continue
        if reason is None and check is not None:
            by_labels, why = check(meta.get("labels") if meta is not None else None)
            if by_labels is False:
                reason = why
        if reason is None:
            candidates.append(obj)
        else:
            excluded.append((obj, reason))
    return candidates, excluded


def _same(
    got: tuple[list[Any], list[tuple[Any, str]]], want: tuple[list[Any], list[tuple[Any, str]]]
) -> None:
    assert [id(o) for o in got[0]] == [id(o) for o in want[0]]
    assert [(id(o), why) for o, why in got[1]] == [(id(o), why) for o, why in want[1]]


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, len(WORKLOADS) - 1), st.lists(pod(), max_size=6))
def test_a_file_of_pods_is_decided_in_one_pass(which: int, pods: list[Any]) -> None:
    workload = WORKLOADS[which]
    _same(partition_pods(workload, pods), _reference_rule(workload, pods))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.integers(0, len(WORKLOADS) - 1),
    st.lists(st.one_of(pod(), pod(), link()), min_size=1, max_size=7),
)
def test_a_link_anywhere_sends_every_pod_through_its_chain(which: int, objects: list[Any]) -> None:
    """Links before, between and after the pods: the pods decided before the first link are
    decided again by their chains."""
    workload = WORKLOADS[which]
    _same(partition_pods(workload, objects), _reference_rule(workload, objects))


#: items plain_items converts or unwraps: partition_listed leaves them to it
LISTS = st.sampled_from(
    [
        {"kind": "PodList", "apiVersion": "v1", "items": []},
        {"kind": "List", "items": [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "l"}}]},
        {"items": [{"kind": "Pod", "metadata": {"name": "m"}}]},
        {"kind": "Thing", "apiVersion": "x/v1", "items": []},
    ]
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.integers(0, len(WORKLOADS) - 1),
    st.lists(st.one_of(pod(), pod(), link(), LISTS), max_size=7),
)
def test_a_listed_file_is_partitioned_as_its_plain_items(which: int, objects: list[Any]) -> None:
    """``partition_listed`` (Workload's pass over a plain list, without ``plain_items``) gives
    what ``partition_pods`` gives on ``plain_items`` of the list, or leaves the list to them:
    only when an item is not a plain object, or may be a list object."""
    workload = WORKLOADS[which]
    got = partition_listed(workload, objects)
    plain = all(
        type(o) is dict and (o.get("kind") == "Pod" or type(o.get("items")) is not list)
        for o in objects
    )
    assert (got is not None) == plain
    if got is not None:
        _same(got, partition_pods(workload, plain_items(objects)))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(pod(), pod(), link(), LISTS), max_size=6))
def test_a_workload_of_a_listed_file_is_the_workload_of_its_items(objects: list[Any]) -> None:
    """A Workload given a list (the one-pass partition) holds the same pods, candidates and
    exclusions as one given the same objects as an iterator (plain_items first)."""
    obj = {**WORKLOADS[0], "spec": {}}
    karta = {
        "apiVersion": "run.ai/v1alpha1",
        "kind": "Karta",
        "metadata": {"name": "js"},
        "spec": {
            "structureDefinition": {
                "rootComponent": {
                    "name": "js",
                    "kind": {"group": "jobset.x-k8s.io", "version": "v1alpha2", "kind": "JobSet"},
                }
            }
        },
    }
    try:
        want = Workload(karta, obj, iter(objects))
    except Exception as err:  # an item plain_items refuses: the list is refused the same way
        try:
            Workload(karta, obj, objects)
        except Exception as again:
            assert str(again) == str(err)
            return
        raise AssertionError("the list was accepted") from err
    got = Workload(karta, obj, objects)
    assert got.pods == want.pods
    assert [id(p) for p in got.candidate_pods] == [id(p) for p in want.candidate_pods]
    assert got.excluded == want.excluded


def test_a_link_after_the_pods_changes_their_verdict() -> None:
    """A pod whose chain leaves a file of pods is kept by its labels; the same pod is excluded
    once its owner, owned by another JobSet, follows it in the file."""
    workload = WORKLOADS[0]
    member = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "p",
            "labels": {JS_NAME: "js"},
            "ownerReferences": [
                {
                    "apiVersion": "batch/v1",
                    "kind": "Job",
                    "name": "j",
                    "uid": "u-j",
                    "controller": True,
                }
            ],
        },
    }
    assert partition_pods(workload, [member]) == ([member], [])
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": "j",
            "uid": "u-j",
            "ownerReferences": [OTHER_JOBSET],
        },
    }
    candidates, excluded = partition_pods(workload, [member, job])
    assert candidates == []
    assert excluded == [(member, "owned by another JobSet: other")]


@st.composite
def plain_pod(draw: st.DrawFn) -> Any:
    """A pod as a cluster lists it (a plain object, metadata an object, references objects):
    what the C-level check (``_all_candidates``) decides; only its labels and references vary,
    so lists of them reach that check and, where one would be excluded, the loop."""
    meta: dict[str, Any] = {"name": draw(st.sampled_from(["p0", "p1", "p2"]))}
    if draw(st.integers(0, 5)):
        meta["labels"] = {
            key: draw(st.sampled_from(good))
            for key, good in LABEL_VALUES.items()
            if draw(st.integers(0, 2)) == 0
        }
    elif draw(st.booleans()):
        meta["labels"] = None
    if draw(st.booleans()):
        refs = draw(st.lists(reference().filter(lambda r: type(r) is dict), max_size=2))
        # an empty or odd value where the list goes: the loop ignores it (no chain), and the
        # check reads only the values it does not ignore
        odd = draw(st.sampled_from([None, None, {}, "", 0, False, "refs", {"a": 1}]))
        meta["ownerReferences"] = refs if refs or draw(st.booleans()) else odd
    obj: dict[str, Any] = {"kind": "Pod", "metadata": meta}
    if draw(st.integers(0, 3)):
        obj["apiVersion"] = "v1"
    return obj


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, len(WORKLOADS) - 1), st.lists(plain_pod(), min_size=1, max_size=4))
def test_a_list_of_plain_pods_is_decided_as_pod_by_pod(which: int, pods: list[Any]) -> None:
    """Lists of pods a cluster would list: the C-level check that every pod is a candidate
    keeps them all only when the rule read pod by pod keeps them all (references naming the
    workload's kind, name, uid and kind labels naming others reach the loop)."""
    workload = WORKLOADS[which]
    # as they are (decided by the loop) and repeated past what the loop alone decides
    for listed in (pods, _long(pods)):
        want = _reference_rule(workload, listed)
        _same(partition_pods(workload, listed), want)
        got = partition_listed(workload, listed)
        assert got is not None
        _same(got, want)


def _long(pods: list[Any]) -> list[Any]:
    """``pods`` repeated into a list the C-level check (``_all_candidates``) decides."""
    return pods * (_LOOP_AT_MOST // len(pods) + 1)


def test_a_small_workloads_pods_cost_no_checker_and_no_column_passes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The pods of a small workload (a get row's JobSet: two pods, plain labels) are decided
    by the loop alone: no label checker is made and no C-level pass over the list runs (both
    cost more than the loop for a few pods); a long list still takes the C-level check."""
    made: list[str] = []
    for name in ("label_checker", "_all_candidates"):
        real = getattr(partition, name)
        monkeypatch.setattr(
            partition, name, lambda *a, _real=real, _name=name: made.append(_name) or _real(*a)
        )
    labels = {JS_NAME: "js", JS_UID: "u-js"}
    pods = [{"kind": "Pod", "metadata": {"name": f"p{i}", "labels": labels}} for i in range(2)]
    got = partition_listed(WORKLOADS[0], pods)
    assert got == (pods, [])
    assert made == []
    assert partition_listed(WORKLOADS[0], _long(pods)) == (_long(pods), [])
    assert made == ["_all_candidates"]


def test_plain_pods_the_check_leaves_to_the_loop() -> None:
    """One pod among plain ones whose kind label names another operator, or whose controller
    is another workload of the same kind: excluded, with the loop's reason."""
    plain = {"kind": "Pod", "apiVersion": "v1", "metadata": {"name": "a", "labels": {}}}
    other_kind = {
        "kind": "Pod",
        "metadata": {"name": "b", "labels": {KF_NAME: "pt", KF_KIND: "tfjob-controller"}},
    }
    owned = {
        "kind": "Pod",
        "metadata": {
            "name": "c",
            "ownerReferences": [OTHER_JOBSET],
        },
    }
    for workload, odd, why in (
        (WORKLOADS[2], other_kind, f"its label {KF_KIND}=tfjob-controller names a workload"),
        (WORKLOADS[0], owned, "owned by another JobSet: other"),
    ):
        for extra in (0, _LOOP_AT_MOST):  # the loop alone, and the C-level check first
            listed = [plain, odd, plain, *[plain] * extra]
            got = partition_listed(workload, listed)
            assert got is not None
            assert [id(p) for p in got[0]] == [id(plain)] * (2 + extra)
            assert [(id(p), reason[: len(why)]) for p, reason in got[1]] == [(id(odd), why)]
            _same(got, _reference_rule(workload, listed))
