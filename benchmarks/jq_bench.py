"""Per-evaluation time of our jq engine against the PyPI `jq` (libjq) and `jaq-rs` bindings.

The four programs of issue 2 item 7 run on realistic inputs (a 2 KB pod, a JobSet, a map of
services, a status with conditions), all three engines measured side by side in this process.
Compile time is measured without the cache (each compile a distinct text) and with it. A column
whose package is not installed says so (`make bench` installs the `[bench]` extra).

The catalog's status matchers (every ``byExpression`` of every built-in definition, read from the
definitions) are timed per call as the engine runs them (``Program.all``, no limits) on the example
workloads; ``python benchmarks/jq_bench.py --baseline DIR [ROUNDS]`` times them in another checkout
too (``git worktree add /tmp/base COMMIT``), rounds interleaved so both trees see the same load,
CPU time, minimum of the rounds, with the ratio per expression.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
import timeit
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

POD: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {
        "name": "train-workers-0-3-x7k2p",
        "namespace": "ml-training",
        "uid": "7c1d2f9e-3b4a-4c5d-9e8f-0a1b2c3d4e5f",
        "resourceVersion": "48213377",
        "creationTimestamp": "2026-01-12T08:30:11Z",
        "labels": {
            "batch.kubernetes.io/controller-uid": "5b6c7d8e-9f00-4a1b-8c2d-3e4f5a6b7c8d",
            "batch.kubernetes.io/job-completion-index": "3",
            "batch.kubernetes.io/job-name": "train-workers-0",
            "controller-uid": "5b6c7d8e-9f00-4a1b-8c2d-3e4f5a6b7c8d",
            "job-name": "train-workers-0",
            "jobset.sigs.k8s.io/global-replicas": "8",
            "jobset.sigs.k8s.io/job-global-index": "0",
            "jobset.sigs.k8s.io/job-index": "0",
            "jobset.sigs.k8s.io/job-key": "f3a9c1e0b7d2",
            "jobset.sigs.k8s.io/jobset-name": "train",
            "jobset.sigs.k8s.io/replicatedjob-name": "workers",
            "jobset.sigs.k8s.io/replicatedjob-replicas": "2",
        },
        "annotations": {
            "batch.kubernetes.io/job-completion-index": "3",
            "jobset.sigs.k8s.io/jobset-name": "train",
            "jobset.sigs.k8s.io/replicatedjob-name": "workers",
        },
        "ownerReferences": [
            {
                "apiVersion": "batch/v1",
                "kind": "Job",
                "name": "train-workers-0",
                "uid": "5b6c7d8e-9f00-4a1b-8c2d-3e4f5a6b7c8d",
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ],
    },
    "spec": {
        "containers": [
            {
                "name": "trainer",
                "image": "registry.example.com/ml/trainer:2.4.1",
                "command": ["python", "-m", "train", "--epochs", "40"],
                "env": [
                    {"name": "WORLD_SIZE", "value": "8"},
                    {"name": "MASTER_ADDR", "value": "train-workers-0-0.train"},
                ],
                "resources": {
                    "limits": {"cpu": "8", "memory": "64Gi", "nvidia.com/gpu": "1"},
                    "requests": {"cpu": "8", "memory": "64Gi", "nvidia.com/gpu": "1"},
                },
                "volumeMounts": [{"name": "data", "mountPath": "/data"}],
            }
        ],
        "nodeName": "gpu-node-17",
        "restartPolicy": "Never",
        "schedulerName": "default-scheduler",
        "subdomain": "train",
        "hostname": "train-workers-0-3",
        "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "dataset"}}],
    },
    "status": {
        "phase": "Running",
        "podIP": "10.42.3.17",
        "startTime": "2026-01-12T08:30:14Z",
        "conditions": [
            {"type": "Initialized", "status": "True"},
            {"type": "Ready", "status": "True"},
            {"type": "ContainersReady", "status": "True"},
            {"type": "PodScheduled", "status": "True"},
        ],
    },
}

JOBSET: dict[str, Any] = {
    "apiVersion": "jobset.x-k8s.io/v1alpha2",
    "kind": "JobSet",
    "metadata": {"name": "train", "namespace": "ml-training"},
    "spec": {
        "replicatedJobs": [
            {
                "name": name,
                "replicas": replicas,
                "template": {
                    "spec": {
                        "parallelism": parallelism,
                        "completions": parallelism,
                        "template": {"spec": {"containers": [{"name": name, "image": "x"}]}},
                    }
                },
            }
            for name, replicas, parallelism in [("driver", 1, 1), ("workers", 2, 4), ("ps", 1, 2)]
        ]
    },
}

SERVICES: dict[str, Any] = {
    "spec": {
        "services": {
            name: {"replicas": i + 1, "image": f"registry.example.com/{name}:1.0"}
            for i, name in enumerate(["api", "worker", "scheduler", "cache", "frontend"])
        }
    }
}

STATUS: dict[str, Any] = {
    "status": {
        "conditions": [
            {"type": t, "status": s, "reason": "R", "message": "m"}
            for t, s in [
                ("Created", "True"),
                ("Running", "True"),
                ("Suspended", "False"),
                ("Completed", "False"),
                ("Failed", "False"),
            ]
        ]
    }
}

CASES: list[tuple[str, str, dict[str, Any], float]] = [
    ("a", '.metadata.labels["jobset.sigs.k8s.io/replicatedjob-name"]', POD, 1.0),
    ("b", ".spec.replicatedJobs[] | .replicas * .template.spec.parallelism", JOBSET, 5.0),
    ("c", ".spec.services | to_entries[] | .key", SERVICES, 5.0),
    ("d", 'any(.status.conditions[]; .type == "Failed" and .status == "True")', STATUS, 5.0),
]


def per_call_us(fn: Callable[[], Any], budget: float = 0.2, repeats: int = 7) -> float:
    """Median time of one call in µs (timeit loops sized to about `budget` seconds each)."""
    timer = timeit.Timer(fn)
    number, _ = timer.autorange()
    number = max(1, int(number * budget / 0.2))
    samples = timer.repeat(repeat=repeats, number=number)
    return statistics.median(samples) / number * 1e6


def _libjq() -> Callable[[str, Any], Callable[[], Any]] | str:
    try:
        import jq as libjq  # type: ignore[import-not-found]
    except ImportError:
        return "not installed"

    def make(program: str, value: Any) -> Callable[[], Any]:
        compiled = libjq.compile(program)
        return lambda: compiled.input_value(value).all()

    return make


def _jaq() -> Callable[[str, Any], Callable[[], Any]] | str:
    try:
        import jaq
    except ImportError:
        return "not installed"

    def make(program: str, value: Any) -> Callable[[], Any]:
        compiled = jaq.compile(program)
        return lambda: compiled.run(value)

    return make


def _fresh_compiles(program: str) -> Callable[[], Any]:
    """Compiles of distinct texts (a numbered comment), so the compile cache never answers."""
    from workload_map import jq

    counter = iter(range(10**12))
    return lambda: jq.compile(f"{program} #{next(counter)}")


def _fmt(x: float) -> str:
    return f"{x:.2f}" if x < 100 else f"{x:.0f}"


def _matcher_texts(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "byExpression" and isinstance(value, dict) and "expression" in value:
                yield str(value["expression"])
            else:
                yield from _matcher_texts(value)
    elif isinstance(node, list):
        for item in node:
            yield from _matcher_texts(item)


def status_matchers() -> list[str]:
    """Every distinct ``byExpression`` of the built-in catalog's definitions, in file order."""
    import yaml

    seen: dict[str, None] = {}
    for path in sorted((ROOT / "src/workload_map/catalog/data").glob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            seen.update(dict.fromkeys(_matcher_texts(doc)))
    return list(seen)


def matcher_inputs() -> list[Any]:
    """The example workloads plus the engine benchmark's JobSet (restarted) and LeaderWorkerSet."""
    import yaml

    sys.path.insert(0, str(ROOT / "benchmarks"))
    import engine_bench

    files = [
        list(yaml.safe_load_all(p.read_text()))
        for p in sorted((ROOT / "examples").glob("*/*.yaml"))
        if p.name not in ("pods.yaml", "expected.yaml")
    ]
    # one workload per example; a file of several (the demo cluster's) is a scenario, not one
    objs: list[Any] = [docs[0] for docs in files if len(docs) == 1]
    js, _ = engine_bench.jobset(0, workers=3)
    js["status"]["restarts"] = 1
    objs += [js, engine_bench.lws(0, replicas=1)[0]]
    return objs


def time_matchers(
    texts: list[str], values: list[Any], calls: int = 300, repeats: int = 3
) -> list[float]:
    """CPU µs per ``Program.all`` call of each text (mean over ``values``, min of ``repeats``)."""
    from workload_map import jq

    out = []
    for text in texts:
        prog = jq.compile(text)
        per_value: list[Callable[[], Any]] = []
        for v in values:
            try:
                prog.all(v)
                per_value.append(lambda p=prog, v=v: p.all(v))  # type: ignore[misc]
            except jq.JqError:
                per_value.append(lambda p=prog, v=v: _erring(p, v))  # type: ignore[misc]
        best = float("inf")
        for _ in range(repeats):
            started = time.process_time()
            for _ in range(calls):
                for call in per_value:
                    call()
            best = min(best, time.process_time() - started)
        out.append(best / (calls * len(values)) * 1e6)
    return out


def _erring(prog: Any, value: Any) -> None:
    from workload_map import jq

    try:
        prog.all(value)
    except jq.JqError:
        pass


_CHILD = (
    "import json, sys; sys.path.insert(0, sys.argv[1]); import jq_bench; "
    "texts = json.loads(sys.stdin.read()); "
    "print(json.dumps(jq_bench.time_matchers(texts, jq_bench.matcher_inputs())))"
)


def against(baseline: str, rounds: int = 3) -> list[dict[str, Any]]:
    """Each status matcher timed in ``baseline``'s tree and this one, rounds interleaved."""
    texts = status_matchers()
    best: dict[str, list[float]] = {}
    for _ in range(rounds):
        for tree, root in (("baseline", baseline), ("this tree", str(ROOT))):
            done = subprocess.run(
                [sys.executable, "-c", _CHILD, str(ROOT / "benchmarks")],
                input=json.dumps(texts),
                env={**os.environ, "PYTHONPATH": f"{root}/src"},
                capture_output=True,
                text=True,
                check=True,
                cwd="/",
                timeout=600,
            )
            got = json.loads(done.stdout.strip().splitlines()[-1])
            old = best.get(tree)
            best[tree] = got if old is None else [min(a, b) for a, b in zip(old, got, strict=True)]
    rows = []
    for i, text in enumerate(texts):
        base, ours = best["baseline"][i], best["this tree"][i]
        rows.append(
            {
                "expression": text if len(text) <= 70 else text[:67] + "...",
                "baseline ms/10k": f"{base * 10:.1f}",
                "ms/10k": f"{ours * 10:.1f}",
                "ratio": f"{ours / base:.2f}",
            }
        )
    return rows


def run() -> list[dict[str, Any]]:
    from workload_map import jq

    others = {"libjq": _libjq(), "jaq": _jaq()}
    rows: list[dict[str, Any]] = []
    for name, program, value, target in CASES:
        prog = jq.compile(program)
        expected = prog.all(value)
        ours = per_call_us(lambda p=prog, v=value: p.all(v))  # type: ignore[misc]
        row: dict[str, Any] = {"case": name, "ours µs": _fmt(ours), "target µs": _fmt(target)}
        for label, make in others.items():
            if isinstance(make, str):
                row[f"{label} µs"] = make
                continue
            call = make(program, value)
            got = call()
            us = per_call_us(call)
            row[f"{label} µs"] = _fmt(us)
            row[f"{label}/ours"] = f"{us / ours:.1f}x"
            if got != expected:
                same = sorted(map(str, got)) == sorted(map(str, expected))
                row[f"{label} note"] = "other order" if same else "different output"
        uncached = per_call_us(_fresh_compiles(program), budget=0.1, repeats=3)
        cached = per_call_us(lambda p=program: jq.compile(p))  # type: ignore[misc]
        row["compile µs"] = _fmt(uncached)
        row["cached compile µs"] = _fmt(cached)
        row["ok"] = "yes" if ours <= target else "NO"
        rows.append(row)
    texts = status_matchers()
    each = time_matchers(texts, matcher_inputs(), calls=100)
    rows.append(
        {
            "case": f"{len(texts)} catalog status matchers",
            "ours µs": _fmt(statistics.mean(each)),
            "worst µs": _fmt(max(each)),
        }
    )
    return rows


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from run import print_table

    if len(sys.argv) > 2 and sys.argv[1] == "--baseline":
        compared = against(sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 3)
        print_table(sorted(compared, key=lambda r: -float(r["ratio"])))
    else:
        print_table(run())
