"""kubectl habits against a real kube-apiserver: ``get -w`` over the API's watch, and the
template outputs (``custom-columns``, ``jsonpath``) compared with kubectl's own output on the
same objects."""

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

from tests.integration.test_cli_live import _make_jobset, _ready_status, wlmap  # noqa: F401
from tests.integration.test_cli_live import jobset_crd as jobset_crd

ROOT = Path(__file__).resolve().parents[2]


def _kubectl() -> str | None:
    for candidate in (
        os.environ.get("WLMAP_KUBECTL"),
        str(
            Path(os.environ.get("WLMAP_CACHE") or Path.home() / ".cache" / "workload-map")
            / "bin"
            / "kubectl"
        ),
        shutil.which("kubectl"),
    ):
        if candidate and Path(candidate).is_file() and os.access(candidate, os.X_OK):
            return candidate
    return None


def _lines(proc: subprocess.Popen[str]) -> queue.Queue[str]:
    lines: queue.Queue[str] = queue.Queue()

    def pump() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.put(line.rstrip("\n"))

    threading.Thread(target=pump, daemon=True).start()
    return lines


def _wait_for(lines: queue.Queue[str], pred: Any, timeout: float = 30.0) -> list[str]:
    seen: list[str] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            line = lines.get(timeout=0.2)
        except queue.Empty:
            continue
        seen.append(line)
        if pred(line):
            return seen
    raise AssertionError(f"no matching line within {timeout}s; saw {seen}")


def test_get_watch_prints_a_live_change(kube: Any, namespace: str, jobset_crd: None) -> None:
    js = _make_jobset(kube, namespace)
    env = {**os.environ, "HOME": "/nonexistent", "NO_COLOR": "1"}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "workload_map.cli",
            "--kubeconfig",
            str(kube.kubeconfig),
            "get",
            "jobsets",
            "-n",
            namespace,
            "-w",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=ROOT,
    )
    try:
        lines = _lines(proc)
        first = _wait_for(lines, lambda line: line.startswith("train"))
        assert first[0].split()[:2] == ["NAME", "PHASE"]
        assert "Running" in first[-1] and first[-1].split()[2] == "1/2"
        # a pod turning Ready (no change to the JobSet itself) shows through the pods' watch
        pod = kube.get("v1", "Pod", "train-workers-0-1", namespace)
        kube.set_status({**pod, "status": _ready_status("gpu-1", True)})
        ready = _wait_for(lines, lambda line: line.split()[2:3] == ["2/2"])
        assert ready[-1].split()[0] == "train"
        kube.set_status(
            {
                **js,
                "status": {
                    "conditions": [
                        {
                            "type": "Completed",
                            "status": "True",
                            "reason": "AllJobsCompleted",
                            "lastTransitionTime": "2026-12-01T00:00:00Z",
                            "message": "done",
                        }
                    ]
                },
            }
        )
        changed = _wait_for(lines, lambda line: "Completed" in line)
        assert changed[-1].split()[0] == "train"
        # the change lines up under the first screen's columns
        assert changed[-1].index("Completed") == first[-1].index("Running")
    except AssertionError as exc:
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=20)
        raise AssertionError(f"{exc}\nwlmap stderr:\n{err}") from None
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
    try:
        code = proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise
    assert code == 130, proc.stderr.read() if proc.stderr else ""


def _configmaps(kube: Any, namespace: str) -> None:
    for name, data in (
        ("alpha", {"size": "1", "role": "web"}),
        ("beta", {"size": "22"}),
        ("gamma", {}),
    ):
        kube.apply(
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": name, "namespace": namespace, "labels": {"app": name}},
                "data": data,
            },
            namespace,
        )


CUSTOM_COLUMNS = [
    "NAME:.metadata.name,SIZE:.data.size,ROLE:.data.role",
    "N:metadata.name,APP:{.metadata.labels.app},KEYS:.data",
    "NAME:.metadata.name,LABELS:.metadata.labels,NOTHING:.nothing.here",
]
JSONPATHS = [
    "{.items[*].metadata.name}",
    '{range .items[*]}{.metadata.name}{"\\t"}{.data.size}{"\\n"}{end}',
    '{.items[?(@.data.role=="web")].metadata.name}',
    "{.items[0].metadata.labels}",
    "{.kind} {.items[-1:].metadata.name}",
]


def _kubectl_out(kubectl: str, kube: Any, namespace: str, output: str) -> str:
    done = subprocess.run(
        [
            kubectl,
            "--kubeconfig",
            str(kube.kubeconfig),
            "get",
            "configmaps",
            "-n",
            namespace,
            "-l",
            "app",
            "-o",
            output,
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_templates_match_kubectl(kube: Any, namespace: str) -> None:
    kubectl = _kubectl()
    if kubectl is None:
        pytest.skip("no kubectl binary (hack/build-apiserver.sh WLMAP_EXTRA_TOOLS=kubectl)")
    from workload_map.cli.printers import parse_output, tab_layout

    _configmaps(kube, namespace)
    listing = kube.request(
        "GET", f"/api/v1/namespaces/{namespace}/configmaps", query={"labelSelector": "app"}
    )
    items = sorted(listing["items"], key=lambda o: o["metadata"]["name"])
    for item in items:
        item.setdefault("apiVersion", "v1")
        item.setdefault("kind", "ConfigMap")
    for spec in CUSTOM_COLUMNS:
        printer = parse_output(f"custom-columns={spec}")
        ours = tab_layout([printer.column_headers()] + [printer.column_cells(o) for o in items])
        theirs = _kubectl_out(kubectl, kube, namespace, f"custom-columns={spec}")
        assert "\n".join(ours) + "\n" == theirs, spec
    # kubectl wraps several objects in a List for templates
    doc = {"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": items}
    for template in JSONPATHS:
        printer = parse_output(f"jsonpath={template}")
        theirs = _kubectl_out(kubectl, kube, namespace, f"jsonpath={template}")
        assert printer.render_object(json.loads(json.dumps(doc))) == theirs, template
