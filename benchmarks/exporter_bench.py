"""Exporter: scrape time and memory with caches of 100k pods and 10k workloads.

Workloads of mixed catalog kinds (Jobs, Deployments through ReplicaSets, JobSets through Jobs)
with ten pods each are fed into the inventory as the watches would deliver them, in a fresh
process so that its RSS is the exporter's. Measured: feeding, the first scrape (every view
computed; in the running exporter this happens once, in the background after the caches sync),
a steady scrape (views memoised), and a scrape after 1% of the pods changed. Targets: scrape
<= 1 s, RSS <= 1 GiB. Alternatives in the same run: the same collector through
``prometheus_client.generate_latest`` (re-formats every series), and a flat collector of as many
ready-made series through it (the floor of any client-formatted exporter of that size).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WORKLOADS = int(os.environ.get("WLMAP_BENCH_WORKLOADS", "10000"))
PODS_EACH = 10

CHILD = r"""
import json, resource, sys, time
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import GaugeMetricFamily
from workload_map.cluster.inventory import Inventory
from workload_map.exporter import WorkloadCollector

n, each = int(sys.argv[1]), int(sys.argv[2])

def pod(name, ns, owner, gpus):
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": ns, "uid": "p-" + name,
                         "resourceVersion": "1",
                         "labels": {"app": owner["metadata"]["name"]},
                         "ownerReferences": [{"apiVersion": owner["apiVersion"],
                             "kind": owner["kind"], "name": owner["metadata"]["name"],
                             "uid": owner["metadata"]["uid"], "controller": True}]},
            "spec": {"nodeName": "node-1", "containers": [{"name": "c", "resources": {
                "limits": {"nvidia.com/gpu": str(gpus), "cpu": "2", "memory": "8Gi"}}}]},
            "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}}

def template(gpus):
    return {"spec": {"containers": [{"name": "c", "image": "x", "resources": {
        "limits": {"nvidia.com/gpu": str(gpus), "cpu": "2", "memory": "8Gi"}}}]}}

def ref(obj):
    m = obj["metadata"]
    return {"apiVersion": obj["apiVersion"], "kind": obj["kind"], "name": m["name"],
            "uid": m["uid"], "controller": True}

workloads, links, pods = [], [], []
for i in range(n):
    ns = f"team-{i % 50}"
    name = f"w{i}"
    meta = {"name": name, "namespace": ns, "uid": f"u-{i}", "resourceVersion": "1"}
    kind = i % 10
    if kind < 4:
        job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": meta,
               "spec": {"parallelism": each, "completions": each, "template": template(1)},
               "status": {"active": each}}
        workloads.append(job)
        pods += [pod(f"{name}-{k}", ns, job, 1) for k in range(each)]
    elif kind < 7:
        dep = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta,
               "spec": {"replicas": each, "template": template(1)},
               "status": {"replicas": each, "readyReplicas": each}}
        rs_meta = {"name": name + "-rs", "namespace": ns, "uid": f"rs-{i}",
                   "resourceVersion": "1", "ownerReferences": [ref(dep)]}
        rs = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": rs_meta,
              "spec": {"replicas": each, "template": template(1)}}
        workloads += [dep, rs]
        pods += [pod(f"{name}-{k}", ns, rs, 1) for k in range(each)]
    else:
        half = each // 2
        js = {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "metadata": meta,
              "spec": {"replicatedJobs": [
                  {"name": r, "replicas": 1, "template": {"spec": {
                      "parallelism": half, "completions": half, "template": template(8)}}}
                  for r in ("a", "b")]}}
        workloads.append(js)
        for r in ("a", "b"):
            jmeta = {"name": f"{name}-{r}-0", "namespace": ns, "uid": f"j-{i}-{r}",
                     "resourceVersion": "1", "ownerReferences": [ref(js)],
                     "labels": {"jobset.sigs.k8s.io/jobset-name": name,
                                "jobset.sigs.k8s.io/replicatedjob-name": r}}
            job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": jmeta,
                   "spec": {"parallelism": half, "completions": half, "template": template(8)}}
            workloads.append(job)
            for k in range(half):
                p = pod(f"{name}-{r}-0-{k}", ns, job, 8)
                p["metadata"]["labels"].update(jmeta["labels"])
                pods.append(p)

inv = Inventory()
t0 = time.perf_counter()
for w in workloads:
    inv.apply_workload("ADDED", w)
for p in pods:
    inv.apply_pod("ADDED", p)
feed_s = time.perf_counter() - t0

collector = WorkloadCollector(inv)
registry = CollectorRegistry()
registry.register(collector)
t0 = time.perf_counter(); text = collector.exposition(); first_s = time.perf_counter() - t0
t0 = time.perf_counter(); text = collector.exposition(); steady_s = time.perf_counter() - t0
t0 = time.perf_counter(); generate_latest(registry); client_s = time.perf_counter() - t0
for p in pods[:: 100]:
    p = json.loads(json.dumps(p)); p["metadata"]["resourceVersion"] = "2"
    p["status"]["conditions"][0]["status"] = "False"
    inv.apply_pod("MODIFIED", p)
t0 = time.perf_counter(); text = collector.exposition(); changed_s = time.perf_counter() - t0
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
print(json.dumps({"workloads": len(workloads), "pods": len(pods), "feed_s": feed_s,
                  "first_s": first_s, "steady_s": steady_s, "changed_s": changed_s,
                  "flat_s": flat_s, "client_s": client_s, "series": series, "rss": rss, "errors": errors}))
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


def run() -> list[dict[str, object]]:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(WORKLOADS), str(PODS_EACH)],
        capture_output=True,
        text=True,
        timeout=1800,
        cwd=ROOT,
    )
    if out.returncode != 0:
        raise RuntimeError(out.stderr[-4000:])
    r = json.loads(out.stdout.strip().splitlines()[-1])
    gib = r["rss"] / 2**30
    return [
        {
            "case": f"{r['workloads']} objects (top {WORKLOADS}) / {r['pods']} pods",
            "feed s": f"{r['feed_s']:.2f}",
            "first scrape s": f"{r['first_s']:.2f}",
            "steady scrape s": f"{r['steady_s']:.2f} (target <= 1)",
            "after 1% pods changed s": f"{r['changed_s']:.2f}",
            "same series via generate_latest s": f"{r['client_s']:.2f}",
            "flat exposition of as many series s": f"{r['flat_s']:.2f}",
            "steady vs generate_latest": f"{r['client_s'] / max(r['steady_s'], 1e-9):.1f}x faster",
            "series": r["series"],
            "RSS GiB": f"{gib:.2f} (target <= 1)",
            "evaluation errors": r["errors"],
        },
        kube_state_metrics_row(),
    ]


if __name__ == "__main__":
    for row in run():
        for key, value in row.items():
            print(f"{key}: {value}")
