"""Start-up of live ``wlmap`` side by side with ``kubectl``, against the harness API server.

One local control plane (etcd + kube-apiserver v1.37.2 of ``hack/build-apiserver.sh``, the
integration harness) gets the JobSet CRD and 20 JobSets (``WLMAP_BENCH_JOBSETS``), each with its
Job and two pods (issue 21's start-up figure: ``get jobsets -A`` over 20 JobSets); then each
command runs as a fresh process N times in the same run, interleaved so both tools see the same
load: ``kubectl get jobsets`` / ``wlmap get jobsets`` (one namespace and ``-A``),
``kubectl describe jobset/train`` / ``wlmap describe jobset/train``, plus offline
``wlmap describe -f FILE`` (with and without ``--pods``), ``wlmap --help`` and ``python -c
pass`` (the interpreter's floor). ``wlmap`` runs as the installed console script does (a
``python -c`` that imports ``workload_map.cli.main`` and calls ``entry()``, the script pip
writes); ``python -m workload_map.cli`` is sampled for ``get -A`` too. With compiled modules
(``WLMAP_BENCH_COMPILED``: a folder holding a mypyc build of the package) every wlmap row is sampled a second time from it, beside the pure
Python sources of the checkout; with ``WLMAP_BENCH_BASELINE`` (the ``src`` of another checkout)
every wlmap row is sampled from that tree too, in the same interleaved rounds (before/after a
change against the same server and load). Each row gives median / min of wall and of CPU time (user +
system; on a shared machine wall time is mostly waiting for a core), the ratio to kubectl's
median wall time, and the load average before and after the samples. Targets: live ``get``
at most 1.5x kubectl (issue 21), live ``describe`` <= 300 ms, ``describe -f`` <= 200 ms
(issue 12).

kubectl comes from ``$WLMAP_KUBECTL``, else ``$WLMAP_CACHE/bin/kubectl`` (built by
``WLMAP_EXTRA_TOOLS=kubectl bash hack/build-apiserver.sh``, what ``make bench`` runs), else
``PATH``; without one the kubectl rows say so. With ``WLMAP_BENCH_INSTRUCTIONS=1`` each wlmap
row also gets its instruction count (one run under callgrind, see ``cli_bench.py``).
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

from cli_bench import (  # type: ignore[import-not-found]
    DESCRIBE_JOBSET,
    DESCRIBE_JOBSET_PODS,
    instructions,
)

ROOT = Path(__file__).resolve().parents[1]
RUNS = int(os.environ.get("WLMAP_BENCH_RUNS", "11"))
JOBSETS = int(os.environ.get("WLMAP_BENCH_JOBSETS", "20"))
#: what the console script pip writes for ``wlmap`` runs (``entry()`` of workload_map.cli.main)
SCRIPT = "import sys; from workload_map.cli.main import entry; sys.argv[0] = 'wlmap'; entry()"
WLMAP = [sys.executable, "-c", SCRIPT]
WLMAP_M = [sys.executable, "-m", "workload_map.cli"]

_ENV = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "KUBECONFIG")}
_ENV["PYTHONPYCACHEPREFIX"] = os.path.join(tempfile.gettempdir(), "wlmap-bench-pycache")
_ENV["HOME"] = tempfile.gettempdir()  # no user config, no kubectl discovery cache of the user's


def _env(src: Path | None) -> dict[str, str]:
    """The environment of a wlmap run: the checkout's sources (or a compiled build) first."""
    env = dict(_ENV)
    tree = str(src or ROOT / "src")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (tree, os.environ.get("PYTHONPATH", "")) if p)
    # each tree its own home: the caches a command keeps there (the jq programs, keyed by the
    # parser's own files; the kubeconfig's parse) would otherwise be rewritten by the other
    # tree's run in every interleaved round, and both measured cold
    home = (
        Path(tempfile.gettempdir()) / "wlmap-bench-home" / tree.strip(os.sep).replace(os.sep, "_")
    )
    home.mkdir(parents=True, exist_ok=True)
    env["HOME"] = str(home)
    return env


def compiled() -> Path | None:
    """The folder of a compiled build of the package (``WLMAP_BENCH_COMPILED``), if any."""
    found = os.environ.get("WLMAP_BENCH_COMPILED")
    return Path(found) if found and (Path(found) / "workload_map").is_dir() else None


