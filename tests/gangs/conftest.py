"""Fixtures of the gang tests: a GangWatcher on a fake API client, as the operator starts it."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import pytest

from tests.gangs.test_shared_informers import FakeApiClient, _FakeApi, _resources
from workload_map.gangs import watcher as watcher_module
from workload_map.gangs.config import GangConfig
from workload_map.gangs.runtime import GangRuntime
from workload_map.gangs.watcher import GangWatcher
from workload_map.kube.cache import InformerSet
from workload_map.kube.discovery import APIResource
from workload_map.operator.controllers import OperatorConfig, OperatorContext


@dataclass
class WatchRig:
    """One replica's gang watch: the informers on ``client``, the context, runtime and watcher."""

    client: FakeApiClient
    informers: InformerSet
    ctx: OperatorContext
    runtime: GangRuntime
    watcher: GangWatcher


StartWatch = Callable[..., WatchRig]


@pytest.fixture
def gang_watcher(monkeypatch: pytest.MonkeyPatch) -> Iterator[StartWatch]:
    """``start(client, served=None, *, begin=True)``: discovery answering ``served`` (the
    built-in kinds by default), a GangWatcher on ``client``'s informers, started unless
    ``begin`` is False; every rig is stopped at the end (context, watcher, informers)."""
    rigs: list[WatchRig] = []

    def start(
        client: FakeApiClient,
        served: Sequence[APIResource] | None = None,
        *,
        begin: bool = True,
    ) -> WatchRig:
        kinds = list(served) if served is not None else _resources()
        monkeypatch.setattr(watcher_module, "discover", lambda transport: kinds)
        informers = InformerSet(client)
        cfg = OperatorConfig(
            args=argparse.Namespace(gang_probe_namespace="wlmap"),
            namespace="wlmap",
            identity="test",
        )
        # a fake API (nothing but not-found) and no event recorder: the watch writes nothing
        api: Any = _FakeApi()
        events: Any = None
        ctx = OperatorContext(config=cfg, api=api, informers=informers, events=events)
        runtime = GangRuntime(GangConfig(), miss_wait=0.0)
        rig = WatchRig(client, informers, ctx, runtime, GangWatcher(runtime, cfg))
        rigs.append(rig)
        if begin:
            rig.watcher.start(ctx)
        return rig

    yield start
    for rig in rigs:
        rig.ctx.stopping.set()
        rig.watcher.stop()
        rig.informers.stop()
