"""Exporter: scrape time and memory with caches of 100k pods and 10k workloads.

Workloads of mixed catalog kinds (Jobs, Deployments through ReplicaSets, JobSets through Jobs)
with ten pods each are fed into the inventory as the watches deliver them, in a fresh process
so that its RSS is the exporter's. Measured: the informers' transforms (``trim``: each decoded
object cut to what the caches keep, :mod:`workload_map.kube.trim`; the decoded object is then
dropped, as an informer drops it), feeding their objects to the inventory through the handlers
``cluster/feed.py`` registers (``feed``), the first scrape (every view computed; in the running
exporter this happens once, in the background after the caches sync), a steady scrape (views
memoised), and a scrape after 1% of the pods changed. Targets: scrape <= 1 s, RSS <= 1 GiB. Alternatives in the same run: the same collector through
``prometheus_client.generate_latest`` (re-formats every series), and a flat collector of as many
ready-made series through it (the floor of any client-formatted exporter of that size).
Each phase is timed twice: wall time, and the process's CPU time (``*_cpu_s``), which is what
the phase costs on a machine shared with other work.

``python benchmarks/exporter_bench.py --baseline DIR [ROUNDS]`` runs the same child with another
checkout's sources (a ``git worktree`` of main), rounds interleaved (baseline, this tree, ...),
and prints the median CPU time of each phase for both, with the ratio.
The child takes each tree's own transforms and wiring: before the Kubernetes I/O layer moved
to ``kube/`` (511b2eb) the trims were ``cluster/trim.py`` and the inventory trimmed every
workload again; since, ``cluster/feed.py`` passes the informer's workload with
``trimmed=True``. Both trees get the same decoded objects and do what their exporter does.
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
PODS_EACH = 10

CHILD = r"""
import inspect, json, resource, sys, time
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import GaugeMetricFamily
from workload_map.cluster.inventory import Inventory
from workload_map.exporter import WorkloadCollector
try:  # the informers' transforms (cluster/trim.py before the I/O layer moved to kube/)
    from workload_map.kube.trim import trim_pod, trim_workload
except ImportError:
    from workload_map.cluster.trim import trim_pod, trim_workload
sys.path.insert(0, sys.argv[3])
from synthetic import cluster

n, each = int(sys.argv[1]), int(sys.argv[2])

decoded_workloads, decoded_pods = cluster(n, each)
# 1% of the pods as their next watch event will decode them (the "changed" phase)
decoded_changed = []
for p in decoded_pods[:: 100]:
    p = json.loads(json.dumps(p)); p["metadata"]["resourceVersion"] = "2"
    p["status"]["conditions"][0]["status"] = "False"
    decoded_changed.append(p)

cpu = {}

def timed(key, fn):
    t0, c0 = time.perf_counter(), time.process_time()
    out = fn()
    cpu[key + "_cpu_s"] = time.process_time() - c0
    return out, time.perf_counter() - t0

def transformed(decoded, trim):
    out = []
    for i, obj in enumerate(decoded):
        out.append(trim(obj))
        decoded[i] = None  # an informer keeps only what its transform returns
    return out

def trimmed():
    return transformed(decoded_workloads, trim_workload), transformed(decoded_pods, trim_pod)

(workloads, pods), trim_s = timed("trim", trimmed)
changed = [trim_pod(p) for p in decoded_changed]
inv = Inventory()
# cluster/feed.py's handlers: the informer's workload kept as it is where the inventory can
# (trimmed=True); before, the inventory trimmed it again
informed = {"trimmed": True} if "trimmed" in inspect.signature(inv.apply_workload).parameters else {}

def fed():
    for w in workloads:
        inv.apply_workload("ADDED", w, **informed)
    for p in pods:
        inv.apply_pod("ADDED", p)

_, feed_s = timed("feed", fed)
# the caches and the inventory fed: the peak so far (the scrapes and the alternatives add theirs)
rss_fed = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
collector = WorkloadCollector(inv)
registry = CollectorRegistry()
registry.register(collector)
text, first_s = timed("first", collector.exposition)
text, steady_s = timed("steady", collector.exposition)
_, client_s = timed("client", lambda: generate_latest(registry))
def change():
    for p in changed:
        inv.apply_pod("MODIFIED", p)
    return collector.exposition()
text, changed_s = timed("changed", change)
series = text.count(b"\n") - text.count(b"\n#")
errors = sum(1 for e in inv.entries() if e.error)

# the alternative: the exposition alone, from ready-made families of as many series
class Flat:
    def collect(self):
        g = GaugeMetricFamily("bench_series", "h", labels=["namespace", "workload", "k"])
        for i in range(series):
            g.add_metric([f"team-{i % 50}", f"w{i}", "x"], 1.0)
        yield g
