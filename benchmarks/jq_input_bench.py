"""`wlmap jq` on a 41 MB input against the gojq binary, both measured in this run.

The inputs are a generated `kubectl get pods -o json`-style list (pretty-printed, about 41 MB)
and a float-heavy one of the same size (per-pod metrics: fractions, tiny and huge magnitudes,
integral values; numbers written as Go writes them), written once to a temporary directory. Each program runs as a separate process of each tool,
output to /dev/null; the table gives wall time and CPU time (user + system of the child), and
the CPU ratio, which a loaded machine distorts less than wall time. Target (issue 12): at most
2x gojq. gojq comes from `hack/install-gojq.sh`; without it the gojq columns say so.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

TARGET_BYTES = 41_000_000
PROGRAMS = [".items | length", "[.items[] | .metadata.name] | length", "-c .", "."]
FLOAT_PROGRAMS = ["-c .", ".", "-c .items | map(.usage.cpu * 2)"]


def _pod(i: int) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"train-worker-{i}",
            "namespace": "ml",
            "uid": f"{i:08x}-3b4a-4c5d-9e8f-0a1b2c3d4e5f",
            "labels": {"app": "train", "job-name": f"j{i % 50}", "index": str(i)},
            "creationTimestamp": "2026-01-12T08:30:11Z",
        },
        "spec": {
            "containers": [
                {
                    "name": "trainer",
                    "image": "registry.example.com/ml/trainer:2.4.1",
                    "resources": {"requests": {"cpu": "4", "nvidia.com/gpu": "1"}},
                    "env": [{"name": f"E{k}", "value": f"{i * 7 + k}.5"} for k in range(4)],
                }
            ],
            "nodeName": f"node-{i % 40}",
            "priority": 100,
        },
        "status": {
            "phase": "Running",
            "podIP": f"10.0.{i // 256 % 256}.{i % 256}",
            "conditions": [
                {"type": t, "status": "True", "lastTransitionTime": "2026-01-12T08:31:00Z"}
                for t in ("Ready", "PodScheduled", "Initialized")
            ],
            "containerStatuses": [{"name": "trainer", "ready": True, "restartCount": i % 3}],
        },
    }


def _metrics(i: int) -> dict[str, Any]:
    """A pod's usage sample: mostly fractional floats, with the magnitudes whose printing
    differs between encoders (integral, below 1e-5, above 1e21)."""
    return {
        "name": f"train-worker-{i}",
        "usage": {
            "cpu": i * 0.001 + 0.25,
            "memoryGiB": (i % 977) / 7,
            "gpuUtil": [((i * 37 + k) % 1000) / 1000 for k in range(8)],
            "power": [100.0 + i % 7, 250.5 + i % 13, float(i)],
        },
        "rates": {"loss": 1.0 / (i + 1), "lr": 3e-6 * (1 + i % 5), "tiny": 1e-7 / (i + 1)},
        "counters": {"flops": 1.5e21 * (i + 1), "bytes": i * 1024, "ok": True},
    }


def _write(directory: Path, name: str, make: Any) -> Path:
    """About TARGET_BYTES of pretty-printed JSON (the item count scaled from a sample)."""
    count = 10_000
    sample = json.dumps({"items": [make(i) for i in range(count)]}, indent=2)
    count = count * TARGET_BYTES // len(sample)
    path = directory / name
    doc = {"apiVersion": "v1", "kind": "List", "items": [make(i) for i in range(count)]}
    if make is _metrics:
        # numbers as Go programs (kubectl, Prometheus, gojq itself) write them: 100.0 as 100,
        # 1e-07 as 1e-7; Python's json would write literals gojq keeps verbatim
        from workload_map.jq.encode import dumps

        text = dumps(doc, 2)
    else:
        text = json.dumps(doc, indent=2)
    path.write_text(text)
    return path


def make_input(directory: Path) -> Path:
    return _write(directory, "pods.json", _pod)


def make_float_input(directory: Path) -> Path:
    return _write(directory, "metrics.json", _metrics)


def _gojq() -> str | None:
    cache = Path(os.environ.get("WLMAP_CACHE", Path.home() / ".cache" / "workload-map"))
    candidate = cache / "bin" / "gojq"
    if candidate.is_file():
        return str(candidate)
    return shutil.which("gojq")


def _measure(argv: list[str]) -> tuple[float, float, int]:
    """(wall s, CPU s of the child, exit code)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, done.returncode


def run() -> list[dict[str, Any]]:
    wlmap = [sys.executable, "-m", "workload_map.cli.main", "jq"]
    wlmap_bin = Path(sys.executable).with_name("wlmap")
    if wlmap_bin.is_file():
        wlmap = [str(wlmap_bin), "jq"]
    gojq = _gojq()
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="wlmap-jq-bench-") as tmp:
        cases = [(make_input(Path(tmp)), p) for p in PROGRAMS]
        cases += [(make_float_input(Path(tmp)), p) for p in FLOAT_PROGRAMS]
        for path, program in cases:
            size = f"{path.name} {path.stat().st_size / 1e6:.0f} MB"
            args = program.split(" ", 1) if program.startswith("-") else [program]
            w_wall, w_cpu, w_rc = _measure([*wlmap, *args, str(path)])
            row: dict[str, Any] = {
                "input": size,
                "program": program,
                "wlmap wall s": f"{w_wall:.2f}",
                "wlmap cpu s": f"{w_cpu:.2f}",
            }
            if w_rc != 0:
                row["note"] = f"wlmap exit {w_rc}"
            if gojq is None:
                row["gojq cpu s"] = "not installed"
            else:
                g_wall, g_cpu, _ = _measure([gojq, *args, str(path)])
                row["gojq wall s"] = f"{g_wall:.2f}"
                row["gojq cpu s"] = f"{g_cpu:.2f}"
                ratio = w_cpu / g_cpu if g_cpu else float("inf")
                row["cpu ratio"] = f"{ratio:.1f}x"
                row["ok (<= 2x)"] = "yes" if ratio <= 2.0 else "NO"
            rows.append(row)
    return rows


if __name__ == "__main__":
    for r in run():
        print(r)
