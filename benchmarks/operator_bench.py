"""Operator benchmarks on a real API server (the integration harness's etcd + kube-apiserver).

* cold start: 500 Kartas exist, the operator starts; time until every one carries its
  conditions (target <= 30 s on the project machine);
* webhook latency: 50 concurrent Karta creates through the API server, which calls both
  webhooks over TLS on loopback; client-side create latency and the operator's own handler
  time, p50/p99 (target p99 <= 100 ms).
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

KARTAS = 500
WRITERS = int(os.environ.get("WLMAP_BENCH_WRITERS", "50"))
WRITES_PER_WRITER = int(os.environ.get("WLMAP_BENCH_WRITES", "6"))


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _parallel(n: int, fn: Any) -> list[Any]:
    out: list[Any] = [None] * n
    errors: list[BaseException] = []

    def run(i: int) -> None:
        try:
            out[i] = fn(i)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    return out


def _webhook_histogram(api: Any) -> dict[tuple[str, float], float]:
    """The API server's own admission-webhook latency histogram: (webhook, le) -> count."""
    from workload_map.cluster.cache import call

    raw = call(api.client, "GET", "/metrics", accept="text/plain", timeout=30)
    try:
        text = raw.data.decode()
    finally:
        raw.release_conn()
    out: dict[tuple[str, float], float] = {}
    prefix = "apiserver_admission_webhook_admission_duration_seconds"
    for line in text.splitlines():
        if not line.startswith(prefix + "_"):
            continue
        series, value = line.rsplit(" ", 1)
        suffix = series[len(prefix) : series.index("{")]
        labels = series[series.index("{") + 1 : -1]
        fields = dict(kv.split("=", 1) for kv in labels.split(","))
        name = fields["name"].strip('"')
        if suffix == "_bucket":
            le = float(fields["le"].strip('"').replace("+Inf", "inf"))
        elif suffix in ("_sum", "_count"):
            le = -2.0 if suffix == "_sum" else -1.0  # kept beside the buckets (le >= 0)
        else:
            continue
        out[(name, le)] = out.get((name, le), 0.0) + float(value)
    return out


def _bucket_quantile(
    before: dict[tuple[str, float], float],
    after: dict[tuple[str, float], float],
    name: str,
    q: float,
) -> float:
    """Upper bound of the histogram bucket holding quantile ``q`` of the calls in between."""
    les = sorted(le for n, le in after if n == name and le >= 0)
    if not les:
        return float("nan")
    total = after[(name, les[-1])] - before.get((name, les[-1]), 0.0)
    for le in les:
        if after[(name, le)] - before.get((name, le), 0.0) >= q * total:
            return le
    return les[-1]


def _cold_start(kube: Any, api: Any, workdir: Path) -> list[dict[str, Any]]:
    from tests.operator.live import KARTAS as PATH
    from tests.operator.live import OperatorProcess, widget_karta

    token = uuid.uuid4().hex[:6]
    names = [f"cold{i}-{token}" for i in range(KARTAS)]

    def make(worker: int) -> None:
        for i in range(worker, KARTAS, 10):
            group = f"cold{i}-{token}.bench.example.com"
            obj = widget_karta(names[i], group)
            # as the mutating webhook stamps them on create
            obj["metadata"]["labels"] = {
                "run.ai/karta-group": group,
                "run.ai/karta-version": "v1",
                "run.ai/karta-kind": "Widget",
            }
            api.request("POST", PATH, obj)

    _parallel(10, make)
    op = OperatorProcess(
        kube.kubeconfig,
        "default",
        workdir / "cold",
        webhook=False,
        config_name=f"cold-{token}",
        extra=[f"--karta-workers={os.environ.get('WLMAP_BENCH_WORKERS', '8')}"],
    )
    began = time.monotonic()
    op.start()
    try:
        ready_at = None
        # watch the operator's own counter (cheap), not 500 objects listed over and over
        while time.monotonic() - began < 180:
            if ready_at is None and op.ready():
                ready_at = time.monotonic() - began
            try:
                if op.metric("workloadmap_operator_karta_status_writes_total") >= KARTAS:
                    break
            except OSError:
                pass  # not listening yet
            time.sleep(0.1)
        total = time.monotonic() - began
        writes = op.metric("workloadmap_operator_karta_status_writes_total")
        items = api.get(PATH, [("labelSelector", "run.ai/karta-kind=Widget")])["items"]
        done = sum(
            1
            for k in items
            if k["metadata"]["name"].endswith(token) and (k.get("status") or {}).get("conditions")
        )
        reconciles = op.metric("workloadmap_operator_karta_reconciles_total")
        evaluating = op.metric("workloadmap_operator_karta_evaluate_seconds_total")
        writing = op.metric("workloadmap_operator_karta_write_seconds_total")
    finally:
        op.stop()
    load = os.getloadavg()[0]
    return [
        {
            "benchmark": f"operator cold start, {KARTAS} Kartas reconciled",
            "seconds": round(total, 2),
            "process ready (s)": round(ready_at or float("nan"), 2),
            "status writes": int(writes),
            "with conditions": done,
            "reconciles": int(reconciles),
            "evaluating (s)": round(evaluating, 1),
            "writing (s, all workers)": round(writing, 1),
            "load average": round(load, 1),
            "target": "<= 30 s",
            "ok": total <= 30 and done == KARTAS,
        }
    ]


