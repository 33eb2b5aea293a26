"""``minResources`` below the tasks' replicas: the first ``minMember`` pods, tasks sorted by
their pods' priority-class value, highest first (Volcano's job controller and the Kubeflow
training operator sort the same way; a class they cannot find counts 0)."""

from __future__ import annotations

from typing import Any

import workload_map as wm
from tests.gangs.test_tasks import karta, taskset
from workload_map.engine import Workload
from workload_map.gangs import plan
from workload_map.gangs.config import GangConfig
from workload_map.gangs.tasks import BUILTIN_PRIORITIES, plan_tasks

MEMBERS = {"root", "p0", "multi"}


def _with_classes(obj: dict[str, Any], **classes: str) -> dict[str, Any]:
    """Set ``priorityClassName`` on the templates: ``p0=...`` for the plain task, ``gpu=`` /
    ``multi_p0=`` for the instances of ``multi``."""
    spec = obj["spec"]
    where = {"p0": spec["p0"], "gpu": spec["multi"]["gpu"], "multi_p0": spec["multi"]["p0"]}
    for key, name in classes.items():
        where[key]["template"]["spec"]["priorityClassName"] = name
    return obj


def _min_resources(obj: dict[str, Any], priorities: dict[str, int] | None = None) -> Any:
    k = wm.load_karta(karta(stated=True))
    wl = Workload(k, obj)
    (group,) = wl.pod_groups()
    return plan_tasks(wl, k, group, MEMBERS, priorities=priorities).min_resources


def test_without_classes_the_spec_order_fills_the_minimum() -> None:
    # p0 (2 CPU, 1Gi), then multi's instances as keys[] lists them: gpu (1 CPU, 2 GPUs) x2
    assert _min_resources(taskset(minimum=3)) == {
        "cpu": "4",
        "memory": str(2**30),
        "nvidia.com/gpu": "4",
    }


def test_a_higher_class_fills_first() -> None:
    obj = _with_classes(taskset(minimum=3), multi_p0="high", p0="low")
    # multi/p0 (4 CPU) x2 first, then p0 (2 CPU, 1Gi); gpu (no class, 0) left out
    assert _min_resources(obj, {"high": 1000, "low": 10}) == {
        "cpu": "10",
        "memory": str(2**30),
    }


def test_an_unknown_class_counts_zero_and_equal_values_keep_the_spec_order() -> None:
    obj = _with_classes(taskset(minimum=3), p0="unknown", gpu="unknown")
    assert _min_resources(obj, {"high": 1000}) == _min_resources(taskset(minimum=3))


def test_built_in_classes_are_known_without_a_lookup() -> None:
    obj = _with_classes(taskset(minimum=2), multi_p0="system-cluster-critical")
    assert (
        BUILTIN_PRIORITIES["system-node-critical"] > BUILTIN_PRIORITIES["system-cluster-critical"]
    )
    assert _min_resources(obj) == {"cpu": "8"}  # multi/p0's two pods


def test_the_planner_passes_the_configured_values() -> None:
    k = wm.load_karta(karta(stated=True))
    obj = _with_classes(taskset(minimum=2), gpu="batch-high")
    config = GangConfig(volcano_queue="q", priority_values=(("batch-high", 500),))
    (group,) = plan(k, obj, config=config).objects
    assert group["spec"]["minResources"] == {"cpu": "2", "nvidia.com/gpu": "4"}  # 2 gpu pods
    (default,) = plan(k, obj).objects  # the class unknown: the spec order, p0 then a gpu pod
    assert default["spec"]["minResources"] == {
        "cpu": "3",
        "memory": str(2**30),
        "nvidia.com/gpu": "2",
    }
