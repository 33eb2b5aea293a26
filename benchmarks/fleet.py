"""A fleet of JobSets on the harness API server, built once and kept as an etcd copy.

The live benchmarks measure wlmap (and kubectl beside it) through a real kube-apiserver
holding thousands of workloads. This module makes that cluster: the JobSet CRD, then per
JobSet what the JobSet and Job controllers would have written: the JobSet (with a status), its
Jobs (owned by it, labelled as the JobSet controller labels them; the API server adds the
Job's selector), and each Job's pods (owned by the Job, with the Job's template labels plus the
JobSet's, bound to a node, with a status: most Running and Ready, every tenth Pending).

Through the API server a 10k JobSets / 100k pods fleet is about 240k requests: at the 90/s
this shared 2-core machine manages, most of an hour. So by default (``through="etcd"``) the
builder writes the same objects, as the API server stores them, into its etcd in bulk
transactions while the API server is down (about a minute for 10k/100k), and the API server
then serves them as any others (it fills in defaults when it reads an object);
``through="api"`` creates each object through the API server instead, concurrently.

A built fleet is kept as the stopped plane's etcd data under the tool cache
(``$WLMAP_CACHE`` or ``~/.cache/workload-map``, in ``fleets/<key>``) and later runs start a
plane from a copy of it (``LocalControlPlane.etcd_data_from``): seconds instead of minutes.
The key names the shape and :data:`FORMAT`, so a changed builder never reuses an old fleet.

API (used by ``fleet_bench`` and meant for any benchmark that needs a fleet)::

    spec = FleetSpec(jobsets=1000, jobs_per_jobset=2, pods_per_job=4, namespaces=2)
    with open_fleet(spec) as fleet:      # restored from the cache, else built (and kept)
        fleet.kubeconfig                 # admin kubeconfig of the running plane
        fleet.kube                       # tests.integration.harness.Kube (apply, request...)
        fleet.report                     # FleetReport: built or restored, seconds, requests
        spec.namespace_of(7), spec.jobset_name(7)   # where JobSet number 7 lives

``python benchmarks/fleet.py JOBSETS [PODS_PER_JOB [JOBS_PER_JOBSET [NAMESPACES]]]`` builds
(or restores) one and prints its report; ``--rebuild`` ignores a kept copy, ``--through=api``
creates it through the API server.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import shutil
import sys
import threading
import time
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

__all__ = ["FORMAT", "Fleet", "FleetReport", "FleetSpec", "build", "open_fleet"]

#: bumped whenever the objects the builder writes change (old kept fleets are then ignored)
FORMAT = 2
JOBSET_API = "jobset.x-k8s.io/v1alpha2"
GPUS_PER_POD = 8


@dataclass(frozen=True)
class FleetSpec:
    """The shape of a fleet: ``jobsets`` JobSets spread in blocks over ``namespaces``
    namespaces (``<prefix>-a``, ``<prefix>-b``...), each with ``jobs_per_jobset`` Jobs (one
    replicated job ``workers`` of that many replicas) of ``pods_per_job`` pods."""

    jobsets: int = 1000
    jobs_per_jobset: int = 2
    pods_per_job: int = 4
    namespaces: int = 2
    prefix: str = "fleet"

    @property
    def pods(self) -> int:
        return self.jobsets * self.jobs_per_jobset * self.pods_per_job

    @property
    def key(self) -> str:
        return (
            f"v{FORMAT}-{self.prefix}-{self.jobsets}js-{self.jobs_per_jobset}x"
            f"{self.pods_per_job}-{self.namespaces}ns"
        )

    def namespace_names(self) -> list[str]:
        return [f"{self.prefix}-{_letters(i)}" for i in range(self.namespaces)]

    def namespace_of(self, index: int) -> str:
        """The namespace of JobSet number ``index`` (contiguous blocks: js-0.. in the first)."""
        per = -(-self.jobsets // self.namespaces)
        return f"{self.prefix}-{_letters(index // per)}"

    def jobset_name(self, index: int) -> str:
        return f"js-{index}"

    def describe(self) -> str:
        return (
            f"{self.jobsets} JobSets / {self.pods} pods in {self.namespaces} namespaces "
            f"({self.jobs_per_jobset} Jobs x {self.pods_per_job} pods each)"
        )


def _letters(i: int) -> str:
    out = ""
    i += 1
    while i:
        i, r = divmod(i - 1, 26)
        out = chr(97 + r) + out
    return out


@dataclass
class FleetReport:
    """How the fleet came to be: ``built`` (seconds creating it, requests sent, the request
    rate) or restored from ``snapshot`` (seconds until the API server served it)."""

    spec: FleetSpec
    built: bool
    seconds: float
    requests: int = 0
    snapshot: str | None = None
    load: str = ""
    through: str = ""

    def line(self) -> str:
        unit = "etcd transactions" if self.through == "etcd" else "requests"
        how = (
            f"built through {self.through} in {self.seconds:.1f} s ({self.requests} {unit}, "
            f"{self.requests / self.seconds:.0f}/s)"
            if self.built and self.seconds
            else f"restored from {self.snapshot} in {self.seconds:.1f} s"
        )
        return f"{self.spec.describe()}: {how}; load {self.load}"


@dataclass
class Fleet:
    """A running plane holding a fleet (a context manager: leaving it stops the plane)."""

    spec: FleetSpec
    kube: Any
    report: FleetReport
    kubeconfig: Path = field(init=False)

    def __post_init__(self) -> None:
        self.kubeconfig = Path(self.kube.kubeconfig)

    def close(self) -> None:
        self.kube.shutdown()

    def __enter__(self) -> Fleet:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _load() -> str:
    return "/".join(f"{x:.2f}" for x in os.getloadavg())


def cache_root() -> Path:
    env = os.environ.get("WLMAP_CACHE")
    return (Path(env) if env else Path.home() / ".cache" / "workload-map") / "fleets"


# -- the objects ---------------------------------------------------------------------------


def _container() -> dict[str, Any]:
    gpus = str(GPUS_PER_POD)
    return {
        "name": "trainer",
        "image": "registry.example/trainer:1",
        "resources": {
            "requests": {"cpu": "8", "memory": "64Gi", "nvidia.com/gpu": gpus},
            "limits": {"nvidia.com/gpu": gpus},
        },
    }


def _jobset(spec: FleetSpec, index: int) -> dict[str, Any]:
    return {
        "apiVersion": JOBSET_API,
        "kind": "JobSet",
        "metadata": {
            "name": spec.jobset_name(index),
            "namespace": spec.namespace_of(index),
            "labels": {"team": f"team-{index % 7}"},
        },
        "spec": {
            "replicatedJobs": [
                {
                    "name": "workers",
                    "replicas": spec.jobs_per_jobset,
                    "template": {
                        "spec": {
                            "parallelism": spec.pods_per_job,
                            "completions": spec.pods_per_job,
                            "completionMode": "Indexed",
                            "template": {
                                "spec": {"restartPolicy": "Never", "containers": [_container()]}
                            },
                        }
                    },
                }
            ]
        },
    }


def _owner(obj: dict[str, Any]) -> dict[str, Any]:
    meta = obj["metadata"]
    return {
        "apiVersion": obj["apiVersion"],
        "kind": obj["kind"],
        "name": meta["name"],
        "uid": meta["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }


def _job(spec: FleetSpec, js: dict[str, Any], job_index: int) -> dict[str, Any]:
    meta = js["metadata"]
    name = meta["name"]
    # what the JobSet controller puts on a Job and on its pod template
    labels = {
        "jobset.sigs.k8s.io/jobset-name": name,
        "jobset.sigs.k8s.io/jobset-uid": meta["uid"],
        "jobset.sigs.k8s.io/replicatedjob-name": "workers",
        "jobset.sigs.k8s.io/replicatedjob-replicas": str(spec.jobs_per_jobset),
        "jobset.sigs.k8s.io/job-index": str(job_index),
        "jobset.sigs.k8s.io/restart-attempt": "0",
    }
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": f"{name}-workers-{job_index}",
            "namespace": meta["namespace"],
            "labels": dict(labels),
            "ownerReferences": [_owner(js)],
        },
        "spec": {
            "parallelism": spec.pods_per_job,
            "completions": spec.pods_per_job,
            "completionMode": "Indexed",
            "template": {
                "metadata": {"labels": dict(labels)},
                "spec": {"restartPolicy": "Never", "containers": [_container()]},
            },
        },
    }


def _pod(job: dict[str, Any], index: int, node: str) -> dict[str, Any]:
    meta = job["metadata"]
    # the template's labels as the API server completed them (job-name, controller-uid)
    labels = dict(((job["spec"].get("template") or {}).get("metadata") or {}).get("labels") or {})
    labels["batch.kubernetes.io/job-completion-index"] = str(index)
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"{meta['name']}-{index}",
            "namespace": meta["namespace"],
            "labels": labels,
            "annotations": {"batch.kubernetes.io/job-completion-index": str(index)},
            "ownerReferences": [_owner(job)],
        },
        "spec": {
            "nodeName": node,
            "restartPolicy": "Never",
            "hostname": f"{meta['name']}-{index}",
            "containers": [_container()],
        },
    }


def _pod_status(serial: int) -> dict[str, Any]:
    if serial % 10 == 9:
        return {
            "phase": "Pending",
            "conditions": [
                {
                    "type": "PodScheduled",
                    "status": "False",
                    "reason": "Unschedulable",
                    "message": "0/100 nodes are available: 100 Insufficient nvidia.com/gpu.",
                }
            ],
        }
    return {
        "phase": "Running",
        "startTime": "2026-01-01T00:00:00Z",
        "conditions": [
            {"type": "PodScheduled", "status": "True"},
            {"type": "Initialized", "status": "True"},
            {"type": "ContainersReady", "status": "True"},
            {"type": "Ready", "status": "True"},
        ],
        "containerStatuses": [
            {
                "name": "trainer",
                "ready": True,
                "restartCount": 0,
                "image": "registry.example/trainer:1",
                "imageID": "",
                "started": True,
                "state": {"running": {"startedAt": "2026-01-01T00:00:05Z"}},
            }
        ],
    }


# -- building ------------------------------------------------------------------------------


class _Writer:
    """POST/PUT through the project's pooled transport, counting requests."""

    def __init__(self, kubeconfig: Path, workers: int) -> None:
        sys.path.insert(0, str(ROOT / "src"))
        from workload_map.kube.api import Api
        from workload_map.kube.options import ConnectionOptions

        options = ConnectionOptions(kubeconfig=str(kubeconfig), timeout=120.0)
        self.api = Api.connect(options, pooled=True, pool_size=workers)

    def create(self, path: str, obj: dict[str, Any]) -> dict[str, Any]:
        created: dict[str, Any] = self.api.request("POST", path, obj)
        return created

    def status(self, path: str, obj: dict[str, Any]) -> None:
        self.api.request("PUT", f"{path}/status", obj)

    @property
    def requests(self) -> int:
        return int(self.api.calls)

    def close(self) -> None:
        self.api.close()


