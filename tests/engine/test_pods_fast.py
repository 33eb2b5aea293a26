"""Attribution's inline selector reads agree with the jq engine (property tests).

``place_all`` reads ``.metadata.<section>["key"]`` selectors as dictionary lookups and decides
each distinct selector value once. The reference here is the same plan built over expressions
that always run through the jq engine (no direct walk, no inline read): for any pod, well-formed
or not, both must give the same placements, reasons and steps.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.engine.conftest import karta_dict, root
from workload_map.catalog import catalog
from workload_map.engine import Workload
from workload_map.engine.pods import Placement, _Plan, metadata_field
from workload_map.engine.runner import Expression, ExpressionCache
from workload_map.engine.structure import Structure

JS = "jobset.sigs.k8s.io"
LWS = "leaderworkerset.sigs.k8s.io"

#: the keys the definitions below read, each with values that match something
LABEL_KEYS = {
    "role": ["a", "b", "c", "d", "e"],
    "tier": ["x"],
    "inst": ["i1", "i2", "I1", "1"],
    "g": ["0", "1"],
    "lead": ["lws-0"],
    f"{LWS}/worker-index": ["0", "1"],
    f"{LWS}/group-index": ["0", "1"],
    f"{LWS}/leader-name": ["lws-0"],
    f"{JS}/replicatedjob-name": ["driver", "workers"],
}
ODD = st.one_of(
    st.sampled_from(["", "b", "nope"]),
    st.none(),
    st.integers(-2, 3),
    st.booleans(),
    st.sampled_from([1.0, 2.5]),
)
ODDS = st.one_of(ODD, st.lists(ODD, max_size=2), st.just({"k": "v"}))


@st.composite
def sections(draw: st.DrawFn) -> Any:
    """Mostly an object of some of the keys the definitions read, sometimes anything else."""
    if draw(st.integers(0, 5)) == 0:
        return draw(st.one_of(st.none(), st.sampled_from(["s", 3, True]), st.just(["x"])))
    return {
        key: draw(st.sampled_from(good) if draw(st.integers(0, 3)) else ODDS)
        for key, good in LABEL_KEYS.items()
        if draw(st.booleans())
    }


@st.composite
def pods(draw: st.DrawFn) -> Any:
    meta: Any = {}
    for key, strategy in (
        ("name", st.one_of(st.sampled_from(["p", ""]), st.integers(0, 2))),
        ("generateName", st.just("gen-")),
        ("labels", sections()),
        ("annotations", sections()),
        ("deletionTimestamp", st.sampled_from(["2026-01-01T00:00:00Z", None])),
    ):
        if draw(st.integers(0, 3)):  # mostly present
            meta[key] = draw(strategy)
    if draw(st.integers(0, 9)) == 0:
        meta = draw(st.one_of(st.sampled_from([None, "m", 4]), st.just([meta])))
    pod: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod"}
    if draw(st.integers(0, 9)):  # mostly present
        pod["metadata"] = meta
    phase = draw(st.sampled_from(["Running", "Succeeded", "Failed", "Pending", None, 1]))
    pod["status"] = draw(st.one_of(st.just({"phase": phase}), st.sampled_from([None, "x"])))
    return pod


def _custom() -> tuple[dict[str, Any], dict[str, Any]]:
    """Five leaves: a key path with matchLabels, a presence test on an annotation with a
    computed instance path, matchLabels alone, and two key paths; field and non-field replica
    selectors, and none."""

    def leaf(name: str, pod_selector: dict[str, Any]) -> dict[str, Any]:
        return {
            "name": name,
            "ownerRef": "thing",
            "instanceIdPath": ".spec.insts[]",
            "specDefinition": {"podSpecPath": f".spec.{name}[]"},
            "podSelector": pod_selector,
        }

    karta = karta_dict(
        root(),
        leaf(
            "a",
            {
                "componentTypeSelector": {
                    "keyPath": ".metadata.labels.role",
                    "value": "a",
                    "matchLabels": {"tier": "x"},
                },
                "componentInstanceSelector": {"idPath": ".metadata.labels.inst"},
                "replicaSelector": {"keyPath": ".metadata.labels.g"},
            },
        ),
        leaf(
            "b",
            {
                "componentTypeSelector": {"keyPath": ".metadata.annotations.lead"},
                "componentInstanceSelector": {"idPath": ".metadata.labels.inst | ascii_downcase"},
                "replicaSelector": {"keyPath": '.metadata.labels["g"] // "0"'},
            },
        ),
        leaf(
            "c",
            {
                "componentTypeSelector": {"matchLabels": {"role": "c"}},
                "componentInstanceSelector": {"idPath": '.metadata["labels"].inst'},
                "replicaSelector": {"keyPath": ".metadata.annotations.g"},
            },
        ),
        leaf(
            "d",
            {
                "componentTypeSelector": {"keyPath": ".metadata.labels.role", "value": "d"},
                "componentInstanceSelector": {"idPath": ".metadata.labels.inst"},
                "replicaSelector": {"keyPath": '.metadata.labels.g | tostring | "r" + .'},
            },
        ),
        leaf(
            "e",
            {
                "componentTypeSelector": {"keyPath": ".metadata.labels.role", "value": "e"},
                "componentInstanceSelector": {"idPath": ".metadata.labels.inst"},
            },
        ),
    )
    obj = {
        "apiVersion": "example.com/v1",
        "kind": "Thing",
        "metadata": {"name": "x", "uid": "u"},
        "spec": {
            "insts": ["i1", "i2", "1"],
            **{name: [{}, {}, {}] for name in ("a", "b", "c", "d", "e")},
        },
    }
    return karta, obj


def _jobset() -> dict[str, Any]:
    def rj(name: str, replicas: int) -> dict[str, Any]:
        job = {"parallelism": 2, "completions": 2, "template": {"spec": {"containers": []}}}
        return {"name": name, "replicas": replicas, "template": {"spec": job}}

    return {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {"name": "js", "namespace": "ns", "uid": "u-js"},
        "spec": {"replicatedJobs": [rj("driver", 1), rj("workers", 2)]},
    }


def _lws(replicas: int = 2, size: int = 3) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A LeaderWorkerSet and its pods, labelled as its controller does."""
    template = {"spec": {"containers": [{"name": "c"}]}}
    obj = {
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
    out = []
    for group in range(replicas):
        for worker in range(size):
            meta: dict[str, Any] = {
                "name": f"lws-{group}-{worker}",
                "labels": {
                    f"{LWS}/name": "lws",
                    f"{LWS}/group-index": str(group),
                    f"{LWS}/worker-index": str(worker),
                },
            }
            if worker:
                meta["annotations"] = {f"{LWS}/leader-name": f"lws-{group}"}
            out.append({"apiVersion": "v1", "kind": "Pod", "metadata": meta})
    return obj, out


def _cases() -> list[tuple[str, Any, dict[str, Any]]]:
    js = catalog.get("jobset.x-k8s.io", "v1alpha2", "JobSet")
    lw = catalog.get("leaderworkerset.x-k8s.io", "v1", "LeaderWorkerSet")
    empty = {**_jobset(), "spec": {"replicatedJobs": []}}  # no instances: every pod's reason
    return [
        ("jobset", js, _jobset()),
        ("lws", lw, _lws()[0]),
        ("custom", *_custom()),
        ("jobset without jobs", js, empty),
    ]


CASES = _cases()


class _EngineOnly(ExpressionCache):
    """Expressions that always run through the jq engine (no direct walk, no inline read)."""

    def get(self, text: str) -> Expression:
        found = super().get(text)
        if found.direct:
            found.evaluate = found._slow
            found.direct = False
            found.path = found.located = None
        return found


def _engine_only(expression: Expression, value: Any) -> list[Any]:
    return expression.evaluate(value)


def _both(case: int, batch: list[Any]) -> tuple[list[Placement], list[Placement]]:
    _, karta, obj = CASES[case]
    wl = Workload(karta, obj)
    fast = _Plan(wl.structure).place_all(wl.extractor, batch, wl.extractor.run)
    structure: Structure = dataclasses.replace(
        wl.structure, selectors=_EngineOnly(), memo={}, _ancestors={}
    )
    engine = _Plan(structure)
    assert not any(metadata_field(sel[1]) for sel in engine.instance.values() if sel)
    slow = engine.place_all(wl.extractor, batch, _engine_only)
    return fast, slow


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, len(CASES) - 1), st.lists(pods(), min_size=1, max_size=6))
def test_inline_reads_agree_with_the_jq_engine(case: int, batch: list[Any]) -> None:
    fast, slow = _both(case, batch)
    assert [p.to_dict() for p in fast] == [p.to_dict() for p in slow]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, len(CASES) - 1), st.lists(pods(), min_size=1, max_size=6))
