"""Page models: what each page shows, computed from inventory entries (no HTML here)."""

from __future__ import annotations

import dataclasses
import datetime as dt
import urllib.parse
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from workload_map.cluster.feed import FeedProblem, ProblemCause
from workload_map.cluster.inventory import Entry, Inventory
from workload_map.engine.resources import GPU
from workload_map.model import SEVERITY_ORDER

__all__ = [
    "PHASE_ORDER",
    "Filters",
    "Graph",
    "Row",
    "Vitals",
    "age",
    "graph",
    "problem_state",
    "rows",
    "vitals",
    "workload_path",
]

#: status chips in the reference's severity order
PHASE_ORDER = SEVERITY_ORDER
PODS_PER_INSTANCE = 8  # the reference's cap per graph node, then "+N more"
PAGE_SIZE = 100


def workload_path(entry: Entry, cluster: str = "") -> str:
    """The workload page's path (``?cluster=`` names its cluster when several are served)."""
    group = entry.gvk.group or "core"
    ns = entry.namespace or "_"
    path = f"/workloads/{group}/{entry.gvk.version}/{entry.gvk.kind}/{ns}/{entry.name}"
    return f"{path}?{urllib.parse.urlencode({'cluster': cluster})}" if cluster else path


def age(timestamp: Any, now: dt.datetime) -> str:
    """kubectl's short age: 45s, 12m, 5h, 3d."""
    if not isinstance(timestamp, str):
        return "n/a"
    try:
        then = dt.datetime.fromisoformat(timestamp.replace("Z", "+00:00"))
    except ValueError:
        return "n/a"
    seconds = max(0, int((now - then).total_seconds()))
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size * (2 if unit != "d" else 1):
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


def _phases(view: Mapping[str, Any] | None) -> list[str]:
    if view is None:
        return []
    return _ordered(view.get("phases") or ())


def _ordered(phases: Iterable[str]) -> list[str]:
    matched = set(phases)
    return [p for p in PHASE_ORDER if p in matched]


def _get(totals: Mapping[str, int] | None, name: str) -> int | None:
    return None if totals is None else totals.get(name, 0)


@dataclass(frozen=True)
class Row:
    entry: Entry
    phases: list[str]
    ready: int | None
    desired: int | None
    gpus: int | None  # requested by the spec
    age: str
    path: str
    gpus_held: int | None = None  # requested by pods on a node, not finished
    gpus_pending: int | None = None  # requested by active pods on no node
    cluster: str = ""  # its context's name when several clusters are served


@dataclass(frozen=True)
class Filters:
    cluster: str = ""
    namespace: str = ""
    kind: str = ""
    phase: str = ""
    text: str = ""
    sort: str = "namespace"
    descending: bool = False
    page: int = 1

    @classmethod
    def parse(cls, query: Mapping[str, str]) -> Filters:
        try:
            page = max(1, int(query.get("page", "1")))
        except ValueError:
            page = 1
        sort = query.get("sort", "namespace")
        return cls(
            cluster=query.get("cluster", "").strip(),
            namespace=query.get("namespace", "").strip(),
            kind=query.get("kind", "").strip(),
            phase=query.get("phase", "").strip(),
            text=query.get("q", "").strip(),
            sort=sort if sort in _SORTS else "namespace",
            descending=query.get("dir") == "desc",
            page=page,
        )


#: what the list sorts by, read from a candidate row (cluster, entry, phases, totals); one
#: function per sort, chosen once (a fleet's list sorts 10k rows)
_Candidate = tuple[str, Entry, list[str], Any]


def _by_age(c: _Candidate) -> Any:
    return (str((c[1].obj.get("metadata") or {}).get("creationTimestamp") or ""), c[1].name)


_SORT_KEYS: dict[str, Any] = {
    "cluster": lambda c: (c[0], c[1].namespace, c[1].name),
    "name": lambda c: (c[1].name, c[1].namespace),
    "kind": lambda c: (c[1].gvk.kind, c[1].namespace, c[1].name),
    "namespace": lambda c: (c[1].namespace, c[1].name),
    "phase": lambda c: (PHASE_ORDER.index(c[2][0]) if c[2] else 99, c[1].namespace, c[1].name),
    "pods": lambda c: (
        (c[3].desired if c[3] is not None else None) or 0,
        c[1].namespace,
        c[1].name,
    ),
    "gpus": lambda c: (
        (c[3].requested.get(GPU, 0) if c[3] is not None else None) or 0,
        c[1].namespace,
        c[1].name,
    ),
    "age": _by_age,
}