def _one_jobset(writer: _Writer, spec: FleetSpec, index: int, nodes: int) -> None:
    ns = spec.namespace_of(index)
    base = f"/apis/{JOBSET_API}/namespaces/{ns}/jobsets"
    js = writer.create(base, _jobset(spec, index))
    js["status"] = _jobset_status(spec)
    writer.status(f"{base}/{js['metadata']['name']}", js)
    serial = index * spec.jobs_per_jobset * spec.pods_per_job
    for j in range(spec.jobs_per_jobset):
        # no Job status: the Job controller's own (startTime, indexes) is validated strictly,
        # and nothing measured reads it
        job = writer.create(f"/apis/batch/v1/namespaces/{ns}/jobs", _job(spec, js, j))
        for p in range(spec.pods_per_job):
            pod = writer.create(
                f"/api/v1/namespaces/{ns}/pods", _pod(job, p, f"gpu-node-{serial % nodes}")
            )
            pod["status"] = _pod_status(serial)
            writer.status(f"/api/v1/namespaces/{ns}/pods/{pod['metadata']['name']}", pod)
            serial += 1


def _stored(obj: dict[str, Any], created: str) -> dict[str, Any]:
    """``obj`` as the API server would store it on create: a uid and a creation time (the
    API server fills its defaults in again whenever it reads the object)."""
    obj["metadata"]["uid"] = str(uuid.uuid4())
    obj["metadata"]["creationTimestamp"] = created
    return obj


