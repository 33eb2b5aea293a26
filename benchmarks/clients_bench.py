"""Import and request cost of the Python Kubernetes clients, for the transport's choice.

Compares the official ``kubernetes`` client, lightkube and kr8s with the standard-library
transport of :mod:`workload_map.kube.transport`: the import (median wall time of fresh
interpreters, ``python -c pass`` subtracted), the first request (configuration loading and
connecting included) and a LIST of 93 pods repeated, typed and raw where the client offers
both. The API is a small HTTP server on 127.0.0.1 in another process serving a canned PodList,
so only the clients differ.

Run: ``python benchmarks/clients_bench.py [--python PY]`` with an interpreter that has all three
clients (``make bench`` uses ``$WLMAP_CLIENTS_PYTHON`` when set and skips this otherwise).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

SERVER = r"""
import json, socket, sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

def pod(i):
    return {"metadata": {"name": f"train-worker-{i}", "namespace": "ml", "uid": f"uid-{i}",
        "resourceVersion": str(1000 + i), "creationTimestamp": "2026-11-01T00:00:00Z",
        "labels": {"jobset.sigs.k8s.io/jobset-name": "train", "batch.kubernetes.io/job-completion-index": str(i)},
        "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": "train-w-0", "uid": "job-uid", "controller": True, "blockOwnerDeletion": True}]},
        "spec": {"nodeName": f"gpu-node-{i % 16}", "schedulerName": "default-scheduler", "restartPolicy": "Never",
            "containers": [{"name": "trainer", "image": "ghcr.io/example/trainer:1.0", "args": ["--epochs", "10"],
                "resources": {"limits": {"nvidia.com/gpu": "8", "cpu": "32", "memory": "256Gi"}, "requests": {"nvidia.com/gpu": "8", "cpu": "32", "memory": "256Gi"}},
                "env": [{"name": "RANK", "value": str(i)}, {"name": "WORLD_SIZE", "value": "93"}],
                "volumeMounts": [{"name": "data", "mountPath": "/data"}]}],
            "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}],
            "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]},
        "status": {"phase": "Running", "podIP": f"10.0.0.{i}", "startTime": "2026-11-01T00:00:05Z", "qosClass": "Guaranteed",
            "conditions": [{"type": t, "status": "True", "lastTransitionTime": "2026-11-01T00:00:10Z"} for t in ("PodScheduled", "Initialized", "ContainersReady", "Ready")],
            "containerStatuses": [{"name": "trainer", "ready": True, "started": True, "restartCount": 0, "image": "ghcr.io/example/trainer:1.0",
                "imageID": "ghcr.io/example/trainer@sha256:0", "containerID": "containerd://0", "state": {"running": {"startedAt": "2026-11-01T00:00:09Z"}}}]}}

BODY = json.dumps({"kind": "PodList", "apiVersion": "v1", "metadata": {"resourceVersion": "2000"}, "items": [pod(i) for i in range(93)]}).encode()

ROUTES = {k: json.dumps(v).encode() for k, v in {
    "/version": {"major": "1", "minor": "37", "gitVersion": "v1.37.2"},
    "/api": {"kind": "APIVersions", "versions": ["v1"]},
    "/apis": {"kind": "APIGroupList", "apiVersion": "v1", "groups": []},
    "/api/v1": {"kind": "APIResourceList", "groupVersion": "v1", "resources": [{"name": "pods",
        "singularName": "pod", "namespaced": True, "kind": "Pod", "verbs": ["get", "list"],
        "shortNames": ["po"]}]},
}.items()}

class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def setup(self):
        super().setup()
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    def do_GET(self):
        body = ROUTES.get(self.path.split("?")[0].rstrip("/"), BODY)
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a):
        pass

srv = ThreadingHTTPServer(("127.0.0.1", 0), H)
print(srv.server_address[1], flush=True)
srv.serve_forever()
"""

IMPORTS = {
    "kubernetes 37": "import kubernetes",
    "lightkube": "import lightkube; from lightkube.resources.core_v1 import Pod",
    "kr8s": "import kr8s; from kr8s.objects import Pod",
    "wlmap (socket + ssl)": "import workload_map.kube.client, workload_map.kube.wire, ssl",
}

CLIENTS = r"""
import json, sys, time
kind, kubeconfig, repeat = sys.argv[1], sys.argv[2], int(sys.argv[3])
if kind == "kubernetes":
    from kubernetes import client, config
elif kind == "lightkube":
    from lightkube import Client, KubeConfig
    from lightkube.resources.core_v1 import Pod
elif kind == "kr8s":
    import kr8s
