"""The operator's /metrics, rendered by prometheus_client from the process's one registry: the
families docs/operator.md and docs/gangs.md name, with their types and labels, and nothing the
hand-written text did not have (no ``_created`` series). The values were checked against the
former hand-written text with fixed inputs when the families moved (27 families, 71 samples)."""

from __future__ import annotations

import urllib.request
from collections import deque
from pathlib import Path
from typing import Any

from prometheus_client.parser import text_string_to_metric_families

from tests.ports import free_port
from workload_map.gangs.config import GangConfig
from workload_map.gangs.runtime import GangRuntime
from workload_map.operator.controllers import OperatorConfig, OperatorContext
from workload_map.operator.gcpauses import GcPauses
from workload_map.operator.karta_controller import KartaController
from workload_map.operator.server import Servers

#: (family, type, labels besides quantile), as documented
FAMILIES = {
    ("workloadmap_gangs_generic_workload", "gauge", ("state",)),
    ("workloadmap_gangs_missed_members", "counter", ()),
    ("workloadmap_gangs_pods_deleted", "counter", ()),
    ("workloadmap_gangs_priority_classes", "gauge", ()),
    ("workloadmap_gangs_reconcile_errors", "counter", ()),
    ("workloadmap_gangs_reconciles", "counter", ()),
    ("workloadmap_gangs_webhook_cache_misses", "counter", ()),
    ("workloadmap_gangs_webhook_errors", "counter", ()),
    ("workloadmap_gangs_webhook_patched", "counter", ()),
    ("workloadmap_gangs_webhook_requests", "counter", ()),
    ("workloadmap_gangs_webhook_seconds", "counter", ()),
    ("workloadmap_gangs_writes", "counter", ()),
    ("workloadmap_operator_admission_duration_seconds", "summary", ("path",)),
    ("workloadmap_operator_admission_requests", "counter", ()),
    ("workloadmap_operator_gc_freezes", "counter", ()),
    ("workloadmap_operator_gc_pause_seconds", "summary", ("generation",)),
    ("workloadmap_operator_gc_settle_seconds", "gauge", ()),
    ("workloadmap_operator_karta_conflicts", "counter", ()),
    ("workloadmap_operator_karta_evaluate_seconds", "counter", ()),
    ("workloadmap_operator_karta_queue_pending", "gauge", ()),
    ("workloadmap_operator_karta_reconciles", "counter", ()),
    ("workloadmap_operator_karta_status_writes", "counter", ()),
    ("workloadmap_operator_karta_write_seconds", "counter", ()),
    ("workloadmap_operator_webhook_tls_handshakes", "counter", ()),
}
LINUX_ONLY = {("workloadmap_operator_webhook_loop_thread_seconds", "counter", ("state",))}
#: the families that appear once something was measured (requests, handshakes, loop lag)
MEASURED = {
    "workloadmap_operator_webhook_request_seconds",
    "workloadmap_operator_webhook_tls_handshake_seconds",
    "workloadmap_operator_webhook_loop_lag_seconds",
}


def test_the_registry_serves_exactly_the_documented_families() -> None:
    args: Any = None
    ctx = OperatorContext(
        config=OperatorConfig(args=args, namespace="ns", identity="me"),
        api=args,
        informers=args,
        events=args,
    )
    port = free_port()
    tls: Any = type("Tls", (), {"handshakes": 0})()
    servers = Servers(ctx, health=None, metrics=("127.0.0.1", port), webhook=None, tls=tls)
    runtime = GangRuntime(GangConfig(), miss_wait=0.0)
    runtime.metrics.register(ctx.registry)
    for counter in KartaController().counters():
        ctx.registry.register(counter)
    pauses = GcPauses()
    ctx.registry.register(pauses)
    runtime.metrics.executed(2, 0, 0)
    servers.latencies["/hook"] = deque([0.002, 0.001])
    runtime.set_generic_workload("dropped", "test")
    servers.start()
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
            assert r.headers["Content-Type"].startswith("text/plain; version=0.0.4")
            text = r.read().decode()
    finally:
        servers.stop()
        pauses.close()
    assert "_created" not in text
    found = {
        (f.name, f.type, tuple(sorted({k for s in f.samples for k in s.labels} - {"quantile"})))
        for f in text_string_to_metric_families(text)
        if f.name not in MEASURED
    }
    expected = FAMILIES | (LINUX_ONLY if Path("/proc/self/schedstat").exists() else set())
    assert found == expected
    samples = {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for f in text_string_to_metric_families(text)
        for s in f.samples
    }
    assert samples[("workloadmap_gangs_writes_total", ())] == 2
    latency = "workloadmap_operator_admission_duration_seconds"
    assert samples[(latency, (("path", "/hook"), ("quantile", "0.5")))] == 0.002
    assert samples[(f"{latency}_count", (("path", "/hook"),))] == 2
    states = {
        dict(labels)["state"]: v
        for (name, labels), v in samples.items()
        if name == "workloadmap_gangs_generic_workload"
    }
    assert states == {"works": 0, "dropped": 1, "absent": 0, "error": 0, "unknown": 0}
