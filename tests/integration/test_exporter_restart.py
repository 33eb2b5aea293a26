"""The exporter restarted under a real Prometheus scraping every second (issue 25 item 2).

Before its caches have synced and every workload was evaluated once, the exporter serves only
its own series with ``workloadmap_exporter_synced 0`` and ``/readyz`` answers 503. Read back
from Prometheus' raw samples: no scrape with synced 1 lacks a workload or reads a workload's
pods as 0; the recording rules never record a 0 for the window (a gap, not a drop); no alert
fires, and the documented guard keeps an ``absent()`` rule quiet across the restart.

No fixed sleeps (issue 26): each phase waits for Prometheus to have recorded the scrapes it
needs (synced before, down during, synced after), bounded by many scrape intervals.
"""

from __future__ import annotations

import json
import os
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

from hack.localkube.plane import start_timeout, wait_until
from hack.localkube.prometheus import Prometheus, start_prometheus, wait_http
from tests.gangs.e2e import wait
from tests.integration.harness import Kube
from tests.integration.test_exporter_prometheus import (
    RULES,
    pytestmark,  # noqa: F401  (skipped without prometheus)
    start_exporter,
    stop_exporter,
    workloads,  # noqa: F401  (the fixture)
)
from tests.ports import free_port

WORKLOADS = {"finetune", "serve", "research"}
#: Prometheus' scrape and rule evaluation interval in this test's configuration (seconds)
INTERVAL = 1.0
#: scrapes recorded in each phase: before the stop, while down, after the restart
SCRAPES = 3
#: how long one phase may take: its scrapes, each delayed by a loaded machine, within many
#: intervals; a bound that only ends a hang, never a speed target
PHASE_BOUND = 60 * SCRAPES * INTERVAL


def _status(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=2) as resp:
            return int(resp.status)
    except urllib.error.HTTPError as exc:
        return int(exc.code)
    except OSError:
        return 0


def _raw(p: Prometheus, expr: str, seconds: int) -> list[dict[str, Any]]:
    """Every raw sample of ``expr`` over the last ``seconds`` (a range-vector selector)."""
    return p.query(f"{expr}[{seconds}s]")


def _samples(series: dict[str, Any]) -> dict[float, float]:
    return {float(t): float(v) for t, v in series["values"]}


def _recorded(p: Prometheus, expr: str, value: float, since: float) -> int:
    """How many samples of ``expr`` (one series) Prometheus stored with ``value`` at or after
    the wall-clock ``since`` (its scrape timestamps come from the same clock)."""
    window = int(time.time() - since) + 2
    return sum(
        1
        for series in _raw(p, expr, window)
        for t, v in _samples(series).items()
        if t >= since and v == value
    )


def _scrapes(p: Prometheus, expr: str, value: float, since: float, what: str) -> None:
    """Wait until Prometheus has stored ``SCRAPES`` samples of ``expr`` at ``value`` since
    ``since``: the event a phase of the restart waits for, not a number of seconds."""
    wait_until(
        lambda: _recorded(p, expr, value, since) >= SCRAPES,
        f"{SCRAPES} scrapes {what} ({expr} == {value:g})",
        PHASE_BOUND,
    )


def test_a_restart_under_prometheus_drops_or_zeroes_no_workload(
    kube: Kube,
    workloads: dict[str, Any],  # noqa: F811
    tmp_path: Path,
) -> None:
    ns = workloads["namespace"]
    port = free_port()
    exporter = start_exporter(kube, port, ns)
    base = f"http://127.0.0.1:{port}"
    try:
        wait("the exporter to be ready", lambda: _status(f"{base}/readyz") == 200, 120)
        text = wait_http(f"{base}/metrics")
        assert "workloadmap_exporter_synced 1.0" in text
        config = {
            "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
            "rule_files": [str(RULES)],
            "scrape_configs": [
                {"job_name": "workloadmap", "static_configs": [{"targets": [f"127.0.0.1:{port}"]}]}
            ],
        }
        prom, p = start_prometheus(config, tmp_path, timeout=start_timeout())
        try:
            p.wait(
                f'workloadmap_workload_info{{namespace="{ns}", top_level="true"}}',
                len(WORKLOADS),
                120,
            )
            p.wait(f'workloadmap:namespace_gpus_held:sum{{namespace="{ns}"}}', 1, 120)
            started = time.time()
            synced = 'workloadmap_exporter_synced{job="workloadmap"}'
            held = f'workloadmap:namespace_gpus_held:sum{{namespace="{ns}"}}'
            _scrapes(p, synced, 1, started, "before the stop")
            stop_exporter(exporter)
            stopped = time.time()
            _scrapes(p, 'up{job="workloadmap"}', 0, stopped, "of the target down")
            exporter = start_exporter(kube, port, ns)
            # while it starts: /readyz answers 503 (or nothing) until synced
            seen = set()
            deadline = time.monotonic() + start_timeout()
            while time.monotonic() < deadline:
                code = _status(f"{base}/readyz")
                seen.add(code)
                if code == 200:
                    break
                time.sleep(0.05)
            assert 200 in seen
            ready = time.time()
            _scrapes(p, synced, 1, ready, "after the restart")
            # and the recording rule evaluated over the restarted target's samples
            _scrapes(p, held, 4 + 2 + 8, ready, "of the recording rule after the restart")
            window = int(time.time() - started) + 5
            _check(p, ns, window, tmp_path, seen)
        finally:
            prom.stop()
    finally:
        stop_exporter(exporter)


