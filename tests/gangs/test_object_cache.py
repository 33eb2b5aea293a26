"""ObjectCache: objects by (group, kind, namespace, name), counted, listed and removed."""

from __future__ import annotations

from typing import Any

from workload_map.gangs.cache import ObjectCache


def _obj(api_version: str, kind: str, namespace: str, name: str, rv: str = "1") -> dict[str, Any]:
    meta = {"name": name, "uid": f"{kind}-{namespace}-{name}", "resourceVersion": rv}
    if namespace:
        meta["namespace"] = namespace
    return {"apiVersion": api_version, "kind": kind, "metadata": meta}


def test_objects_are_found_by_group_kind_namespace_and_name() -> None:
    cache = ObjectCache()
    pod, job = _obj("v1", "Pod", "ml", "p"), _obj("batch/v1", "Job", "ml", "p")
    ns = _obj("v1", "Namespace", "", "ml")
    for obj in (pod, job, ns):
        cache.upsert(obj)
    assert cache.get("", "Pod", "ml", "p") is pod
    assert cache.get("batch", "Job", "ml", "p") is job
    assert cache.get("", "Namespace", "", "ml") is ns
    assert cache.get("", "Pod", "other", "p") is None
    assert cache.get("apps", "Pod", "ml", "p") is None
    assert len(cache) == 3
    assert sorted(o["kind"] for o in cache) == ["Job", "Namespace", "Pod"]


def test_a_replacement_is_counted_once_and_removal_forgets_it() -> None:
    cache = ObjectCache()
    cache.upsert(_obj("v1", "Pod", "ml", "p"))
    newer = _obj("v1", "Pod", "ml", "p", rv="2")
    cache.upsert(newer)
    cache.upsert(_obj("v1", "Pod", "ml", "q"))
    cache.upsert(_obj("v1", "Pod", "dev", "p"))
    assert len(cache) == 3
    assert cache.get("", "Pod", "ml", "p") is newer
    assert sorted(o["metadata"]["name"] for o in cache.items_of("", "Pod", "ml")) == ["p", "q"]
    assert len(cache.items_of("", "Pod")) == 3
    cache.remove(_obj("v1", "Pod", "ml", "p"))
    cache.remove(_obj("v1", "Pod", "ml", "p"))  # twice: nothing more to forget
    cache.remove(_obj("v1", "Pod", "nowhere", "x"))
    assert len(cache) == 2
    assert cache.get("", "Pod", "ml", "p") is None
    cache.remove(_obj("v1", "Pod", "dev", "p"))
    assert cache.items_of("", "Pod", "dev") == []
    assert [o["metadata"]["name"] for o in cache] == ["q"]


def test_get_many_answers_what_get_answers_in_order() -> None:
    cache = ObjectCache()
    assert cache.get_many("", "Pod", [("ml", "p")]) == []  # no pod cached yet
    for ns, name in [("ml", "p"), ("ml", "q"), ("dev", "p"), ("dev", "r")]:
        cache.upsert(_obj("v1", "Pod", ns, name))
    cache.upsert(_obj("batch/v1", "Job", "ml", "j"))
    keys = [("ml", "q"), ("ml", "gone"), ("dev", "p"), ("nowhere", "p"), ("ml", "p"), ("dev", "r")]
    found = cache.get_many("", "Pod", keys)
    expected = [cache.get("", "Pod", ns, name) for ns, name in keys]
    assert found == [o for o in expected if o is not None]
    assert [(o["metadata"]["namespace"], o["metadata"]["name"]) for o in found] == [
        ("ml", "q"),
        ("dev", "p"),
        ("ml", "p"),
        ("dev", "r"),
    ]
    assert cache.get_many("batch", "Job", [("ml", "j"), ("ml", "p")]) == [
        cache.get("batch", "Job", "ml", "j")
    ]


def test_a_waiter_gets_the_object_that_arrives() -> None:
    clock = iter(range(100))
    cache = ObjectCache(clock=lambda: float(next(clock)))
    obj = _obj("v1", "Pod", "ml", "p")
    cache.upsert(obj)
    found, waited = cache.wait_for(("", "Pod", "ml", "p"), timeout=5.0)
    assert found is obj and waited == 1.0
    # another uid under that name is not it (no budget: the answer comes at once)
    missing, _ = cache.wait_for(("", "Pod", "ml", "p"), timeout=0.0, uid="another")
    assert missing is None