def _row(c: _Candidate, now: dt.datetime) -> Row:
    cluster, e, phases, t = c
    return Row(
        e,
        phases,
        t.ready if t is not None else None,
        t.desired if t is not None else None,
        t.requested.get(GPU, 0) if t is not None else None,
        age((e.obj.get("metadata") or {}).get("creationTimestamp"), now),
        workload_path(e, cluster),
        gpus_held=_get(t.held_requests, GPU) if t is not None else None,
        gpus_pending=_get(t.pending_requests, GPU) if t is not None else None,
        cluster=cluster,
    )


_SORTS = ("cluster", "name", "kind", "namespace", "phase", "pods", "gpus", "age")
#: the sorts that read the evaluation of every workload (the others read its object)
_EVALUATED_SORTS = frozenset({"phase", "pods", "gpus"})


def _evaluated(inventories: Mapping[str, Inventory], page: list[_Candidate]) -> list[_Candidate]:
    """The page's candidates with their workloads evaluated, each cluster's in one batch."""
    by_cluster: dict[str, list[Entry]] = {}
    for cluster, e, _, _ in page:
        by_cluster.setdefault(cluster, []).append(e)
    done = {
        (cluster, e.uid): e
        for cluster, entries in by_cluster.items()
        for e in inventories[cluster].evaluated(entries)
    }
    out: list[_Candidate] = []
    for cluster, e, _, _ in page:
        e = done[(cluster, e.uid)]
        totals = e.summary.totals if e.summary is not None else None
        out.append((cluster, e, _ordered(e.phases), totals))
    return out


@dataclass(frozen=True)
class Listing:
    rows: list[Row]
    total: int
    pages: int
    filters: Filters
    namespaces: list[str]
    kinds: list[str]
    #: the clusters served, by context name (empty with one cluster: no Cluster column)
    clusters: list[str] = dataclasses.field(default_factory=list)


def rows(inventory: Inventory, filters: Filters, now: dt.datetime) -> Listing:
    """Top-level workloads, filtered, sorted and paged."""
    return cluster_rows({"": inventory}, filters, now)


