"""One InformerSet shared by the gang controller and the exporter: each path keeps the union of
what its consumers declared, whatever the order they register in (issue 14: batch Jobs are
owner-chain links for the gangs and workloads for the exporter), against an in-memory API."""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import pytest

from workload_map.kube.cache import InformerSet, TransformConflict, merge_transforms
from workload_map.kube.discovery import APIResource
from workload_map.kube.errors import NotFound
from workload_map.kube.trim import (
    ALL,
    ENGINE_POD,
    EXPORTER_POD,
    GANGS_POD,
    Trim,
    trim_intermediate,
    trim_pod,
    trim_workload,
)

if TYPE_CHECKING:  # the fixture module imports this one
    from tests.gangs.conftest import StartWatch

_END = object()


class _Stream:
    """A watch response that blocks until an event is pushed or it is aborted."""

    def __init__(self, fail_shutdown: bool = False) -> None:
        self.events: queue.Queue[object] = queue.Queue()
        self.fail_shutdown = fail_shutdown

    def docs(self) -> Iterator[dict[str, Any]]:
        while True:
            item = self.events.get()
            if item is _END:
                return
            assert isinstance(item, dict)
            yield item

    def abort(self) -> None:
        if self.fail_shutdown:  # as a socket that is not connected (yet, or any more)
            raise OSError(107, "Transport endpoint is not connected")
        self.events.put(_END)


class FakeApiClient:
    """Lists and watches of collections held in memory, answered as the API server would
    (the request path's ``get`` and ``stream``)."""

    def __init__(
        self, objects: dict[str, list[dict[str, Any]]], *, fail_shutdown: bool = False
    ) -> None:
        self.objects = objects
        self.fail_shutdown = fail_shutdown
        self.lists: dict[str, int] = {}
        self.watches: dict[str, list[_Stream]] = {}
        self.lock = threading.Lock()

    def get(
        self, path: str, query: Sequence[tuple[str, str]] = (), *, accept: str | None = None
    ) -> dict[str, Any]:
        with self.lock:
            self.lists[path] = self.lists.get(path, 0) + 1
        items = self.objects.get(path, [])
        return {"metadata": {"resourceVersion": "10"}, "items": items}

    def stream(
        self,
        path: str,
        query: Sequence[tuple[str, str]] = (),
        *,
        timeout: float | None = None,
        opened: Callable[[Any], None] | None = None,
    ) -> Iterator[dict[str, Any]]:
        assert dict(query).get("watch") == "true"
        stream = _Stream(self.fail_shutdown)
        with self.lock:
            self.watches.setdefault(path, []).append(stream)
        if opened is not None:
            opened(stream)
        yield from stream.docs()


def _job(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": name,
            "namespace": "ml",
            "uid": f"uid-{name}",
            "resourceVersion": "3",
            "labels": {"app": "train"},
            "managedFields": [{"manager": "kube-controller-manager"}],
        },
        "spec": {"parallelism": 4, "completions": 4, "suspend": False},
        "status": {"active": 4},
    }


def _pod(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": "ml",
            "uid": f"uid-{name}",
            "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{}", "a": "b"},
            "ownerReferences": [
                {
                    "apiVersion": "batch/v1",
                    "kind": "Job",
                    "name": "train",
                    "uid": "uid-train",
                    "controller": True,
                }
            ],
        },
        "spec": {
            "schedulerName": "default-scheduler",
            "containers": [{"name": "main", "image": "x", "env": [{"name": "E"}]}],
            "volumes": [{"name": "v"}],
        },
        "status": {
            "phase": "Pending",
            "conditions": [{"type": "PodScheduled", "reason": "Unschedulable"}],
            "qosClass": "BestEffort",
        },
    }


