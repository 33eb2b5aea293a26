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
GANG_WORKLOADS = int(os.environ.get("WLMAP_BENCH_GANG_WORKLOADS", str(WORKLOADS)))

CHILD = r"""
import datetime as dt, gc, json, resource, sys, time
sys.path.insert(0, sys.argv[3])
sys.path.insert(0, sys.argv[4])
from synthetic import cluster
from workload_map.cluster.inventory import Inventory
from workload_map.exporter import WorkloadCollector
from workload_map.web import views

n, gangs = int(sys.argv[1]), int(sys.argv[2])
sys.setswitchinterval(0.001)
gc.set_threshold(50_000, 20, 100)  # the operator's settings (operator/main.py)
workloads, pods = cluster(n, 10)
try:
    from workload_map.kube.trim import trim_pod
except ImportError:
    trim_pod = lambda p: p

def watched(objs, trim):
    # as a watch delivers them: pages of 500 decoded anew (new strings and dicts, as
    # kube/transport.py decodes), each object trimmed as the informer stores it
    out = []
    while objs:
        page, objs[-500:] = json.loads(json.dumps(objs[-500:])), []
        out.extend(trim(o) for o in reversed(page))
    out.reverse()
    return out

pods = watched(pods, trim_pod)  # what the pod informer stores
workloads = watched(workloads, lambda o: o)  # the inventory trims workloads itself

def fed():
    inv = Inventory()
    for w in workloads:
        inv.apply_workload("ADDED", w)
    for p in pods:
        inv.apply_pod("ADDED", p)
    return inv

inv = fed()
out = {"workloads": n, "pods": len(pods)}
rt = jobsets = None
if gangs:
    import gangs_bench
    rt, _, jobsets = gangs_bench.build(gangs)
gc.collect(); gc.freeze()

def cpu(key, fn):
    start = time.process_time()
    fn()
    out[key] = time.process_time() - start

now = dt.datetime.now(dt.timezone.utc)
cpu("exporter_first_s", lambda: WorkloadCollector(inv).exposition())
cpu("web_list_shared_s", lambda: views.rows(inv, views.Filters(), now))
if gangs:
    def resync():
        rows = gangs_bench.bench_resync(rt, jobsets)
        full = next(r for r in rows if r["measure"].startswith("full resync"))
        out["gang_resync_s"] = full["cpu_s"]
    resync()
del rt, jobsets
alone = fed()
gc.collect(); gc.freeze()
cpu("web_list_alone_s", lambda: views.rows(alone, views.Filters(), now))
out["rss_gib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / 2**30
print(json.dumps(out))
"""


def measure(src: Path | None = None) -> dict[str, float]:
    """One child run with ``src`` (another checkout's ``src``) first on the path."""
    env = dict(os.environ)
    if src is not None:
        env["PYTHONPATH"] = str(src)
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            CHILD,
            str(WORKLOADS),
            str(GANG_WORKLOADS),
            str(Path(__file__).parent),
            str(ROOT),
        ],
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


def _total(r: dict[str, float]) -> float:
    return r["exporter_first_s"] + r["web_list_shared_s"] + r.get("gang_resync_s", 0.0)


def run() -> list[dict[str, object]]:
    r = measure()
    return [
        {
            "case": f"{int(r['workloads'])} workloads / {int(r['pods'])} pods "
            f"(+{GANG_WORKLOADS} JobSets for the gangs)",
            "exporter first exposition cpu s": f"{r['exporter_first_s']:.2f}",
            "web list first page (shared) cpu s": f"{r['web_list_shared_s']:.2f}",
            "gang cold resync cpu s": f"{r.get('gang_resync_s', 0.0):.2f} (target <= 3)",
            "all three in one process cpu s": f"{_total(r):.2f} (target <= 3)",
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
            r = measure(src)
            r["all_three_s"] = _total(r)
            got[tree].append(r)
            print(tree, json.dumps(r), flush=True)
    for key in got["baseline"][0]:
        b = statistics.median(r[key] for r in got["baseline"])
        t = statistics.median(r[key] for r in got["this tree"])
        print(f"{key:<22} baseline {b:10.3f}  this tree {t:10.3f}  ratio {t / max(b, 1e-9):.2f}")
    print(f"load {os.getloadavg()[0]:.2f}", flush=True)


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--baseline":
        against(sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 5)
    else:
        for row in run():
            for key, value in row.items():
                print(f"{key}: {value}")