def test_the_loop_over_plain_pods_agrees_with_the_plain_rule(case: int, batch: list[Any]) -> None:
    """``place_all``'s loop (inline reads, decisions shared per value) and ``place_odd`` (what
    it does with a pod whose metadata is not an object: every selector run as an expression,
    pod by pod) place every pod alike."""
    _, karta, obj = CASES[case]
    wl = Workload(karta, obj)
    plan = _Plan(wl.structure)
    fast = plan.place_all(wl.extractor, batch, wl.extractor.run)
    seen: dict[str, Any] = {}
    plain = [plan.place_odd(wl.extractor, pod, wl.extractor.run, seen) for pod in batch]
    assert [p.to_dict() for p in fast] == [p.to_dict() for p in plain]


def test_the_fast_plan_reads_fields_inline() -> None:
    """The catalog's label selectors are fields, computed and defaulted paths are not."""
    for case in range(len(CASES)):
        wl = Workload(CASES[case][1], CASES[case][2])
        plan = _Plan(wl.structure)
        fields = [sel[2] for sel in plan.instance.values() if sel] + [
            sel[3] for sel in plan.replica.values() if sel
        ]
        assert any(fields), CASES[case][0]
    custom = _Plan(Workload(*_custom()).structure)
    assert custom.instance["a"] is not None and custom.instance["a"][2] == ("labels", "inst")
    assert custom.instance["b"] is not None and custom.instance["b"][2] is None  # computed
    assert custom.instance["c"] is not None and custom.instance["c"][2] == ("labels", "inst")
    assert custom.replica["b"] is not None and custom.replica["b"][3] is None  # defaulted


