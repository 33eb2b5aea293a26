"""An in-memory Kubernetes API for the CLI's unit tests (the real one runs in tests/integration).

It answers the read requests ``workload_map.cluster`` makes — legacy discovery, GET by name,
LIST with ``limit``/``continue`` and equality label selectors — and can be told to refuse paths
(403), to be unreachable, or to lack the Karta CRD. Objects are plain dicts.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from workload_map.kube import Cluster, ConnectionOptions
from workload_map.kube.errors import Unreachable, api_error


@dataclass(frozen=True)
class Res:
    group: str
    version: str
    kind: str
    plural: str
    namespaced: bool = True
    short_names: tuple[str, ...] = ()

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version


BUILTIN = [
    Res("", "v1", "Pod", "pods", short_names=("po",)),
    Res("", "v1", "Namespace", "namespaces", namespaced=False, short_names=("ns",)),
    Res("apps", "v1", "Deployment", "deployments", short_names=("deploy",)),
    Res("apps", "v1", "ReplicaSet", "replicasets", short_names=("rs",)),
    Res("apps", "v1", "StatefulSet", "statefulsets", short_names=("sts",)),
    Res("batch", "v1", "Job", "jobs"),
    Res("batch", "v1", "CronJob", "cronjobs", short_names=("cj",)),
]
JOBSET = Res("jobset.x-k8s.io", "v1alpha2", "JobSet", "jobsets", short_names=("js",))
PYTORCHJOB = Res("kubeflow.org", "v1", "PyTorchJob", "pytorchjobs")
KARTA = Res("run.ai", "v1alpha1", "Karta", "kartas", namespaced=False, short_names=("krt",))
FLINK = Res("flink.apache.org", "v1beta1", "FlinkDeployment", "flinkdeployments")
KNATIVE = Res("serving.knative.dev", "v1", "Service", "services", short_names=("ksvc",))
CORE_SERVICE = Res("", "v1", "Service", "services", short_names=("svc",))
EVENT = Res("", "v1", "Event", "events", short_names=("ev",))


@dataclass
class FakeAPI:
    """The transport: ``get(path, query)`` over an in-memory store."""

    resources: list[Res] = field(default_factory=lambda: list(BUILTIN))
    objects: list[dict[str, Any]] = field(default_factory=list)
    forbidden: set[str] = field(default_factory=set)
    unreachable: bool = False
    namespace: str = "default"
    context: str | None = "fake"
    server: str = "https://fake.invalid"
    requests: list[str] = field(default_factory=list)
    #: every request: (path, query, accept) - what a test counts reads by
    calls: list[tuple[str, dict[str, str], str | None]] = field(default_factory=list)
    # watch events {"type", "object"} served once by stream(); then the "user" presses Ctrl-C
    events: list[dict[str, Any]] = field(default_factory=list)
    streams: list[tuple[str, dict[str, str]]] = field(default_factory=list)
    pod_events: list[dict[str, Any]] = field(default_factory=list)
    _pods_drained: threading.Event = field(default_factory=threading.Event, repr=False)

    def add(self, *objs: dict[str, Any]) -> FakeAPI:
        self.objects.extend(copy.deepcopy(list(objs)))
        return self

    def serve(self, *res: Res) -> FakeAPI:
        self.resources.extend(res)
        return self

    # the Transport protocol -------------------------------------------------------------------
    def get(
        self, path: str, query: Sequence[tuple[str, str]] = (), *, accept: str | None = None
    ) -> Any:
        self.requests.append(path)
        self.calls.append((path, dict(query), accept))
        if self.unreachable:
            raise Unreachable(f"cannot reach the cluster at {self.server}: connection refused")
        for prefix in self.forbidden:
            if path.startswith(prefix):
                return self._fail(403, f'{path} is forbidden: User "jane" cannot list', path)
        if path == "/api":
            return {"kind": "APIVersions", "versions": ["v1"]}
        if path == "/apis":
            groups: dict[str, list[str]] = {}
            for r in self.resources:
                if r.group:
                    groups.setdefault(r.group, [])
                    if r.version not in groups[r.group]:
                        groups[r.group].append(r.version)
            return {
                "kind": "APIGroupList",
                "groups": [
                    {
                        "name": g,
                        "versions": [{"groupVersion": f"{g}/{v}", "version": v} for v in vs],
                        "preferredVersion": {"groupVersion": f"{g}/{vs[0]}", "version": vs[0]},
                    }
                    for g, vs in groups.items()
                ],
            }
        parts = path.strip("/").split("/")
        if parts[0] == "api":
            group, version, rest = "", parts[1], parts[2:]
        else:
            group, version, rest = parts[1], parts[2], parts[3:]
        served = [r for r in self.resources if r.group == group and r.version == version]
        if not rest:
            if not served:
                return self._fail(404, "the server could not find the requested resource", path)
            return {
                "kind": "APIResourceList",
                "groupVersion": served[0].api_version,
                "resources": [
                    {
                        "name": r.plural,
                        "singularName": r.kind.lower(),
                        "namespaced": r.namespaced,
                        "kind": r.kind,
                        "verbs": ["get", "list"],
                        "shortNames": list(r.short_names),
                    }
                    for r in served
                ],
            }
        namespace = None
        if rest[0] == "namespaces" and len(rest) >= 3:
            namespace, rest = rest[1], rest[2:]
        plural, name = rest[0], (rest[1] if len(rest) > 1 else None)
        res = next((r for r in served if r.plural == plural), None)
        if res is None:
            return self._fail(404, "the server could not find the requested resource", path)
        items = [
            o
            for o in self.objects
            if o.get("apiVersion") == res.api_version
            and o.get("kind") == res.kind
            and (namespace is None or (o.get("metadata") or {}).get("namespace") == namespace)
        ]
        partial = accept is not None and accept.startswith("application/json;as=PartialObject")
        if name is not None:
            for o in items:
                if o["metadata"]["name"] == name:
                    if partial:
                        return _partial(o)
                    return copy.deepcopy(o)
            return self._fail(404, f'{plural}.{group} "{name}" not found', path)
        params = dict(query)
        selector = params.get("labelSelector")
        if selector:
            items = [o for o in items if matches(selector, o["metadata"].get("labels") or {})]
        fields = params.get("fieldSelector")
        if fields:  # equality terms on dotted paths (involvedObject.uid=..., type=Warning)
            for term in fields.split(","):
                key, _, value = term.partition("=")
                items = [o for o in items if _dotted(o, key) == value]
        items.sort(key=lambda o: (o["metadata"].get("namespace") or "", o["metadata"]["name"]))
        start = int(params.get("continue") or 0)
        limit = int(params.get("limit") or 0)
        end = start + limit if limit else len(items)
        page = [
            {k: v for k, v in o.items() if k not in ("apiVersion", "kind")}
            for o in items[start:end]
        ]
        # as an API server paging from etcd: the continue token and how many remain
        meta = (
            {"continue": str(end), "remainingItemCount": len(items) - end}
            if end < len(items)
            else {}
        )
        if partial:
            return {
                "kind": "PartialObjectMetadataList",
                "apiVersion": "meta.k8s.io/v1",
                "metadata": meta,
                "items": [_partial(o) for o in items[start:end]],
            }
        return {
            "kind": f"{res.kind}List",
            "apiVersion": res.api_version,
            "metadata": meta,
            "items": copy.deepcopy(page),
        }

    def stream(
        self,
        path: str,
        query: Sequence[tuple[str, str]] = (),
        *,
        timeout: float | None = None,
        opened: Any = None,
    ) -> Iterator[Any]:
        """A watch: the queued events (each object also becomes the stored state). The pods'
        watch then stays open; the workloads' one ends in an interrupt once the pods' events are
        out, as when the user stops ``wlmap get -w``."""
        self.streams.append((path, dict(query)))
        aborted = threading.Event()
        if opened is not None:  # the watch's stop() ends the open pods' stream below
            opened(_Stream(aborted))
        pods = path.endswith("/pods")
        if pods:
            events, self.pod_events = self.pod_events, []
        else:
            events, self.events = self.events, []
        for event in events:
            o = event["object"]
            if event["type"] == "ERROR":  # e.g. 410 Gone: the client lists again
                yield copy.deepcopy(event)
                continue
            self.objects = [
                x
                for x in self.objects
                if (x.get("metadata") or {}).get("uid") != o["metadata"]["uid"]
            ]
            if event["type"] != "DELETED":
                self.objects.append(copy.deepcopy(o))
            yield copy.deepcopy(event)
        if pods:
            self._pods_drained.set()
            # open, like a real watch, until the command's end stops it (the bound: a watch
            # nobody stops still ends, as the server ends every watch)
            aborted.wait(60)
            return
        if not any(f.endswith("/pods") for f in self.forbidden):  # else no pods' watch opens
            # the pods' watch runs on another thread: wait for its events to be out (the event,
            # not a time; on a loaded machine 5 s once came before that thread ran), bounded
            # as the open pods' watch above
            self._pods_drained.wait(60)
        self._pods_drained.clear()
        raise KeyboardInterrupt

    def _fail(self, status: int, message: str, path: str) -> Any:
        body = {"kind": "Status", "status": "Failure", "message": message, "code": status}
        import json

        raise api_error(status, json.dumps(body), path)

    # a connect function for main(..., connect=...) ---------------------------------------------
    def connect(self, options: ConnectionOptions) -> Cluster:
        if options.namespace:
            self.namespace = options.namespace
        return Cluster(self)


def _dotted(o: Any, path: str) -> Any:
    for part in path.split("."):
        o = o.get(part) if isinstance(o, dict) else None
    return "" if o is None else str(o)


def event(
    involved: dict[str, Any],
    reason: str,
    message: str,
    *,
    type: str = "Warning",
    count: int = 1,
    first: str = "2026-11-01T00:00:00Z",
    last: str = "2026-11-01T00:00:00Z",
    component: str = "default-scheduler",
    name: str | None = None,
) -> dict[str, Any]:
    """A core v1 Event about ``involved`` (an object made by :func:`obj` or :func:`pod`)."""
    meta = involved["metadata"]
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {
            "name": name or f"{meta['name']}.{reason.lower()}",
            "namespace": meta.get("namespace") or "default",
            "uid": f"uid-event-{meta['name']}-{reason}",
        },
        "involvedObject": {
            "apiVersion": involved["apiVersion"],
            "kind": involved["kind"],
            "name": meta["name"],
            "namespace": meta.get("namespace"),
            "uid": meta["uid"],
        },
        "type": type,
        "reason": reason,
        "message": message,
        "count": count,
        "firstTimestamp": first,
        "lastTimestamp": last,
        "source": {"component": component},
    }


def _partial(o: dict[str, Any]) -> dict[str, Any]:
    return {
        "kind": "PartialObjectMetadata",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": copy.deepcopy(o.get("metadata") or {}),
    }


def _terms(selector: str) -> list[str]:
    """A label selector's terms (commas inside ``in (...)`` do not split)."""
    out: list[str] = []
    depth, current = 0, ""
    for ch in selector:
        depth += ch == "("
        depth -= ch == ")"
        if ch == "," and depth == 0:
            out.append(current.strip())
            current = ""
        else:
            current += ch
    if current.strip():
        out.append(current.strip())
    return out