def _cpu_seconds(pid: int) -> float:
    """User + system CPU time of one process so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _pids(kube: Any, op: Any) -> dict[str, int]:
    out = {"operator": op.proc.pid}
    plane = getattr(kube, "plane", None)
    for proc in getattr(plane, "procs", []) if plane is not None else []:
        if proc.name in ("kube-apiserver", "etcd"):
            out[proc.name] = proc.popen.pid
    return out


def _histogram_mean(
    before: dict[tuple[str, float], float], after: dict[tuple[str, float], float], name: str
) -> float:
    """Exact mean from the histogram's _sum and _count (the buckets are coarse)."""
    count = after.get((name, -1.0), 0.0) - before.get((name, -1.0), 0.0)
    total = after.get((name, -2.0), 0.0) - before.get((name, -2.0), 0.0)
    return total / count if count else float("nan")


def _operator_metrics(op: Any) -> dict[tuple[str, str], float]:
    """The operator's own summaries: (path or "lag", quantile) -> seconds, and counters."""
    _, text = op.get(op.metrics_port, "/metrics")
    out: dict[tuple[str, str], float] = {}
    for line in text.splitlines():
        if line.startswith("workloadmap_operator_admission_duration_seconds{"):
            path = line.split('path="')[1].split('"')[0]
            q = line.split('quantile="')[1].split('"')[0]
            out[(path, q)] = float(line.split()[1])
        elif line.startswith("workloadmap_operator_webhook_loop_lag_seconds{"):
            q = line.split('quantile="')[1].split('"')[0]
            out[("lag", q)] = float(line.split()[1])
        elif line.startswith("workloadmap_operator_gc_pause_seconds{"):
            gen = line.split('generation="')[1].split('"')[0]
            q = line.split('quantile="')[1].split('"')[0]
            out[(f"gc{gen}", q)] = float(line.split()[1])
        elif line.startswith("workloadmap_operator_webhook_tls_handshakes_total "):
            out[("handshakes", "")] = float(line.split()[1])
    return out