def _check(p: Prometheus, ns: str, window: int, tmp_path: Path, readyz: set[int]) -> None:
    (synced,) = _raw(p, 'workloadmap_exporter_synced{job="workloadmap"}', window)
    (up,) = _raw(p, 'up{job="workloadmap"}', window)
    synced_at = {t for t, v in _samples(synced).items() if v == 1}
    not_synced = {t for t, v in _samples(synced).items() if v == 0}
    down = {t for t, v in _samples(up).items() if v == 0}
    # the restart was seen: the target down, or serving while not synced
    assert down or not_synced, (sorted(_samples(up).items()), sorted(_samples(synced).items()))
    # the top-level workloads (pods and the Deployment's ReplicaSet are covered kinds too)
    infos = _raw(p, f'workloadmap_workload_info{{namespace="{ns}", top_level="true"}}', window)
    by_workload = {s["metric"]["workload"]: set(_samples(s)) for s in infos}
    assert set(by_workload) == WORKLOADS
    for name, stamps in by_workload.items():
        # every scrape that said synced carried this workload
        assert synced_at <= stamps, (name, sorted(synced_at - stamps))
        # and no scrape that did not say synced did
        assert not (stamps & (not_synced | down)), name
    desired = _raw(p, f'workloadmap_workload_pods{{namespace="{ns}", state="desired"}}', window)
    for series in desired:
        values = _samples(series)
        assert synced_at <= set(values)
        assert all(v > 0 for v in values.values()), series["metric"]
    (held,) = _raw(p, f'workloadmap:namespace_gpus_held:sum{{namespace="{ns}"}}', window)
    held_values = set(_samples(held).values())
    assert held_values == {4 + 2 + 8}, held_values  # never recorded as 0 in the window
    guarded = (
        f'absent(workloadmap_workload_info{{namespace="{ns}", workload="finetune"}}) '
        "and on() (workloadmap_exporter_synced == 1)"
    )
    assert _range(p, guarded, window) == []  # the documented guard: quiet across the restart
    unguarded = f'absent(workloadmap_workload_info{{namespace="{ns}", workload="finetune"}})'
    gap = _range(p, unguarded, window)
    firing = p.query('ALERTS{alertstate="firing"}')
    assert firing == [], firing
    capture = os.environ.get("WLMAP_CAPTURE_DIR")
    if capture:  # the lead's note: the Prometheus data across a restart
        series = {
            "up": sorted(_samples(up).items()),
            "workloadmap_exporter_synced": sorted(_samples(synced).items()),
            "count(workloadmap_workload_info{top_level=true})": _range(
                p, f'count(workloadmap_workload_info{{namespace="{ns}", top_level="true"}})', window
            ),
            "workloadmap:namespace_gpus_held:sum": _range(
                p, f'workloadmap:namespace_gpus_held:sum{{namespace="{ns}"}}', window
            ),
            "absent(finetune) unguarded": gap,
            "/readyz answers seen while restarting": sorted(readyz),
        }
        Path(capture, "exporter-restart.json").write_text(json.dumps(series, indent=1))


def _range(p: Prometheus, expr: str, window: int) -> list[Any]:
    end = time.time()
    query = urllib.parse.urlencode({"query": expr, "start": end - window, "end": end, "step": "1s"})
    with urllib.request.urlopen(f"{p.url}/api/v1/query_range?{query}", timeout=10) as resp:
        doc = json.load(resp)
    assert doc["status"] == "success", doc
    return [
        {"metric": r["metric"], "values": [(float(t), v) for t, v in r["values"]]}
        for r in doc["data"]["result"]
    ]
