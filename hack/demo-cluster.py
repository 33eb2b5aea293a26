#!/usr/bin/env python3
# ruff: noqa: N999, E402  (named like its make target, never imported; imports after the path set-up)
"""``make demo-cluster``: the whole system live on this machine, then stopped.

A local control plane (etcd, kube-apiserver, kube-controller-manager with the in-tree Job,
ReplicaSet, Deployment and StatefulSet controllers, kube-scheduler; the binaries ``make
apiserver`` builds) with fake GPU nodes; the workload-map operator with gang scheduling and
workload metrics; Debian's Prometheus scraping it with the chart's rules; the web view. The
workloads of ``examples/demo-cluster/workloads.yaml`` are created, a gang is shown held while
its node pool is one node short and bound once a node is added, then the web view's address
and a few PromQL answers are printed. Everything runs on 127.0.0.1, as child processes of this
one, in a temporary directory; Ctrl-C (or the end of ``--once``) stops them all and removes the
directory.

Every wait is bounded by ``--timeout`` (default ``WLMAP_TEST_START_TIMEOUT``, else 120 s), a
hang guard for a loaded machine, never a speed target. ``--summary FILE`` writes what was seen
as JSON (the test of this script reads it). Exit codes: 0 done, 1 a step failed (the message
names it), 2 a tool is missing (the message names the make target), 130 interrupted.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from http.cookiejar import CookieJar
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a script: hack/ is on the path, the checkout is not
    sys.path.insert(0, str(ROOT))

from hack.localkube.nodes import fake_node
from hack.localkube.operator import gang_operator
from hack.localkube.plane import (
    BinariesMissing,
    HarnessError,
    LocalControlPlane,
    Proc,
    find_binaries,
    find_controllers,
    spawn,
    start_timeout,
    tail,
    wait_for,
    wait_until,
)
from hack.localkube.ports import free_port
from hack.localkube.prometheus import (
    INSTALL_HINT,
    Prometheus,
    scrape_config,
    start_prometheus,
)
from workload_map.errors import WlmapError
from workload_map.gangs.config import LABEL_NAMESPACE_OPT_IN
from workload_map.kube.api import Api
from workload_map.kube.errors import ApiError
from workload_map.kube.options import ConnectionOptions

WORKLOADS = ROOT / "examples/demo-cluster/workloads.yaml"
RULES = ROOT / "charts/workload-map/files/workloadmap-rules.yaml"
NAMESPACE = "demo"
OPERATOR_NAMESPACE = "workload-map-system"
POOL_LABEL = "demo.workload-map.run.ai/pool"
NODE = {"cpu": "64", "memory": "512Gi", "pods": "110", "nvidia.com/gpu": "8"}
#: pool -> fake nodes at the start; ``h100`` is one node short of the ``train`` gang
POOLS = {"l40": 2, "h100": 3}
GANG, GANG_POOL, GANG_SIZE = "train", "h100", 4
#: where each kind of the workloads file is created
PATHS = {
    ("batch/v1", "Job"): "/apis/batch/v1/namespaces/{ns}/jobs",
    ("apps/v1", "Deployment"): "/apis/apps/v1/namespaces/{ns}/deployments",
}
#: what Prometheus is asked while the gang is held, and once it is bound (the chart's recording
#: rules over the exporter's series; the operator's own counter of pods its webhook joined)
QUERIES_HELD = ("workloadmap:gang_unscheduled_members:sum", "workloadmap:namespace_gpus:sum")
QUERIES_BOUND = (
    "workloadmap:namespace_gpus:sum",
    'workloadmap_gang_pods{state="scheduled"}',
    "workloadmap:gang_unscheduled_members:sum",
    "sum(workloadmap_gangs_webhook_patched_total)",
)

#: labels left out of the printed answers: the query names the series, the target is local
HIDDEN = ("__name__", "instance", "job")

Obj = dict[str, Any]


#: Ctrl-C seen. The handler also raises KeyboardInterrupt, but CPython drops an exception raised
#: inside a callback it calls itself (after a fork, subprocess's at-fork hooks: "Exception
#: ignored in _releaseLock"), so a Ctrl-C landing while a child is spawned would be lost; the
#: flag keeps it, and the demo's next step (``interrupted``) raises it again
_INTERRUPTED = threading.Event()


def _on_sigint(_signum: int, _frame: object) -> None:
    _INTERRUPTED.set()
    raise KeyboardInterrupt


def _quiet_dropped_interrupt(hook: Any) -> None:
    """A KeyboardInterrupt dropped in such a callback is not an error: the flag carries it."""
    if isinstance(hook.exc_value, KeyboardInterrupt):
        return
    sys.__unraisablehook__(hook)


def interrupted() -> None:
    """Raise the Ctrl-C a callback dropped, at a point where it stops the demo."""
    if _INTERRUPTED.is_set():
        raise KeyboardInterrupt


class Demo:
    """One run: its output (``say``), its child processes and what it saw (``summary``)."""

    def __init__(self, timeout: float) -> None:
        self.timeout = timeout
        self.begin = time.monotonic()
        self.children: list[Proc] = []
        self.summary: dict[str, Any] = {"queries": {"held": {}, "bound": {}}}

    def say(self, text: str) -> None:
        interrupted()
        print(f"[{time.monotonic() - self.begin:6.1f}s] {text}", flush=True)

    def show(self, text: str) -> None:
        for line in text.rstrip().splitlines():
            print(f"          {line}", flush=True)

    def wlmap(self, kubeconfig: Path, *argv: str) -> str:
        """``wlmap ARGV`` on the demo cluster, its command line and output shown."""
        self.say("$ wlmap " + " ".join(argv))
        done = subprocess.run(
            [sys.executable, "-m", "workload_map.cli", *argv, f"--kubeconfig={kubeconfig}"],
            capture_output=True,
            text=True,
            timeout=self.timeout,
            check=False,
        )
        self.show(done.stdout + done.stderr)
        if done.returncode != 0:
            raise HarnessError(f"wlmap {' '.join(argv)} exited with code {done.returncode}")
        return done.stdout

    def promql(self, prom: Prometheus, phase: str, expr: str) -> list[Obj]:
        result = prom.query(expr)
        self.summary["queries"][phase][expr] = result
        self.say(f"PromQL> {expr}")
        rows = [
            "{"
            + ", ".join(f'{k}="{v}"' for k, v in sorted(r["metric"].items()) if k not in HIDDEN)
            + "} "
            + str(r["value"][1])
            for r in result
        ]
        self.show("\n".join(rows) or "(no series)")
        return result


def pods(api: Api, ns: str, job: str) -> list[Obj]:
    interrupted()  # the waits on the workloads poll this
    query = [("labelSelector", f"batch.kubernetes.io/job-name={job}")]
    return list(api.get(f"/api/v1/namespaces/{ns}/pods", query=query).get("items") or [])


def bound(items: list[Obj]) -> int:
    return sum(1 for p in items if p["spec"].get("nodeName"))


def failed_scheduling(api: Api, ns: str, names: set[str]) -> set[str]:
    """The pods among ``names`` the scheduler reported it could not place: "held" is
    observed (the scheduler tried), not assumed after a pause."""
    items = api.get(f"/api/v1/namespaces/{ns}/events").get("items") or []
    return {
        str(e["involvedObject"]["name"])
        for e in items
        if e.get("reason") == "FailedScheduling" and e["involvedObject"].get("name") in names
    }


def add_nodes(api: Api, pool: str, first: int, count: int) -> list[str]:
    names = []
    for index in range(first, first + count):
        name = f"{pool}-{index}"
        body = fake_node(name, NODE, labels={POOL_LABEL: pool})
        stored = api.request("POST", "/api/v1/nodes", body)
        if (stored.get("status") or {}).get("capacity") != NODE:  # status dropped on create
            api.request("PUT", f"/api/v1/nodes/{name}/status", {**stored, "status": body["status"]})
        names.append(name)
    return names


def create_workloads(api: Api, ns: str) -> list[str]:
    made = []
    for doc in yaml.safe_load_all(WORKLOADS.read_text()):
        path = PATHS.get((doc["apiVersion"], doc["kind"]))
        if path is None:
            raise HarnessError(f"{WORKLOADS}: no path known for {doc['apiVersion']} {doc['kind']}")
        api.request("POST", path.format(ns=ns), doc)
        made.append(f"{doc['kind']}/{doc['metadata']['name']}")
    return made


def web_view(
    demo: Demo, stack: contextlib.ExitStack, kubeconfig: Path, workdir: Path
) -> tuple[str, int]:
    """``wlmap serve`` on a free loopback port; its address and the status of a GET of it."""
    log = workdir / "wlmap-serve.log"
    proc = spawn(
        "wlmap-serve",
        [
            sys.executable,
            "-m",
            "workload_map.cli",
            "serve",
            "--address=127.0.0.1",
            f"--port={free_port()}",
            f"--kubeconfig={kubeconfig}",
        ],
        log,
    )
    demo.children.append(proc)
    stack.callback(proc.stop)

    def address() -> str | None:
        found = re.search(r"open (http://127\.0\.0\.1:\d+/\S*)", tail(log))
        return found.group(1) if found else None

    wait_for(proc, lambda: address() is not None, "the web view's address", demo.timeout)
    url = address()
    assert url is not None
    # as a browser opens it: the token in the address becomes a cookie, then a redirect
    browser = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(CookieJar()))
    with browser.open(url, timeout=10) as resp:
        return url, int(resp.status)


def run(demo: Demo, stack: contextlib.ExitStack, once: bool) -> int:
    apiserver, etcd = find_binaries()
    manager, scheduler = find_controllers()
    if shutil.which("prometheus") is None:
        raise BinariesMissing(f"the demo needs prometheus, which is not on PATH: {INSTALL_HINT}")
    workdir = Path(tempfile.mkdtemp(prefix="wlmap-demo-"))
    demo.summary["workdir"] = str(workdir)
    demo.say(f"workdir {workdir} (removed at the end)")
    plane = LocalControlPlane(
        apiserver,
        etcd,
        start_timeout=demo.timeout,
        workdir=workdir,
        controller_manager_bin=manager,
        scheduler_bin=scheduler,
        scheduler=True,
        workload_controllers=True,
    )
    stack.callback(plane.stop)  # last out: every other child stops before the API server
    plane.start()
    demo.children.extend(plane.procs)
    assert plane.kubeconfig is not None
    kubeconfig = plane.kubeconfig
    demo.say(
        f"control plane up at {plane.server}: etcd, kube-apiserver, kube-scheduler, "
        "kube-controller-manager (Job, ReplicaSet, Deployment, StatefulSet controllers)"
    )
    demo.say(f"kubeconfig {kubeconfig}")
    api = Api.connect(ConnectionOptions(kubeconfig=str(kubeconfig)))
    stack.callback(api.close)
    demo.wlmap(kubeconfig, "crd", "apply")
    opt_in = {LABEL_NAMESPACE_OPT_IN: "enabled"}
    for ns, labels in ((OPERATOR_NAMESPACE, {}), (NAMESPACE, opt_in)):
        meta: Obj = {"name": ns, "labels": labels}
        body = {"apiVersion": "v1", "kind": "Namespace", "metadata": meta}
        api.request("POST", "/api/v1/namespaces", body)
    demo.say(f"namespace {NAMESPACE} opted in to gang scheduling ({LABEL_NAMESPACE_OPT_IN})")

    metrics_port = free_port()
    operator = stack.enter_context(
        gang_operator(
            api,
            kubeconfig,
            OPERATOR_NAMESPACE,
            workdir / "operator",
            "workload-map",
            extra=[
                "--enable-workload-metrics",
                f"--workload-metrics-bind-address=127.0.0.1:{metrics_port}",
            ],
            timeout=demo.timeout,
        )
    )
    assert operator.child is not None
    demo.children.append(operator.child)
    demo.say(
        f"operator ready: gang scheduling (pod webhook on 127.0.0.1:{operator.webhook_port}), "
        f"metrics on 127.0.0.1:{operator.metrics_port}, workload metrics on "
        f"127.0.0.1:{metrics_port}"
    )

    (workdir / "prometheus").mkdir()
    config = scrape_config(
        {"workload-map-operator": operator.metrics_port, "workloadmap": metrics_port}, rules=RULES
    )
    prom_proc, prom = start_prometheus(config, workdir / "prometheus", timeout=demo.timeout)
    demo.children.append(prom_proc)
    stack.callback(prom_proc.stop)
    demo.say(f"prometheus ready at {prom.url} with the chart's recording rules")

    url, status = web_view(demo, stack, kubeconfig, workdir)
    demo.summary["web"] = {"url": url, "status": status}
    demo.say(f"web view: {url} (HTTP {status})")

    for pool, count in POOLS.items():
        nodes = add_nodes(api, pool, 0, count)
        demo.say(f"fake nodes, 8 GPUs each, pool {pool}: {', '.join(nodes)}")
    made = create_workloads(api, NAMESPACE)
    demo.say(f"created in {NAMESPACE}: {', '.join(made)} ({WORKLOADS.relative_to(ROOT)})")

    def made_all() -> list[Obj] | None:
        items = pods(api, NAMESPACE, GANG)
        return items if len(items) == GANG_SIZE else None

    members = wait_until(made_all, f"the Job controller's {GANG_SIZE} pods of {GANG}", demo.timeout)
    names = {str(p["metadata"]["name"]) for p in members}
    wait_until(
        lambda: failed_scheduling(api, NAMESPACE, names),
        f"the scheduler's FailedScheduling for the pods of {GANG}",
        demo.timeout,
    )
    wait_until(lambda: bound(pods(api, NAMESPACE, "eval")) == 2, "eval bound", demo.timeout)
    held = bound(pods(api, NAMESPACE, GANG))
    demo.summary["held"] = {"bound": held, "pods": GANG_SIZE}
    demo.say(
        f"gang {NAMESPACE}/{GANG} held: {held} of {GANG_SIZE} pods bound, pool {GANG_POOL} "
        f"has {POOLS[GANG_POOL]} nodes for {GANG_SIZE} pods of 8 GPUs (the scheduler reported "
        "FailedScheduling; none took a node)"
    )
    demo.wlmap(kubeconfig, "get", "jobs,deployments", "-n", NAMESPACE, "-o", "wide")
    # once the exporter's series of the held gang are in (a scrape or two after it saw them)
    prom.wait(f'workloadmap:gang_unscheduled_members:sum{{workload="{GANG}"}}', 1, demo.timeout)
    for expr in QUERIES_HELD:
        demo.promql(prom, "held", expr)

    added = time.monotonic()
    (node,) = add_nodes(api, GANG_POOL, POOLS[GANG_POOL], 1)
    demo.say(f"added node {node} to pool {GANG_POOL}")
    wait_until(
        lambda: bound(pods(api, NAMESPACE, GANG)) == GANG_SIZE,
        f"the whole gang {GANG} bound",
        demo.timeout,
    )
    released = bound(pods(api, NAMESPACE, GANG))
    demo.summary["released"] = {"bound": released, "pods": GANG_SIZE}
    demo.say(
        f"gang {NAMESPACE}/{GANG} released: {released} of {GANG_SIZE} pods bound, "
        f"{time.monotonic() - added:.1f} s after the node came"
    )
    demo.wlmap(kubeconfig, "get", "jobs,deployments", "-n", NAMESPACE, "-o", "wide")
    # the exporter's series of the bound gang, then the rules' next evaluation over them
    bound_gang = f'workloadmap_gang_pods{{workload="{GANG}", state="scheduled"}} == {GANG_SIZE}'
    prom.wait(bound_gang, 1, demo.timeout)
    prom.wait(
        f'absent(workloadmap:gang_unscheduled_members:sum{{workload="{GANG}"}})', 1, demo.timeout
    )
    for expr in QUERIES_BOUND:
        demo.promql(prom, "bound", expr)
    demo.summary["pids"] = [c.popen.pid for c in demo.children]
    demo.say(f"web view: {url}")
    demo.say(f"kubeconfig for kubectl or wlmap: {kubeconfig}")
    if once:
        demo.say("--once: stopping")
        return 0
    demo.say("everything is running; press Ctrl-C to stop")
    while True:
        # short sleeps: a SIGINT that lands after the interpreter's last signal check but before
        # the sleep's system call starts interrupts nothing, and is handled when the sleep ends
        # (seen in a loaded test run: a 3600 s sleep left Ctrl-C unanswered)
        time.sleep(1)
        interrupted()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="demo-cluster.py", description=__doc__.split("\n\n")[0] if __doc__ else None
    )
    parser.add_argument("--once", action="store_true", help="stop once everything was shown")
    parser.add_argument(
        "--timeout",
        type=float,
        default=None,
        help="seconds each wait may take at most (default WLMAP_TEST_START_TIMEOUT, else 120)",
    )
    parser.add_argument("--summary", type=Path, help="write what was seen to this JSON file")
    args = parser.parse_args(argv)
    # SIGTERM as an exception too, so that the stack below stops every child either way
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    signal.signal(signal.SIGINT, _on_sigint)
    sys.unraisablehook = _quiet_dropped_interrupt
    demo = Demo(args.timeout if args.timeout is not None else start_timeout())
    code = 0
    with contextlib.ExitStack() as stack:
        try:
            code = run(demo, stack, args.once)
        except KeyboardInterrupt:
            _INTERRUPTED.clear()  # handled: the lines below are said while stopping
            demo.say("interrupted: stopping")
            code = 130
        except BinariesMissing as err:
            print(f"demo-cluster: {err}", file=sys.stderr)
            code = 2
        except (HarnessError, WlmapError, ApiError, OSError, subprocess.SubprocessError) as err:
            print(f"demo-cluster: {err}", file=sys.stderr)
            code = 1
        finally:
            # one Ctrl-C stops the demo; more would break off the stopping itself
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
    left = [c.name for c in demo.children if c.running()]
    if "workdir" in demo.summary:  # something was started
        demo.say("stopped everything" + (f"; still running: {', '.join(left)}" if left else ""))
    if args.summary is not None:
        args.summary.write_text(json.dumps({**demo.summary, "exit": code}, indent=2))
    return code if not left else 1


if __name__ == "__main__":
    sys.exit(main())