def _eventually(check: Callable[[], Any], timeout: float = 30.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError("condition not met in time")


JOBS = "/apis/batch/v1/jobs"
RSETS = "/apis/apps/v1/replicasets"


# -- field sets -------------------------------------------------------------------------------
def test_union_keeps_what_each_trim_keeps_and_drops_bookkeeping() -> None:
    pod = _pod("p")
    union = trim_pod(pod)
    for part in (ENGINE_POD, GANGS_POD, EXPORTER_POD):
        kept = part(pod)
        assert trim_pod.covers(part)
        # every field a consumer keeps is in the union's object, with the same value
        for section in ("metadata", "spec", "status"):
            for key, value in (kept.get(section) or {}).items():
                assert union[section][key] == value, (part, section, key)
    assert union["spec"]["containers"] == [{"name": "main"}]  # image, env gone
    assert "volumes" not in union["spec"] and "qosClass" not in union["status"]
    assert union["metadata"]["annotations"] == {"a": "b"}  # last-applied gone
    assert union["status"]["conditions"] == pod["status"]["conditions"]  # the exporter's
    assert not GANGS_POD.covers(ENGINE_POD) and not ENGINE_POD.covers(EXPORTER_POD)


def test_union_of_trees_is_node_wise() -> None:
    a = Trim({"metadata": {"name": ALL}, "spec": {"x": ALL}}, consumers=("a",))
    b = Trim({"metadata": {"labels": ALL}, "spec": ALL}, consumers=("b",))
    both = a | b
    obj = {"metadata": {"name": "n", "labels": {"k": "v"}, "uid": "u"}, "spec": {"x": 1, "y": 2}}
    assert both(obj) == {"metadata": {"name": "n", "labels": {"k": "v"}}, "spec": {"x": 1, "y": 2}}
    assert both.consumers == ("a", "b")
    assert both.covers(a) and both.covers(b) and not a.covers(b)
    assert a | b == b | a  # field sets compare by what they keep
    assert (trim_intermediate | trim_workload) == trim_workload


def test_workload_trim_keeps_spec_and_status_without_managed_fields() -> None:
    job = _job("j")
    out = trim_workload(job)
    assert out["spec"] == job["spec"] and out["status"] == job["status"]
    assert "managedFields" not in out["metadata"]
    assert "managedFields" in job["metadata"]  # the input is never mutated
    link = trim_intermediate(job)
    assert set(link) == {"apiVersion", "kind", "metadata"}
    assert link["metadata"]["labels"] == {"app": "train"}


def test_merge_rules() -> None:
    def f(o: dict[str, Any]) -> dict[str, Any]:
        return o

    def g(o: dict[str, Any]) -> dict[str, Any]:
        return o

    assert merge_transforms("/p", f, f) is f
    assert merge_transforms("/p", trim_workload, trim_intermediate) is trim_workload  # covers
    assert merge_transforms("/p", trim_intermediate, trim_workload) == trim_workload
    assert merge_transforms("/p", None, trim_pod) is None  # nothing trimmed keeps everything
    with pytest.raises(TransformConflict, match=r"/p is shared"):
        merge_transforms("/p", f, g)
    with pytest.raises(TransformConflict):
        merge_transforms("/p", f, trim_pod)
    with pytest.raises(TransformConflict):
        merge_transforms("/p", None, f)


# -- one InformerSet ------------------------------------------------------------------------------
def test_later_wider_consumer_relists_and_both_see_full_objects(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO)
    client = FakeApiClient({JOBS: [_job("train"), _job("eval")]})
    informers = InformerSet(client)
    try:
        seen: list[tuple[str, dict[str, Any]]] = []
        narrow = informers.get(
            JOBS, transform=trim_intermediate, kind="Job", api_version="batch/v1"
        )
        narrow.add_handler(lambda e, o: seen.append((e, o)))
        assert narrow.wait_synced(10)
        assert "spec" not in (narrow.get("ml/train") or {})
        _eventually(lambda: client.watches.get(JOBS))  # the first watch is open (and blocked)

        wide = informers.get(JOBS, transform=trim_workload, kind="Job", api_version="batch/v1")
        assert wide is narrow  # one informer, one cache
        assert wide.wait_synced(10)
        cached = _eventually(
            lambda: (wide.get("ml/train") or {}).get("spec") and wide.get("ml/train")
        )
        assert cached["spec"] == {"parallelism": 4, "completions": 4, "suspend": False}
        assert "managedFields" not in cached["metadata"]
        assert client.lists[JOBS] == 2 and wide.lists == 2

        # the first consumer got the wider objects as changes (waited for: the store holds an
        # object before its handlers run, and "eval" comes after "train")
        def modified() -> list[dict[str, Any]]:
            changed = [o for e, o in list(seen) if e == "MODIFIED"]
            names = sorted(o["metadata"]["name"] for o in changed)
            return changed if names == ["eval", "train"] else []

        assert all("spec" in o for o in _eventually(modified))
        assert wide.last_error is None
        # a narrower consumer afterwards changes nothing
        assert informers.get(JOBS, transform=trim_intermediate) is wide
        # a relist is asked for inside get() (widen) or never: none asked, none made (checked
        # as state, not after a sleep that a loaded machine can end before a relist ran)
        assert not wide._relist.is_set() and wide.transform == trim_workload
        assert client.lists[JOBS] == 2
        # the relist we caused is no error or warning in the logs
        assert not [r for r in caplog.records if r.levelno >= 30]
        assert any("widened" in r.getMessage() for r in caplog.records)
    finally:
        informers.stop()


def test_widening_survives_a_response_that_cannot_be_shut_down() -> None:
    client = FakeApiClient({JOBS: [_job("train")]}, fail_shutdown=True)
    informers = InformerSet(client)
    try:
        narrow = informers.get(
            JOBS, transform=trim_intermediate, kind="Job", api_version="batch/v1"
        )
        assert narrow.wait_synced(10)
        streams = _eventually(lambda: client.watches.get(JOBS))
        # no exception reaches the consumer (the operator failed to start on one)
        wide = informers.get(JOBS, transform=trim_workload, kind="Job", api_version="batch/v1")
        assert wide is narrow and not wide.wait_synced(0.2)  # the watch is still blocked
        bookmark = {
            "type": "BOOKMARK",
            "object": {"kind": "Job", "metadata": {"resourceVersion": "11"}},
        }
        streams[0].events.put(bookmark)  # the next event ends the stopped watch
        assert wide.wait_synced(10)
        assert (wide.get("ml/train") or {}).get("spec", {}).get("parallelism") == 4
    finally:
        informers.stop()


def _resources() -> list[APIResource]:
    return [
        APIResource("", "v1", "Pod", "pods", "pod", True),
        APIResource("", "v1", "Namespace", "namespaces", "namespace", False),
        APIResource("batch", "v1", "Job", "jobs", "job", True),
        APIResource("apps", "v1", "ReplicaSet", "replicasets", "replicaset", True),
        APIResource("apps", "v1", "StatefulSet", "statefulsets", "statefulset", True),
    ]


class _FakeApi:
    def transport(self) -> None:
        return None

    def get(self, path: str, **kw: Any) -> Any:
        raise NotFound(404, f"{path} not found")

    def request(self, method: str, path: str, *args: Any, **kw: Any) -> Any:
        raise NotFound(404, f"{path} not found")  # the start-up probes' dry runs


@pytest.mark.parametrize("gangs_first", [True, False])
def test_gang_watcher_and_exporter_feed_share_one_informer_set(
    monkeypatch: pytest.MonkeyPatch, gang_watcher: StartWatch, gangs_first: bool
) -> None:
    from workload_map.cluster import feed
    from workload_map.cluster.inventory import Inventory

    monkeypatch.setattr(feed, "discover", lambda transport: _resources())
    rs = {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {"name": "web-abc", "namespace": "ml", "uid": "uid-rs"},
        "spec": {"replicas": 3},
    }
    client = FakeApiClient(
        {JOBS: [_job("train")], RSETS: [rs], "/api/v1/pods": [_pod("train-0"), _pod("train-1")]}
    )
    rig = gang_watcher(client, begin=False)  # (tests/gangs/conftest.py)
    informers, ctx, runtime, watcher = rig.informers, rig.ctx, rig.runtime, rig.watcher
    inventory = Inventory()
    exporter = feed.InventoryFeed(inventory, None, informers, rediscover_seconds=3600)  # type: ignore[arg-type]
    try:
        first, second = (
            (lambda: watcher.start(ctx), exporter.start)
            if gangs_first
            else (exporter.start, lambda: watcher.start(ctx))
        )
        first()
        assert informers.wait_synced(10)
        second()
        assert informers.wait_synced(10)
        jobs = [i for i in informers.all() if i.path == JOBS]
        assert len(jobs) == 1
        # both the exporter's inventory and the webhook's cache hold the Job with its spec
        job = _eventually(lambda: runtime.cache.get("batch", "Job", "ml", "train"))
        _eventually(lambda: "spec" in (runtime.cache.get("batch", "Job", "ml", "train") or {}))
        assert jobs[0].get("ml/train")["spec"]["parallelism"] == 4  # type: ignore[index]
        assert job["metadata"]["labels"] == {"app": "train"}
        from workload_map.model import GVK

        entry = _eventually(lambda: inventory.find(GVK("batch", "v1", "Job"), "ml", "train"))
        assert entry.obj["spec"]["completions"] == 4  # the exporter reads the Job's spec
        assert entry.view is not None and len(entry.pods) == 2
        # pods: one trim object for both consumers, so one list and no relist
        pods = next(i for i in informers.all() if i.path == "/api/v1/pods")
        assert client.lists["/api/v1/pods"] == 1 and pods.transform is trim_pod
        pod = runtime.cache.get("", "Pod", "ml", "train-0")
        assert pod is not None and pod["status"]["conditions"][0]["reason"] == "Unschedulable"
        assert "volumes" not in pod["spec"]
        # the wider trim reached the Jobs informer whichever consumer came first; the gangs
        # watch Jobs as workloads themselves (the batch Job Karta has gangs): one list
        assert jobs[0].transform == trim_workload
        assert client.lists[JOBS] == 1
        # ReplicaSets: owner-chain links for the gangs, workloads for the exporter
        sets = next(i for i in informers.all() if i.path == RSETS)
        assert sets.transform == trim_workload
        assert client.lists[RSETS] == (2 if gangs_first else 1)  # widened: one relist
        assert sets.get("ml/web-abc")["spec"]["replicas"] == 3  # type: ignore[index]
    finally:
        exporter.stop()  # the fixture stops the watcher and the informers after it
