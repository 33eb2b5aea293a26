"""The gang planner reads a definition's references through the watch cache (a TrainJob's
runtime decides its gang), and a runtime edited is a new plan, not a memo hit."""

from __future__ import annotations

import copy

from tests.catalog.trainjobs import runtime, trainjob
from workload_map.catalog import catalog
from workload_map.gangs.cache import ObjectCache, cache_resolver
from workload_map.gangs.planner import SpecMemo, plan

KARTA = catalog.get("trainer.kubeflow.org", "v1alpha1", "TrainJob")
RUNTIME = runtime("torch", 3, resourceVersion="1")
TRAINJOB = trainjob("t", {"name": "torch"}, uid="u1", resourceVersion="7")


def _minimums(cache: ObjectCache | None, memo: SpecMemo) -> list[int]:
    resolver = cache_resolver(cache) if cache is not None else None
    found = plan(KARTA, TRAINJOB, [], force=True, memo=memo, references=resolver)
    assert found.view is not None
    return [g.min_member for g in found.view.pod_groups()]


def test_the_runtime_in_the_cache_decides_the_gang_and_an_edit_replans() -> None:
    memo = SpecMemo()
    assert _minimums(None, memo) == [1]  # the TrainJob alone: 1 node
    cache = ObjectCache()
    cache.upsert(copy.deepcopy(RUNTIME))
    assert _minimums(cache, memo) == [3]
    edited = copy.deepcopy(RUNTIME)
    edited["spec"]["mlPolicy"]["numNodes"] = 5
    edited["metadata"]["resourceVersion"] = "2"
    cache.upsert(edited)
    assert _minimums(cache, memo) == [5]


def test_cache_resolver_lists_by_labels() -> None:
    cache = ObjectCache()
    for name, team in (("a", "x"), ("b", "y")):
        cache.upsert(
            {
                "apiVersion": "ray.io/v1",
                "kind": "RayCluster",
                "metadata": {"name": name, "namespace": "ml", "labels": {"team": team}},
            }
        )
    from workload_map.engine.references import ReferenceRequest
    from workload_map.model import GVK

    resolve = cache_resolver(cache)
    found = resolve(
        ReferenceRequest("c", GVK("ray.io", "v1", "RayCluster"), "ml", match_labels={"team": "y"})
    )
    assert [o["metadata"]["name"] for o in found] == ["b"]