def _etcd_objects(spec: FleetSpec, index: int, nodes: int) -> Iterator[tuple[str, dict[str, Any]]]:
    """(etcd key, stored object) of JobSet ``index``, its Jobs and pods: what the API server
    keeps after the creates and status writes :func:`_one_jobset` sends."""
    created = "2026-01-01T00:00:00Z"
    ns = spec.namespace_of(index)
    js = _stored(_jobset(spec, index), created)
    js["metadata"]["generation"] = 1
    js["status"] = _jobset_status(spec)
    yield f"/registry/jobset.x-k8s.io/jobsets/{ns}/{js['metadata']['name']}", js
    serial = index * spec.jobs_per_jobset * spec.pods_per_job
    for j in range(spec.jobs_per_jobset):
        job = _stored(_job(spec, js, j), created)
        job["metadata"]["generation"] = 1
        uid = job["metadata"]["uid"]
        name = job["metadata"]["name"]
        # the selector and template labels the API server gives a Job on create
        job["spec"]["selector"] = {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}
        job["spec"]["template"]["metadata"]["labels"].update(
            {
                "batch.kubernetes.io/controller-uid": uid,
                "batch.kubernetes.io/job-name": name,
                "controller-uid": uid,
                "job-name": name,
            }
        )
        yield f"/registry/jobs/{ns}/{name}", job
        for p in range(spec.pods_per_job):
            pod = _stored(_pod(job, p, f"gpu-node-{serial % nodes}"), created)
            pod["status"] = _pod_status(serial)
            yield f"/registry/pods/{ns}/{pod['metadata']['name']}", pod
            serial += 1


