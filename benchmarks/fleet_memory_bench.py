"""Memory of a cached fleet (issue 21 item 6): peak RSS of the exporter and of ``wlmap serve``.

A fresh process per figure holds what the process would: the fleet of ``benchmarks/fleet.py``
(JobSets, their Jobs and pods as the API server stores them, 10k JobSets / 100k pods by
default) arrives as a watch delivers it — pages of 500 objects decoded from JSON (new strings
and dicts each time, as ``kube/transport.py`` decodes them), each object trimmed as the
informer trims it (``kube/trim.py``) and fed to the inventory, as ``cluster/feed.py`` wires it;
then the exporter's first exposition, written out as its server streams it (the standalone
exporter), or the web list's first page (``wlmap serve``). Figures: RSS once the caches are fed, and the peak (``ru_maxrss``), in GiB;
the cached pods' bytes counted by ``tracemalloc`` on a 1/10 sample are a third column.

``operator`` is ``wlmap operator`` with gangs and metrics: one informer per kind (one store,
each object trimmed once with the union of its consumers' trims, as ``kube/cache.py``'s
``InformerSet`` merges them) feeding both the inventory (exporter) and the gang runtime with
its controller, as their watches are wired; then the exporter's first exposition and the gang
controller's cold resync of every JobSet.

``python benchmarks/fleet_memory_bench.py --baseline DIR`` runs the same children with another
checkout's sources (a ``git worktree`` of main), interleaved, and prints both with the ratio.
``WLMAP_BENCH_JOBSETS`` sets the fleet size (pods are 10 per JobSet). Memory is counted, never
asserted (docs/testing.md).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
JOBSETS = int(os.environ.get("WLMAP_BENCH_JOBSETS", "10000"))

CHILD = r"""
import datetime as dt, gc, hashlib, inspect, json, os, random, resource, sys, tracemalloc, types, uuid
sys.path.insert(0, sys.argv[3])
import fleet
from workload_map.cluster.inventory import Inventory
from workload_map.kube.trim import trim_intermediate, trim_pod

jobsets, what = int(sys.argv[1]), sys.argv[2]
gc.set_threshold(50_000, 20, 100)  # the operator's settings (operator/main.py)
spec = fleet.FleetSpec(jobsets=jobsets, jobs_per_jobset=2, pods_per_job=5, namespaces=2)


def pages(kind):
    # what one list of the kind delivers, 500 objects a page, each page decoded anew; each
    # kind's pass makes the same fleet (the same uids: owner references resolve)
    rng = random.Random(21)
    fleet.uuid = types.SimpleNamespace(
        uuid4=lambda: uuid.UUID(int=rng.getrandbits(128), version=4)
    )
    page = []
    for index in range(jobsets):
        for _, obj in fleet._etcd_objects(spec, index, 100):
            if obj["kind"] == kind:
                page.append(obj)
                if len(page) == 500:
                    yield json.loads(json.dumps(page))
                    page = []
    if page:
        yield json.loads(json.dumps(page))


def rss_gib():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**30


if what == "sample":
    # bytes held per cached pod (tracemalloc: allocations still alive after the feed)
    tracemalloc.start()
    store = {}
    for page in pages("Pod"):
        for obj in page:
            kept = trim_pod(obj)
            store[kept["metadata"]["namespace"] + "/" + kept["metadata"]["name"]] = kept
    del page, obj, kept
    gc.collect()
    print(json.dumps({"pod_bytes": tracemalloc.get_traced_memory()[0] / len(store)}))
    raise SystemExit(0)

inv = Inventory()
if what == "serve":
    try:  # the inventory wlmap serve makes (its list needs no gangs or pod places)
        from workload_map.web.source import new_inventory
        inv = new_inventory()
    except ImportError:  # a tree from before it
        pass
stores = {"JobSet": {}, "Job": {}, "Pod": {}}  # the informers' stores
if what == "operator":
    # one informer per kind serves both rooms (operator/main.py's InformerSet): the trim is the
    # union of theirs, the handlers are the feed's and the gang watcher's
    from workload_map.gangs.config import GangConfig
    from workload_map.gangs.runtime import GangRuntime
    from workload_map.kube.trim import trim_workload
    rt = GangRuntime(GangConfig(), miss_wait=0.0)
    both = lambda apply: (lambda e, o: (apply(e, o), rt.on_object(e, o)))
    workload = inv.apply_workload
    if "trimmed" in inspect.signature(workload).parameters:
        # as cluster/feed.py hands the informer's (trimmed) object over
        workload = lambda e, o: inv.apply_workload(e, o, trimmed=True)
    feeds = (
        ("JobSet", both(workload), trim_workload),
        ("Job", both(workload), trim_workload | trim_intermediate),
        ("Pod", both(inv.apply_pod), trim_pod),
    )
