"""Web view: the workloads page with 10k workloads cached, a 2k-pod workload's page, memory.

In a fresh process: the synthetic cluster (benchmarks/synthetic.py) is fed into the inventory as
the watches would deliver it, then pages are fetched over HTTP from the running app (aiohttp's
test server on loopback). Measured: the first workloads page cold (every view computed on the
way) and warm, one workload page of a JobSet with 2,000 pods, and the process's RSS. Targets:
first page <= 1 s (warm, caches filled), workload page <= 500 ms. The alternative in the same run
is the page's data alone (the inventory's views, no HTML), so the ratio is what rendering costs.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WORKLOADS = int(os.environ.get("WLMAP_BENCH_WORKLOADS", "10000"))

CHILD = r"""
import asyncio, json, resource, sys, time
sys.path.insert(0, sys.argv[2])
from aiohttp.test_utils import TestClient, TestServer
from synthetic import cluster
from workload_map.cluster.inventory import Inventory
from workload_map.web import WebSettings, build_app

n = int(sys.argv[1])
workloads, pods = cluster(n, 10)
big = {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
       "metadata": {"name": "huge", "namespace": "big", "uid": "huge"},
       "spec": {"replicatedJobs": [{"name": "w", "replicas": 1, "template": {"spec": {
           "parallelism": 2000, "completions": 2000, "template": {"spec": {"containers": [
               {"name": "c", "resources": {"limits": {"nvidia.com/gpu": "8"}}}]}}}}}]}}
job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "huge-w-0",
       "namespace": "big", "uid": "huge-j", "ownerReferences": [{"apiVersion":
       "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "name": "huge", "uid": "huge",
       "controller": True}], "labels": {"jobset.sigs.k8s.io/jobset-name": "huge",
       "jobset.sigs.k8s.io/replicatedjob-name": "w"}}, "spec": {}}
many = [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"huge-w-0-{i}-x",
         "namespace": "big", "uid": f"hp{i}", "labels": job["metadata"]["labels"],
         "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": "huge-w-0",
         "uid": "huge-j", "controller": True}]},
         "spec": {"nodeName": "n", "containers": [{"name": "c", "resources": {"limits":
         {"nvidia.com/gpu": "8"}}}]}, "status": {"phase": "Running", "conditions":
         [{"type": "Ready", "status": "True"}]}} for i in range(2000)]

class Source:
    mode = "cluster"
    def __init__(self, inventory): self.inventory = inventory
    def clusters(self): return {"": self.inventory}
    def problems(self): return {}
    def events(self, entry): return [], None
    def close(self): pass

inv = Inventory()
inv.apply_documents(workloads + [big, job] + pods + many)
out = {}
client = None

async def fetch(path):
    t0 = time.perf_counter()
    async with client.get(path, headers={"Authorization": "Bearer t"}) as r:
        body = await r.text()
        assert r.status == 200, (r.status, body[:300])
    return time.perf_counter() - t0, body

async def main():
    global client
    client = TestClient(TestServer(build_app(Source(inv), WebSettings(token="t")), host="127.0.0.1"))
    await client.start_server()
    out["first_cold_s"], body = await fetch("/")
    out["rows"] = body.count("<tr>") - 1
    out["first_warm_s"], _ = await fetch("/")
    out["filtered_s"], _ = await fetch("/?kind=JobSet&sort=gpus&dir=desc")
    out["big_cold_s"], body = await fetch("/workloads/jobset.x-k8s.io/v1alpha2/JobSet/big/huge")
    assert "+1992 more" in body, "pods capped per instance"
    out["big_warm_s"], _ = await fetch("/workloads/jobset.x-k8s.io/v1alpha2/JobSet/big/huge")
    await client.close()

asyncio.run(main())
import datetime as dt
from workload_map.web import views
t0 = time.perf_counter()
views.rows(inv, views.Filters(), dt.datetime.now(dt.timezone.utc))
out["data_only_s"] = time.perf_counter() - t0
out["rss"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
out["objects"] = len(workloads) + 2
out["pods"] = len(pods) + len(many)
print(json.dumps(out))
"""


def run() -> list[dict[str, object]]:
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(WORKLOADS), str(Path(__file__).parent)],
        capture_output=True,
        text=True,
        timeout=3600,
        cwd=ROOT,
    )
    if done.returncode != 0:
        raise RuntimeError(done.stderr[-4000:])
    r = json.loads(done.stdout.strip().splitlines()[-1])
    return [
        {
            "case": f"{WORKLOADS} workloads ({r['objects']} objects) / {r['pods']} pods",
            "first page, cold s": f"{r['first_cold_s']:.2f}",
            "first page, warm s": f"{r['first_warm_s']:.2f} (target <= 1)",
            "filtered+sorted s": f"{r['filtered_s']:.2f}",
            "page data alone (rows, no HTML) s": f"{r['data_only_s']:.2f}",
            "warm page / data alone": f"{r['first_warm_s'] / max(r['data_only_s'], 1e-9):.1f}x",
            "2k-pod workload page s": f"{r['big_warm_s']:.3f} (cold {r['big_cold_s']:.2f}; target <= 0.5)",
            "RSS GiB": f"{r['rss'] / 2**30:.2f}",
        }
    ]


if __name__ == "__main__":
    for row in run():
        for key, value in row.items():
            print(f"{key}: {value}")
