"""Attribution's inline selector reads agree with the jq engine (property tests).

``place_all`` reads ``.metadata.<section>["key"]`` selectors as dictionary lookups and decides
each distinct selector value once. The reference here is the same plan built over expressions
that always run through the jq engine (no direct walk, no inline read): for any pod, well-formed
or not, both must give the same placements, reasons and steps.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.engine.conftest import karta_dict, root
from workload_map.catalog import catalog
from workload_map.engine import Workload
from workload_map.engine import pods as pods_module
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
        ("deletionTimestamp", st.sampled_from(["2026-01-01T00:00:00Z", None, ""])),
    ):
        if draw(st.integers(0, 3)):  # mostly present
            meta[key] = draw(strategy)
    if draw(st.integers(0, 9)) == 0:
        meta = draw(st.one_of(st.sampled_from([None, "m", 4]), st.just([meta])))
    pod: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod"}
    if draw(st.integers(0, 9)):  # mostly present
        pod["metadata"] = meta
    phase = draw(st.sampled_from(["Running", "Succeeded", "Failed", "Pending", None, 1]))
    status = draw(st.one_of(st.just({"phase": phase}), st.sampled_from([{}, None, "x"])))
    if draw(st.integers(0, 5)):  # mostly present
        pod["status"] = status
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


def fresh_structure(
    known: Structure,
    *,
    expressions: ExpressionCache | None = None,
    selectors: ExpressionCache | None = None,
) -> Structure:
    """The same definition's indexes with other expression caches and fresh memos (what
    ``dataclasses.replace`` gave while Structure was a dataclass)."""
    return Structure(
        known.karta,
        known.components,
        known.order,
        known.parent,
        known.children,
        known.pod_bearing,
        expressions=known.expressions if expressions is None else expressions,
        selectors=known.selectors if selectors is None else selectors,
    )


def _both(case: int, batch: list[Any]) -> tuple[list[Placement], list[Placement]]:
    _, karta, obj = CASES[case]
    wl = Workload(karta, obj)
    fast = _Plan(wl.structure).place_all(wl.extractor, batch, wl.extractor.run)
    structure = fresh_structure(wl.structure, selectors=_EngineOnly())
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
    # no instance to find: the replica field is the whole key
    worker = _Plan(lws.structure)._seen(lws.extractor, "worker")
    assert worker.fields == ("labels", f"{LWS}/group-index", None, None)


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


def _groups() -> dict[str, Any]:
    """Two leaves under a parent that selects replicas, neither with an instance selector:
    ``s`` has no instanceIdPath (instance "" for every pod: its decisions are the
    definition's), ``t`` has one and an instance selector (its ids are each object's)."""
    group = {
        "name": "group",
        "ownerRef": "thing",
        "podSelector": {"replicaSelector": {"keyPath": ".metadata.labels.g"}},
    }

    def leaf(name: str, **fields: Any) -> dict[str, Any]:
        selector: dict[str, Any] = {
            "componentTypeSelector": {"keyPath": ".metadata.labels.role", "value": name}
        }
        if fields:
            selector["componentInstanceSelector"] = {"idPath": ".metadata.labels.inst"}
        return {
            "name": name,
            "ownerRef": "group",
            "specDefinition": {"podSpecPath": f".spec.{name}[]"},
            "podSelector": selector,
            **fields,
        }

    return karta_dict(root(), group, leaf("s"), leaf("t", instanceIdPath=".spec.insts[]"))


#: objects of :func:`_groups`: ``t`` with an instance, with none, and unreadable ids
GROUP_OBJECTS = [
    {
        "apiVersion": "example.com/v1",
        "kind": "Thing",
        "metadata": {"name": f"x{i}", "uid": f"u{i}"},
        "spec": {"s": [{}], "t": [{}], **insts},
    }
    for i, insts in enumerate(
        [{"insts": ["i1"]}, {"insts": []}, {"insts": [1]}, {"insts": ["i1", "i2"]}]
    )
]
GROUP_VALUES = st.one_of(st.sampled_from(["0", "1", ""]), st.none(), st.sampled_from([1, True]))


def _group_pod(name: str, role: str, value: Any) -> dict[str, Any]:
    labels: dict[str, Any] = {"role": role, "inst": "i1"}
    if value != "absent":
        labels["g"] = value
    return {"metadata": {"name": name, "labels": labels}, "status": {"phase": "Running"}}


def _one_plan_many_objects(
    karta: Any, objects: list[Any], batches: list[list[Any]]
) -> tuple[_Plan, list[Placement], list[Placement]]:
    """Each batch placed by ``place_all`` of ONE plan, as the catalog's definition places every
    object's pods, and by ``place_odd`` of a fresh plan (no decision kept between pods)."""
    plan = _Plan(Workload(karta, objects[0]).structure)
    fast: list[Placement] = []
    plain: list[Placement] = []
    for obj, batch in zip(objects, batches, strict=True):
        wl = Workload(karta, obj)
        fast += plan.place_all(wl.extractor, batch, wl.extractor.run)
        reference = _Plan(wl.structure)
        seen: dict[str, Any] = {}
        plain += [reference.place_odd(wl.extractor, p, wl.extractor.run, seen) for p in batch]
    return plan, fast, plain


