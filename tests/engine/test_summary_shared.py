"""What the shared evaluation reads once per fleet for a watch cache's objects
(``summarize`` of a ``Workload(shared_inputs=True)``): a template's request and a pod's facts,
by the very subtrees they come from, with the same answers as each workload's own reading."""

from __future__ import annotations

from typing import Any

import pytest

from workload_map.catalog import catalog
from workload_map.engine import Workload, equal_inputs, summary
from workload_map.engine.pods import ACTIVE, Placement
from workload_map.engine.summary import placed_facts, summarize

_FOUND = catalog.resolve("batch/v1", "Job")


@pytest.fixture(autouse=True)
def _fresh_tables() -> None:
    equal_inputs.clear()
    summary._ASKED.clear()
    summary._PLACED.clear()


def _karta() -> Any:
    assert _FOUND is not None
    return _FOUND[0]


def _template(gpus: str) -> dict[str, Any]:
    return {
        "spec": {
            "containers": [
                {"name": "c", "resources": {"requests": {"nvidia.com/gpu": gpus, "cpu": "1"}}}
            ]
        }
    }


def _job(name: str, template: dict[str, Any], count: int) -> dict[str, Any]:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": "ns", "uid": f"uid-{name}"},
        "spec": {"parallelism": count, "completions": count, "template": template},
        "status": {"active": count},
    }


def _pod(name: str, job: dict[str, Any], spec: Any, status: Any) -> dict[str, Any]:
    ref = {"apiVersion": "batch/v1", "kind": "Job", "name": job["metadata"]["name"]}
    ref |= {"uid": job["metadata"]["uid"], "controller": True}
    meta = {"name": name, "namespace": "ns", "uid": f"p-{name}", "ownerReferences": [ref]}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": status}


def _counting(monkeypatch: pytest.MonkeyPatch, name: str) -> list[object]:
    """Calls of ``name`` (a template's request, ``res.pod_request``, which
    ``res.request_source`` names as its reader; a pod's, ``summary._request``) as summary.py
    makes them, recorded."""
    calls: list[object] = []
    owner: Any = summary.res if name == "pod_request" else summary
    real = getattr(owner, name)

    def counted(value: Any) -> Any:
        calls.append(value)
        return real(value)

    monkeypatch.setattr(owner, name, counted)
    return calls


def test_a_template_shared_by_workloads_has_its_request_read_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    template = _template("2")  # one object, as the watch caches keep equal subtrees
    jobs = [_job("a", template, 2), _job("b", template, 2), _job("c", template, 3)]
    own = [summarize(Workload(_karta(), j, [], owned=True)) for j in jobs]
    calls = _counting(monkeypatch, "pod_request")
    got = [summarize(Workload(_karta(), j, [], owned=True, shared_inputs=True)) for j in jobs]
    # a, then c (another count: its own entry); b asked nothing of the template
    assert len(calls) == 2
    assert got == own
    assert got[2].totals.requested == {"nvidia.com/gpu": 6, "cpu": 3000}
    assert got[0].totals.requested is got[1].totals.requested


def test_equal_templates_that_are_not_one_object_are_read_each() -> None:
    jobs = [_job("a", _template("1"), 2), _job("b", _template("4"), 2)]
    got = [summarize(Workload(_karta(), j, [], owned=True, shared_inputs=True)) for j in jobs]
    assert [s.totals.requested["nvidia.com/gpu"] for s in got] == [2, 8]


def test_without_shared_inputs_each_workload_reads_its_template(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    template = _template("2")
    calls = _counting(monkeypatch, "pod_request")
    for name in ("a", "b"):
        summarize(Workload(_karta(), _job(name, template, 2), [], owned=True))
    assert len(calls) == 2
    assert not summary._ASKED


def test_pods_of_one_spec_and_status_have_their_facts_read_once_per_fleet(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    template = _template("1")
    spec = template["spec"] | {"nodeName": "n1"}
    status = {"conditions": [{"type": "Ready", "status": "True"}]}
    jobs = [_job(name, template, 2) for name in ("a", "b")]
    pods = [[_pod(f"{j['metadata']['name']}-{i}", j, spec, status) for i in range(2)] for j in jobs]
    own = [summarize(Workload(_karta(), j, p, owned=True)) for j, p in zip(jobs, pods, strict=True)]
    calls = _counting(monkeypatch, "_request")
    got = [
        summarize(Workload(_karta(), j, p, owned=True, shared_inputs=True))
        for j, p in zip(jobs, pods, strict=True)
    ]
    assert len(calls) == 1  # the first pod of the first workload
    assert got == own
    assert got[0].totals.held == 2 and got[1].totals.ready == 2


def test_placed_facts_share_only_when_asked_and_only_the_same_objects(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    spec = _template("1")["spec"]
    status = {"conditions": [{"type": "Ready", "status": "True"}]}
    placed = [Placement(pod="p", component="main", instance="", state=ACTIVE)]
    calls = _counting(monkeypatch, "_request")
    first = placed_facts([{"spec": spec, "status": status}], placed, shared=True)
    again = placed_facts([{"spec": spec, "status": status}], placed, shared=True)
    assert len(calls) == 1 and again == first and again[0] is first[0]
    placed_facts([{"spec": spec, "status": status}], placed)  # not shared: read again
    assert len(calls) == 2
    # another status object (not ready): its own facts
    other = placed_facts([{"spec": spec, "status": {"conditions": []}}], placed, shared=True)
    assert other[0] is not None and first[0] is not None
    assert first[0].ready and not other[0].ready
    # the entry holds the objects it is keyed by (their ids stay theirs)
    assert any(entry[0] is spec and entry[1] is status for entry in summary._PLACED.values())
