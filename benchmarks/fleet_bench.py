"""Live figures on a fleet, side by side with kubectl v1.37.2 (issue 21 items 1, 2 and 7).

A fleet of JobSets (``fleet.open_fleet``: restored from the tool cache, else built and kept)
is served by the harness API server; then each command runs as a fresh process, the tools
interleaved so they share the machine's load:

* ``describe jobset/js-7``: wlmap against kubectl's ``describe jobset js-7`` plus
  ``get pods -l jobset.sigs.k8s.io/jobset-name=js-7`` (what a user runs instead), target
  at most 1.5x;
* ``get jobset js-7``: wlmap against kubectl's ``get jobset js-7`` plus the same ``get pods
  -l``, target at most 1.5x;
* ``describe job/js-7-workers-0``: wlmap against kubectl's ``describe job`` alone (v1.37 reads
  the Job twice and its events: no pods, its pod counts are the Job's status), target at most
  1.5x and again against
  ``describe job`` plus ``get pods -l batch.kubernetes.io/job-name=js-7-workers-0`` (issue
  21's pair: what a user runs to see the pods wlmap's describe lists; in a namespace of 40k
  pods that label-selected list is most of either tool's time);
* ``get jobsets -A``: wlmap against ``kubectl get pods -A`` alone, target at most 1x.

``WLMAP_BENCH_BEFORE=/path/to/src`` adds a column for another checkout's sources (the
project as it was), run in the same interleaved loop. ``WLMAP_FLEETS`` picks the fleets
(``1000x4x2,10000x4x2``: JobSets x pods per Job x Jobs per JobSet; default ``1000x4x2``),
``WLMAP_FLEET_RUNS`` the samples per command (default 5), ``WLMAP_FLEET_CASES`` the cases
(comma-separated words a case starts with, e.g. ``describe,get jobset``; default all).
``WLMAP_FLEET_WARNINGS=1`` then posts the scheduler's FailedScheduling warning on each
pending pod of JobSet 7's namespace (400 in 1000x4x2, as a busy namespace has them) and
measures the describe cases again (describe places every warning of the namespace).
Each row gives the median and min wall time of the samples in ms and the ratio of the
medians, the median CPU time (user + system of the processes) and its ratio (the API server's
work is in the wall time only); the load average before and after. The rounds alternate the tools' order.
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RUNS = int(os.environ.get("WLMAP_FLEET_RUNS", "5"))
NAME_LABEL = "jobset.sigs.k8s.io/jobset-name"
JOB_LABEL = "batch.kubernetes.io/job-name"


def _load() -> str:
    return "/".join(f"{x:.2f}" for x in os.getloadavg())


def _env(src: Path | None) -> dict[str, str]:
    dropped = ("KUBECONFIG", "PYTHONPATH", "PYTHONDONTWRITEBYTECODE")
    env = {k: v for k, v in os.environ.items() if k not in dropped}
    env["HOME"] = tempfile.gettempdir()  # no user config, no user kubectl cache
    # bytecode cached (as for an installed wlmap), outside the checkout
    env["PYTHONPYCACHEPREFIX"] = os.path.join(tempfile.gettempdir(), "wlmap-bench-pycache")
    if src is not None:
        env["PYTHONPATH"] = str(src)
        # each tree its own home, as live_bench gives it: the jq programs a command keeps
        # there are keyed by the parser's own files, so with one home the other tree's run
        # rewrote them in every interleaved round and both were measured re-parsing them
        # (describe job/js-7-workers-0 re-parsing: 292.6M -> 308.2M instructions, callgrind)
        home = Path(
            tempfile.gettempdir(), "wlmap-bench-home", str(src).strip(os.sep).replace(os.sep, "_")
        )
        home.mkdir(parents=True, exist_ok=True)
        env["HOME"] = str(home)
    return env


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _time(argv: list[str], env: dict[str, str]) -> tuple[float, float, int, str]:
    """Wall and CPU seconds (user + system of the process), exit code, the end of stderr."""
    cpu = _cpu()
    started = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, check=False, env=env, cwd=ROOT)
    elapsed = time.perf_counter() - started
    return elapsed, _cpu() - cpu, done.returncode, done.stderr.strip()[-300:]


def _cases(ns: str, name: str) -> list[tuple[str, list[list[str]], list[str], float]]:
    """(case, kubectl commands summed, wlmap words, target ratio)."""
    pods = ["get", "pods", "-n", ns, "-l", f"{NAME_LABEL}={name}"]
    job_pods = ["get", "pods", "-n", ns, "-l", f"{JOB_LABEL}={name}-workers-0"]
    return [
        (
            f"describe jobset/{name}",
            [["describe", "jobset", name, "-n", ns], pods],
            ["describe", f"jobset/{name}", "-n", ns],
            1.5,
        ),
        (
            f"get jobset {name}",
            [["get", "jobset", name, "-n", ns], pods],
            ["get", "jobset", name, "-n", ns],
            1.5,
        ),
        (
            f"describe job/{name}-workers-0",
            [["describe", "job", f"{name}-workers-0", "-n", ns]],  # it reads no pods
            ["describe", f"job/{name}-workers-0", "-n", ns],
            1.5,
        ),
        (  # what a user runs to see the same pods: issue 21's pair (describe + get pods -l)
            f"describe job/{name}-workers-0 (kubectl + get pods -l)",
            [["describe", "job", f"{name}-workers-0", "-n", ns], job_pods],
            ["describe", f"job/{name}-workers-0", "-n", ns],
            1.5,
        ),
        ("get jobsets -A", [["get", "pods", "-A"]], ["get", "jobsets", "-A"], 1.0),
    ]


def _ms(samples: list[float]) -> tuple[float, float]:
    return round(statistics.median(samples) * 1000, 1), round(min(samples) * 1000, 1)


def _warn_pending(fleet: object) -> int:
    """The scheduler's FailedScheduling warning on each pending pod of JobSet 7's namespace,
    as a busy namespace has them (describe places every warning of the namespace by its
    object's owner chain); the number posted. The fleet is a copy: its kept snapshot stays."""
    from workload_map.kube.api import Api
    from workload_map.kube.options import ConnectionOptions

    spec = fleet.spec  # type: ignore[attr-defined]
    ns = spec.namespace_of(7)
    options = ConnectionOptions(kubeconfig=str(fleet.kubeconfig), timeout=120.0)  # type: ignore[attr-defined]
    api = Api.connect(options, pooled=False)
    pending = api.get(f"/api/v1/namespaces/{ns}/pods", [("fieldSelector", "status.phase=Pending")])
    for i, pod in enumerate(pending.get("items") or []):
        meta = pod["metadata"]
        involved = {"apiVersion": "v1", "kind": "Pod", "name": meta["name"], "namespace": ns}
        event = {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": f"{meta['name']}.{i}", "namespace": ns},
            "involvedObject": involved | {"uid": meta["uid"]},
            "type": "Warning",
            "reason": "FailedScheduling",
            "message": "0/100 nodes are available: 100 Insufficient nvidia.com/gpu.",
            "source": {"component": "default-scheduler"},
            "count": 3,
            "firstTimestamp": "2026-12-01T00:00:00Z",
            "lastTimestamp": "2026-12-01T00:00:00Z",
        }
        api.request("POST", f"/api/v1/namespaces/{ns}/events", event)
    api.close()
    return len(pending.get("items") or [])


def _measure(
    fleet: object,
    kubectl: str | None,
    before: Path | None,
    script: str,
    *,
    only: list[str] | None = None,
    note: str = "",
) -> list[dict[str, object]]:
    spec = fleet.spec  # type: ignore[attr-defined]
    kc = str(fleet.kubeconfig)  # type: ignore[attr-defined]
    ns, name = spec.namespace_of(7), spec.jobset_name(7)
    tools: list[tuple[str, Path | None]] = [("after", ROOT / "src")]
    if before is not None:
        tools.insert(0, ("before", before))
    wlmap = [sys.executable, "-c", script, "--kubeconfig", kc]  # as the console script runs
    rows: list[dict[str, object]] = []
    if only is None:
        only = [w.strip() for w in os.environ.get("WLMAP_FLEET_CASES", "").split(",") if w.strip()]
    for case, kwords, wwords, target in _cases(ns, name):
        if only and not any(case.startswith(w) for w in only):
            continue
        runs: list[tuple[str, list[list[str]], dict[str, str]]] = []
        if kubectl:
            runs.append(
                ("kubectl", [[kubectl, "--kubeconfig", kc, *w] for w in kwords], _env(None))
            )
        for label, src in tools:
            runs.append((label, [[*wlmap, *wwords]], _env(src)))
        samples: dict[str, list[float]] = {label: [] for label, _, _ in runs}
        cpus: dict[str, list[float]] = {label: [] for label, _, _ in runs}
        errors: dict[str, str] = {}
        for _, argvs, env in runs:  # warm: page cache, .pyc files, kubectl's discovery cache
            for argv in argvs:
                _time(argv, env)
        load_before = _load()
        for round_ in range(RUNS):
            # interleaved, the order reversed every other round (neither tool always first)
            for label, argvs, env in runs if round_ % 2 == 0 else runs[::-1]:
                total = cpu_total = 0.0
                for argv in argvs:
                    elapsed, cpu, code, err = _time(argv, env)
                    total += elapsed
                    cpu_total += cpu
                    if code != 0:
                        errors[label] = err.splitlines()[-1] if err else f"exit {code}"
                samples[label].append(total)
                cpus[label].append(cpu_total)
        row: dict[str, object] = {"fleet": f"{spec.jobsets}/{spec.pods}", "case": case + note}
        kmed = _ms(samples["kubectl"])[0] if kubectl else None
        kcpu = _ms(cpus["kubectl"])[0] if kubectl else None
        for label in samples:
            med, low = _ms(samples[label])
            cpu_med, _ = _ms(cpus[label])
            row[f"{label}_ms"] = f"{med} / {low}"
            row[f"{label}_cpu_ms"] = cpu_med
            if kmed and label != "kubectl":
                row[f"{label}_x"] = round(med / kmed, 2)
            if kcpu and label != "kubectl":
                row[f"{label}_cpu_x"] = round(cpu_med / kcpu, 2)
        row["target_x"] = target
        if kmed and "after_x" in row:
            row["verdict"] = "ok" if float(str(row["after_x"])) <= target else "SLOW"
        if errors:
            row["verdict"] = "; ".join(f"{k}: {v}" for k, v in errors.items())[:160]
        row["load"] = f"{load_before} -> {_load()}"
        rows.append(row)
    return rows


def run() -> list[dict[str, object]]:
    sys.path.insert(0, str(HERE))
    from fleet import iter_specs, kept_build, open_fleet  # type: ignore[import-not-found]
    from live_bench import SCRIPT  # type: ignore[import-not-found]
    from live_bench import kubectl as find_kubectl

    sys.path.insert(0, str(ROOT))
    from tests.integration.harness import HarnessError

    kubectl = find_kubectl()
    before_env = os.environ.get("WLMAP_BENCH_BEFORE")
    before = Path(before_env) if before_env else None
    rows: list[dict[str, object]] = []
    for spec in iter_specs(os.environ.get("WLMAP_FLEETS", "1000x4x2")):
        try:
            fleet = open_fleet(spec, log=lambda line: print(line, flush=True))
        except HarnessError as exc:
            rows.append({"fleet": spec.describe(), "verdict": f"no API server: {exc}"[:160]})
            continue
        with fleet:
            line = fleet.report.line()
            built = kept_build(spec)
            if built and not fleet.report.built:
                line += f" (built once in {built.get('seconds', 0):.0f} s)"
            rows.append({"fleet": line})
            rows.extend(_measure(fleet, kubectl, before, SCRIPT))
            if os.environ.get("WLMAP_FLEET_WARNINGS"):
                warned = _warn_pending(fleet)
                note = f" ({warned} warnings)"
                rows.extend(_measure(fleet, kubectl, before, SCRIPT, only=["describe"], note=note))
    rows.append(
        {
            "fleet": f"(ms: median / min of {RUNS} fresh processes; x: ratio to kubectl's "
            "median wall, cpu_x: of its median CPU)"
        }
    )
    return rows


if __name__ == "__main__":
    from run import print_table  # type: ignore[import-not-found]

    print_table(run())
