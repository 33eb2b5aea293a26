"""Cold evaluation of a fleet (issue 21 item 4): the exporter, the web list and the gang resync.

In one fresh process, as the operator with gangs and metrics runs them: the synthetic cluster
(benchmarks/synthetic.py, 10k workloads / 100k pods) is fed into the inventory, and the gang
runtime's caches get 10k JobSets with 100k pods (benchmarks/gangs_bench.py), as the watches
deliver them (pages of 500 decoded from JSON, as the watches decode them, then trimmed as
the informers store them); then, the caches synced (``gc.freeze`` as the operator does), the process CPU
time of: the exporter's first complete exposition, the web view's first page of the list
(the same inventory, so what the exporter evaluated is shared), and the gang controller's cold
resync. Also the web list alone in a second inventory (``wlmap serve``'s first page) and the
peak RSS. CPU time, not wall: the project's machines are shared (docs/testing.md). The peak RSS
here is of two fleets (the inventory's and the gang runtime's, built apart) and a second
inventory, no process's: ``fleet_memory_bench.py``'s ``operator`` figure is the operator's,
one informer store per kind feeding both rooms.

``python benchmarks/fleet_eval_bench.py --baseline DIR [ROUNDS]`` runs the same child with
another checkout's sources (a ``git worktree`` of main), rounds interleaved (5 by default), and
prints the median of each figure for both, with their ratio. Targets: all three <= 3 s of CPU together, the gang resync <= 3 s, the
web first page <= 2 s.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WORKLOADS = int(os.environ.get("WLMAP_BENCH_WORKLOADS", "10000"))

CHILD = r"""
import datetime as dt, gc, json, resource, sys, time
sys.path.insert(0, sys.argv[3])
sys.path.insert(0, sys.argv[4])
from synthetic import cluster
from workload_map.cluster.inventory import Inventory
from workload_map.exporter import WorkloadCollector
from workload_map.gangs.config import GangConfig
from workload_map.gangs.runtime import GangRuntime
from workload_map.kube.trim import trim_intermediate, trim_pod, trim_workload
from workload_map.web import views

n, mode = int(sys.argv[1]), sys.argv[2]
sys.setswitchinterval(0.001)
gc.set_threshold(50_000, 20, 100)  # the operator's settings (operator/main.py)
workloads, pods = cluster(n, 10)
# the pods of gang workloads were admitted through the gang webhook: each names its group
top = {o["metadata"]["uid"]: o for o in workloads}
for pod in pods:
    owner = top[pod["metadata"]["ownerReferences"][0]["uid"]]
    refs = owner["metadata"].get("ownerReferences")
    if refs:
        owner = top.get(refs[0]["uid"], owner)
    gang = {"JobSet": "jobset"}.get(owner["kind"])  # a Job of parallel pods: minimum 1
    if gang is not None:
        name = f"pg-{owner['metadata']['uid']}-{gang}"
        pod["spec"] = {**pod["spec"], "schedulingGroup": {"podGroupName": name}}
del top
GANGS = "workload-map.run.ai/gang-scheduling"  # the namespace label that opts in
namespaces = sorted({o["metadata"]["namespace"] for o in workloads})

def watched(objs, trim):
    # as a watch delivers them: pages of 500 decoded anew (new strings and dicts, as
    # kube/transport.py decodes), each object trimmed once as the one informer of its kind
    # stores it (the union of its consumers' trims, kube/cache.py's InformerSet)
    out = []
    while objs:
        page, objs[-500:] = json.loads(json.dumps(objs[-500:])), []
        out.extend(trim(o) for o in reversed(page))
    out.reverse()
    return out

