"""The gang operator watches PriorityClasses (name -> value, nothing else kept) and plans with
their values: a stated minimum's ``minResources`` fill follows the classes the cluster defines,
and a changed value replans (issue 14)."""

from __future__ import annotations

from typing import Any

from prometheus_client import CollectorRegistry

import workload_map as wm
from tests.gangs.conftest import StartWatch
from tests.gangs.test_priority_fill import _with_classes
from tests.gangs.test_shared_informers import (
    FakeApiClient,
    _eventually,
)
from tests.gangs.test_tasks import karta, taskset
from workload_map.gangs import plan
from workload_map.gangs.config import GangConfig
from workload_map.gangs.controller import GangController
from workload_map.gangs.runtime import PRIORITY_CLASSES, TRIM_PRIORITY_CLASS, GangRuntime

# the two fills of taskset(minimum=2) with the gpu task's class "batch-high" (test_priority_fill)
BY_CLASS = {"cpu": "2", "nvidia.com/gpu": "4"}  # batch-high above 0: both gpu pods first
BY_SPEC = {"cpu": "3", "memory": str(2**30), "nvidia.com/gpu": "2"}  # unknown: p0, then a gpu
BY_LOW = {"cpu": "6", "memory": str(2**30)}  # below 0: p0, then a multi/p0 pod, no gpu pod


def _class(name: str, value: int, rv: str = "5") -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {
            "name": name,
            "uid": f"uid-{name}",
            "resourceVersion": rv,
            "managedFields": [{"manager": "kubectl"}],
        },
        "value": value,
        "globalDefault": False,
        "description": "batch training",
        "preemptionPolicy": "PreemptLowerPriority",
    }


def _min_resources(config: GangConfig) -> Any:
    k = wm.load_karta(karta(stated=True))
    obj = _with_classes(taskset(minimum=2), gpu="batch-high")
    (group,) = plan(k, obj, config=config).objects
    return group["spec"]["minResources"]


def test_class_events_change_the_fill_order_and_replan() -> None:
    runtime = GangRuntime(GangConfig(), miss_wait=0.0)
    seen: list[tuple[str, str]] = []
    runtime.listeners.append(lambda event, obj: seen.append((event, obj["kind"])))
    assert _min_resources(runtime.config) == BY_SPEC
    runtime.on_priority_class("ADDED", _class("batch-high", 500))
    assert dict(runtime.config.priority_values) == {"batch-high": 500}
    assert runtime.admitter.config is runtime.config  # the webhook plans with the same values
    assert _min_resources(runtime.config) == BY_CLASS
    assert seen == [("ADDED", "PriorityClass")]
    registry = CollectorRegistry()
    runtime.metrics.register(registry)
    assert registry.get_sample_value("workloadmap_gangs_priority_classes") == 1
    runtime.on_priority_class("MODIFIED", _class("batch-high", 500, rv="6"))
    assert len(seen) == 1  # same value: nothing to replan
    runtime.on_priority_class("MODIFIED", _class("batch-high", -10, rv="7"))
    assert _min_resources(runtime.config) == BY_LOW  # below the unclassed tasks (0) now
    runtime.on_priority_class("DELETED", _class("batch-high", -10))
    assert runtime.config.priority_values == ()
    assert len(seen) == 3


def test_configured_values_win_over_the_cluster() -> None:
    runtime = GangRuntime(GangConfig(priority_values=(("batch-high", 500),)), miss_wait=0.0)
    runtime.on_priority_class("ADDED", _class("batch-high", -10))
    runtime.on_priority_class("ADDED", _class("other", 7))
    assert dict(runtime.config.priority_values) == {"batch-high": 500, "other": 7}
    assert _min_resources(runtime.config) == BY_CLASS


def test_a_changed_class_unsettles_a_workload() -> None:
    """A reconcile that wrote nothing is skipped while its inputs stay the same: the class
    values are one of those inputs."""
    found: tuple[Any, ...] = (None, {"metadata": {"resourceVersion": "1"}}, [], {}, [], None)
    before = GangController._fingerprint(found, 1, ())
    assert GangController._fingerprint(found, 1, ()) == before
    assert GangController._fingerprint(found, 1, (("batch-high", 500),)) != before


def test_the_watcher_keeps_a_trimmed_informer_of_priority_classes(
    gang_watcher: StartWatch,
) -> None:
    client = FakeApiClient({PRIORITY_CLASSES: [_class("batch-high", 500), _class("low", 1)]})
    rig = gang_watcher(client)
    runtime, informers = rig.runtime, rig.informers
    assert informers.wait_synced(10)
    (classes,) = [i for i in informers.all() if i.path == PRIORITY_CLASSES]
    assert classes.transform == TRIM_PRIORITY_CLASS
    stored = classes.get("batch-high")
    assert stored == {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": "batch-high"},
        "value": 500,
        "globalDefault": False,  # the cluster's default class names native groups' members
    }
    _eventually(lambda: dict(runtime.config.priority_values) == {"batch-high": 500, "low": 1})
    assert _min_resources(runtime.config) == BY_CLASS
    # the watcher registered the room's metrics in the operator's registry (/metrics)
    assert rig.ctx.registry.get_sample_value("workloadmap_gangs_priority_classes") == 2
    # a watch event lowers the class: the fill order follows
    stream = _eventually(lambda: client.watches.get(PRIORITY_CLASSES))[-1]
    stream.events.put({"type": "MODIFIED", "object": _class("batch-high", -5, rv="11")})
    _eventually(lambda: dict(runtime.config.priority_values).get("batch-high") == -5)
    assert _min_resources(runtime.config) == BY_LOW
    # the cluster's default class survives the trim: native groups of classless members name it
    default = {**_class("std", 7, rv="12"), "globalDefault": True}
    stream.events.put({"type": "ADDED", "object": default})
    _eventually(lambda: runtime.config.default_priority_class == "std")