flat = CollectorRegistry(); flat.register(Flat())
t0 = time.perf_counter(); generate_latest(flat); flat_s = time.perf_counter() - t0
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(json.dumps({"workloads": len(workloads), "pods": len(pods), "trim_s": trim_s,
                  "feed_s": feed_s,
                  "first_s": first_s, "steady_s": steady_s, "changed_s": changed_s,
                  "flat_s": flat_s, "client_s": client_s, "series": series, "rss": rss,
                  "errors": errors, "rss_fed": rss_fed, **cpu}))
"""


KSM_MODULE = "k8s.io/kube-state-metrics/v2"


def kube_state_metrics_row() -> dict[str, object]:
    """kube-state-metrics side by side needs its Go module; say plainly when it cannot be had."""
    try:
        probe = subprocess.run(
            ["go", "list", "-m", f"{KSM_MODULE}@latest"],
            capture_output=True,
            text=True,
            timeout=60,
            cwd="/",
            env={**os.environ, "GOFLAGS": "-mod=mod"},
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return {"case": "kube-state-metrics", "result": f"not measured: {exc}"}
    if probe.returncode != 0:
        why = (probe.stderr.strip().splitlines() or ["no answer"])[-1]
        return {
            "case": "kube-state-metrics",
            "result": f"not measured: the Go module proxy does not serve {KSM_MODULE} ({why})",
        }
    return {
        "case": "kube-state-metrics",
        "result": f"{probe.stdout.strip()} is served; the side-by-side run is not written yet",
    }


def measure(src: Path | None = None) -> dict[str, float]:
    """One child run, with ``src`` (another checkout's ``src``) first on the path if given."""
    env = dict(os.environ)
    if src is not None:
        env["PYTHONPATH"] = str(src)
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(WORKLOADS), str(PODS_EACH), str(Path(__file__).parent)],
        capture_output=True,
        text=True,
        timeout=1800,
        cwd=ROOT,
        env=env,
    )
    if out.returncode != 0:
        raise RuntimeError(out.stderr[-4000:])
    r: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    return r


def against(baseline: str, rounds: int = 5) -> None:
    """Rounds interleaved (baseline, this tree, ...): the median CPU time of each phase."""
    got: dict[str, list[dict[str, float]]] = {"baseline": [], "this tree": []}
    print(f"load {os.getloadavg()[0]:.2f}", flush=True)
    for _ in range(rounds):
        for tree, src in (("baseline", Path(baseline) / "src"), ("this tree", ROOT / "src")):
            got[tree].append(measure(src))
            print(tree, json.dumps(got[tree][-1]), flush=True)
    for key in (
        "trim_cpu_s",
        "feed_cpu_s",
        "first_cpu_s",
        "steady_cpu_s",
        "changed_cpu_s",
        "client_cpu_s",
    ):
        b = statistics.median(r[key] for r in got["baseline"])
        t = statistics.median(r[key] for r in got["this tree"])
        print(f"{key:<14} baseline {b:8.3f}  this tree {t:8.3f}  ratio {t / max(b, 1e-9):.2f}")
    for key in ("rss_fed", "rss"):
        b = statistics.median(r.get(key, 0) for r in got["baseline"]) / 2**20
        t = statistics.median(r.get(key, 0) for r in got["this tree"]) / 2**20
        print(
            f"{key + ' MiB':<14} baseline {b:8.1f}  this tree {t:8.1f}  ratio {t / max(b, 1e-9):.2f}"
        )
    print(f"load {os.getloadavg()[0]:.2f}", flush=True)


def run() -> list[dict[str, object]]:
    r = measure()
    gib = r["rss"] / 2**30
    return [
        {
            "case": f"{r['workloads']} objects (top {WORKLOADS}) / {r['pods']} pods",
            "informers' trims s": f"{r['trim_s']:.2f}",
            "feed s": f"{r['feed_s']:.2f}",
            "first scrape s": f"{r['first_s']:.2f}",
            "steady scrape s": f"{r['steady_s']:.2f} (target <= 1)",
            "after 1% pods changed s": f"{r['changed_s']:.2f}",
            "same series via generate_latest s": f"{r['client_s']:.2f}",
            "flat exposition of as many series s": f"{r['flat_s']:.2f}",
            "steady vs generate_latest": f"{r['client_s'] / max(r['steady_s'], 1e-9):.1f}x faster",
            "series": r["series"],
            "RSS GiB": f"{gib:.2f} (target <= 1)",
            "RSS once fed GiB": f"{r['rss_fed'] / 2**30:.2f}",
            "evaluation errors": r["errors"],
        },
        kube_state_metrics_row(),
    ]


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--baseline":
        against(sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 5)
        raise SystemExit(0)
    for row in run():
        for key, value in row.items():
            print(f"{key}: {value}")
