"""Start-up time of ``wlmap``: ``--help`` (target 150 ms) and ``describe -f`` (target 200 ms,
issue 12).

Each command runs as a fresh subprocess (what a user waits for), N times; the median counts.
A plain ``python -c pass`` is measured alongside as the floor the interpreter itself sets.
The CPU time the command used (user + system) is reported too: on a machine shared with other
work the wall time mostly measures waiting for a core, the CPU time what ``wlmap`` costs.
Bytecode caching is on (as for an installed ``wlmap``), with the cache in a temporary folder so
the checkout stays clean even where ``PYTHONDONTWRITEBYTECODE`` is set.

With ``WLMAP_BENCH_INSTRUCTIONS=1`` (and valgrind installed) each case also runs once under
``valgrind --tool=callgrind`` and its row gets the process's instruction count: the figure that
does not move with the machine's load, used for before/after comparisons (docs/cli.md).
"""

from __future__ import annotations

import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WLMAP = [sys.executable, "-m", "workload_map.cli"]
RUNS = 15

#: the offline JobSet of examples/ with its pods (live_bench.py measures it too)
DESCRIBE_JOBSET = ["describe", "-f", str(ROOT / "examples/jobset/jobset.yaml")]
DESCRIBE_JOBSET_PODS = [*DESCRIBE_JOBSET, "--pods", str(ROOT / "examples/jobset/pods.yaml")]

CASES = [
    ("python -c pass (floor)", [sys.executable, "-c", "pass"], None),
    ("wlmap --help", [*WLMAP, "--help"], 0.150),
    ("wlmap --version", [*WLMAP, "--version"], 0.150),
    ("wlmap describe -f jobset --pods", [*WLMAP, *DESCRIBE_JOBSET_PODS], 0.200),
    (
        "wlmap describe -f raycluster -o json",
        [*WLMAP, "describe", "-f", str(ROOT / "examples/raycluster/raycluster.yaml"), "-o", "json"],
        0.200,
    ),
]


_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
_ENV["PYTHONPYCACHEPREFIX"] = os.path.join(tempfile.gettempdir(), "wlmap-bench-pycache")


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _time(argv: list[str]) -> tuple[float, float, int]:
    """Wall seconds, CPU seconds and exit code of one run."""
    cpu = _cpu()
    started = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, check=False, cwd=ROOT, env=_ENV)
    return time.perf_counter() - started, _cpu() - cpu, done.returncode


def instructions(argv: list[str], env: dict[str, str] | None = None) -> int | None:
    """Instructions the process ``argv`` executes (callgrind's total; PYTHONHASHSEED fixed so
    that two runs of one tree agree), or None without valgrind or when it fails."""
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        return None
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "callgrind.out"
        done = subprocess.run(
            [valgrind, "--tool=callgrind", f"--callgrind-out-file={out}", *argv],
            capture_output=True,
            check=False,
            cwd=ROOT,
            env={**(env or _ENV), "PYTHONHASHSEED": "0"},
            timeout=600,
        )
        if done.returncode != 0 or not out.is_file():
            return None
        for line in out.read_text().splitlines():
            if line.startswith("totals:"):
                return int(line.split()[1])
    return None


def run() -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    counting = os.environ.get("WLMAP_BENCH_INSTRUCTIONS") == "1"
    for name, argv, target in CASES:
        _time(argv)  # warm the page cache and .pyc files
        samples, cpus, codes = [], [], set()
        for _ in range(RUNS):
            elapsed, cpu, code = _time(argv)
            samples.append(elapsed)
            cpus.append(cpu)
            codes.add(code)
        median = statistics.median(samples)
        verdict = "" if target is None else ("ok" if median <= target else "SLOW")
        rows.append(
            {
                "case": name,
                "median_ms": round(median * 1000, 1),
                "min_ms": round(min(samples) * 1000, 1),
                "cpu_median_ms": round(statistics.median(cpus) * 1000, 1),
                "target_ms": "" if target is None else int(target * 1000),
                "verdict": verdict if codes == {0} else f"exit {sorted(codes)}",
            }
        )
        if counting:
            rows[-1]["instructions_M"] = round((instructions(argv) or 0) / 1e6, 1) or "-"
    return rows


if __name__ == "__main__":
    for row in run():
        print(row)