# the operator with gangs and metrics: one informer per kind, its objects handed to both rooms
rt = GangRuntime(GangConfig(), miss_wait=0.0)
inv = Inventory()
both = lambda apply: (lambda e, o: (apply(e, o), rt.on_object(e, o)))
workload = lambda e, o: inv.apply_workload(e, o, trimmed=True)  # as cluster/feed.py does
feeds = {
    # kind: (the inventory's handler, the gang room's (None: it does not watch it), trim)
    "JobSet": (workload, rt.on_object, trim_workload),
    "Job": (workload, rt.on_object, trim_workload | trim_intermediate),
    "Deployment": (workload, None, trim_workload),
    "ReplicaSet": (inv.apply_intermediate, rt.on_object, trim_intermediate),
}
for name in namespaces:  # the gang room watches namespaces for the opt-in label
    rt.on_object("ADDED", trim_intermediate(
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {
            "name": name, "uid": "ns-" + name, "labels": {GANGS: "enabled"}}}))
stores = {}  # the informers' stores
for kind, (apply, gangs, trim) in feeds.items():
    stores[kind] = watched([o for o in workloads if o["kind"] == kind], trim)
    for obj in stores[kind]:
        apply("ADDED", obj)
        if gangs is not None:
            gangs("ADDED", obj)
stores["Pod"] = watched(pods, trim_pod)
for obj in stores["Pod"]:
    inv.apply_pod("ADDED", obj)
    rt.on_object("ADDED", obj)
out = {"workloads": n, "pods": len(stores["Pod"])}
del workloads, pods

import gangs_bench
from workload_map.gangs.planner import plan
ctl, writes = gangs_bench._counting_controller(rt)
for obj in list(rt.cache):  # what the controller's listener indexes as the watches deliver
    ctl.on_event("ADDED", obj)
keys = list(ctl._by_uid.values())
for key in keys:  # the objects exist already (a resync finds them in step)
    found = ctl.inputs(key)
    if found is None or found[0] is None:
        continue
    karta, obj, kept, labels = found[:4]
    uid = obj["metadata"]["uid"]
    for o in plan(karta, obj, kept, namespace_labels=labels, config=rt.config).objects:
        o["metadata"]["resourceVersion"] = "1"
        ctl._ours.setdefault(uid, {})[(o["apiVersion"], o["kind"], o["metadata"]["name"])] = o
del found, karta, obj, kept, labels
try:  # one evaluation per workload for both rooms, as operator/main.py hands them one
    from workload_map.engine.evaluations import Evaluations
    from workload_map.gangs.definitions import has_gangs
    shared = Evaluations()
    inv.share_evaluations(shared)
    rt.evaluations = shared
    shared.join("gangs", has_gangs)  # as GangController.start does
except ImportError:  # a tree from before the shared evaluation
    shared = None
gc.collect(); gc.freeze()

def cpu(key, fn):
    start = time.process_time()
    fn()
    out[key] = time.process_time() - start

def resync():
    for key in keys:
        ctl.reconcile_key(key)

now = dt.datetime.now(dt.timezone.utc)
exporter = lambda: WorkloadCollector(inv).exposition()
web = lambda: views.rows(inv, views.Filters(), now)
if mode == "operator":  # the exporter syncs first, the leader's resync comes after
    cpu("exporter_first_s", exporter)
    cpu("web_list_shared_s", web)
    cpu("gang_resync_s", resync)
else:  # "gangs-first": the leader's cold resync before any other evaluation
    cpu("gang_resync_alone_s", resync)
    cpu("exporter_after_gangs_s", exporter)
    cpu("web_list_shared_s", web)
out["errors"] = sum(inv.errors.values())  # evaluations that failed (0: every one counted)
out["gang_keys"] = len(keys)
out["gang_writes"] = writes["n"]
if shared is not None:
    out["shared"], out["made"], out["kept"] = shared.shared, shared.made, len(shared)
