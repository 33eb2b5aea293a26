"""What the watch caches keep of each object: declared field sets, merged per informer.

A :class:`Trim` is a tree of the fields some consumer reads (``ALL`` keeps a whole subtree; a
list is trimmed item by item with the same subtree). Trims merge with ``|`` into the union of
what each keeps, and :class:`~workload_map.kube.cache.InformerSet` merges every trim
registered for one path, so when the gang controller watches Jobs as owner-chain links
(``trim_intermediate``) and the exporter watches them as workloads (``trim_workload``), both get
the workload's fields instead of whichever registered first. Server bookkeeping no consumer
reads (``managedFields``, kubectl's last-applied annotation) is always dropped.

The pod trim is the union of what its consumers read: the engine (phase, readiness, resource
requests, node), the gang controller and its webhook (scheduler name, scheduling group, owners,
labels, annotations) and the exporter (the scheduler's Unschedulable condition). Dropping
environment variables, volumes, probes, images and the rest cuts a pod to a few hundred bytes,
which is what makes 100k cached pods fit in memory. No library trims by a mergeable field tree:
the kubernetes client's informer stores whole objects.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeAlias

__all__ = [
    "ALL",
    "ENGINE_POD",
    "EXPORTER_POD",
    "GANGS_POD",
    "FieldTree",
    "Trim",
    "trim_intermediate",
    "trim_pod",
    "trim_workload",
]

#: keep this field whole
ALL = True
FieldTree: TypeAlias = bool | Mapping[str, "FieldTree"]

_LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
_Apply = Callable[[Any], Any]


def _union(a: FieldTree, b: FieldTree) -> FieldTree:
    if a is ALL or b is ALL:
        return ALL
    assert isinstance(a, Mapping) and isinstance(b, Mapping)
    out: dict[str, FieldTree] = dict(a)
    for key, sub in b.items():
        out[key] = _union(out[key], sub) if key in out else sub
    return out


def _covers(a: FieldTree, b: FieldTree) -> bool:
    """Whether ``a`` keeps everything ``b`` keeps."""
    if a is ALL:
        return True
    if b is ALL:
        return False
    assert isinstance(a, Mapping) and isinstance(b, Mapping)
    return all(key in a and _covers(a[key], sub) for key, sub in b.items())


def _canonical(tree: FieldTree) -> Any:
    if tree is ALL:
        return ALL
    assert isinstance(tree, Mapping)
    return tuple(sorted((k, _canonical(v)) for k, v in tree.items()))


def _compile(tree: FieldTree) -> _Apply | None:
    """A function keeping ``tree`` of a value; None for ``ALL`` (the value as it is)."""
    if tree is ALL:
        return None
    assert isinstance(tree, Mapping)
    leaves = tuple(k for k, sub in tree.items() if sub is ALL)
    branches = tuple((k, f) for k, sub in tree.items() if (f := _compile(sub)) is not None)

    def keep(value: Any) -> Any:
        # dict before Mapping: decoded JSON is dicts, and the ABC check costs on 100k pods
        if type(value) is dict or isinstance(value, Mapping):
            out = {k: value[k] for k in leaves if k in value}
            for key, f in branches:
                if key in value:
                    out[key] = f(value[key])
            return out
        if type(value) is list:
            return [keep(item) for item in value]
        return value

    return keep


def _bookkeeping(out: dict[str, Any]) -> dict[str, Any]:
    """``out`` without the server's bookkeeping (copied only where something goes)."""
    meta = out.get("metadata")
    if type(meta) is not dict and not isinstance(meta, Mapping):
        return out
    notes = meta.get("annotations")
    stale = isinstance(notes, Mapping) and _LAST_APPLIED in notes
    if "managedFields" not in meta and not stale:
        return out
    kept = {k: v for k, v in meta.items() if k != "managedFields"}
    if stale:
        assert isinstance(notes, Mapping)
        rest = {k: v for k, v in notes.items() if k != _LAST_APPLIED}
        if rest:
            kept["annotations"] = rest
        else:
            kept.pop("annotations", None)
    return {**out, "metadata": kept}


