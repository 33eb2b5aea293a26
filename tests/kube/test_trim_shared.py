"""What the watch caches keep is interned and shared (issue 21 item 6), and still equal.

Decoded objects are new strings and dicts every time; a trim interns strings and keeps one
copy of equal subtrees below an object's identity. These tests check the values never
change (types included), that equal parts of separately decoded objects are one object, that
an object's own top level and metadata are never shared, that the table stays bounded, and
that a cache using it still updates and deletes (an in-memory API, as the informer tests).
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.gangs.test_shared_informers import JOBS, FakeApiClient, _eventually
from workload_map.kube.cache import InformerSet
from workload_map.kube.trim import SHARED, Trim, _Shared, trim_intermediate, trim_pod, trim_workload

POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {
        "name": "js-0-workers-0-1",
        "namespace": "fleet-a",
        "uid": "7e3d44bf",
        "resourceVersion": "17",
        "creationTimestamp": "2026-01-01T00:00:00Z",
        "labels": {"job-name": "js-0-workers-0", "batch.kubernetes.io/job-completion-index": "1"},
        "annotations": {"batch.kubernetes.io/job-completion-index": "1"},
        "ownerReferences": [
            {
                "apiVersion": "batch/v1",
                "kind": "Job",
                "name": "js-0-workers-0",
                "uid": "7c212a30",
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ],
        "managedFields": [{"manager": "kubelet"}],
    },
    "spec": {
        "nodeName": "gpu-node-3",
        "hostname": "h",
        "containers": [
            {
                "name": "trainer",
                "image": "registry.example/trainer:1",
                "resources": {
                    "requests": {"cpu": "8", "memory": "64Gi", "nvidia.com/gpu": "8"},
                    "limits": {"nvidia.com/gpu": "8"},
                },
            }
        ],
    },
    "status": {
        "phase": "Running",
        "conditions": [{"type": "Ready", "status": "True"}],
        "containerStatuses": [
            {"name": "trainer", "ready": True, "restartCount": 0, "image": "x", "started": True}
        ],
    },
}


def _decoded(obj: Any) -> Any:
    """A fresh copy as a watch delivers it (new strings, dicts and lists)."""
    return json.loads(json.dumps(obj))


def _same(a: Any, b: Any) -> bool:
    """Equal with the same types all the way down (``True`` is not ``1``, ``1.0`` not ``1``)."""
    if type(a) is not type(b):
        return False
    if type(a) is dict:
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if type(a) is list:
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def _plain_trim(tree: Any, value: Any) -> Any:
    """What a field tree keeps, without interning or sharing (the reference)."""
    if tree is True:
        return value
    if type(value) is dict:
        return {k: _plain_trim(sub, value[k]) for k, sub in tree.items() if k in value}
    if type(value) is list:
        return [_plain_trim(tree, item) for item in value]
    return value


def test_a_trimmed_pod_keeps_its_values() -> None:
    expected = _plain_trim(trim_pod.tree, POD)
    assert "hostname" not in expected["spec"] and "managedFields" not in expected["metadata"]
    got = trim_pod(_decoded(POD))
    assert _same(got, expected)


def test_separately_decoded_pods_share_equal_parts_but_not_their_identity() -> None:
    a, b = trim_pod(_decoded(POD)), trim_pod(_decoded(POD))
    assert a == b
    assert a is not b and a["metadata"] is not b["metadata"]
    # the owner reference, the container and its resources, the conditions: one object each
    assert a["metadata"]["ownerReferences"] is b["metadata"]["ownerReferences"]
    assert a["spec"]["containers"] is b["spec"]["containers"]
    assert a["status"]["conditions"] is b["status"]["conditions"]
    # labels are mostly an object's own (an index, a name): their strings are shared, the
    # dict is not looked up
    la, lb = a["metadata"]["labels"], b["metadata"]["labels"]
    assert la == lb and la is not lb
    assert all(ka is kb and la[ka] is lb[kb] for ka, kb in zip(la, lb, strict=True))
    # strings: namespace, label keys and values, node name, phase
    for path in (
        ("metadata", "namespace"),
        ("metadata", "creationTimestamp"),
        ("spec", "nodeName"),
        ("status", "phase"),
    ):
        x, y = a, b
        for key in path:
            x, y = x[key], y[key]
        assert x is y, path
    # an object's own name and uid are its own (interning them would only cost)
    assert a["metadata"]["name"] == b["metadata"]["name"]
    # the metadata is the object's own: filling it in leaves the other object alone
    a["metadata"]["uid"] = "changed"
    assert b["metadata"]["uid"] == "7e3d44bf"


def test_a_different_pod_shares_only_what_is_equal() -> None:
    other = _decoded(POD)
    other["metadata"]["labels"]["batch.kubernetes.io/job-completion-index"] = "2"
    other["status"]["containerStatuses"][0]["ready"] = False
    a, b = trim_pod(_decoded(POD)), trim_pod(other)
    assert a["metadata"]["labels"] is not b["metadata"]["labels"]
    assert b["metadata"]["labels"]["batch.kubernetes.io/job-completion-index"] == "2"
    assert a["metadata"]["labels"]["job-name"] is b["metadata"]["labels"]["job-name"]
    assert b["status"]["containerStatuses"][0]["ready"] is False
    assert a["status"]["containerStatuses"][0]["ready"] is True
    assert a["metadata"]["ownerReferences"] is b["metadata"]["ownerReferences"]


def test_scalars_of_other_types_are_never_merged() -> None:
    shared = _Shared(100)
    values = [{"a": True}, {"a": 1}, {"a": 1.0}, {"a": "1"}, {"a": None}, [1], [True], [1.0]]
    for _ in range(2):
        for value in values:
            got = shared.tree(_decoded(value))
            assert _same(got, value), (got, value)


def test_workloads_and_links_keep_their_values() -> None:
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "j", "namespace": "ml", "uid": "u", "labels": {"a": "b"}},
        "spec": {"parallelism": 4, "suspend": False, "x": [1, 2.5, None, {"y": True}]},
        "status": {"active": 4},
    }
    assert _same(trim_workload(_decoded(job)), job)
    link = trim_intermediate(_decoded(job))
    assert _same(link, {k: job[k] for k in ("apiVersion", "kind", "metadata")})
    a, b = trim_workload(_decoded(job)), trim_workload(_decoded(job))
    assert a["spec"] is b["spec"] and a["metadata"] is not b["metadata"]


JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-3, 3)
    | st.sampled_from([0.5, 1.0])
    | st.text(max_size=3),
    lambda children: (
        st.lists(children, max_size=3)
        | st.dictionaries(st.sampled_from(["a", "b", "c"]), children, max_size=3)
    ),
    max_leaves=12,
)


@settings(max_examples=200, deadline=None)
@given(JSON, JSON)
def test_any_values_come_back_equal_with_their_types(a: Any, b: Any) -> None:
    keep_all = Trim(True)
    for value in (a, b, a):
        obj = {"kind": "X", "metadata": {"name": "n", "labels": {"l": value}}, "spec": value}
        assert _same(keep_all(_decoded(obj)), obj)


def test_the_table_is_bounded_and_what_was_shared_stays_correct() -> None:
    shared = _Shared(8)
    kept = [shared.tree({"i": str(i), "sub": {"v": [i, i]}}) for i in range(50)]
    assert len(shared.table) <= 8
    assert kept == [{"i": str(i), "sub": {"v": [i, i]}} for i in range(50)]
    assert len(SHARED.table) <= SHARED.limit


def test_a_cache_of_shared_pods_updates_and_deletes() -> None:
    pods_path = "/api/v1/pods"
    first, second = _decoded(POD), _decoded(POD)
    second["metadata"]["name"] = second["metadata"]["uid"] = "other"
    client = FakeApiClient({pods_path: [first, second], JOBS: []})
    informers = InformerSet(client)
    try:
        pods = informers.get(pods_path, transform=trim_pod, kind="Pod", api_version="v1")
        assert pods.wait_synced(10)
        a, b = pods.get("fleet-a/js-0-workers-0-1"), pods.get("fleet-a/other")
        assert a is not None and b is not None
        assert a["spec"] is b["spec"]  # equal subtrees shared in the cache
        stream = _eventually(lambda: client.watches.get(pods_path))[-1]
        changed = _decoded(POD)
        changed["metadata"]["name"] = changed["metadata"]["uid"] = "other"
        changed["spec"]["nodeName"] = "gpu-node-9"
        stream.events.put({"type": "MODIFIED", "object": changed})
        updated = _eventually(
            lambda: (o := pods.get("fleet-a/other")) and o["spec"]["nodeName"] == "gpu-node-9" and o
        )
        assert updated["spec"]["containers"] is a["spec"]["containers"]
        assert a["spec"]["nodeName"] == "gpu-node-3"  # the other pod's shared parts unchanged
        stream.events.put({"type": "DELETED", "object": _decoded(first)})
        _eventually(lambda: pods.get("fleet-a/js-0-workers-0-1") is None)
        assert pods.get("fleet-a/other") is updated
        assert [o["metadata"]["name"] for o in pods.list()] == ["other"]
    finally:
        informers.stop()
