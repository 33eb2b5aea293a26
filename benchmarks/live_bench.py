"""Start-up of live ``wlmap`` side by side with ``kubectl``, against the harness API server.

One local control plane (etcd + kube-apiserver v1.37.2 of ``hack/build-apiserver.sh``, the
integration harness) gets the JobSet CRD, one JobSet, its Job and two pods; then each command
runs as a fresh process N times in the same run, interleaved so both tools see the same load:
``kubectl get jobsets`` / ``wlmap get jobsets``, ``kubectl describe jobset/train`` /
``wlmap describe jobset/train``, plus offline ``wlmap describe -f FILE`` (with and without
``--pods``), ``wlmap --help`` and ``python -c pass`` (the interpreter's floor). Each row gives
median / min of wall and of CPU time (user + system; on a shared machine wall time is mostly
waiting for a core) and the load average before and after the samples. Targets (issue 12):
live ``get``/``describe`` <= 300 ms (goal: 3x kubectl), ``describe -f`` <= 200 ms.

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

from cli_bench import DESCRIBE_JOBSET, DESCRIBE_JOBSET_PODS  # type: ignore[import-not-found]

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


#: (case, the kubectl words or None, the wlmap words, target seconds); live cases get
#: ``--kubeconfig K -n NS`` in front, offline ones run as given.
_CASES: list[tuple[str, list[str] | None, list[str], float | None, bool]] = [
    ("get jobsets", ["get", "jobsets"], ["get", "jobsets"], 0.300, True),
    (
        "describe jobset/train",
        ["describe", "jobset/train"],
        ["describe", "jobset/train"],
        0.300,
        True,
    ),
    ("describe -f FILE (offline)", None, DESCRIBE_JOBSET, 0.200, False),
    ("describe -f jobset --pods", None, DESCRIBE_JOBSET_PODS, 0.200, False),
    ("--help", None, ["--help"], None, False),
]


_COLUMNS = (
    "case",
    "kubectl_ms",
    "kubectl_cpu_ms",
    "wlmap_ms",
    "wlmap_cpu_ms",
    "x_kubectl",
    "target_ms",
    "verdict",
)


def _load() -> str:
    return "/".join(f"{x:.2f}" for x in os.getloadavg())


def _stats(samples: list[tuple[float, float, int]]) -> tuple[float, float, float, float]:
    """Median and min of wall and of CPU, in ms."""
    walls = [s[0] * 1000 for s in samples]
    cpus = [s[1] * 1000 for s in samples]
    return (
        round(statistics.median(walls), 1),
        round(min(walls), 1),
        round(statistics.median(cpus), 1),
        round(min(cpus), 1),
    )


def run() -> list[dict[str, object]]:
    """One row per command: kubectl and wlmap side by side, sampled interleaved in one run
    (median and min of N fresh processes, wall and CPU), the load before and after."""
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
        live = ["--kubeconfig", kc, "-n", namespace]
        runs: list[tuple[str, list[str]]] = [("floor", [sys.executable, "-c", "pass"])]
        for name, kwords, wwords, _, is_live in _CASES:
            if kwords is not None and tool:
                runs.append((f"kubectl {name}", [tool, *live, *kwords]))
            runs.append((f"wlmap {name}", [*WLMAP, *(live if is_live else []), *wwords]))
        samples: dict[str, list[tuple[float, float, int]]] = {key: [] for key, _ in runs}
        errors: dict[str, str] = {}
        for _key, argv in runs:  # warm the page cache, .pyc files, kubectl's discovery cache
            _time(argv)
        load_before = _load()
        for _ in range(RUNS):  # interleaved: every tool sees the same machine load
            for key, argv in runs:
                elapsed, cpu, code, err = _time(argv)
                samples[key].append((elapsed, cpu, code))
                if code != 0:
                    errors[key] = err.strip().splitlines()[-1] if err.strip() else f"exit {code}"
        load = f"{load_before} -> {_load()}"
        for name, kwords, _, target, _ in _CASES:
            wall, wall_min, cpu, cpu_min = _stats(samples[f"wlmap {name}"])
            row: dict[str, object] = dict.fromkeys(_COLUMNS, "")
            row["case"] = name
            kkey = f"kubectl {name}"
            if kwords is None:
                row["kubectl_ms"] = "-"
            elif kkey not in samples:
                row["kubectl_ms"] = "no kubectl (make bench builds it)"
            else:
                kwall, kmin, kcpu, _ = _stats(samples[kkey])
                row["kubectl_ms"] = f"{kwall} / {kmin}"
                row["kubectl_cpu_ms"] = kcpu
                row["x_kubectl"] = round(wall / kwall, 1) if kwall else ""
            row["wlmap_ms"] = f"{wall} / {wall_min}"
            row["wlmap_cpu_ms"] = f"{cpu} / {cpu_min}"
            row["target_ms"] = "" if target is None else int(target * 1000)
            verdict = "" if target is None else ("ok" if wall <= target * 1000 else "SLOW")
            row["verdict"] = errors.get(f"wlmap {name}") or errors.get(kkey) or verdict
            rows.append(row)
        floor = _stats(samples["floor"])
        rows.append(
            {
                "case": "python -c pass (floor)",
                "wlmap_ms": f"{floor[0]} / {floor[1]}",
                "wlmap_cpu_ms": f"{floor[2]} / {floor[3]}",
            }
        )
        rows.append({"case": f"(ms: median / min of {RUNS} fresh processes; load 1/5/15 min)"})
        rows.append({"case": f"load before -> after: {load}"})
    finally:
        kube.shutdown()
    return rows


if __name__ == "__main__":
    from run import print_table  # type: ignore[import-not-found]

    print_table(run())
