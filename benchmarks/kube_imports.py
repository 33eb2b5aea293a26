"""What each way of reaching the API server adds to ``wlmap get``'s start-up: imports.

``python -X importtime`` in fresh interpreters: first what ``wlmap get`` has imported before it
connects, then a marker, then the candidate; the cumulative microseconds of the candidate's
top-level imports are its cost (no wall clock: the interpreter counts). Medians and ranges of
``--runs`` interpreters per row go to docs/kube.md.

Run: ``python benchmarks/kube_imports.py [--runs 9]`` (the client packages are optional: a row
whose package is not installed is skipped).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
BEFORE = "import workload_map.cli.main, workload_map.cli.context, msgspec, json"
ROWS = {
    "kube request path (client, transport, auth, senders, wire, ssl, socket)": (
        "import workload_map.kube.client, workload_map.kube.senders, workload_map.kube.wire, "
        "ssl, socket"
    ),
    "ssl + socket": "import ssl, socket",
    "http.client + ssl": "import http.client, ssl",
    "urllib3": "import urllib3",
    "kubernetes": "import kubernetes",
    "lightkube": "import lightkube",
    "kr8s": "import kr8s",
}


def cost(python: str, code: str) -> int | None:
    """Microseconds the top-level imports of ``code`` take after :data:`BEFORE`."""
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    script = f"{BEFORE}\nimport sys\nprint('MARK', file=sys.stderr)\n{code}"
    done = subprocess.run(
        [python, "-X", "importtime", "-c", script], capture_output=True, text=True, env=env
    )
    if done.returncode != 0:
        return None
    total = 0
    for line in done.stderr.split("MARK", 1)[1].splitlines():
        parts = line.split("|")
        # a top-level import is indented by one space in the last column
        if len(parts) == 3 and parts[2].startswith(" ") and not parts[2].startswith("  "):
            total += int(parts[1])
    return total


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--python", default=sys.executable)
    args = parser.parse_args()
    print("| what is imported | median ms | range ms |")
    print("| --- | --- | --- |")
    for label, code in ROWS.items():
        runs = [cost(args.python, code) for _ in range(args.runs)]
        if any(r is None for r in runs):
            print(f"| {label} | not installed | |")
            continue
        found = sorted(r for r in runs if r is not None)
        median = statistics.median(found) / 1000
        print(f"| {label} | {median:.0f} | {found[0] / 1000:.0f}-{found[-1] / 1000:.0f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