class Trim:
    """The fields some consumers read of one kind's objects; callable as an informer transform.

    ``defaults`` fill top-level fields a stored object must have (a pod's ``apiVersion`` and
    ``kind``); ``consumers`` name who needs the fields (shown in conflicts and logs).
    """

    __slots__ = ("_apply", "_key", "consumers", "defaults", "tree")

    def __init__(
        self,
        tree: FieldTree,
        *,
        consumers: tuple[str, ...] = (),
        defaults: Mapping[str, Any] | None = None,
    ) -> None:
        if tree is not ALL and not isinstance(tree, Mapping):
            raise TypeError(f"a trim's tree is ALL or a mapping, not {type(tree).__name__}")
        self.tree = tree
        self.consumers = consumers
        self.defaults = dict(defaults or {})
        self._key = (_canonical(tree), tuple(sorted(self.defaults.items())))
        self._apply = _compile(tree)

    def __call__(self, obj: Mapping[str, Any]) -> dict[str, Any]:
        out = dict(obj) if self._apply is None else self._apply(obj)
        for key, value in self.defaults.items():
            if not out.get(key):
                out[key] = value
        return _bookkeeping(out)

    def __or__(self, other: Trim) -> Trim:
        consumers = tuple(dict.fromkeys((*self.consumers, *other.consumers)))
        return Trim(
            _union(self.tree, other.tree),
            consumers=consumers,
            defaults={**other.defaults, **self.defaults},
        )

    def covers(self, other: Trim) -> bool:
        """Whether this trim keeps every field ``other`` keeps."""
        return _covers(self.tree, other.tree) and all(
            self.defaults.get(k) == v for k, v in other.defaults.items()
        )

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Trim) and self._key == other._key

    def __hash__(self) -> int:
        return hash(self._key)

    def __repr__(self) -> str:
        return f"Trim(consumers={list(self.consumers)})"


_IDENTITY: dict[str, FieldTree] = {
    "name": ALL,
    "generateName": ALL,
    "namespace": ALL,
    "uid": ALL,
    "resourceVersion": ALL,
    "generation": ALL,
    "creationTimestamp": ALL,
    "deletionTimestamp": ALL,
    "labels": ALL,
    "ownerReferences": ALL,
}
_POD = {"apiVersion": "v1", "kind": "Pod"}

#: what the engine reads of each container's (and init container's) status
_CONTAINER_STATUS: dict[str, FieldTree] = {
    "name": ALL,
    "ready": ALL,
    "started": ALL,
    "restartCount": ALL,
    "state": ALL,
    "lastState": ALL,
}

#: the engine: attribution (labels, owners, annotations), requests, node, status
ENGINE_POD = Trim(
    {
        "apiVersion": ALL,
        "kind": ALL,
        "metadata": {**_IDENTITY, "annotations": ALL},
        "spec": {
            "nodeName": ALL,
            "overhead": ALL,
            "resources": ALL,
            "containers": {"name": ALL, "resources": ALL, "restartPolicy": ALL},
            "initContainers": {"name": ALL, "resources": ALL, "restartPolicy": ALL},
        },
        "status": {
            "phase": ALL,
            "reason": ALL,
            "startTime": ALL,
            "conditions": ALL,
            "containerStatuses": _CONTAINER_STATUS,
            "initContainerStatuses": _CONTAINER_STATUS,
        },
    },
    consumers=("engine",),
    defaults=_POD,
)
#: the gang controller and webhook: the backend, the group joined, the priority class
GANGS_POD = Trim(
    {
        "apiVersion": ALL,
        "kind": ALL,
        "metadata": {**_IDENTITY, "annotations": ALL},
        "spec": {
            "nodeName": ALL,
            "schedulerName": ALL,
            "schedulingGroup": ALL,
            "priorityClassName": ALL,
        },
        "status": {"phase": ALL},
    },
    consumers=("gangs",),
    defaults=_POD,
)
#: the exporter: why a pod waits (the scheduler's condition and message, its nomination)
EXPORTER_POD = Trim(
    {
        "apiVersion": ALL,
        "kind": ALL,
        "metadata": {**_IDENTITY, "annotations": ALL},
        "spec": {"nodeName": ALL, "schedulerName": ALL},
        "status": {
            "phase": ALL,
            "reason": ALL,
            "message": ALL,
            "conditions": ALL,
            "nominatedNodeName": ALL,
        },
    },
    consumers=("exporter",),
    defaults=_POD,
)

#: a pod, with what every pod consumer of the process reads (one pod informer serves them all)
trim_pod = ENGINE_POD | GANGS_POD | EXPORTER_POD
#: a link of an owner chain (ReplicaSet, Job, StatefulSet, a namespace…): identity, labels, owners
trim_intermediate = Trim(
    {"apiVersion": ALL, "kind": ALL, "metadata": dict(_IDENTITY)}, consumers=("owner chains",)
)
#: a workload: everything the engine may read (spec, status), minus server bookkeeping
trim_workload = Trim(ALL, consumers=("workloads",))
