"""A replica is not ready before it watches every kind the Kartas of its first list cover: the
pods of a kind known only through a cluster Karta, created right after start, must not miss the
webhook because the kinds were chosen before the Karta watch had listed anything."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from tests.gangs import custom
from tests.gangs.conftest import StartWatch
from tests.gangs.test_shared_informers import FakeApiClient, _eventually, _resources
from workload_map.kube.discovery import APIResource

KARTAS = "/apis/run.ai/v1alpha1/kartas"
PARTSETS = f"/apis/{custom.GROUP}/v1/partsets"


class _SlowKartaList(FakeApiClient):
    """The Karta list answers late, as a loaded API server does right after start."""

    def __init__(self, objects: dict[str, list[dict[str, Any]]], release: threading.Event):
        super().__init__(objects)
        self.release = release
        #: set once the Karta list has been asked for (and is held until ``release``)
        self.listing = threading.Event()

    def get(self, path: str, query: Any = (), **kw: Any) -> Any:
        if path == KARTAS:
            self.listing.set()
            self.release.wait(60)  # a bound for a hang: the test releases it
        return super().get(path, query, **kw)


def _karta() -> dict[str, Any]:
    k = custom.karta(2)
    k["metadata"].update(uid="uid-karta", resourceVersion="4")
    return k


@pytest.mark.parametrize("kartas", [[], "one"])
def test_first_readiness_waits_for_the_kinds_of_the_first_karta_list(
    gang_watcher: StartWatch, kartas: Any
) -> None:
    served = [*_resources(), APIResource(custom.GROUP, "v1", custom.KIND, "partsets", "", True)]
    release = threading.Event()
    items = [_karta()] if kartas == "one" else []
    client = _SlowKartaList({KARTAS: items, PARTSETS: []}, release)
    rig = gang_watcher(client, served)
    runtime, watcher = rig.runtime, rig.watcher
    # the kinds were chosen before the Karta list came: nothing for PartSets yet
    assert PARTSETS not in runtime.watched
    # the Karta list asked for and held (waited for, not a sleep: a sleep can end before the
    # watch asked, and the check below would pass unexamined)
    assert client.listing.wait(60)
    assert not watcher.synced()  # the Karta watch has not listed
    release.set()
    _eventually(watcher.synced)
    paths = {i.path: i for i in rig.informers.all()}
    if items:
        assert PARTSETS in paths and paths[PARTSETS].synced
    else:
        assert PARTSETS not in paths
    # once ready, a Karta added later does not take the replica out of service
    assert watcher.synced()
