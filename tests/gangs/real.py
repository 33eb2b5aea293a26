"""Helpers of the end-to-end tests with real controllers (``tests/integration/test_gangs_real_*``):
workloads whose pods a real controller makes (the tests create only the workload), and one
round of the checks every controller gets:

- **short**: room for one pod fewer than the gang: none binds (observed once the scheduler
  reported the gang's pods ``FailedScheduling``), then one more node and all bind;
- **room**: room for the whole gang from the start: all bind; the seconds from the workload's
  creation to the whole gang bound are measured and printed, never asserted (issue 26);
- **plain**: the same workload in a namespace not opted in, room for one pod fewer: the pods
  bind one by one (all but one bound, the last reported ``FailedScheduling``).

The three run at once, each in its own namespace and node pool."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from tests.gangs.e2e import (
    NODE,
    NODE_LABEL,
    bound,
    create,
    failed_scheduling,
    make_namespace,
    pod_spec,
    pods_in,
    wait,
)
from workload_map.kube.api import Api

Obj = dict[str, Any]
ROOT = Path(__file__).resolve().parents[2]
#: a workload made in a namespace for a node pool: ``make(api, ns, pool) -> the stored object``
Make = Callable[[Api, str, str], Obj]
#: the gang backend's mark on a pod (``None``: not joined)
Mark = Callable[[Obj], str | None]


def native_mark(pod: Obj) -> str | None:
    return ((pod["spec"].get("schedulingGroup") or {}).get("podGroupName")) or None


def coscheduling_mark(pod: Obj) -> str | None:
    return (pod["metadata"].get("labels") or {}).get("scheduling.x-k8s.io/pod-group")


# -- workloads a real controller turns into pods ------------------------------------------------


def indexed_job(
    api: Api, ns: str, pool: str, *, size: int = 4, scheduler: str | None = None, gpus: int = 8
) -> Obj:
    """An Indexed Job of ``size`` pods stating its gang minimum
    (``kai.scheduler/batch-min-member``), as a user writes it; the Job controller makes the
    pods."""
    spec: Obj = {**pod_spec(pool, gpus), "restartPolicy": "Never"}
    if scheduler:
        spec["schedulerName"] = scheduler
    body = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "train", "annotations": {"kai.scheduler/batch-min-member": str(size)}},
        "spec": {
            "completionMode": "Indexed",
            "completions": size,
            "parallelism": size,
            "backoffLimit": 0,
            "template": {"spec": spec},
        },
    }
    return create(api, f"/apis/batch/v1/namespaces/{ns}/jobs", body)


def statefulset(api: Api, ns: str, pool: str, *, size: int = 3) -> Obj:
    """A StatefulSet (pods made in parallel by the StatefulSet controller): gang-scheduled only
    through ``statefulset_karta()``, a cluster Karta replacing the catalog's."""
    labels = {"app": "shards"}
    body = {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "shards"},
        "spec": {
            "replicas": size,
            "serviceName": "shards",
            "podManagementPolicy": "Parallel",
            "selector": {"matchLabels": labels},
            "template": {"metadata": {"labels": labels}, "spec": pod_spec(pool)},
        },
    }
    return create(api, f"/apis/apps/v1/namespaces/{ns}/statefulsets", body)


STATEFULSET_KARTA = "statefulsets-as-gangs"


def statefulset_karta() -> Obj:
    """The catalog's StatefulSet Karta with one gang of all its pods: what a platform team
    writes to gang-schedule a kind the catalog describes without gangs."""
    catalog = ROOT / "src/workload_map/catalog/data/apps-statefulset-v1.yaml"
    karta: Obj = yaml.safe_load(catalog.read_text())
    karta["metadata"] = {"name": STATEFULSET_KARTA}
    root = karta["spec"]["structureDefinition"]["rootComponent"]["name"]
    karta["spec"]["optimizationInstructions"] = {
        "gangScheduling": {"podGroups": [{"name": "shards", "members": [{"componentName": root}]}]}
    }
    return karta


def raycluster(
    api: Api,
    ns: str,
    pool: str,
    *,
    workers: int = 2,
    labels: dict[str, str] | None = None,
    scheduler: str | None = None,
) -> Obj:
    """A RayCluster (head + ``workers`` GPU workers, ``minReplicas`` = ``replicas``); KubeRay
    makes the head and worker pods."""

    def template() -> Obj:
        spec = pod_spec(pool)
        spec["containers"][0]["name"] = "ray-head"
        if scheduler:
            spec["schedulerName"] = scheduler
        return {"spec": spec}

    worker = template()
    worker["spec"]["containers"][0]["name"] = "ray-worker"
    body = {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": "rc", "labels": dict(labels or {})},
        "spec": {
            "headGroupSpec": {"rayStartParams": {}, "template": template()},
            "workerGroupSpecs": [
                {
                    "groupName": "gpu",
                    "replicas": workers,
                    "minReplicas": workers,
                    "maxReplicas": workers,
                    "rayStartParams": {},
                    "template": worker,
                }
            ],
        },
    }
    return create(api, f"/apis/ray.io/v1/namespaces/{ns}/rayclusters", body)


