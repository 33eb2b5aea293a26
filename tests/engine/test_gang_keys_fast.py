"""Group keys read as fields agree with the jq engine (property tests).

``_Candidate.read_keys`` reads ``.metadata.<section>["key"]`` group keys as dictionary lookups
(as ``place_all`` reads its selectors). The reference is the same candidate built over
expressions that always run through the jq engine: for any pod, well-formed or not, both give
the same keys and the same reason.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.engine.conftest import karta_dict, root
from tests.engine.test_pods_fast import ODDS, _engine_only, _EngineOnly, fresh_structure
from workload_map.catalog import catalog
from workload_map.engine import Workload
from workload_map.engine.gang_minimums import GangCounter, alpha_minimum, dimensions
from workload_map.engine.gang_rules import _Candidate, candidates_of
from workload_map.engine.gang_views import group_name
from workload_map.engine.pods import Placement

LWS = "leaderworkerset.sigs.k8s.io"
#: label and annotation keys the members below group by, each with values that group pods
KEYS = {
    f"{LWS}/group-index": ["0", "1"],
    f"{LWS}/name": ["lws"],
    "g": ["0", "x"],
    "h": ["a"],
}


def _custom() -> tuple[dict[str, Any], dict[str, Any]]:
    """Members grouping by labels, by a label and an annotation, by a computed key after a
    field, and by a dotted path spelled differently."""

    def child(name: str) -> dict[str, Any]:
        return {
            "name": name,
            "ownerRef": "thing",
            "specDefinition": {"podSpecPath": f".spec.{name}.pod"},
            "podSelector": {"componentTypeSelector": {"keyPath": ".metadata.labels.role"}},
        }

    def member(name: str, *keys: str) -> dict[str, Any]:
        return {"name": name, "members": [{"componentName": name, "groupByKeyPaths": list(keys)}]}

    gang = {
        "podGroups": [
            member("a", ".metadata.labels.g", '.metadata.labels["h"]'),
            member("b", ".metadata.labels.g", ".metadata.annotations.h"),
            member("c", ".metadata.labels.g", '.metadata.labels.h + "-x"'),
            member("d", '.metadata["labels"].g'),
        ]
    }
    karta = karta_dict(root(), *(child(n) for n in "abcd"), gang=gang)
    obj = {
        "apiVersion": "example.com/v1",
        "kind": "Thing",
        "metadata": {"name": "x", "uid": "u"},
        "spec": {n: {"pod": {"containers": [{"name": "c"}]}} for n in "abcd"},
    }
    return karta, obj


def _lws() -> tuple[Any, dict[str, Any]]:
    template = {"spec": {"containers": [{"name": "c"}]}}
    obj = {
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "metadata": {"name": "lws", "namespace": "ns", "uid": "u-lws"},
        "spec": {
            "replicas": 2,
            "leaderWorkerTemplate": {
                "size": 3,
                "leaderTemplate": template,
                "workerTemplate": template,
            },
        },
    }
    return catalog.get("leaderworkerset.x-k8s.io", "v1", "LeaderWorkerSet"), obj


def _candidates() -> list[tuple[_Candidate, _Candidate, Workload]]:
    """(fast, engine-only) candidates of every member of both definitions."""
    out = []
    for karta, obj in (_lws(), _custom()):
        wl = Workload(karta, obj)
        structure = wl.structure
        slow_structure = fresh_structure(
            structure, expressions=_EngineOnly(structure.expressions.variables)
        )
        for component in structure.components:
            for level, definition, member in candidates_of(structure, component):
                fast = _Candidate(structure, level, definition, member)
                slow = _Candidate(slow_structure, level, definition, member)
                assert slow._fields is None and slow._walks is None
                out.append((fast, slow, wl))
    return out


CANDIDATES = _candidates()


@st.composite
def sections(draw: st.DrawFn) -> Any:
    """Mostly an object of some of the keys read, sometimes anything else."""
    if draw(st.integers(0, 5)) == 0:
        return draw(st.one_of(st.none(), st.sampled_from(["s", 3, True]), st.just(["x"])))
    return {
        key: draw(st.sampled_from(good) if draw(st.integers(0, 3)) else ODDS)
        for key, good in KEYS.items()
        if draw(st.booleans())
    }


@st.composite
def pods(draw: st.DrawFn) -> Any:
    meta: Any = {"name": "p"}
    for key in ("labels", "annotations"):
        if draw(st.integers(0, 3)):
            meta[key] = draw(sections())
    if draw(st.integers(0, 9)) == 0:
        meta = draw(st.one_of(st.sampled_from([None, "m", 4]), st.just([meta])))
    pod: Any = {"apiVersion": "v1", "kind": "Pod"}
    if draw(st.integers(0, 9)):
        pod["metadata"] = meta
    if draw(st.integers(0, 19)) == 0:
        pod = draw(st.sampled_from([None, "pod", [pod]]))
    return pod


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, len(CANDIDATES) - 1), pods())
def test_field_reads_agree_with_the_jq_engine(index: int, pod: Any) -> None:
    fast, slow, wl = CANDIDATES[index]
    assert fast.read_keys(pod, wl.extractor.run) == slow.read_keys(pod, _engine_only)


def test_label_and_annotation_keys_are_fields_computed_ones_are_not() -> None:
    fields = {c.member.component_name: c._fields for c, _, _ in CANDIDATES}
    assert fields["a"] == (("labels", "g"), ("labels", "h"))
    assert fields["b"] == (("labels", "g"), ("annotations", "h"))
    assert fields["c"] is None  # one computed key: every key through the walks or the engine
    assert fields["d"] == (("labels", "g"),)
    lws = [c._fields for c, _, wl in CANDIDATES if wl.karta.name != "t"]
    assert lws and all(f is not None for f in lws)


@st.composite
def lws_pods(draw: st.DrawFn) -> list[Any]:
    """Pods of the LeaderWorkerSet above: leaders and workers of a few groups, some keys odd
    or missing (no key, a number, an empty string) and some pods of another workload's name."""
    out = []
    for index in range(draw(st.integers(1, 8))):
        labels: dict[str, Any] = {f"{LWS}/worker-index": draw(st.sampled_from(["0", "1", "2"]))}
        name = draw(st.sampled_from(["lws", "lws", "other", "", None, 3]))
        if name is not None:
            labels[f"{LWS}/name"] = name
        group = draw(st.sampled_from(["0", "1", "1", "", None, 1]))
        if group is not None:
            labels[f"{LWS}/group-index"] = group
        meta: dict[str, Any] = {"name": f"p{index}", "labels": labels}
        if labels[f"{LWS}/worker-index"] != "0":
            meta["annotations"] = {f"{LWS}/leader-name": "lws-0"}
        out.append({"apiVersion": "v1", "kind": "Pod", "metadata": meta})
    return out


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lws_pods())
def test_grouping_agrees_with_grouping_pod_by_pod(pods: list[Any]) -> None:
    """alpha_groups (pods of equal keys share one entry; groups are made from the entries)
    gives what grouping each pod in turn, by keys the jq engine reads, gives: the same groups,
    pods, keys, minimums and rules, and per pod the same group or reason."""
    karta, obj = _lws()
    wl = Workload(karta, obj, pods, owned=True)
    got = wl.gangs
    fast, slow, _ = next(c for c in CANDIDATES if c[2].karta.name == wl.karta.name)
    counter = GangCounter(wl.extractor, wl.placements)
    grouped: dict[str, list[tuple[Any, tuple[str, ...]]]] = {}
    want_assigned: list[tuple[str | None, str | None]] = []
    for pod, placement in zip(wl.candidate_pods, wl.placements, strict=True):
        if not placement.attributed:
            want_assigned.append((None, "not attributed to a component"))
            continue
        keys, reason = slow.read_keys(pod, _engine_only)
        if reason is not None:
            want_assigned.append((None, reason))
            continue
        name = group_name(wl.uid, *keys)
        grouped.setdefault(name, []).append((placement, keys))
        want_assigned.append((name, None))
    want = []
    for name, members in sorted(grouped.items()):
        found = alpha_minimum(counter, fast.definition, [(k, (p,)) for p, k in members])
        pod_names = tuple(sorted(p.pod for p, _ in members))
        want.append((name, pod_names, members[0][1], found.minimum, found.rule, found.error))
    assert [(g.name, g.pods, g.keys, g.min_member, g.rule, g.error) for g in got.groups] == [
        w for w in want if w[3] != 0 or w[5] is not None
    ]
    assert [(a.group, a.reason) for a in got.assignments] == [
        (group, reason)
        if group is None or any(w[0] == group and w[3] for w in want)
        else (None, "the gang would need no pods (minMember 0): no gang")
        for group, reason in want_assigned
    ]


