"""The exporter as a controller of two leader-elected operator replicas on the real API server.

Both replicas serve the workload-metrics endpoint, but only the leader exports workload series
(two would duplicate every series and break ``group_left`` joins); when the leader dies, the
standby takes the Lease and starts exporting them.
"""

from __future__ import annotations

import signal
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.operator.live import OperatorProcess, api_for, delete, eventually, free_port
from workload_map.kube.api import Api

from .harness import Kube


@pytest.fixture
def api(kube: Kube) -> Iterator[Api]:
    client = api_for(kube.kubeconfig)
    yield client
    client.close()


def scrape(port: int) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as resp:
        return resp.read().decode()


def value(text: str, prefix: str) -> float | None:
    for line in text.splitlines():
        if line.startswith(prefix):
            return float(line.rsplit(" ", 1)[1])
    return None


def test_only_the_leader_exports_workload_series(
    kube: Kube, api: Api, namespace: str, tmp_path: Path
) -> None:
    name = f"wlmap-exp-{uuid.uuid4().hex[:6]}"
    job = api.request(
        "POST",
        f"/apis/batch/v1/namespaces/{namespace}/jobs",
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": "sweep"},
            "spec": {
                "parallelism": 2,
                "completions": 2,
                "template": {
                    "spec": {
                        "restartPolicy": "Never",
                        "containers": [{"name": "c", "image": "x"}],
                    }
                },
            },
        },
    )
    for i in range(2):
        api.request(
            "POST",
            f"/api/v1/namespaces/{namespace}/pods",
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {
                    "name": f"sweep-{i}",
                    "ownerReferences": [
                        {
                            "apiVersion": "batch/v1",
                            "kind": "Job",
                            "name": "sweep",
                            "uid": job["metadata"]["uid"],
                            "controller": True,
                        }
                    ],
                },
                "spec": {"containers": [{"name": "c", "image": "x"}]},
            },
        )
    ports = [free_port(), free_port()]
    replicas = [
        OperatorProcess(
            kube.kubeconfig,
            namespace,
            tmp_path / f"op{i}",
            webhook=False,
            leader_elect=True,
            config_name=name,
            extra=[
                "--enable-workload-metrics",
                f"--workload-metrics-bind-address=127.0.0.1:{port}",
                f"--metrics-namespaces={namespace}",
            ],
        )
        for i, port in enumerate(ports)
    ]
    try:
        for op in replicas:
            op.start()
        for op in replicas:
            op.wait_ready(90)

        def exporting() -> list[int] | None:
            texts = [scrape(p) for p in ports]
            leaders = [
                i for i, t in enumerate(texts) if value(t, "workloadmap_exporter_leader ") == 1
            ]
            with_series = [
                i for i, t in enumerate(texts) if "workloadmap_workload_info{" in t and "sweep" in t
            ]
            if len(leaders) == 1 and with_series == leaders:
                return leaders
            return None

        leaders = eventually(exporting, 60, "one replica exporting workload series")
        leader, standby = leaders[0], 1 - leaders[0]
        standby_text = scrape(ports[standby])
        assert value(standby_text, "workloadmap_exporter_leader ") == 0
        assert "workloadmap_pod_workload_info{" not in standby_text
        assert "workloadmap_exporter_watch_restarts_total" in standby_text  # health only
        current = value(scrape(ports[leader]), 'workloadmap_workload_pods{group="batch"')
        assert current is not None
        # the leader dies without releasing its Lease: the standby takes over and exports
        proc = replicas[leader].proc
        assert proc is not None
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)

        def taken_over() -> bool:
            text = scrape(ports[standby])
            return value(text, "workloadmap_exporter_leader ") == 1 and (
                "workloadmap_pod_workload_info{" in text and "sweep-1" in text
            )

        eventually(taken_over, 45, "standby exporting after the leader died")
    finally:
        for op in replicas:
            op.stop()
        delete(api, f"/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases/{name}-lease")