else:
    feeds = (
        ("JobSet", inv.apply_workload, lambda o: o),  # the inventory trims workloads itself
        ("Job", inv.apply_intermediate, trim_intermediate),
        ("Pod", inv.apply_pod, trim_pod),
    )
for kind, apply, trim in feeds:
    for page in pages(kind):
        for obj in page:
            kept = trim(obj)
            stores[kind][kept["metadata"]["namespace"] + "/" + kept["metadata"]["name"]] = kept
            apply("ADDED", kept)
    del page
if what == "operator":
    import argparse
    from workload_map.gangs.controller import GangController
    from workload_map.operator.controllers import OperatorConfig
    args = argparse.Namespace(
        gang_missed_member_mode="lower-minimum", gang_resync_period=300.0, gang_workers=1
    )
    ctl = GangController(rt, OperatorConfig(args=args, namespace="wlmap", identity="bench"))
    ctl.execute = lambda workload, actions: None  # the writes are the API server's memory
    for obj in list(rt.cache):  # what the controller's listener indexes as the watches deliver
        ctl.on_event("ADDED", obj)
gc.collect(); gc.freeze()
out = {"pods": len(stores["Pod"]), "fed_gib": rss_gib()}
if what in ("exporter", "operator"):
    from workload_map.exporter import WorkloadCollector
    # a fixed clock: the phases' first-seen times are then the same text in both trees
    collector = WorkloadCollector(inv, now=lambda: 1767225600.0)
    if hasattr(collector, "exposition_chunks"):
        # what the server does with a scrape: the memo's pieces, written a block at a time
        from workload_map.exporter import service
        size, digest = 0, hashlib.sha256()
        with open(os.devnull, "wb") as sink:
            for block in service._blocks(collector.exposition_chunks(), service.WRITE_BYTES):
                sink.write(block)
                digest.update(block)
                size += len(block)
    else:  # a tree from before the streamed exposition: one body of bytes
        text = collector.exposition()
        size, digest = len(text), hashlib.sha256(text)
        del text
    out["text_mib"] = size / 2**20
    out["text_sha256"] = digest.hexdigest()[:16]  # the same text in both trees
if what == "operator":
    keys = list(ctl._by_uid.values())
    for key in keys:
        ctl.reconcile_key(key)
    out["gang_workloads"] = len(keys)
if what == "serve":
    from workload_map.web import views
    views.rows(inv, views.Filters(), dt.datetime.now(dt.timezone.utc))
out["peak_gib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / 2**30
print(json.dumps(out))
"""

PROCESSES = ("exporter", "serve", "operator")


def measure(what: str, src: Path | None = None, jobsets: int = JOBSETS) -> dict[str, float]:
    """One child (``exporter``, ``serve`` or ``sample``) with ``src`` first on the path."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(src or ROOT / "src")
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(jobsets), what, str(Path(__file__).parent)],
        capture_output=True,
        text=True,
        timeout=3600,
        cwd=ROOT,
        env=env,
    )
    if done.returncode != 0:
        raise RuntimeError(done.stderr[-4000:])
    out: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return out


def run() -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    sample = measure("sample", jobsets=max(1, JOBSETS // 10))
    for what in PROCESSES:
        r = measure(what)
        rows.append(
            {
                "process": what,
                "fleet": f"{JOBSETS} JobSets / {int(r['pods'])} pods",
                "RSS fed GiB": f"{r['fed_gib']:.2f}",
                "peak RSS GiB": f"{r['peak_gib']:.2f} (target <= 0.5)",
                "bytes per cached pod": f"{sample['pod_bytes']:.0f}",
            }
        )
    return rows


def against(baseline: str) -> None:
    """Each child with the baseline's sources, then this tree's, back to back; the ratios."""
    trees = (("baseline", Path(baseline) / "src"), ("this tree", ROOT / "src"))
    print(f"load {os.getloadavg()[0]:.2f}", flush=True)
    for what in ("sample", *PROCESSES):
        got = {}
        for tree, src in trees:
            got[tree] = measure(what, src, max(1, JOBSETS // 10) if what == "sample" else JOBSETS)
            print(what, tree, json.dumps(got[tree]), flush=True)
        for key in got["baseline"]:
            if key == "pods":
                continue
            if key == "text_sha256":
                same = got["baseline"][key] == got["this tree"].get(key)
                print(f"{what:<9} {key:<10} {'the same text' if same else 'TEXTS DIFFER'}")
                continue
            b, t = got["baseline"][key], got["this tree"][key]
            print(f"{what:<9} {key:<10} baseline {b:10.3f}  this tree {t:10.3f}  ratio {t / b:.2f}")
    print(f"load {os.getloadavg()[0]:.2f}", flush=True)


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--baseline":
        against(sys.argv[2])
    else:
        for row in run():
            print("  ".join(f"{k}: {v}" for k, v in row.items()))