def _dimensions_reference(members: Any) -> tuple[dict[str, str], str | None]:
    """What a group's keys pin, spelled out: a key pins the instance when it is every pod's
    instance id (all of one component, the first pod's instance set), else the replica when it
    is every pod's replica key (all of one replica component)."""
    if not members or not members[0][1]:
        return {}, None
    first = members[0][1][0]
    pins: dict[str, str] = {}
    replica_of = None
    pods = [(keys, p) for keys, placed in members for p in placed]
    for index, value in enumerate(members[0][0]):
        if first.instance and all(
            p.instance == keys[index] and p.component == first.component for keys, p in pods
        ):
            if first.component is not None:
                pins[first.component] = value
            continue
        if first.replica is not None and all(
            p.replica == keys[index] and p.replica_component == first.replica_component
            for keys, p in pods
        ):
            replica_of = first.replica_component
    return pins, replica_of


_SMALL = st.sampled_from(["", "0", "1", "a"])


@st.composite
def _members(draw: st.DrawFn) -> Any:
    width = draw(st.integers(1, 3))
    out = []
    for _ in range(draw(st.integers(1, 3))):
        keys = tuple(draw(_SMALL) for _ in range(width))
        placed = [
            Placement(
                pod=draw(st.sampled_from(["p", "q"])),
                component=draw(st.sampled_from(["c", "d", None])),
                instance=draw(st.one_of(st.none(), _SMALL)),
                replica=draw(st.one_of(st.none(), _SMALL)),
                replica_component=draw(st.sampled_from(["g", "h", None])),
            )
            for _ in range(draw(st.integers(1, 3)))
        ]
        out.append((keys, placed))
    return out


