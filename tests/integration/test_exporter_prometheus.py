"""The exporter against the real API server, scraped by a real Prometheus with our rules loaded.

Workloads of several kinds (a Job, a Deployment through its ReplicaSet, a StatefulSet and a
custom kind known only through a cluster Karta) get pods the way their controllers would make
them (ownerReferences by uid, status written as the kubelet would). A static exposition in
dcgm-exporter's label format gives per-GPU utilisation. Prometheus (Debian's package, installed
by hack/install-prometheus.sh) scrapes both on loopback; the test reads the recording rules'
results through Prometheus' HTTP API and compares them with values computed by hand.
"""

from __future__ import annotations

import contextlib
import http.server
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from hack.localkube.plane import start_timeout
from hack.localkube.prometheus import start_prometheus, wait_http
from tests.integration.harness import Kube
from tests.ports import free_port

ROOT = Path(__file__).resolve().parents[2]
RULES = ROOT / "charts/workload-map/files/workloadmap-rules.yaml"

pytestmark = pytest.mark.skipif(
    shutil.which("prometheus") is None or shutil.which("promtool") is None,
    reason="prometheus/promtool not installed (hack/install-prometheus.sh installs them as root)",
)

WIDGET_CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "trainers.example.com"},
    "spec": {
        "group": "example.com",
        "names": {"kind": "Trainer", "plural": "trainers", "singular": "trainer"},
        "scope": "Namespaced",
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "x-kubernetes-preserve-unknown-fields": True,
                    }
                },
                "subresources": {"status": {}},
            }
        ],
    },
}

TRAINER_KARTA = {
    "apiVersion": "run.ai/v1alpha1",
    "kind": "Karta",
    "metadata": {"name": "trainers-example-com"},
    "spec": {
        "structureDefinition": {
            "rootComponent": {
                "name": "trainer",
                "kind": {"group": "example.com", "version": "v1", "kind": "Trainer"},
                "specDefinition": {"podTemplateSpecPath": ".spec.template"},
                "scaleDefinition": {"replicasPath": ".spec.workers"},
                "statusDefinition": {
                    "statusMappings": {
                        "running": [
                            {
                                "byExpression": {
                                    "expression": '.status.state == "Running"',
                                    "expectedResult": "true",
                                }
                            }
                        ]
                    }
                },
            }
        }
    },
}


def gpu_pod(name: str, owner: dict[str, Any], gpus: int, *, node: str = "gpu-node-1") -> dict:
    meta = owner["metadata"]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": meta["namespace"],
            "ownerReferences": [
                {
                    "apiVersion": owner["apiVersion"],
                    "kind": owner["kind"],
                    "name": meta["name"],
                    "uid": meta["uid"],
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": {
            "nodeName": node,
            "containers": [
                {
                    "name": "trainer",
                    "image": "registry.example/trainer:1",
                    "resources": {
                        "limits": {"nvidia.com/gpu": str(gpus), "cpu": "2", "memory": "4Gi"}
                    },
                }
            ],
        },
    }


def start_exporter(kube: Kube, port: int, namespace: str, *flags: str) -> subprocess.Popen[str]:
    """``wlmap exporter`` against ``kube`` for ``namespace``, serving on ``127.0.0.1:port``."""
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "workload_map.cli",
            "exporter",
            "--kubeconfig",
            str(kube.kubeconfig),
            "--workload-metrics-bind-address",
            f"127.0.0.1:{port}",
            "--metrics-namespaces",
            namespace,
            *flags,
        ],
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )


def stop_exporter(proc: subprocess.Popen[str]) -> str:
    """Stop the exporter (SIGTERM); it must exit 0. Its stderr."""
    proc.terminate()
    try:
        _, err = proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        _, err = proc.communicate()
    assert proc.returncode == 0, err[-3000:]
    return err


def running(pod: dict[str, Any], phase: str = "Running") -> dict[str, Any]:
    ready = "True" if phase == "Running" else "False"
    return {
        **pod,
        "status": {
            "phase": phase,
            "conditions": [
                {"type": "PodScheduled", "status": "True"},
                {"type": "Ready", "status": ready},
            ],
        },
    }


def template(gpus: int) -> dict[str, Any]:
    return {
        "metadata": {"labels": {"app": "x"}},
        "spec": {
            "containers": [
                {
                    "name": "trainer",
                    "image": "registry.example/trainer:1",
                    "resources": {"limits": {"nvidia.com/gpu": str(gpus)}},
                }
            ]
        },
    }