def _jobset_status(spec: FleetSpec) -> dict[str, Any]:
    return {
        "replicatedJobsStatus": [
            {
                "name": "workers",
                "ready": spec.jobs_per_jobset,
                "active": spec.jobs_per_jobset,
                "succeeded": 0,
                "failed": 0,
                "suspended": 0,
            }
        ],
        "restarts": 0,
    }


def _etcd_post(etcd_url: str, path: str, body: dict[str, Any]) -> Any:
    request = urllib.request.Request(
        f"{etcd_url}{path}", json.dumps(body).encode(), {"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=600) as resp:
        return json.loads(resp.read() or b"{}")


def _b64(data: str) -> str:
    return base64.b64encode(data.encode()).decode()


#: etcd's default --max-txn-ops: the puts of one transaction
_TXN_OPS = 128


def _write_etcd(
    etcd_url: str, spec: FleetSpec, workers: int, log: Callable[[str], None], started: float
) -> int:
    """Every object of the fleet into etcd, ``_TXN_OPS`` puts per transaction, ``workers``
    transactions at a time; returns the transactions sent."""
    nodes = max(1, spec.pods // 8)

    def batches() -> Iterator[list[dict[str, Any]]]:
        batch: list[dict[str, Any]] = []
        for index in range(spec.jobsets):
            for key, obj in _etcd_objects(spec, index, nodes):
                put = {"key": _b64(key), "value": _b64(json.dumps(obj, separators=(",", ":")))}
                batch.append({"requestPut": put})
                if len(batch) == _TXN_OPS:
                    yield batch
                    batch = []
        if batch:
            yield batch

    sent = 0
    last = started

    def send(batch: list[dict[str, Any]]) -> None:
        answer = _etcd_post(etcd_url, "/v3/kv/txn", {"success": batch})
        if not answer.get("succeeded"):
            raise RuntimeError(f"etcd refused a transaction: {str(answer)[:200]}")

    with ThreadPoolExecutor(workers) as pool:
        pending: list[Any] = []
        for batch in batches():
            pending.append(pool.submit(send, batch))
            if len(pending) >= workers * 2:
                pending.pop(0).result()
            sent += 1
            now = time.monotonic()
            if now - last >= 15:
                last = now
                log(f"  fleet: {sent * _TXN_OPS} objects, {now - started:.0f} s, load {_load()}")
        for future in pending:
            future.result()
    return sent


def build(
    kube: Any,
    spec: FleetSpec,
    *,
    through: str = "etcd",
    workers: int = 24,
    log: Callable[[str], None] = print,
) -> FleetReport:
    """Create ``spec``'s fleet on the local plane of ``kube`` (a harness ``Kube``): the JobSet
    CRD and the namespaces through the API server, then the JobSets, Jobs and pods.

    ``through="api"``: each object is created (and its status written) through the API
    server, ``workers`` JobSets at a time (about 90 requests/s on a loaded 2-core machine, so
    a 10k/100k fleet would take the better part of an hour). ``through="etcd"`` (default):
    the API server is stopped and the same objects, as it would store them (uids, creation
    time, the Job's generated selector and labels; it fills in defaults when it reads them),
    are written into its etcd in transactions of 128 puts, then it is started again and
    serves them like any others."""
    sys.path.insert(0, str(ROOT))
    from tests.integration.test_cli_live import JOBSET_CRD, install_crd

    started = time.monotonic()
    install_crd(kube, JOBSET_CRD)
    for ns in spec.namespace_names():
        kube.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    if through == "etcd":
        plane = kube.local_plane()
        plane.stop_apiserver()
        txns = _write_etcd(plane.etcd_url, spec, max(1, workers // 6), log, started)
        plane.start_apiserver()
        seconds = time.monotonic() - started
        return FleetReport(spec, True, seconds, requests=txns, load=_load(), through=through)
    if through != "api":
        raise ValueError(f"through must be 'etcd' or 'api', not {through!r}")
    writer = _Writer(Path(kube.kubeconfig), workers)
    done = 0
    lock = threading.Lock()
    last = [started]
    nodes = max(1, spec.pods // 8)

    def task(index: int) -> None:
        nonlocal done
        _one_jobset(writer, spec, index, nodes)
        with lock:
            done += 1
            now = time.monotonic()
            if now - last[0] >= 15:
                last[0] = now
                log(
                    f"  fleet: {done}/{spec.jobsets} JobSets, {now - started:.0f} s, "
                    f"{writer.requests} requests, load {_load()}"
                )

    try:
        with ThreadPoolExecutor(workers) as pool:
            for _ in pool.map(task, range(spec.jobsets)):
                pass
    finally:
        writer.close()
    seconds = time.monotonic() - started
    return FleetReport(spec, True, seconds, requests=writer.requests, load=_load(), through=through)


def _etcd_compact(etcd_url: str) -> None:
    """Compact the store to its current revision and defragment it: the kept copy holds each
    object once, not its create and its status write."""

    def post(path: str, body: dict[str, Any]) -> Any:
        return _etcd_post(etcd_url, path, body)

    head = post("/v3/kv/range", {"key": "AA==", "limit": 1})  # any key: the header's revision
    revision = int(head["header"]["revision"])
    post("/v3/kv/compaction", {"revision": revision, "physical": True})
    post("/v3/maintenance/defragment", {})


def _start(spec: FleetSpec, seed: Path | None) -> Any:
    sys.path.insert(0, str(ROOT))
    # an API server filling its watch caches with 100k pods on a loaded machine takes minutes
    os.environ.setdefault("WLMAP_TEST_START_TIMEOUT", "900")
    from tests.integration.harness import open_kube

    return open_kube(
        controller_manager=False, external_ok=False, etcd_data_from=seed, generic_workload=False
    )


def _wait_served(kube: Any, spec: FleetSpec, timeout: float = 300.0) -> None:
    """Until the API server lists the last JobSet's pods (its watch cache is filled)."""
    last = spec.jobsets - 1
    ns = spec.namespace_of(last)
    selector = f"jobset.sigs.k8s.io/jobset-name={spec.jobset_name(last)}"
    deadline = time.monotonic() + timeout
    while True:
        with contextlib.suppress(Exception):
            listing = kube.request(
                "GET", f"/api/v1/namespaces/{ns}/pods", query={"labelSelector": selector}
            )
            if len(listing.get("items") or []) == spec.jobs_per_jobset * spec.pods_per_job:
                return
        if time.monotonic() > deadline:
            raise RuntimeError(f"the restored fleet is not served after {timeout:.0f} s")
        time.sleep(0.5)


def open_fleet(
    spec: FleetSpec,
    *,
    rebuild: bool = False,
    keep: bool = True,
    through: str = "etcd",
    workers: int = 24,
    log: Callable[[str], None] = print,
) -> Fleet:
    """A running local plane holding ``spec``'s fleet: started from the kept etcd copy when
    there is one (and not ``rebuild``), else built (:func:`build`) and, with ``keep``, kept
    for later runs (the plane is stopped once to copy etcd's data, then started from it)."""
    kept = cache_root() / spec.key
    data = kept / "etcd-data"
    if data.is_dir() and not rebuild:
        started = time.monotonic()
        kube = _start(spec, data)
        try:
            _wait_served(kube, spec)
        except BaseException:
            kube.shutdown()
            raise
        report = FleetReport(spec, False, time.monotonic() - started, snapshot=str(kept))
        report.load = _load()
        return Fleet(spec, kube, report)
    kube = _start(spec, None)
    try:
        report = build(kube, spec, through=through, workers=workers, log=log)
    except BaseException:
        kube.shutdown()
        raise
    if not keep:
        return Fleet(spec, kube, report)
    plane = kube.local_plane()
    _etcd_compact(plane.etcd_url)
    plane.keep_workdir = True
    kube.shutdown()
    tmp = kept.with_name(kept.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    shutil.copytree(plane.workdir / "etcd-data", tmp / "etcd-data")
    meta = {"spec": asdict(spec), "build": asdict(report) | {"spec": None}, "format": FORMAT}
    (tmp / "fleet.json").write_text(json.dumps(meta, indent=1))
    shutil.rmtree(plane.workdir, ignore_errors=True)
    shutil.rmtree(kept, ignore_errors=True)
    tmp.rename(kept)
    report.snapshot = str(kept)
    restarted = time.monotonic()
    kube = _start(spec, data)
    try:
        _wait_served(kube, spec)
    except BaseException:
        kube.shutdown()
        raise
    log(f"  fleet: kept in {kept}; restarted from it in {time.monotonic() - restarted:.1f} s")
    return Fleet(spec, kube, report)


def kept_build(spec: FleetSpec) -> dict[str, Any] | None:
    """What the kept fleet's build reported (seconds, requests), if one is kept."""
    path = cache_root() / spec.key / "fleet.json"
    try:
        doc: dict[str, Any] = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return doc.get("build")


def _main(argv: list[str]) -> int:
    import argparse

    # a parser, so that --help answers instead of starting a plane
    parser = argparse.ArgumentParser(
        prog="python benchmarks/fleet.py",
        description="Build (or restore from the tool cache) a fleet of JobSets on the harness "
        "API server and print its report.",
    )
    parser.add_argument(
        "numbers",
        nargs="*",
        type=int,
        metavar="N",
        help="JOBSETS [PODS_PER_JOB [JOBS_PER_JOBSET [NAMESPACES]]]",
    )
    parser.add_argument("--rebuild", action="store_true", help="ignore a kept copy")
    parser.add_argument(
        "--through",
        choices=("etcd", "api"),
        default="etcd",
        help="write the objects into etcd in bulk (default) or create each through the API server",
    )
    args = parser.parse_args(argv)
    if len(args.numbers) > 4:
        parser.error("at most 4 numbers: JOBSETS PODS_PER_JOB JOBS_PER_JOBSET NAMESPACES")
    rebuild, through = args.rebuild, args.through
    names = ("jobsets", "pods_per_job", "jobs_per_jobset", "namespaces")
    spec = FleetSpec(**dict(zip(names, args.numbers, strict=False)))
    with open_fleet(spec, rebuild=rebuild, through=through) as fleet:
        print(fleet.report.line())
        built = kept_build(spec)
        if built and not fleet.report.built:
            print(f"  (its build: {built.get('seconds', 0):.1f} s, {built.get('requests')} req)")
    return 0


def iter_specs(text: str) -> Iterator[FleetSpec]:
    """``1000x4x2,10000x5x2``: JobSets x pods per Job x Jobs per JobSet, comma-separated."""
    for part in filter(None, (p.strip() for p in text.split(","))):
        fields = [int(x) for x in part.split("x")]
        names = ("jobsets", "pods_per_job", "jobs_per_jobset", "namespaces")
        yield FleetSpec(**dict(zip(names, fields, strict=False)))


if __name__ == "__main__":
    raise SystemExit(_main(sys.argv[1:]))