@settings(max_examples=500, deadline=None)
@given(_members())
def test_dimensions_agree_with_the_rule_spelled_out(members: Any) -> None:
    """``dimensions`` (loops that stop early, keys the first pod does not match skipped)
    pins what the rule says."""
    assert dimensions(members) == _dimensions_reference(members)


def test_a_key_that_is_a_list_or_an_object_is_read_by_the_jq_engine() -> None:
    """The section keys are looked up among the entries as the pod has them: a list or an
    object among them (unhashable) is read as any other key that is not a string, by the jq
    engine (as JSON text), next to pods grouped as usual."""
    karta, obj = _lws()
    pods = []
    for name, value in (("a", ["0"]), ("b", {"k": "0"}), ("c", "0"), ("d", "0")):
        labels = {f"{LWS}/name": "lws", f"{LWS}/group-index": value, f"{LWS}/worker-index": "0"}
        pods.append(
            {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": labels}}
        )
    got = Workload(karta, obj, pods, owned=True).gangs
    assert [a.group for a in got.assignments] == [
        'pg-u-lws-lws-["0"]',
        'pg-u-lws-lws-{"k":"0"}',
        "pg-u-lws-lws-0",
        "pg-u-lws-lws-0",
    ]
    errors = {g.name: g.error for g in got.groups}
    assert "DNS-1123" in (errors['pg-u-lws-lws-["0"]'] or "")
    assert errors["pg-u-lws-lws-0"] is None