def _webhook_latency(kube: Any, api: Any, workdir: Path) -> list[dict[str, Any]]:
    from tests.operator.live import KARTAS as PATH
    from tests.operator.live import (
        OperatorProcess,
        ca_bundles,
        eventually,
        install_webhooks,
        remove_webhooks,
        widget_karta,
    )

    token = uuid.uuid4().hex[:6]
    name = f"bench-{token}"
    rows: list[dict[str, Any]] = []
    hooks = {"mutate": "mutate.kartas.run.ai", "validate": "validate.kartas.run.ai"}
    paths = {
        "mutate": "/mutate-run-ai-v1alpha1-karta",
        "validate": "/validate-run-ai-v1alpha1-karta",
    }
    levels = sorted({1, WRITERS})
    # the operator's summaries cover its whole life: one operator per concurrency level
    for writers in levels:
        op = OperatorProcess(
            kube.kubeconfig,
            "default",
            workdir / f"hooks{writers}",
            config_name=f"{name}-{writers}",
            extra=["--disable-karta-controller"],
        )
        install_webhooks(api, port=op.webhook_port, name=f"{name}-{writers}", token=token)
        op.start()
        try:
            op.wait_ready(90)
            config = f"{name}-{writers}"
            eventually(lambda c=config: all(ca_bundles(api, c)), 30, "caBundle")
            # warm-up: connections, jq compile caches
            for i in range(5):
                group = f"warm{i}-{writers}-{token}.b.example.com"
                api.request(
                    "POST", PATH, widget_karta(f"warm{i}-{writers}-{token}", group, token=token)
                )
            per_writer = WRITES_PER_WRITER if writers > 1 else 30

            def writer(w: int, n: int = per_writer, c: int = writers) -> list[float]:
                times = []
                for j in range(n):
                    label = f"c{c}w{w}x{j}-{token}"
                    obj = widget_karta(label, f"{label}.b.example.com", token=token)
                    t0 = time.perf_counter()
                    api.request("POST", PATH, obj)
                    times.append(time.perf_counter() - t0)
                return times

            pids = _pids(kube, op)
            before_metrics = _operator_metrics(op)
            hist_before = _webhook_histogram(api)
            cpu_before = {k: _cpu_seconds(p) for k, p in pids.items()}
            load_before = os.getloadavg()[0]
            began = time.perf_counter()
            per = _parallel(writers, writer)
            wall = time.perf_counter() - began
            cpu = {k: _cpu_seconds(p) - cpu_before[k] for k, p in pids.items()}
            hist_after = _webhook_histogram(api)
            after_metrics = _operator_metrics(op)
        finally:
            op.stop()
            remove_webhooks(api, f"{name}-{writers}")
        client = [t for ts in per for t in ts]
        load = round((load_before + os.getloadavg()[0]) / 2, 1)
        shakes = after_metrics.get(("handshakes", ""), 0.0) - before_metrics.get(
            ("handshakes", ""), 0.0
        )
        rows.append(
            {
                "benchmark": f"Karta create through the API server + both webhooks, {writers} writer(s)",
                "requests": len(client),
                "p50 ms": round(_pct(client, 0.5) * 1000, 1),
                "p90 ms": round(_pct(client, 0.9) * 1000, 1),
                "p99 ms": round(_pct(client, 0.99) * 1000, 1),
                "mean ms": round(statistics.fmean(client) * 1000, 1),
                "writes/s": round(len(client) / wall, 1),
                "TLS handshakes": int(shakes),
                "CPU ms per create": {k: round(v * 1000 / len(client), 1) for k, v in cpu.items()},
                "load average": load,
                "target": "p99 <= 100 ms" if writers == WRITERS else "",
            }
        )
        for short, hook in hooks.items():
            rows.append(
                {
                    "benchmark": f"  {short} webhook as the API server measures it, {writers} writer(s)",
                    "mean ms": round(_histogram_mean(hist_before, hist_after, hook) * 1000, 1),
                    "p50 ms <=": _bucket_quantile(hist_before, hist_after, hook, 0.5) * 1000,
                    "p99 ms <=": _bucket_quantile(hist_before, hist_after, hook, 0.99) * 1000,
                    "target": "p99 <= 100 ms",
                    "ok": _bucket_quantile(hist_before, hist_after, hook, 0.99) <= 0.1,
                }
            )
            rows.append(
                {
                    "benchmark": f"  {short} webhook inside the operator (handler), {writers} writer(s)",
                    "p50 ms": round(
                        after_metrics.get((paths[short], "0.5"), float("nan")) * 1000, 2
                    ),
                    "p90 ms": round(
                        after_metrics.get((paths[short], "0.9"), float("nan")) * 1000, 2
                    ),
                    "p99 ms": round(
                        after_metrics.get((paths[short], "0.99"), float("nan")) * 1000, 2
                    ),
                    "target": "p99 <= 100 ms",
                    "ok": after_metrics.get((paths[short], "0.99"), 1.0) <= 0.1,
                }
            )
        rows.append(
            {
                "benchmark": f"  the webhook server's event-loop lag, {writers} writer(s)",
                "p50 ms": round(after_metrics.get(("lag", "0.5"), float("nan")) * 1000, 1),
                "p99 ms": round(after_metrics.get(("lag", "0.99"), float("nan")) * 1000, 1),
                # over the operator's life, not only the writes
                "GC pause max ms (gen 0/1/2)": [
                    round(after_metrics.get((f"gc{g}", "1.0"), float("nan")) * 1000, 1)
                    for g in range(3)
                ],
            }
        )
    rows.append(_without_webhooks(kube, api, token))
    return rows