def test_decisions_are_shared_by_fields_only_where_every_selector_is_one() -> None:
    """A component's pods share decisions by their field values when its selectors are one
    field or two of one section (``_Seen.fields``); a computed selector, or fields of two
    sections, decide each pod in full."""
    wl = Workload(*_custom())
    plan = _Plan(wl.structure)
    fields = {name: plan._seen(wl.extractor, name).fields for name in "abcde"}
    assert fields["a"] == ("labels", "inst", "g", (None, None))
    assert fields["b"][0] is None  # computed instance path
    assert fields["c"][0] is None  # instance and replica in two sections
    assert fields["d"][0] is None  # computed replica path
    assert fields["e"] == ("labels", "inst", None, None)
    lws = Workload(CASES[1][1], CASES[1][2])
    # no instance to find: the replica decisions are shared by value as they were
    assert _Plan(lws.structure)._seen(lws.extractor, "worker").fields[0] is None


def test_equal_values_of_other_types_are_decided_apart() -> None:
    """``1``, ``1.0`` and ``true`` are equal dictionary keys, and ``"1"`` an instance id: each
    pod is placed as the jq engine places it, whatever its batch decided before (only
    strings and nulls share decisions)."""
    values: list[Any] = ["1", 1, 1.0, True, "1", None, "i1", ["i1"], {"k": "i1"}, "i1"]
    batch = [
        {
            "metadata": {
                "name": f"p{i}",
                "labels": {"role": role, "tier": "x", "inst": value, "g": "0"},
            },
            "status": {"phase": "Running"},
        }
        for i, value in enumerate(values)
        for role in ("a", "e")
    ]
    for value in values:  # the other way round too
        batch.append({"metadata": {"name": "q", "labels": {"role": "e", "inst": value}}})
    fast, slow = _both(2, batch)
    assert [p.to_dict() for p in fast] == [p.to_dict() for p in slow]
    placed = {(p.pod, p.component): p for p in fast}
    # jq's outputs as Go prints them: 1 and 1.0 name the instance "1", true names none
    assert [placed[(f"p{i}", "e")].instance for i in range(4)] == ["1", "1", "1", None]
    assert placed[("p3", "e")].reason == (
        'could not match instance id "true". existing instance ids [i1 i2 1]'
    )
    assert placed[("p6", "a")].instance == "i1" and placed[("p6", "a")].replica == "0"


def test_pods_placed_alike_share_decisions_but_not_identity() -> None:
    """Each pod keeps its own name and state; the trace of pods decided alike is one tuple."""
    obj, lws_pods = _lws()
    lws_pods[1]["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    placements = Workload(CASES[1][1], obj, lws_pods).placements
    assert [p.pod for p in placements] == [p["metadata"]["name"] for p in lws_pods]
    assert [p.state for p in placements] == ["Active", "Terminating", *["Active"] * 4]
    assert [(p.component, p.replica) for p in placements] == [
        ("leader", "0"),
        ("worker", "0"),
        ("worker", "0"),
        ("leader", "1"),
        ("worker", "1"),
        ("worker", "1"),
    ]
    assert placements[1].trace is placements[2].trace
    assert placements[1].steps == placements[2].steps
    assert placements[1].trace is not placements[4].trace


def test_a_component_without_instances_is_each_pods_reason() -> None:
    pods = [
        {"metadata": {"name": f"p{i}", "labels": {f"{JS}/replicatedjob-name": "driver"}}}
        for i in range(2)
    ]
    fast, slow = _both(3, pods)
    assert [p.to_dict() for p in fast] == [p.to_dict() for p in slow]
    assert [p.reason for p in fast] == [
        "component replicatedjob has no instances in the object"
    ] * 2


def test_an_unknown_instance_is_each_pods_reason() -> None:
    pods = [
        {"metadata": {"name": f"p{i}", "labels": {f"{JS}/replicatedjob-name": "nope"}}}
        for i in range(2)
    ]
    placements = Workload(CASES[0][1], _jobset(), pods, owned=True).placements
    assert [p.pod for p in placements] == ["p0", "p1"]
    for p in placements:
        assert p.component == "replicatedjob"
        assert p.reason == (
            'could not match instance id "nope". existing instance ids [driver workers]'
        )