@contextlib.contextmanager
def serve_text(body: str) -> Iterator[int]:
    """A static /metrics page on 127.0.0.1 (dcgm-exporter's exposition stands in for it)."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            data = body.encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; version=0.0.4")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield int(server.server_address[1])
    finally:
        server.shutdown()
        server.server_close()


def dcgm_line(namespace: str, pod: str, gpu: int, util: float) -> str:
    labels = {
        "gpu": str(gpu),
        "UUID": f"GPU-{pod}-{gpu}",
        "device": f"nvidia{gpu}",
        "modelName": "NVIDIA H100 80GB HBM3",
        "Hostname": "gpu-node-1",
        "container": "trainer",
        "namespace": namespace,
        "pod": pod,
    }
    text = ",".join(f'{k}="{v}"' for k, v in labels.items())
    return f"DCGM_FI_DEV_GPU_UTIL{{{text}}} {util}"


@pytest.fixture
def workloads(kube: Kube, namespace: str) -> Iterator[dict[str, Any]]:
    """Workloads of four kinds with their pods; returns what the test checks against."""
    kube.install_crd(ROOT / "deploy/crds/kartas.run.ai.yaml")
    kube.install_crd(WIDGET_CRD)
    kube.apply(TRAINER_KARTA)
    ns = namespace
    job = kube.apply(
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": "finetune", "labels": {"team": "nlp"}},
            "spec": {
                "completions": 2,
                "parallelism": 2,
                "template": {
                    **template(2),
                    "spec": {**template(2)["spec"], "restartPolicy": "Never"},
                },
            },
        },
        ns,
    )
    deploy = kube.apply(
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "serve"},
            "spec": {
                "replicas": 2,
                "selector": {"matchLabels": {"app": "x"}},
                "template": template(1),
            },
        },
        ns,
    )
    rs = kube.apply(
        {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": {
                "name": "serve-7d4b9c",
                "labels": {"app": "x"},
                "ownerReferences": [
                    {
                        "apiVersion": "apps/v1",
                        "kind": "Deployment",
                        "name": "serve",
                        "uid": deploy["metadata"]["uid"],
                        "controller": True,
                    }
                ],
            },
            "spec": {
                "replicas": 2,
                "selector": {"matchLabels": {"app": "x"}},
                "template": template(1),
            },
        },
        ns,
    )
    trainer = kube.apply(
        {
            "apiVersion": "example.com/v1",
            "kind": "Trainer",
            "metadata": {"name": "research"},
            "spec": {"workers": 3, "template": template(4)},
        },
        ns,
    )
    kube.set_status({**trainer, "status": {"state": "Running"}})
    pods = [
        gpu_pod("finetune-0-abcde", job, 2),
        gpu_pod("finetune-1-fghij", job, 2),
        gpu_pod("serve-7d4b9c-k2x9p", rs, 1),
        gpu_pod("serve-7d4b9c-m3z8q", rs, 1),
        gpu_pod("research-worker-0", trainer, 4),
        gpu_pod("research-worker-1", trainer, 4),
    ]
    done = gpu_pod("finetune-old-zzzzz", job, 2)  # a finished retry: holds nothing
    for pod in pods:
        created = kube.apply(pod, ns)
        kube.set_status(running({**pod, "metadata": created["metadata"]}))
    created = kube.apply(done, ns)
    kube.set_status(running({**done, "metadata": created["metadata"]}, "Failed"))
    yield {"namespace": ns, "pods": pods}
    kube.delete("run.ai/v1alpha1", "Karta", TRAINER_KARTA["metadata"]["name"])


def test_prometheus_joins_gpu_utilisation_to_workloads(
    kube: Kube, workloads: dict[str, Any], tmp_path: Path
) -> None:
    ns = workloads["namespace"]
    # per-GPU utilisation: finetune 2 pods x 2 GPUs, serve 2 x 1, research 2 x 4
    utils = {
        "finetune-0-abcde": [90, 70],
        "finetune-1-fghij": [50, 30],
        "serve-7d4b9c-k2x9p": [20],
        "serve-7d4b9c-m3z8q": [40],
        "research-worker-0": [100, 100, 100, 100],
        "research-worker-1": [0, 0, 0, 0],
        "finetune-old-zzzzz": [0, 0],  # a stale series of a finished pod: still joins
        "someone-elses-pod": [55],  # a GPU pod of no workload: joins nothing
    }
    dcgm = "\n".join(
        dcgm_line(ns, pod, i, u) for pod, values in utils.items() for i, u in enumerate(values)
    )
    dcgm = (
        "# HELP DCGM_FI_DEV_GPU_UTIL GPU utilization (in %).\n"
        "# TYPE DCGM_FI_DEV_GPU_UTIL gauge\n" + dcgm + "\n"
    )
    exporter_port = free_port()
    exporter = start_exporter(kube, exporter_port, ns, "--metrics-workload-labels", "team")
    try:
        with serve_text(dcgm) as dcgm_port:
            exposition = ""
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:  # until the caches have the workloads
                exposition = wait_http(f"http://127.0.0.1:{exporter_port}/metrics")
                if exposition.count("workloadmap_pod_workload_info{") >= 7:
                    break
                time.sleep(0.5)
            check = subprocess.run(
                ["promtool", "check", "metrics"],
                input=exposition,
                capture_output=True,
                text=True,
                timeout=30,
            )
            assert check.returncode == 0, check.stdout + check.stderr
            config = {
                "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
                "rule_files": [str(RULES)],
                "scrape_configs": [
                    {
                        "job_name": "workloadmap",
                        "static_configs": [{"targets": [f"127.0.0.1:{exporter_port}"]}],
                    },
                    {
                        # the documented setting: keep dcgm-exporter's pod/namespace labels
                        "job_name": "dcgm",
                        "honor_labels": True,
                        "static_configs": [
                            {
                                "targets": [f"127.0.0.1:{dcgm_port}"],
                                "labels": {"namespace": "gpu-operator", "pod": "dcgm-exporter-1"},
                            }
                        ],
                    },
                ],
            }
            (tmp_path / "prometheus.yml").write_text(yaml.safe_dump(config))
            checked = subprocess.run(
                ["promtool", "check", "config", str(tmp_path / "prometheus.yml")],
                capture_output=True,
                text=True,
                timeout=30,
            )
            assert checked.returncode == 0, checked.stdout + checked.stderr
            prom, p = start_prometheus(config, tmp_path, timeout=start_timeout())
            try:
                util = p.wait("workloadmap:workload_gpu_utilization:avg", 3)
                by_workload = {r["metric"]["workload"]: float(r["value"][1]) for r in util}
                # averages over every GPU series of the workload's pods, by hand:
                assert by_workload["finetune"] == pytest.approx((90 + 70 + 50 + 30 + 0 + 0) / 6)
                assert by_workload["serve"] == pytest.approx((20 + 40) / 2)
                assert by_workload["research"] == pytest.approx(400 / 8)
                assert {r["metric"]["kind"] for r in util} == {"Job", "Deployment", "Trainer"}
                assert all(r["metric"]["namespace"] == ns for r in util)
                held = p.wait(f'workloadmap:namespace_gpus_held:sum{{namespace="{ns}"}}', 1)
                # active pods only: 2x2 + 2x1 + 2x4; the Failed retry holds nothing; the
                # ReplicaSet under the Deployment is not counted a second time
                assert float(held[0]["value"][1]) == 4 + 2 + 8
                kinds = p.wait("workloadmap:kind_gpus_held:sum", 3)
                assert {r["metric"]["kind"]: float(r["value"][1]) for r in kinds} == {
                    "Job": 4,
                    "Deployment": 2,
                    "Trainer": 8,
                }
                # the Trainer wants 3 workers and has 2: not a gang (no gang instructions),
                # but its pods series says so
                desired = p.wait(
                    'workloadmap_workload_pods{workload="research", state="desired"}', 1
                )
                assert float(desired[0]["value"][1]) == 3
                info = p.wait('workloadmap_workload_info{workload="finetune"}', 1)
                assert info[0]["metric"]["label_team"] == "nlp"
                assert info[0]["metric"]["definition_origin"] == "catalog"
                trainer = p.wait('workloadmap_workload_info{kind="Trainer"}', 1)
                assert trainer[0]["metric"]["definition"] == "trainers-example-com"
                assert trainer[0]["metric"]["definition_origin"] == "cluster"
            finally:
                prom.stop()
    finally:
        stop_exporter(exporter)


def test_promtool_accepts_the_rules() -> None:
    result = subprocess.run(
        ["promtool", "check", "rules", str(RULES)], capture_output=True, text=True, timeout=30
    )
    assert result.returncode == 0, result.stdout + result.stderr
    # every recording rule and alert of the file is found (counted from the file, not pinned)
    groups = yaml.safe_load(RULES.read_text())["groups"]
    count = sum(len(g["rules"]) for g in groups)
    assert f"SUCCESS: {count} rules found" in result.stdout
    assert count >= 6  # 4 recording rules, WorkloadmapGangStuck, WorkloadmapExporterNotSynced
