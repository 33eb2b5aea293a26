"""summarize's pod places (``WorkloadSummary.pods``): one row per listed Pod, by name, each with
the placement of its name, whether the pods are the candidates themselves (one pass) or not."""

from __future__ import annotations

from typing import Any

from workload_map.catalog import catalog
from workload_map.engine import Workload
from workload_map.engine.summary import PodPlace
from workload_map.model import Karta


def _karta(kind: str) -> Karta:
    return next(k for k in catalog.list() if k.root_gvk is not None and k.root_gvk.kind == kind)


def _jobset() -> dict[str, Any]:
    template = {"spec": {"containers": [{"name": "c", "image": "x"}]}}
    job = {"parallelism": 1, "completions": 1, "template": template}
    return {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {"name": "js", "namespace": "ml", "uid": "u-js", "resourceVersion": "1"},
        "spec": {
            "replicatedJobs": [
                {"name": "a", "replicas": 1, "template": {"spec": job}},
                {"name": "b", "replicas": 1, "template": {"spec": job}},
            ]
        },
    }


def _pod(name: str, uid: str, replicated_job: str | None) -> dict[str, Any]:
    labels = {"jobset.sigs.k8s.io/jobset-name": "js"}
    if replicated_job is not None:
        labels["jobset.sigs.k8s.io/replicatedjob-name"] = replicated_job
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "ml", "uid": uid, "labels": labels},
        "spec": {"nodeName": "n1", "containers": [{"name": "c"}]},
        "status": {"phase": "Running"},
    }


def _places(pods: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
    summary = Workload(_karta("JobSet"), _jobset(), pods, owned=True).summary()
    assert all(type(p) is PodPlace for p in summary.pods)
    return [(p.name, p.uid, p.instance) for p in summary.pods]


def test_each_pod_has_its_own_placement_sorted_by_name() -> None:
    pods = [_pod("js-b-0-0", "u2", "b"), _pod("js-a-0-0", "u1", "a")]
    assert _places(pods) == [("js-a-0-0", "u1", "a"), ("js-b-0-0", "u2", "b")]


def test_a_pod_no_component_claims_has_an_empty_placement() -> None:
    pods = [_pod("js-a-0-0", "u1", "a"), _pod("stray", "u9", None)]
    assert _places(pods) == [("js-a-0-0", "u1", "a"), ("stray", "u9", "")]


def test_pods_of_one_name_each_take_the_placement_of_the_last_of_that_name() -> None:
    # two pods of one name (a pod recreated while the old one terminates, as a list may hold
    # them): the summary's rows are by name, and each row shows that name's placement, the
    # last one placed, in the rows of both (stable by name: the order they were listed)
    pods = [_pod("same", "u1", "a"), _pod("same", "u2", "b"), _pod("js-a-0-0", "u3", "a")]
    assert _places(pods) == [("js-a-0-0", "u3", "a"), ("same", "u1", "b"), ("same", "u2", "b")]


def test_an_unplaced_pod_of_a_placed_ones_name_takes_the_placed_ones_placement() -> None:
    pods = [_pod("same", "u1", None), _pod("same", "u2", "a")]
    assert _places(pods) == [("same", "u1", "a"), ("same", "u2", "a")]


def test_items_that_are_no_named_pods_have_no_row() -> None:
    nameless = _pod("", "u5", "a")
    other = {**_pod("cm", "u6", "a"), "kind": "ConfigMap"}
    pods = [_pod("js-a-0-0", "u1", "a"), nameless, other]
    assert _places(pods) == [("js-a-0-0", "u1", "a")]
