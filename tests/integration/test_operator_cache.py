"""The shared watch cache (workload_map.kube.cache) on a real API server: paged initial
lists, the transform applied to listed and watched objects, handlers (late ones replayed),
bookmarks requested, and a watch resumed from its resourceVersion after a dropped connection."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest

from tests.operator.live import api_for, delete, eventually
from workload_map.kube.api import Api
from workload_map.kube.cache import Informer

from .harness import Kube


@pytest.fixture
def api(kube: Kube) -> Iterator[Api]:
    client = api_for(kube.kubeconfig)
    yield client
    client.close()


@pytest.fixture
def ns(api: Api) -> Iterator[str]:
    name = api.request(
        "POST",
        "/api/v1/namespaces",
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"generateName": "wlmap-cache-"}},
    )["metadata"]["name"]
    yield name
    delete(api, f"/api/v1/namespaces/{name}")


def trim(obj: dict[str, Any]) -> dict[str, Any]:
    meta = obj["metadata"]
    return {
        "kind": obj.get("kind"),
        "metadata": {k: meta.get(k) for k in ("name", "namespace", "resourceVersion")},
        "data": {"keep": (obj.get("data") or {}).get("keep")},
    }


def test_paged_list_transform_handlers_and_resume(api: Api, ns: str) -> None:
    path = f"/api/v1/namespaces/{ns}/configmaps"
    for i in range(7):
        body = {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": f"c{i}"},
            "data": {"keep": str(i), "drop": "x" * 1000},
        }
        api.request("POST", path, body)
    queries: list[list[tuple[str, str]]] = []
    source = api.transport()

    class Spy:  # the request path, with every list and watch query recorded
        def get(self, path: str, query: Any = (), **kw: Any) -> Any:
            queries.append(list(query))
            return source.get(path, query, **kw)

        def stream(self, path: str, query: Any = (), **kw: Any) -> Any:
            queries.append(list(query))
            return source.stream(path, query, **kw)

    informer = Informer(
        Spy(), path, transform=trim, kind="ConfigMap", api_version="v1", page_size=3
    )
    events: list[tuple[str, str]] = []
    lock = threading.Lock()

    def record(event: str, obj: dict[str, Any]) -> None:
        with lock:
            events.append((event, obj["metadata"]["name"]))
        assert "drop" not in obj["data"]

    informer.add_handler(record)
    informer.start()
    try:
        assert informer.wait_synced(30)
        lists = [q for q in queries if ("watch", "true") not in q]
        assert len(lists) == 3  # 7 objects, 3 per page
        assert all(("limit", "3") in q for q in lists)
        assert any(k == "continue" for q in lists[1:] for k, _ in q)
        cached = {o["metadata"]["name"]: o for o in informer.list()}
        assert sorted(cached) == [f"c{i}" for i in range(7)]
        assert cached["c3"] == {
            "kind": "ConfigMap",
            "metadata": {
                "name": "c3",
                "namespace": ns,
                "resourceVersion": cached["c3"]["metadata"]["resourceVersion"],
            },
            "data": {"keep": "3"},
        }
        watches = eventually(lambda: [q for q in queries if ("watch", "true") in q], 30, "a watch")
        assert ("allowWatchBookmarks", "true") in watches[0]
        assert any(k == "timeoutSeconds" for k, _ in watches[0])

        # a watched change is trimmed too
        api.merge_patch(f"{path}/c1", {"data": {"keep": "one", "drop": "y" * 1000}})
        eventually(
            lambda: (informer.get(f"{ns}/c1") or {}).get("data") == {"keep": "one"}, 30, "update"
        )
        api.request("DELETE", f"{path}/c2")
        eventually(lambda: informer.get(f"{ns}/c2") is None, 30, "delete")

        def handled() -> bool:
            with lock:
                return ("MODIFIED", "c1") in events and ("DELETED", "c2") in events

        # the store changes first, then the handlers run (on the watch's thread): waited for
        eventually(handled, 30, "the handlers saw the update and the delete")

        # a late subscriber gets what is cached first
        late: list[str] = []
        informer.add_handler(
            lambda e, o: late.append(o["metadata"]["name"]) if e == "ADDED" else None
        )
        assert sorted(late) == ["c0", "c1", "c3", "c4", "c5", "c6"]

        # the connection drops: the next watch resumes from the last resourceVersion, no relist
        rv = informer.resource_version
        lists_before = informer.lists
        watch = eventually(lambda: informer._watch, 30, "watching")
        watch.stop()
        api.request(
            "POST", path, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c7"}}
        )
        eventually(lambda: informer.get(f"{ns}/c7"), 30, "event after reconnect")
        resumed = [q for q in queries if ("watch", "true") in q][-1]
        assert ("resourceVersion", rv) in resumed or int(dict(resumed)["resourceVersion"]) >= int(
            rv or 0
        )
        assert informer.lists == lists_before == 1
    finally:
        informer.stop()
