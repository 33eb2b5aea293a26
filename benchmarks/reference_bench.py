"""Our engine against the reference Go library on the same workloads: seconds and ratios.

Three measurements, on JobSet and LeaderWorkerSet workloads built here with the pods their
operators create (``benchmarks/refgo/workloads.py``) and our catalog's definitions (which the
pinned reference reads too):

- attribution + grouping of 100k pods of 1k workloads (target for us: 2 s);
- status of 10k workloads (target 0.5 s);
- the workload tree of one 2k-pod workload (``describe()`` has a 0.3 s target; the reference's
  ``tree.Build`` is spec-only, so ours is timed both as ``tree()`` and as ``describe()``).

The reference runs in ``wlmap-refgo bench`` (github.com/run-ai/karta at the version KAI pins),
which decodes its JSON input before timing, as a scheduler receives typed objects; we are
timed from plain dicts likewise. Without a Go toolchain the reference column says why it is
missing. ``WLMAP_BENCH_SCALE`` (default 1.0) shrinks the workload counts for a quick look.
"""

from __future__ import annotations

import copy
import importlib.util
import os
import sys
import time
import warnings
from collections.abc import Callable, Iterable
from pathlib import Path
from types import ModuleType
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent
CATALOG = HERE.parent / "src" / "workload_map" / "catalog" / "data"
DEFINITIONS = {
    "jobset": "jobset-x-k8s-io-jobset-v1alpha2.yaml",
    "lws": "leaderworkerset-x-k8s-io-leaderworkerset-v1.yaml",
}
REPEAT = 3

Workload = tuple[str, dict[str, Any], list[dict[str, Any]]]


