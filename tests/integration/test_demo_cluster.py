"""``make demo-cluster`` (``hack/demo-cluster.py``) run as a user runs it, as a child process.

- ``--once``: the gang is held while its pool is one node short (none of its pods bound, the
  scheduler having reported them ``FailedScheduling``), all bound once the node comes; the web
  view answers 200 on 127.0.0.1; Prometheus answers the PromQL queries with the gang's figures;
  afterwards no process of the demo is left and its directory is gone.
- Ctrl-C (SIGINT to the demo, as the terminal sends it) while it starts and while it runs: it
  stops every child and exits 130, without a traceback.
- a missing tool: exit 2 and the make target that provides it, before anything starts.

Every wait is the demo's own, bounded by ``--timeout`` (``WLMAP_TEST_START_TIMEOUT``); the
test's bounds are multiples of it, hang guards only.
"""

from __future__ import annotations

import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from hack.localkube.plane import start_timeout

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "hack/demo-cluster.py"
GANG_PODS, GANG_GPUS = 4, 8
#: the GPUs the demo's workloads hold once all are bound: train 4 x 8, eval 2 x 4, serve 2 x 1
ALL_HELD = 4 * 8 + 2 * 4 + 2 * 1

pytestmark = [
    pytest.mark.skipif(
        shutil.which("prometheus") is None,
        reason="prometheus not installed (`make prometheus` installs Debian's, as root)",
    ),
    # a hang guard: the demo's own waits are each bounded by --timeout
    pytest.mark.timeout(1800),
]


def _timeout() -> float:
    return start_timeout()


def _processes_with(text: str) -> dict[int, str]:
    """Running processes whose command line mentions ``text`` (the demo's directory: every
    child of the demo names it in a flag)."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue  # gone in between
        if text in argv and state != "Z":
            found[int(entry.name)] = argv[:200]
    return found


def _workdir(output: str) -> str:
    for line in output.splitlines():
        if "] workdir " in line:
            return line.split("] workdir ", 1)[1].split()[0]
    raise AssertionError(f"the demo never named its directory:\n{output}")


def _assert_nothing_left(workdir: str) -> None:
    assert _processes_with(workdir) == {}
    assert not Path(workdir).exists()


def test_the_gang_is_held_while_short_and_bound_once_a_node_comes(tmp_path: Path) -> None:
    summary_file = tmp_path / "summary.json"
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--once", f"--summary={summary_file}"],
        capture_output=True,
        text=True,
        timeout=20 * _timeout(),
        check=False,
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert "Traceback" not in output
    summary: dict[str, Any] = json.loads(summary_file.read_text())
    assert summary["exit"] == 0
    assert summary["held"] == {"bound": 0, "pods": GANG_PODS}
    assert summary["released"] == {"bound": GANG_PODS, "pods": GANG_PODS}
    assert "gang demo/train held: 0 of 4 pods bound" in output
    assert "gang demo/train released: 4 of 4 pods bound" in output
    web = summary["web"]
    assert web["status"] == 200 and web["url"].startswith("http://127.0.0.1:")
    assert f"web view: {web['url']}" in output

    held = summary["queries"]["held"]
    short = {
        r["metric"]["workload"]: float(r["value"][1])
        for r in held["workloadmap:gang_unscheduled_members:sum"]
    }
    assert short["train"] == GANG_PODS  # no member bound, all four missing
    bound = summary["queries"]["bound"]
    assert bound["workloadmap:gang_unscheduled_members:sum"] == []
    scheduled = {
        r["metric"]["workload"]: float(r["value"][1])
        for r in bound['workloadmap_gang_pods{state="scheduled"}']
    }
    assert scheduled == {"train": GANG_PODS, "eval": 2}
    gpus = {
        r["metric"]["state"]: float(r["value"][1]) for r in bound["workloadmap:namespace_gpus:sum"]
    }
    assert gpus["held"] == ALL_HELD
    (patched,) = bound["sum(workloadmap_gangs_webhook_patched_total)"]
    assert float(patched["value"][1]) >= GANG_PODS + 2  # the members of both gangs joined
    assert "PromQL> workloadmap:namespace_gpus:sum" in output

    assert len(summary["pids"]) >= 7  # etcd, API server, controller-manager, scheduler, ...
    _assert_nothing_left(summary["workdir"])


class _Reader:
    """The demo's output, line by line, read in a thread (so a wait can be bounded)."""

    def __init__(self, proc: subprocess.Popen[str]) -> None:
        self.lines: queue.Queue[str] = queue.Queue()
        self.seen: list[str] = []
        assert proc.stdout is not None
        stream = proc.stdout
        threading.Thread(
            target=lambda: [self.lines.put(line) for line in stream], daemon=True
        ).start()

    def until(self, text: str, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while not any(text in line for line in self.seen):
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no {text!r} after {timeout:.0f} s:\n{''.join(self.seen)}")
            try:
                self.seen.append(self.lines.get(timeout=min(left, 1.0)))
            except queue.Empty:
                continue

    def rest(self) -> str:
        while not self.lines.empty():
            self.seen.append(self.lines.get())
        return "".join(self.seen)


@pytest.mark.parametrize(
    "moment",
    ["operator ready", "press Ctrl-C"],
    ids=["while-starting", "while-running"],
)
def test_ctrl_c_stops_every_process(moment: str) -> None:
    proc = subprocess.Popen(
        [sys.executable, str(SCRIPT)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        reader = _Reader(proc)
        reader.until(moment, 20 * _timeout())
        workdir = _workdir(reader.rest())
        assert _processes_with(workdir)  # the check below sees the demo's children
        proc.send_signal(signal.SIGINT)
        code = proc.wait(10 * _timeout())
        reader.until("stopped everything", _timeout())
        output = reader.rest()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert code == 130, output
    assert "interrupted: stopping" in output and "Traceback" not in output
    assert "still running" not in output
    _assert_nothing_left(workdir)


def test_a_missing_tool_names_the_make_target(tmp_path: Path) -> None:
    """Before anything starts: exit 2, the missing binary and the target that builds it."""
    env = {**os.environ, "TEST_ASSET_KUBE_APISERVER": str(tmp_path / "kube-apiserver")}
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--once"],
        capture_output=True,
        text=True,
        env=env,
        timeout=10 * _timeout(),
        check=False,
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert "make apiserver" in done.stderr and "kube-apiserver" in done.stderr
    assert "Traceback" not in done.stderr
    assert "workdir" not in done.stdout  # nothing was started
    # prometheus missing: a PATH without it (the Kubernetes binaries come from the cache)
    bare = tmp_path / "bin"
    bare.mkdir()
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--once"],
        capture_output=True,
        text=True,
        env={**os.environ, "PATH": str(bare)},
        timeout=10 * _timeout(),
        check=False,
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert "make prometheus" in done.stderr and "Traceback" not in done.stderr