def baseline() -> Path | None:
    """The ``src`` folder of another checkout to sample beside this one
    (``WLMAP_BENCH_BASELINE``, e.g. a worktree of the commit before a change), if any."""
    found = os.environ.get("WLMAP_BENCH_BASELINE")
    return Path(found) if found and (Path(found) / "workload_map").is_dir() else None


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


def _time(argv: list[str], env: dict[str, str]) -> tuple[float, float, int, str]:
    cpu = _cpu()
    started = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, check=False, cwd=ROOT, env=env)
    return time.perf_counter() - started, _cpu() - cpu, done.returncode, done.stderr


def _workload(kube: Any, namespace: str) -> None:
    sys.path.insert(0, str(ROOT))
    from tests.integration.test_cli_live import JOBSET_CRD, _make_jobset, install_crd

    install_crd(kube, JOBSET_CRD)
    for index in range(JOBSETS):
        _make_jobset(kube, namespace, "train" if index == 0 else f"js-{index}")


#: (case, the kubectl words or None, the wlmap words, target seconds or a ratio to kubectl as
#: a string "1.5x", live); live cases get ``--kubeconfig K`` (and ``-n NS`` unless they say
#: ``-A``) in front, offline ones run as given.
_CASES: list[tuple[str, list[str] | None, list[str], float | str | None, bool]] = [
    ("get jobsets -A", ["get", "jobsets", "-A"], ["get", "jobsets", "-A"], "1.5x", True),
    ("get jobsets", ["get", "jobsets"], ["get", "jobsets"], "1.5x", True),
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
#: the case also sampled as ``python -m workload_map.cli`` (the console script's difference)
_MODULE_CASE = "get jobsets -A"

_COLUMNS = (
    "case",
    "kubectl_ms",
    "kubectl_cpu_ms",
    "wlmap_ms",
    "wlmap_cpu_ms",
    "x_kubectl",
    "cpu_x_kubectl",
    "target",
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


def _verdict(target: float | str | None, wall: float, kwall: float | None) -> str:
    if target is None:
        return ""
    if isinstance(target, str):  # a ratio to kubectl's median
        if not kwall:
            return ""
        return "ok" if wall / kwall <= float(target.rstrip("x")) else "SLOW"
    return "ok" if wall <= target * 1000 else "SLOW"


def _runs(
    tool: str | None, kc: str, namespace: str, build: Path | None
) -> list[tuple[str, list[str], dict[str, str]]]:
    """Every (key, argv, environment) sampled: the floor, kubectl's and each wlmap variant's."""
    runs = [("floor", [sys.executable, "-c", "pass"], _ENV)]
    variants = [("wlmap", _env(None))] + ([("compiled", _env(build))] if build else [])
    before = baseline()
    variants += [("baseline", _env(before))] if before else []
    for name, kwords, wwords, _, is_live in _CASES:
        scope = ["--kubeconfig", kc] + ([] if "-A" in wwords else ["-n", namespace])
        if kwords is not None and tool:
            runs.append((f"kubectl {name}", [tool, *scope, *kwords], _ENV))
        for variant, env in variants:
            words = [*(scope if is_live else []), *wwords]
            runs.append((f"{variant} {name}", [*WLMAP, *words], env))
            if name == _MODULE_CASE:
                runs.append((f"{variant}-m {name}", [*WLMAP_M, *words], env))
    return runs


def _label(key: str) -> str:
    """The row label of a sampled key (``wlmap get jobsets`` -> ``get jobsets``, ``baseline-m
    get jobsets -A`` -> ``get jobsets -A (baseline, -m)``)."""
    variant, _, name = key.partition(" ")
    if variant == "wlmap":
        return name
    tree, _, module = variant.partition("-")
    if tree == "wlmap":
        return f"{name} (python -m)"
    return f"{name} ({tree}, -m)" if module else f"{name} ({tree})"


def _rows(
    samples: dict[str, list[tuple[float, float, int]]], errors: dict[str, str]
) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    for name, kwords, _, target, _ in _CASES:
        kkey = f"kubectl {name}"
        kwall: float | None = None
        kcell = "-" if kwords is None else "no kubectl (make bench builds it)"
        if kkey in samples:
            kwall, kmin, kcpu, _ = _stats(samples[kkey])
            kcell = f"{kwall} / {kmin}"
        labels = [("wlmap", name), ("wlmap-m", f"{name} (python -m)")]
        labels += [("compiled", f"{name} (compiled)"), ("compiled-m", f"{name} (compiled, -m)")]
        labels += [("baseline", f"{name} (baseline)"), ("baseline-m", f"{name} (baseline, -m)")]
        for variant, label in labels:
            key = f"{variant} {name}"
            if key not in samples:
                continue
            wall, wall_min, cpu, cpu_min = _stats(samples[key])
            row: dict[str, object] = dict.fromkeys(_COLUMNS, "")
            row["case"] = label
            row["kubectl_ms"] = kcell
            if kkey in samples:
                row["kubectl_cpu_ms"] = kcpu
                row["x_kubectl"] = round(wall / kwall, 2) if kwall else ""
                row["cpu_x_kubectl"] = round(cpu / kcpu, 2) if kcpu else ""
            row["wlmap_ms"] = f"{wall} / {wall_min}"
            row["wlmap_cpu_ms"] = f"{cpu} / {cpu_min}"
            row["target"] = (
                ""
                if target is None
                else target
                if isinstance(target, str)
                else f"{target * 1000:.0f} ms"
            )
            row["verdict"] = errors.get(key) or errors.get(kkey) or _verdict(target, wall, kwall)
            rows.append(row)
    return rows


def run() -> list[dict[str, object]]:
    """One row per command and wlmap variant: kubectl and wlmap side by side, sampled
    interleaved in one run (median and min of N fresh processes, wall and CPU), the load
    before and after."""
    sys.path.insert(0, str(ROOT))
    from tests.integration.harness import HarnessError, open_kube

    try:
        kube = open_kube(controller_manager=False)
    except HarnessError as exc:
        return [{"case": "live start-up", "verdict": f"no API server: {exc}"[:160]}]
    try:
        namespace = kube.create_namespace("wlmap-bench-")
        _workload(kube, namespace)
        runs = _runs(kubectl(), str(kube.kubeconfig), namespace, compiled())
        samples: dict[str, list[tuple[float, float, int]]] = {key: [] for key, _, _ in runs}
        errors: dict[str, str] = {}
        for _key, argv, env in runs:  # warm the page cache, .pyc files, kubectl's discovery cache
            _time(argv, env)
        load_before = _load()
        for _ in range(RUNS):  # interleaved: every tool sees the same machine load
            for key, argv, env in runs:
                elapsed, cpu, code, err = _time(argv, env)
                samples[key].append((elapsed, cpu, code))
                if code != 0:
                    errors[key] = err.strip().splitlines()[-1] if err.strip() else f"exit {code}"
        load = f"{load_before} -> {_load()}"
        rows = _rows(samples, errors)
        if os.environ.get("WLMAP_BENCH_INSTRUCTIONS") == "1":
            counts = {
                key: instructions(argv, env)
                for key, argv, env in runs
                if not key.startswith(("kubectl", "floor"))
            }
            for row in rows:
                found = next(
                    (n for k, n in counts.items() if _label(k) == row.get("case") and n), None
                )
                row["instructions_M"] = round(found / 1e6, 1) if found else "-"
        floor = _stats(samples["floor"])
        rows.append(
            {
                "case": "python -c pass (floor)",
                "wlmap_ms": f"{floor[0]} / {floor[1]}",
                "wlmap_cpu_ms": f"{floor[2]} / {floor[3]}",
            }
        )
        rows.append(
            {
                "case": f"(ms: median / min of {RUNS} fresh processes; {JOBSETS} JobSets; "
                "x_kubectl: median wall / kubectl's; cpu_x_kubectl: median CPU / kubectl's)"
            }
        )
        if compiled() is None:
            rows.append({"case": "(compiled rows: set WLMAP_BENCH_COMPILED, see the docstring)"})
        rows.append({"case": f"load 1/5/15 min before -> after: {load}"})
    finally:
        kube.shutdown()
    return rows


if __name__ == "__main__":
    from run import print_table  # type: ignore[import-not-found]

    print_table(run())