def _load(name: str) -> ModuleType:
    qualified = f"wlmap_refgo_{name}"
    if qualified in sys.modules:
        return sys.modules[qualified]
    spec = importlib.util.spec_from_file_location(qualified, HERE / "refgo" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[qualified] = module
    spec.loader.exec_module(module)
    return module


def _template(gpus: int) -> dict[str, Any]:
    resources = {"requests": {"cpu": "4", "memory": "16Gi"}}
    if gpus:
        resources["limits"] = {"nvidia.com/gpu": str(gpus)}
    return {
        "spec": {"containers": [{"name": "main", "image": "trainer:1", "resources": resources}]}
    }


def jobset(index: int, workers: int, parallelism: int) -> dict[str, Any]:
    """A JobSet: one driver pod and ``workers`` jobs of ``parallelism`` pods, running."""
    job = {"parallelism": parallelism, "completions": parallelism, "template": _template(8)}
    return {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {"name": f"train-{index}", "namespace": "ml", "uid": f"js-{index:06d}"},
        "spec": {
            "replicatedJobs": [
                {"name": "driver", "replicas": 1, "template": {"spec": {"template": _template(0)}}},
                {"name": "workers", "replicas": workers, "template": {"spec": job}},
            ]
        },
        "status": {
            "conditions": [{"type": "StartupPolicyCompleted", "status": "True"}],
            "replicatedJobsStatus": [
                {"name": "driver", "ready": 1, "active": 1},
                {"name": "workers", "ready": workers, "active": workers},
            ],
        },
    }


def leaderworkerset(index: int, groups: int, size: int) -> dict[str, Any]:
    """A LeaderWorkerSet of ``groups`` groups of ``size`` pods, available."""
    return {
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "metadata": {"name": f"serve-{index}", "namespace": "ml", "uid": f"lws-{index:06d}"},
        "spec": {
            "replicas": groups,
            "leaderWorkerTemplate": {"size": size, "workerTemplate": _template(8)},
        },
        "status": {
            "replicas": groups,
            "readyReplicas": groups,
            "conditions": [{"type": "Available", "status": "True"}],
        },
    }


def workloads(count: int, pods_each: int, *, with_pods: bool = True) -> list[Workload]:
    """``count`` workloads, half JobSets and half LeaderWorkerSets, ~``pods_each`` pods each."""
    pod_source = _load("workloads")
    out: list[Workload] = []
    for i in range(count):
        if i % 2 == 0:
            parallelism = 8
            obj = jobset(i, max((pods_each - 1) // parallelism, 1), parallelism)
            name = "jobset"
        else:
            size = 4
            obj = leaderworkerset(i, max(pods_each // size, 1), size)
            name = "lws"
        out.append((name, obj, pod_source.operator_pods(obj) if with_pods else []))
    return out


def _kartas() -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for name, file in DEFINITIONS.items():
        with open(CATALOG / file, encoding="utf-8") as handle:
            out[name] = yaml.safe_load(handle)
    return out


def _best(fn: Callable[[], object], repeat: int = REPEAT) -> float:
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - started)
    return best


def _ours(kartas: dict[str, dict[str, Any]]) -> tuple[Any, dict[str, Any]]:
    import workload_map as wm

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        models = {name: wm.load_karta(copy.deepcopy(k)) for name, k in kartas.items()}
    return wm.Workload, models


def _attribute_all(workload_cls: Any, models: dict[str, Any], items: Iterable[Workload]) -> None:
    for name, obj, pods in items:
        workload = workload_cls(models[name], obj, pods=pods)
        _ = workload.placements
        workload.pod_groups()


def _status_all(workload_cls: Any, models: dict[str, Any], items: Iterable[Workload]) -> None:
    for name, obj, _pods in items:
        workload_cls(models[name], obj).phases()


def run() -> list[dict[str, object]]:
    scale = float(os.environ.get("WLMAP_BENCH_SCALE", "1"))
    kartas = _kartas()
    workload_cls, models = _ours(kartas)
    sets = {
        "attribution+grouping": (workloads(max(int(1000 * scale), 2), 100), 2.0),
        "status": (workloads(max(int(10000 * scale), 2), 0, with_pods=False), 0.5),
        "tree (one workload)": (workloads(1, max(int(2000 * scale), 8)), 0.3),
    }
    ours: dict[str, float] = {
        "attribution+grouping": _best(
            lambda: _attribute_all(workload_cls, models, sets["attribution+grouping"][0])
        ),
        "status": _best(lambda: _status_all(workload_cls, models, sets["status"][0])),
    }
    name, obj, pods = sets["tree (one workload)"][0][0]
    ours["tree (one workload)"] = _best(lambda: workload_cls(models[name], obj, pods=pods).tree())
    describe_seconds = _best(lambda: workload_cls(models[name], obj, pods=pods).describe())

    reference, why = _reference(kartas, sets)
    rows: list[dict[str, object]] = []
    for measure, (items, target) in sets.items():
        mine = ours[measure]
        theirs = reference.get(measure)
        rows.append(
            {
                "measure": measure,
                "workloads": len(items),
                "pods": sum(len(p) for _, _, p in items),
                "ours_s": f"{mine:.3f}",
                "reference_s": f"{theirs:.3f}" if theirs is not None else f"n/a ({why})",
                "reference/ours": f"{theirs / mine:.2f}x" if theirs is not None else "",
                "target_s": target,
                "verdict": "ok" if mine <= target else "SLOW",
            }
        )
    rows.append(
        {
            "measure": "describe() (one workload)",
            "workloads": 1,
            "pods": len(pods),
            "ours_s": f"{describe_seconds:.3f}",
            "reference_s": "n/a (the library has no describe view)",
            "reference/ours": "",
            "target_s": 0.3,
            "verdict": "ok" if describe_seconds <= 0.3 else "SLOW",
        }
    )
    return rows


def _reference(
    kartas: dict[str, dict[str, Any]], sets: dict[str, tuple[list[Workload], float]]
) -> tuple[dict[str, float], str]:
    client = _load("client")
    try:
        refgo = client.RefGo(client.build())
    except client.RefGoUnavailable as err:
        return {}, str(err)
    sections = {
        "attribution+grouping": "attribution",
        "status": "status",
        "tree (one workload)": "tree",
    }
    out: dict[str, float] = {}
    for measure, section in sections.items():
        result = refgo.bench(kartas, sets[measure][0], sections=[section], repeat=REPEAT)
        out[measure] = float(result["sections"][section]["seconds"])
    return out, ""


if __name__ == "__main__":
    sys.path.insert(0, str(HERE))
    from run import print_table

    print_table(run())
