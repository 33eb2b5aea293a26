"""Our engine against the reference Go library on the same workloads: seconds and ratios.

The workloads are ``engine_bench``'s (JobSet and LeaderWorkerSet objects with the pods their
operators create) under our catalog's definitions, which the pinned reference reads too:

- attribution + grouping of 100k pods of 1k workloads (our target: 2 s);
- status of 10k workloads (target 0.5 s);
- one 2k-pod workload: the reference's ``tree.Build`` (spec only) against our ``tree()`` (with
  pods), and our ``describe()`` (target 0.3 s), which the library has no counterpart for.

The reference runs in ``wlmap-refgo bench`` (github.com/run-ai/karta at the version KAI pins),
which decodes its JSON input before timing, as a scheduler receives typed objects; we are timed
from plain dicts likewise. Both columns are wall-clock seconds, best of three (the reference's
multi-second runs once). Without a Go toolchain the reference column says why it is missing.
``WLMAP_BENCH_SCALE`` (default 1.0) shrinks the workload counts, and the targets with them, for
a quick look.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

HERE = Path(__file__).resolve().parent
REPEAT = 3

# (definition name, object, pods); the definition name keys both engines' definitions.
Item = tuple[str, dict[str, Any], list[dict[str, Any]]]


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


def _engine_bench() -> ModuleType:
    if str(HERE) not in sys.path:
        sys.path.insert(0, str(HERE))
    import engine_bench

    return engine_bench


def _sets(scale: float) -> dict[str, tuple[list[Item], float]]:
    """The workloads of each measurement and our target for it (scaled with the work)."""
    gen = _engine_bench()
    half = max(int(500 * scale), 1)
    mixed: list[Item] = [("jobset", *gen.jobset(i)) for i in range(half)]
    mixed += [("lws", *gen.lws(i)) for i in range(half)]
    no_pods: list[dict[str, Any]] = []
    statuses: list[Item] = [(name, obj, no_pods) for name, obj, _ in mixed] * 10
    big_obj, big_pods = gen.jobset(0, workers=max(int(1998 * scale), 3))
    return {
        "attribution+grouping": (mixed, 2.0 * scale),
        "status": (statuses, 0.5 * scale),
        "tree (one workload)": ([("jobset", big_obj, big_pods)], 0.3 * scale),
    }


def _best(fn: Callable[[], object], repeat: int = REPEAT) -> float:
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - started)
    return best


def _definitions() -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """Our catalog's JobSet and LeaderWorkerSet definitions, as models and as Karta dicts."""
    from workload_map.catalog import catalog
    from workload_map.model import dump_karta

    models: dict[str, Any] = {}
    for name, gvk in (
        ("jobset", ("jobset.x-k8s.io", "v1alpha2", "JobSet")),
        ("lws", ("leaderworkerset.x-k8s.io", "v1", "LeaderWorkerSet")),
    ):
        model = catalog.get(*gvk)
        if model is None:
            raise RuntimeError(f"the catalog has no definition for {'/'.join(gvk)}")
        models[name] = model
    # dump_karta writes the CRD defaults, as a Karta stored in a cluster (read by KAI) has them.
    return models, {name: dump_karta(model) for name, model in models.items()}


def _ours(models: dict[str, Any], sets: dict[str, tuple[list[Item], float]]) -> dict[str, float]:
    from workload_map.engine import Workload

    mixed = sets["attribution+grouping"][0]
    statuses = sets["status"][0]
    name, obj, pods = sets["tree (one workload)"][0][0]
    for warm_name, warm_obj, warm_pods in (mixed[0], mixed[-1]):  # per-definition one-off costs
        Workload(models[warm_name], warm_obj, warm_pods).pod_groups()

    def attribute_and_group() -> None:
        for item_name, item_obj, item_pods in mixed:
            Workload(models[item_name], item_obj, item_pods).pod_groups()

    def status() -> None:
        for item_name, item_obj, _ in statuses:
            Workload(models[item_name], item_obj).phases()

    return {
        "attribution+grouping": _best(attribute_and_group),
        "status": _best(status),
        "tree (one workload)": _best(lambda: Workload(models[name], obj, pods).tree()),
        "describe() (one workload)": _best(lambda: Workload(models[name], obj, pods).describe()),
    }


def _reference(
    kartas: dict[str, dict[str, Any]], sets: dict[str, tuple[list[Item], float]]
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
        # The reference's long runs (seconds each) are timed once; the short one best of three.
        repeat = REPEAT if section == "tree" else 1
        result = refgo.bench(kartas, sets[measure][0], sections=[section], repeat=repeat)
        out[measure] = float(result["sections"][section]["seconds"])
    return out, ""


def run() -> list[dict[str, object]]:
    scale = float(os.environ.get("WLMAP_BENCH_SCALE", "1"))
    sets = _sets(scale)
    models, kartas = _definitions()
    ours = _ours(models, sets)
    reference, why = _reference(kartas, sets)
    measures: list[tuple[str, list[Item], float]] = [
        (measure, items, target) for measure, (items, target) in sets.items()
    ]
    measures.append(("describe() (one workload)", sets["tree (one workload)"][0], 0.3 * scale))
    rows: list[dict[str, object]] = []
    for measure, items, target in measures:
        mine = ours[measure]
        theirs = reference.get(measure)
        if theirs is not None:
            reference_text, ratio = f"{theirs:.3f}", f"{theirs / mine:.2f}x"
        elif measure.startswith("describe"):
            reference_text, ratio = "n/a (the library has no describe view)", ""
        else:
            reference_text, ratio = f"n/a ({why})", ""
        rows.append(
            {
                "measure": measure,
                "workloads": len(items),
                "pods": sum(len(p) for _, _, p in items),
                "ours_s": f"{mine:.3f}",
                "reference_s": reference_text,
                "reference/ours": ratio,
                "target_s": f"{target:.3f}",
                "verdict": "ok" if mine <= target else "SLOW",
            }
        )
    return rows


if __name__ == "__main__":
    sys.path.insert(0, str(HERE))
    from run import print_table

    print_table(run())