def test_decisions_without_instances_are_shared_by_every_object_of_a_definition() -> None:
    """Pods of equal replica values but of another component or another object's ids are
    placed as the plain rule places them; those of a component without instance ids share
    one decision (one trace) across objects, the others' stay with their object."""
    karta = _groups()
    objects = [GROUP_OBJECTS[0], GROUP_OBJECTS[1], GROUP_OBJECTS[2], GROUP_OBJECTS[0]]
    batches = [
        [
            _group_pod(f"{o}-{role}-{v}", role, v)
            for v in ("0", "1", 1, None, "absent", "0")
            for role in ("s", "t")
        ]
        for o in range(len(objects))
    ]
    plan, fast, plain = _one_plan_many_objects(karta, objects, batches)
    assert [p.to_dict() for p in fast] == [p.to_dict() for p in plain]
    by_name = {p.pod: p for p in fast}
    first, second = by_name["0-s-0"], by_name["1-s-0"]
    assert (first.component, first.instance, first.replica) == ("s", "", "0")
    assert first.trace is second.trace  # decided once for both objects
    assert (by_name["0-t-0"].instance, by_name["0-t-0"].replica) == ("i1", "0")
    assert by_name["1-t-0"].reason == "component t has no instances in the object"
    assert by_name["0-s-1"].replica == by_name["1-s-1"].replica == "1"
    assert set(plan.unselected) == {"s"} and set(plan.unselected["s"]) == {"0", "1", None}


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.tuples(
            st.integers(0, len(GROUP_OBJECTS) - 1),
            st.lists(
                st.tuples(st.sampled_from(["s", "t", "u"]), GROUP_VALUES), min_size=1, max_size=5
            ),
        ),
        min_size=1,
        max_size=4,
    )
)
def test_one_plan_places_every_objects_pods_as_the_plain_rule(
    batches: list[tuple[int, list[tuple[str, Any]]]],
) -> None:
    objects = [GROUP_OBJECTS[i] for i, _ in batches]
    pods = [[_group_pod(f"p{n}", r, v) for n, (r, v) in enumerate(b)] for _, b in batches]
    _, fast, plain = _one_plan_many_objects(_groups(), objects, pods)
    assert [p.to_dict() for p in fast] == [p.to_dict() for p in plain]


def test_one_lws_plan_places_every_objects_pods_as_the_plain_rule() -> None:
    """The catalog's LeaderWorkerSet: leader and worker pods of equal group indexes in two
    objects, then pods whose group index is not a string."""
    karta = CASES[1][1]
    (obj, pods), (other, more) = _lws(), _lws(replicas=3, size=2)
    odd = [dict(p, metadata=dict(p["metadata"], labels={**p["metadata"]["labels"]})) for p in more]
    for pod, value in zip(odd, [0, None, True, 1.0, "", "2"], strict=True):
        pod["metadata"]["labels"][f"{LWS}/group-index"] = value
    _, fast, plain = _one_plan_many_objects(karta, [obj, other, other], [pods, more, odd])
    assert [p.to_dict() for p in fast] == [p.to_dict() for p in plain]
    assert [(p.component, p.replica) for p in fast[6:12]] == [
        (c, g) for g in "012" for c in ("leader", "worker")
    ]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.tuples(st.booleans(), st.lists(pods(), min_size=1, max_size=5)), min_size=1, max_size=4
    )
)
def test_one_lws_plan_places_any_pods_of_its_objects_as_the_plain_rule(
    batches: list[tuple[bool, list[Any]]],
) -> None:
    """Pods of every shape (odd labels, sections that are not objects) of two LeaderWorkerSets,
    in any order of objects, through one plan."""
    objects = [_lws()[0], _lws(replicas=3, size=2)[0]]
    _, fast, plain = _one_plan_many_objects(
        CASES[1][1], [objects[other] for other, _ in batches], [b for _, b in batches]
    )
    assert [p.to_dict() for p in fast] == [p.to_dict() for p in plain]


def test_a_dictionary_keeps_a_bounded_number_of_decisions(monkeypatch: Any) -> None:
    """Past the bound a value is decided again for each pod, as the plain rule decides it."""
    monkeypatch.setattr(pods_module, "_KEPT", 2)
    batches = [
        [_group_pod(f"{o}-{v}", "s", v) for v in ("0", "1", "2", "3", "2", None)] for o in range(2)
    ]
    plan, fast, plain = _one_plan_many_objects(_groups(), GROUP_OBJECTS[:2], batches)
    assert [p.to_dict() for p in fast] == [p.to_dict() for p in plain]
    assert [p.replica for p in fast[:6]] == ["0", "1", "2", "3", "2", None]
    assert set(plan.unselected["s"]) == {"0", "1"}