def cluster_rows(
    inventories: Mapping[str, Inventory], filters: Filters, now: dt.datetime
) -> Listing:
    """:func:`rows` over several clusters (by context name; one named "" has no column).

    Filtering by phase and sorting by phase, pods or GPUs read every workload's evaluation;
    otherwise only the rows of the page shown are evaluated (:meth:`Inventory.listed`)."""
    every = bool(filters.phase) or filters.sort in _EVALUATED_SORTS
    everything = [
        (cluster, e)
        for cluster, inventory in inventories.items()
        for e in (inventory.entries() if every else inventory.listed())
        if e.top_level
    ]
    namespaces = sorted({e.namespace for _, e in everything})
    kinds = sorted({e.gvk.kind for _, e in everything})
    # the rows are made for the shown page only: the rest are filtered, counted and sorted
    out: list[_Candidate] = []
    needle = filters.text.lower()
    for cluster, e in everything:
        if filters.cluster and cluster != filters.cluster:
            continue
        if filters.namespace and e.namespace != filters.namespace:
            continue
        if filters.kind and e.gvk.kind != filters.kind:
            continue
        phases = _ordered(e.phases)
        if filters.phase and filters.phase not in phases:
            continue
        if needle and needle not in f"{e.namespace}/{e.name} {e.gvk.kind}".lower():
            continue
        out.append((cluster, e, phases, e.summary.totals if e.summary is not None else None))
    out.sort(key=_SORT_KEYS[filters.sort], reverse=filters.descending)
    pages = max(1, -(-len(out) // PAGE_SIZE))
    page = min(filters.page, pages)
    page_of = out[(page - 1) * PAGE_SIZE : page * PAGE_SIZE]
    if not every:
        page_of = _evaluated(inventories, page_of)
    shown = [_row(c, now) for c in page_of]
    clusters = [c for c in inventories if c]
    return Listing(shown, len(out), pages, filters, namespaces, kinds, clusters)


@dataclass(frozen=True)
class Vital:
    """One tile: what the spec requests, what pods wait for (pending), what pods hold."""

    label: str
    requested: str
    pending: str
    held: str


@dataclass(frozen=True)
class Vitals:
    items: list[Vital]


def _quantity(value: float | int | None, unit: str) -> str:
    if value is None:
        return "n/a"
    if unit == "cores":
        return f"{value / 1000:g}"
    if unit == "bytes":
        size = float(value)
        for suffix in ("B", "KiB", "MiB", "GiB", "TiB"):
            if size < 1024 or suffix == "TiB":
                return f"{size:.0f} {suffix}" if suffix == "B" else f"{size:.1f} {suffix}"
            size /= 1024
    return f"{value:g}"


def vitals(entry: Entry) -> Vitals:
    """Pods, GPUs, CPU and memory in the shared vocabulary (engine/summary.py): requested by the
    spec's desired pods, pending (active pods on no node), held (pods on a node, not finished)."""
    t = entry.summary.totals if entry.summary is not None else None

    def count(value: int | None) -> str:
        return "n/a" if value is None else str(value)

    def amounts(name: str, unit: str) -> tuple[str, str, str]:
        if t is None:
            return "n/a", "n/a", "n/a"
        return (
            _quantity(t.requested.get(name, 0), unit),
            _quantity(_get(t.pending_requests, name), unit),
            _quantity(_get(t.held_requests, name), unit),
        )

    pods = (
        ("n/a", "n/a", "n/a") if t is None else (count(t.desired), count(t.pending), count(t.held))
    )
    return Vitals(
        [
            Vital("Pods", *pods),
            Vital("GPUs", *amounts(GPU, "units")),
            Vital("CPU (cores)", *amounts("cpu", "cores")),
            Vital("Memory", *amounts("memory", "bytes")),
        ]
    )


@dataclass
class Node:
    id: str
    label: str
    sub: str
    x: int
    y: int
    kind: str  # root, component, pod, more
    state: str = ""  # ready, pending, failed, done
    gang: int | None = None  # index of the gang a pod belongs to


@dataclass
class Graph:
    nodes: list[Node] = field(default_factory=list)
    edges: list[tuple[Node, Node]] = field(default_factory=list)
    width: int = 0
    height: int = 0
    gangs: list[dict[str, Any]] = field(default_factory=list)


_COL = (20, 300, 600)
_ROW = 34
_NODE_W = 250


def _pod_state(pod: Mapping[str, Any]) -> str:
    if pod.get("state") in ("Terminating",):
        return "done"
    phase = pod.get("phase")
    if phase in ("Succeeded",):
        return "done"
    if phase == "Failed":
        return "failed"
    return "ready" if pod.get("ready") else "pending"


def graph(entry: Entry) -> Graph:
    """Root → components/instances → pods, pods capped per instance with "+N more"."""
    g = Graph()
    view = entry.view
    if view is None:
        return g
    members: dict[str, int] = {}
    pods_by_name = {str((p.get("metadata") or {}).get("name")): p for p in entry.pods}
    for index, group in enumerate(view.get("podGroups") or ()):
        names = [str(n) for n in group.get("pods") or ()]
        for n in names:
            members.setdefault(n, index)
        scheduled = sum(
            1 for n in names if ((pods_by_name.get(n) or {}).get("spec") or {}).get("nodeName")
        )
        g.gangs.append(
            {
                "index": index,
                "name": group.get("name"),
                "min": group.get("minMember"),
                "members": len(names),
                "scheduled": scheduled,
                "short": isinstance(group.get("minMember"), int) and scheduled < group["minMember"],
            }
        )
    y = 10
    root = Node(
        "root", f"{entry.gvk.kind} {entry.name}", ", ".join(_phases(view)), _COL[0], y, "root"
    )
    g.nodes.append(root)

    def walk(nodes: Sequence[Mapping[str, Any]], parent: Node, depth: int) -> None:
        nonlocal y
        for comp in nodes:
            replicas = comp.get("replicas") or {}
            sub = f"{replicas.get('ready', 'n/a')}/{replicas.get('desired', 'n/a')} ready"
            if comp.get("error"):
                sub = "error: " + str(comp["error"])[:60]
            node = Node(
                f"c{len(g.nodes)}",
                str(comp.get("name")),
                sub,
                _COL[1] + 24 * depth,
                y,
                "component",
                "failed" if comp.get("error") else "",
            )
            g.nodes.append(node)
            g.edges.append((parent, node))
            pods = [p for p in comp.get("pods") or () if isinstance(p, Mapping)]
            first = True
            for pod in pods[:PODS_PER_INSTANCE]:
                if not first:
                    y += _ROW
                first = False
                pnode = Node(
                    f"p{len(g.nodes)}",
                    str(pod.get("name")),
                    f"{pod.get('phase') or 'Unknown'}"
                    + (f" · {pod['node']}" if pod.get("node") else ""),
                    _COL[2],
                    y,
                    "pod",
                    _pod_state(pod),
                    members.get(str(pod.get("name"))),
                )
                g.nodes.append(pnode)
                g.edges.append((node, pnode))
            if len(pods) > PODS_PER_INSTANCE:
                y += _ROW
                more = Node(
                    f"m{len(g.nodes)}",
                    f"+{len(pods) - PODS_PER_INSTANCE} more",
                    "",
                    _COL[2],
                    y,
                    "more",
                )
                g.nodes.append(more)
                g.edges.append((node, more))
            y += _ROW
            walk(comp.get("children") or (), node, depth + 1)

    y += _ROW
    walk(view.get("components") or (), root, 0)
    g.height = y + 10
    g.width = _COL[2] + _NODE_W + 20
    return g


def definition_rows(
    inventory: Inventory, problems: Mapping[str, FeedProblem]
) -> list[dict[str, Any]]:
    """Catalog and cluster definitions, which wins per kind, the operator's conditions."""
    counts: dict[str, int] = {}
    for e in inventory.listed():  # counted, not evaluated
        if e.top_level:
            counts[e.definition.name] = counts.get(e.definition.name, 0) + 1
    in_force = {(d.name, d.origin) for d in inventory.definitions()}
    out: list[dict[str, Any]] = []
    cluster = inventory.cluster_kartas()
    errors = inventory.definition_errors()
    for d in inventory.definitions():
        gvk = d.gvk
        status = (d.raw or {}).get("status") if d.raw else None
        conditions = {
            str(c.get("type")): c
            for c in ((status or {}).get("conditions") or [])
            if isinstance(c, Mapping)
        }
        kind_key = str(gvk) if gvk else ""
        problem = problems.get(kind_key)
        out.append(
            {
                "name": d.name,
                "origin": d.origin,
                "gvk": gvk,
                "in_force": True,
                "overrides_catalog": d.origin == "cluster",
                "ready": conditions.get("Ready"),
                "validated": conditions.get("Validated"),
                "instances": counts.get(d.name, 0),
                "state": problem_state(problem),
                "problem": problem.message if problem is not None else None,
            }
        )
    for name, definition in cluster.items():
        if (name, "cluster") in in_force:
            continue
        out.append(
            {
                "name": name,
                "origin": "cluster",
                "gvk": definition.gvk if definition else None,
                "in_force": False,
                "overrides_catalog": False,
                "ready": None,
                "validated": None,
                "instances": 0,
                "state": "invalid" if name in errors else "shadowed",
                "problem": errors.get(name, "another Karta of the same kind is in force"),
            }
        )
    out.sort(key=lambda r: (str(r["gvk"]) if r["gvk"] else "", r["name"]))
    return out


#: a definition's state on the definitions page, by what failed (never by the error's text:
#: a name, a path or a timestamp in it could read as "403")
_STATE_OF: dict[ProblemCause, str] = {
    "forbidden": "no-permission",
    "unauthorized": "error",  # credentials refused: not a missing permission
    "not-served": "crd-missing",
    "not-found": "crd-missing",
    "error": "error",
}


def problem_state(problem: FeedProblem | None) -> str:
    """``ok``, ``no-permission``, ``crd-missing`` or ``error`` for a kind's watch problem."""
    return "ok" if problem is None else _STATE_OF[problem.cause]


def unattributed(entry: Entry) -> list[Mapping[str, Any]]:
    view = entry.view or {}
    items = view.get("unattributedPods") or []
    return [i if isinstance(i, Mapping) else {"name": str(i)} for i in items]


def pretty(obj: Any) -> str:
    import json

    return json.dumps(obj, indent=2, sort_keys=True, default=str)


def iter_events(events: Iterable[Mapping[str, Any]]) -> list[dict[str, str]]:
    out = []
    for e in events:
        out.append(
            {
                "type": str(e.get("type") or ""),
                "reason": str(e.get("reason") or ""),
                "message": str(e.get("message") or ""),
                "count": str(e.get("count") or 1),
                "when": str(e.get("lastTimestamp") or e.get("eventTime") or ""),
            }
        )
    return out
