"""Start-up of live ``wlmap`` side by side with ``kubectl``, against the harness API server.

One local control plane (etcd + kube-apiserver v1.37.2 of ``hack/build-apiserver.sh``, the
integration harness) gets the JobSet CRD, one JobSet, its Job and two pods; then each command
runs as a fresh process N times in the same run, interleaved so both tools see the same load:
``kubectl get jobsets`` / ``wlmap get jobsets``, ``kubectl describe jobset/train`` /
``wlmap describe jobset/train``, plus offline ``wlmap describe -f`` and ``python -c pass`` (the
interpreter's floor). Targets (issue 12): live ``get``/``describe`` <= 300 ms, ``describe -f``
<= 200 ms. CPU time (user + system) is reported too: on a shared machine wall time is mostly
waiting for a core.

kubectl comes from ``$WLMAP_KUBECTL``, else ``$WLMAP_CACHE/bin/kubectl`` (built by
``WLMAP_EXTRA_TOOLS=kubectl bash hack/build-apiserver.sh``, what ``make bench`` runs), else
``PATH``; without one the kubectl rows say so.
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
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RUNS = int(os.environ.get("WLMAP_BENCH_RUNS", "11"))
WLMAP = [sys.executable, "-m", "workload_map.cli"]

_ENV = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "KUBECONFIG")}
_ENV["PYTHONPYCACHEPREFIX"] = os.path.join(tempfile.gettempdir(), "wlmap-bench-pycache")
_ENV["HOME"] = tempfile.gettempdir()  # no user config, no kubectl discovery cache of the user's


def kubectl() -> str | None:
    explicit = os.environ.get("WLMAP_KUBECTL")
    if explicit:
        return explicit
    cache = Path(os.environ.get("WLMAP_CACHE") or Path.home() / ".cache" / "workload-map")
    built = cache / "bin" / "kubectl"
    if built.is_file():
        return str(built)
    return shutil.which("kubectl")


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _time(argv: list[str]) -> tuple[float, float, int, str]:
    cpu = _cpu()
    started = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, check=False, cwd=ROOT, env=_ENV)
    return time.perf_counter() - started, _cpu() - cpu, done.returncode, done.stderr


def _workload(kube: Any, namespace: str) -> None:
    sys.path.insert(0, str(ROOT))
    from tests.integration.test_cli_live import JOBSET_CRD, _make_jobset, install_crd

    install_crd(kube, JOBSET_CRD)
    _make_jobset(kube, namespace)


def run() -> list[dict[str, object]]:
    sys.path.insert(0, str(ROOT))
    from tests.integration.harness import HarnessError, open_kube

    try:
        kube = open_kube(controller_manager=False)
    except HarnessError as exc:
        return [{"case": "live start-up", "verdict": f"no API server: {exc}"[:160]}]
    rows: list[dict[str, object]] = []
    try:
        namespace = kube.create_namespace("wlmap-bench-")
        _workload(kube, namespace)
        kc = str(kube.kubeconfig)
        tool = kubectl()
        job = str(ROOT / "examples/jobset/jobset.yaml")
        pods = str(ROOT / "examples/jobset/pods.yaml")
        pairs: list[tuple[str, list[str] | None, list[str], float | None]] = [
            ("get jobsets", None, [], 0.300),
            ("describe jobset/train", None, [], 0.300),
        ]
        cases: list[tuple[str, list[str] | None, float | None]] = [
            ("python -c pass (floor)", [sys.executable, "-c", "pass"], None),
        ]
        for name, _, _, target in pairs:
            words = name.split()
            cases.append(
                (
                    f"kubectl {name}",
                    [tool, "--kubeconfig", kc, "-n", namespace, *words] if tool else None,
                    None,
                )
            )
            cases.append(
                (f"wlmap {name}", [*WLMAP, "--kubeconfig", kc, "-n", namespace, *words], target)
            )
        cases.append(
            ("wlmap describe -f (offline)", [*WLMAP, "describe", "-f", job, "--pods", pods], 0.200)
        )
        samples: dict[str, list[tuple[float, float, int]]] = {name: [] for name, _, _ in cases}
        errors: dict[str, str] = {}
        for _name, argv, _ in cases:  # warm the page cache, .pyc files, kubectl's discovery cache
            if argv is not None:
                _time(argv)
        for _ in range(RUNS):  # interleaved: every tool sees the same machine load
            for name, argv, _ in cases:
                if argv is None:
                    continue
                elapsed, cpu, code, err = _time(argv)
                samples[name].append((elapsed, cpu, code))
                if code != 0:
                    errors[name] = err.strip().splitlines()[-1] if err.strip() else f"exit {code}"
        floor_kubectl: dict[str, float] = {}
        for name, argv, target in cases:
            if argv is None:
                rows.append({"case": name, "verdict": "no kubectl (make bench builds it)"})
                continue
            wall = statistics.median(s[0] for s in samples[name])
            if name.startswith("kubectl "):
                floor_kubectl[name.removeprefix("kubectl ")] = wall
            row: dict[str, object] = {
                "case": name,
                "median_ms": round(wall * 1000, 1),
                "min_ms": round(min(s[0] for s in samples[name]) * 1000, 1),
                "cpu_median_ms": round(statistics.median(s[1] for s in samples[name]) * 1000, 1),
                "target_ms": "" if target is None else int(target * 1000),
            }
            versus = floor_kubectl.get(name.removeprefix("wlmap "))
            if versus:
                row["x_kubectl"] = round(wall / versus, 1)
            verdict = "" if target is None else ("ok" if wall <= target else "SLOW")
            row["verdict"] = errors.get(name, verdict)
            rows.append(row)
    finally:
        kube.shutdown()
    return rows


if __name__ == "__main__":
    from run import print_table  # type: ignore[import-not-found]

    print_table(run())