def pytorchjob(
    api: Api, ns: str, pool: str, *, workers: int = 2, scheduler: str | None = None
) -> Obj:
    """A PyTorchJob (master + ``workers``); the training operator makes the pods."""

    def replica(n: int) -> Obj:
        spec = pod_spec(pool)
        spec["containers"][0]["name"] = "pytorch"  # the operator's required container name
        if scheduler:
            spec["schedulerName"] = scheduler
        return {"replicas": n, "restartPolicy": "OnFailure", "template": {"spec": spec}}

    body = {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {"name": "ddp"},
        "spec": {"pytorchReplicaSpecs": {"Master": replica(1), "Worker": replica(workers)}},
    }
    return create(api, f"/apis/kubeflow.org/v1/namespaces/{ns}/pytorchjobs", body)


# -- one round of checks ---------------------------------------------------------------------------


@dataclass
class Round:
    """What one controller's round measured (printed for the notes; asserted where it is the
    gang's behaviour: ``short`` 0, ``room`` and ``after_node`` the whole gang)."""

    name: str
    size: int
    short: int  # bound while the gang was one node short
    after_node: int  # bound once the missing node came
    room: int  # bound with room from the start
    seconds: float  # the workload's creation to the whole gang bound, with room from the start
    plain: int  # bound, not opted in, one node short (pod by pod: size - 1)
    namespaces: tuple[str, str, str]  # short, room, plain

    def line(self) -> str:
        return (
            f"real-gang {self.name}: size {self.size}; bound while short {self.short}, "
            f"then {self.after_node} with the missing node; with room {self.room} in "
            f"{self.seconds:.2f} s from creation; not opted in {self.plain} of {self.size}"
        )


def _nodes(fake_nodes: Any, pool: str, count: int) -> None:
    if count:
        fake_nodes.add(count, NODE, labels={NODE_LABEL: pool})


#: a gang the scheduler gave up on is tried again when a node is added, else at the latest after
#: kube-scheduler's podMaxInUnschedulablePodsDuration (300 s, the default of both schedulers here)
#: plus podMaxBackoffSeconds (10 s) and the coscheduling Permit wait (10 s); the wait for the
#: released gang takes that bound from the configuration (a loaded run once saw the RayCluster
#: under scheduler-plugins miss 120 s)
RETRY_BOUND = 300.0 + 10.0 + 10.0


def gang_round(
    name: str,
    api: Api,
    fake_nodes: Any,
    token: str,
    make: Make,
    size: int,
    *,
    mark: Mark = native_mark,
    make_plain: Make | None = None,
    bind_timeout: float = 120.0,
) -> Round:
    """The three checks of the module docstring at once (see there); returns the figures.
    ``make_plain`` makes the workload not opted in where it differs (default ``make``)."""
    short_ns, room_ns = make_namespace(api, token), make_namespace(api, token)
    plain_ns = make_namespace(api, token, opted_in=False)
    pools = {ns: f"{token}-{name}-{i}" for i, ns in enumerate((short_ns, room_ns, plain_ns))}
    _nodes(fake_nodes, pools[short_ns], size - 1)
    _nodes(fake_nodes, pools[room_ns], size)
    _nodes(fake_nodes, pools[plain_ns], size - 1)
    make(api, short_ns, pools[short_ns])
    (make_plain or make)(api, plain_ns, pools[plain_ns])
    start = time.monotonic()
    make(api, room_ns, pools[room_ns])
    wait(
        f"{name}: the whole gang bound with room",
        lambda: len(bound(api, room_ns)) == size,
        bind_timeout,
    )
    seconds = time.monotonic() - start
    wait(f"{name}: {size} pods of the short gang", lambda: len(pods_in(api, short_ns)) == size)
    for ns in (short_ns, room_ns):
        pods = pods_in(api, ns)
        assert len(pods) == size, [p["metadata"]["name"] for p in pods]
        groups = {mark(p) for p in pods}
        assert len(groups) == 1 and None not in groups, (name, ns, groups)
    # the scheduler tried the short gang and found no room for all: nothing is bound
    wait(
        f"{name}: FailedScheduling for the short gang",
        lambda: failed_scheduling(api, short_ns),
        bind_timeout,
    )
    short = len(bound(api, short_ns))
    # not opted in: no mark, the pods bind one by one, all but the one without room
    wait(
        f"{name}: pods bound one by one",
        lambda: len(bound(api, plain_ns)) == size - 1,
        bind_timeout,
    )
    wait(
        f"{name}: FailedScheduling for the pod without room",
        lambda: failed_scheduling(api, plain_ns) - set(bound(api, plain_ns)),
        bind_timeout,
    )
    plain_pods = pods_in(api, plain_ns)
    assert len(plain_pods) == size and not any(mark(p) for p in plain_pods)
    plain = len(bound(api, plain_ns))
    _nodes(fake_nodes, pools[short_ns], 1)
    wait(
        f"{name}: the short gang bound once it has room",
        lambda: len(bound(api, short_ns)) == size,
        max(bind_timeout, RETRY_BOUND),
    )
    after_node = len(bound(api, short_ns))
    result = Round(
        name, size, short, after_node, size, seconds, plain, (short_ns, room_ns, plain_ns)
    )
    print(result.line())
    return result


__all__ = [
    "STATEFULSET_KARTA",
    "Round",
    "coscheduling_mark",
    "gang_round",
    "indexed_job",
    "native_mark",
    "pytorchjob",
    "raycluster",
    "statefulset",
    "statefulset_karta",
]