def matches(selector: str, labels: dict[str, str]) -> bool:
    """The API server's label selector grammar: ``k=v``, ``k==v``, ``k!=v``, ``k``, ``!k``,
    ``k in (a,b)``, ``k notin (a,b)``."""
    for term in _terms(selector):
        if " notin " in term or " in " in term:
            key, op, rest = term.partition(" notin " if " notin " in term else " in ")
            values = {v.strip() for v in rest.strip().strip("()").split(",")}
            inside = labels.get(key.strip()) in values
            if (op == " in " and not inside) or (op == " notin " and inside):
                return False
        elif "!=" in term:
            key, _, value = term.partition("!=")
            if labels.get(key) == value:
                return False
        elif "=" in term:
            key, _, value = term.replace("==", "=").partition("=")
            if labels.get(key) != value:
                return False
        elif term.startswith("!"):
            if term[1:] in labels:
                return False
        elif term not in labels:
            return False
    return True


class _Stream:
    """The open response a watch can abort from another thread."""

    def __init__(self, aborted: threading.Event) -> None:
        self._aborted = aborted

    def abort(self) -> None:
        self._aborted.set()


def obj(
    api_version: str,
    kind: str,
    name: str,
    namespace: str | None = "default",
    *,
    uid: str | None = None,
    labels: dict[str, str] | None = None,
    owner: dict[str, Any] | None = None,
    created: str = "2026-11-01T00:00:00Z",
    spec: dict[str, Any] | None = None,
    status: dict[str, Any] | None = None,
) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "name": name,
        "uid": uid or f"uid-{kind.lower()}-{name}",
        "creationTimestamp": created,
    }
    if namespace is not None:
        meta["namespace"] = namespace
    if labels:
        meta["labels"] = labels
    if owner:
        meta["ownerReferences"] = [owner]
    out: dict[str, Any] = {"apiVersion": api_version, "kind": kind, "metadata": meta}
    if spec is not None:
        out["spec"] = spec
    if status is not None:
        out["status"] = status
    return out


def owner_ref(o: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": o["apiVersion"],
        "kind": o["kind"],
        "name": o["metadata"]["name"],
        "uid": o["metadata"]["uid"],
        "controller": True,
    }


def pod(
    name: str,
    owner: dict[str, Any] | None,
    *,
    namespace: str = "default",
    ready: bool = True,
    phase: str = "Running",
    node: str | None = "node-1",
    labels: dict[str, str] | None = None,
    gpus: int = 0,
) -> dict[str, Any]:
    requests: dict[str, str] = {"cpu": "1", "memory": "1Gi"}
    if gpus:
        requests["nvidia.com/gpu"] = str(gpus)
    spec: dict[str, Any] = {
        "containers": [{"name": "main", "image": "busybox", "resources": {"requests": requests}}]
    }
    if node:
        spec["nodeName"] = node
    status = {
        "phase": phase,
        "conditions": [{"type": "Ready", "status": "True" if ready else "False"}],
    }
    return obj(
        "v1",
        "Pod",
        name,
        namespace,
        labels=labels,
        owner=owner_ref(owner) if owner else None,
        spec=spec,
        status=status,
    )


def all_of(items: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    return list(items)