def _without_webhooks(kube: Any, api: Any, token: str) -> dict[str, Any]:
    """The same 50-writer creates with no webhook configured: what the API server and etcd
    alone take on this machine, the floor under the figures above."""
    from tests.operator.live import KARTAS as PATH
    from tests.operator.live import widget_karta

    def writer(w: int) -> list[float]:
        times = []
        for j in range(WRITES_PER_WRITER):
            label = f"plain{w}x{j}-{token}"
            obj = widget_karta(label, f"{label}.b.example.com", token=token)
            obj["metadata"]["labels"].update(
                {
                    "run.ai/karta-group": f"{label}.b.example.com",
                    "run.ai/karta-version": "v1",
                    "run.ai/karta-kind": "Widget",
                }
            )
            t0 = time.perf_counter()
            api.request("POST", PATH, obj)
            times.append(time.perf_counter() - t0)
        return times

    plane = getattr(kube, "plane", None)
    pids = {
        p.name: p.popen.pid
        for p in (getattr(plane, "procs", []) if plane is not None else [])
        if p.name in ("kube-apiserver", "etcd")
    }
    cpu_before = {k: _cpu_seconds(p) for k, p in pids.items()}
    load_before = os.getloadavg()[0]
    began = time.perf_counter()
    client = [t for ts in _parallel(WRITERS, writer) for t in ts]
    wall = time.perf_counter() - began
    cpu = {k: _cpu_seconds(p) - cpu_before[k] for k, p in pids.items()}
    return {
        "benchmark": f"Karta create with no webhook at all, {WRITERS} writer(s)",
        "requests": len(client),
        "p50 ms": round(_pct(client, 0.5) * 1000, 1),
        "p99 ms": round(_pct(client, 0.99) * 1000, 1),
        "mean ms": round(statistics.fmean(client) * 1000, 1),
        "writes/s": round(len(client) / wall, 1),
        "CPU ms per create": {k: round(v * 1000 / len(client), 1) for k, v in cpu.items()},
        "load average": round((load_before + os.getloadavg()[0]) / 2, 1),
    }


def run() -> list[dict[str, Any]]:
    from tests.integration.harness import HarnessError, open_kube
    from tests.integration.test_operator import ensure_karta_crd
    from tests.operator.live import api_for

    try:
        kube = open_kube()
    except HarnessError as exc:
        return [{"benchmark": "operator", "skipped": str(exc)[:200]}]
    api = api_for(kube.kubeconfig)
    try:
        ensure_karta_crd(api)
        with tempfile.TemporaryDirectory(prefix="wlmap-opbench-") as tmp:
            parts = os.environ.get("WLMAP_OPERATOR_BENCH", "cold,hooks").split(",")
            rows = []
            if "cold" in parts:
                rows += _cold_start(kube, api, Path(tmp))
            if "hooks" in parts:
                rows += _webhook_latency(kube, api, Path(tmp))
        return rows
    finally:
        api.close()
        kube.shutdown()


if __name__ == "__main__":
    os.environ.setdefault("WLMAP_TEST_START_TIMEOUT", "180")
    for row in run():
        print(row)