out["rss_gib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / 2**30
if mode == "operator":
    try:  # wlmap serve: the web list alone, its own evaluation, in the inventory it makes
        from workload_map.web.source import new_inventory
    except ImportError:  # a tree from before the served inventory's own kind
        new_inventory = Inventory
    alone = new_inventory()
    for kind, (apply, _, _) in feeds.items():
        for obj in stores[kind]:
            (alone.apply_intermediate if kind == "ReplicaSet" else alone.apply_workload)(
                "ADDED", obj)
    for obj in stores["Pod"]:
        alone.apply_pod("ADDED", obj)
    gc.collect(); gc.freeze()
    cpu("web_list_alone_s", lambda: views.rows(alone, views.Filters(), now))
print(json.dumps(out))
"""


MODES = ("operator", "gangs-first")


def measure(mode: str, src: Path | None = None) -> dict[str, float]:
    """One child run of ``mode`` with ``src`` (another checkout's ``src``) first on the path."""
    env = dict(os.environ)
    if src is not None:
        env["PYTHONPATH"] = str(src)
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(WORKLOADS), mode, str(Path(__file__).parent), str(ROOT)],
        capture_output=True,
        text=True,
        timeout=7200,
        cwd=ROOT,
        env=env,
    )
    if done.returncode != 0:
        raise RuntimeError(done.stderr[-4000:])
    out: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return out


def both(src: Path | None = None) -> dict[str, float]:
    """Both modes' figures in one record, with the sums of the three."""
    r = measure("operator", src)
    g = measure("gangs-first", src)
    r["all_three_s"] = r["exporter_first_s"] + r["web_list_shared_s"] + r["gang_resync_s"]
    r["gang_resync_alone_s"] = g["gang_resync_alone_s"]
    r["exporter_after_gangs_s"] = g["exporter_after_gangs_s"]
    r["all_three_gangs_first_s"] = (
        g["gang_resync_alone_s"] + g["exporter_after_gangs_s"] + g["web_list_shared_s"]
    )
    return r


def run() -> list[dict[str, object]]:
    r = both()
    return [
        {
            "case": f"{int(r['workloads'])} workloads / {int(r['pods'])} pods, "
            f"{int(r['gang_keys'])} of them the gang controller's",
            "exporter first exposition cpu s": f"{r['exporter_first_s']:.2f}",
            "web list first page (shared) cpu s": f"{r['web_list_shared_s']:.2f}",
            "gang cold resync after them cpu s": f"{r['gang_resync_s']:.2f}",
            "all three in one process cpu s": f"{r['all_three_s']:.2f} (target <= 3)",
            "gang cold resync alone (first) cpu s": f"{r['gang_resync_alone_s']:.2f} (target <= 3)",
            "exporter after the gang resync cpu s": f"{r['exporter_after_gangs_s']:.2f}",
            "all three, the gangs first, cpu s": f"{r['all_three_gangs_first_s']:.2f}",
            "web list first page alone cpu s": f"{r['web_list_alone_s']:.2f} (target <= 2)",
            "peak RSS GiB": f"{r['rss_gib']:.2f} (target <= 0.5)",
        }
    ]


def against(baseline: str, rounds: int = 5) -> None:
    """Rounds interleaved (baseline, this tree, ...): the median of each figure, and the ratio."""
    got: dict[str, list[dict[str, float]]] = {"baseline": [], "this tree": []}
    print(f"load {os.getloadavg()[0]:.2f}", flush=True)
    for _ in range(rounds):
        for tree, src in (("baseline", Path(baseline) / "src"), ("this tree", ROOT / "src")):
            r = both(src)
            got[tree].append(r)
            print(tree, json.dumps(r), f"load {os.getloadavg()[0]:.2f}", flush=True)
    for key in got["this tree"][0]:
        if key not in got["baseline"][0]:
            continue
        b = statistics.median(r[key] for r in got["baseline"])
        t = statistics.median(r[key] for r in got["this tree"])
        print(f"{key:<24} baseline {b:10.3f}  this tree {t:10.3f}  ratio {t / max(b, 1e-9):.2f}")
    print(f"load {os.getloadavg()[0]:.2f}", flush=True)


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--baseline":
        against(sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 5)
    else:
        for row in run():
            for key, value in row.items():
                print(f"{key}: {value}")
