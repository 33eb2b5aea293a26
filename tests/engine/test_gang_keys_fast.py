"""Group keys read as fields agree with the jq engine (property tests).

``_Candidate.read_keys`` reads ``.metadata.<section>["key"]`` group keys as dictionary lookups
(as ``place_all`` reads its selectors). The reference is the same candidate built over
expressions that always run through the jq engine: for any pod, well-formed or not, both give
the same keys and the same reason.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.engine.conftest import karta_dict, root
from tests.engine.test_pods_fast import ODDS, _engine_only, _EngineOnly
from workload_map.catalog import catalog
from workload_map.engine import Workload
from workload_map.engine.gang_rules import _Candidate, candidates_of

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
        slow_structure = dataclasses.replace(
            structure,
            expressions=_EngineOnly(structure.expressions.variables),
            memo={},
            _ancestors={},
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