else:
    import ssl
    import workload_map.kube.wire
    from workload_map.kube import ConnectionOptions, connect
t0 = time.perf_counter()  # from here: configuration, connection, first LIST
if kind == "kubernetes":
    api = client.CoreV1Api(config.new_client_from_config(kubeconfig))
    typed = lambda: api.list_namespaced_pod("ml").items
    raw = lambda: json.loads(api.list_namespaced_pod("ml", _preload_content=False).data)["items"]
elif kind == "lightkube":
    c = Client(KubeConfig.from_file(kubeconfig))
    typed = lambda: list(c.list(Pod, namespace="ml", chunk_size=0))
    raw = None
elif kind == "kr8s":
    api = kr8s.api(kubeconfig=kubeconfig)
    typed = lambda: list(api.get("pods", namespace="ml"))
    raw = lambda: [p.raw for p in api.get("pods", namespace="ml")]
else:
    cluster = connect(ConnectionOptions(kubeconfig=kubeconfig, environ={"HOME": "/nonexistent"}))
    typed = None
    raw = lambda: cluster.transport.get("/api/v1/namespaces/ml/pods")["items"]
first = (typed or raw)()
t1 = time.perf_counter()
assert len(first) == 93, len(first)
out = {"first": t1 - t0}
for name, fn in (("typed", typed), ("raw", raw)):
    if fn is None:
        continue
    fn()
    start = time.perf_counter()
    for _ in range(repeat):
        fn()
    out[name] = (time.perf_counter() - start) / repeat
print(json.dumps(out))
"""


def _median_import(python: str, code: str, runs: int, env: dict[str, str]) -> float:
    def wall(snippet: str) -> float:
        start = time.perf_counter()
        subprocess.run([python, "-c", snippet], check=True, env=env, capture_output=True)
        return time.perf_counter() - start

    base = statistics.median(wall("pass") for _ in range(runs))
    return statistics.median(wall(code) for _ in range(runs)) - base


def measure(python: str, runs: int = 5, repeat: int = 20) -> list[dict[str, object]]:
    """One row per client: import, first LIST, LIST typed and raw (milliseconds)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    rows: list[dict[str, object]] = []
    server = subprocess.Popen([python, "-c", SERVER], stdout=subprocess.PIPE, text=True, env=env)
    try:
        port = int(server.stdout.readline())  # type: ignore[union-attr]
        with tempfile.TemporaryDirectory() as tmp:
            kubeconfig = Path(tmp) / "config"
            kubeconfig.write_text(
                textwrap.dedent(
                    f"""\
                    apiVersion: v1
                    kind: Config
                    clusters: [{{name: c, cluster: {{server: "http://127.0.0.1:{port}"}}}}]
                    users: [{{name: u, user: {{token: t}}}}]
                    contexts: [{{name: x, context: {{cluster: c, user: u, namespace: ml}}}}]
                    current-context: x
                    """
                )
            )
            for (label, code), kind in zip(
                IMPORTS.items(), ("kubernetes", "lightkube", "kr8s", "wlmap"), strict=True
            ):
                row: dict[str, object] = {"client": label}
                try:
                    row["import_ms"] = round(_median_import(python, code, runs, env) * 1000)
                except subprocess.CalledProcessError:
                    row["import_ms"] = "not installed"
                    rows.append(row)
                    continue
                done = subprocess.run(
                    [python, "-c", CLIENTS, kind, str(kubeconfig), str(repeat)],
                    capture_output=True,
                    text=True,
                    env=env,
                    check=False,
                )
                if done.returncode != 0:
                    row["first_list_ms"] = (
                        "failed: " + (done.stderr.strip().splitlines() or [""])[-1]
                    )
                    rows.append(row)
                    continue
                r = json.loads(done.stdout)
                for key, name in (
                    ("first", "first_list_ms"),
                    ("typed", "list_typed_ms"),
                    ("raw", "list_raw_ms"),
                ):
                    row[name] = round(r[key] * 1000, 1) if key in r else "-"
                rows.append(row)
    finally:
        server.terminate()
        server.wait(5)
    return rows


def run() -> list[dict[str, object]]:
    """For benchmarks/run.py: this interpreter (the dev extra installs lightkube and kr8s), or
    ``$WLMAP_CLIENTS_PYTHON``."""
    return measure(os.environ.get("WLMAP_CLIENTS_PYTHON") or sys.executable)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", default=sys.executable, help="interpreter with the clients")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args(argv)
    for row in measure(args.python, args.runs, args.repeat):
        print("  ".join(f"{k}={v}" for k, v in row.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
