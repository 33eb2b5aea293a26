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
which is what makes 100k cached pods fit in memory. What is kept is interned and equal subtrees
are kept once (:class:`_Shared`): a decoded pod repeats its namespace, labels, owner reference,
resources and conditions with thousands of others. No library trims by a mergeable field tree:
the kubernetes client's informer stores whole objects.
"""

from __future__ import annotations

import sys
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


class _Shared:
    """Equal strings and equal small subtrees of cached objects, kept once.

    A watch decodes every object anew, so 100k cached pods hold 100k copies of each label key,
    namespace, node name, phase and quantity, and of each identical owner reference, container
    resources, condition or container state. Strings are interned (:func:`sys.intern`: an
    interned string is freed with its last user); a subtree (a dict or list of scalars and
    subtrees) is looked up by its content in a table and the first copy is kept. A content is
    a tuple of the scalars (told apart by type: ``True`` is not ``1``) and the children's
    contents, so equal contents are equal values. The table holds its entries, so it is
    bounded: when full it is emptied and fills again (objects keep what they share; new ones
    share among themselves).

    Cached objects are read only (every consumer of a watch gets the same object), so sharing
    a subtree between objects changes no value; an object's top level and its ``metadata``
    (its identity) are never shared, so code may still fill those in (a file's missing uid).
    Informer threads share the table: a lookup and an insert are single dictionary operations
    (two threads keeping equal subtrees at once keep two copies, both correct).
    """

    __slots__ = ("limit", "table")

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.table: dict[tuple[Any, ...], Any] = {}

    def tree(self, value: Any) -> Any:
        """``value`` with its strings interned and its subtrees shared (dicts and lists are
        new objects: the decoded ones are dropped by the caller)."""
        kind = type(value)
        if kind is str:
            return _intern(value) if len(value) <= _INTERN_UP_TO else value
        if kind is dict or kind is list:
            return self.shared(value)[0]
        return value

    def scalar(self, value: Any) -> Any:
        if type(value) is str and len(value) <= _INTERN_UP_TO:
            return _intern(value)
        return value

    def shared(self, value: dict[str, Any] | list[Any], keep: bool = True) -> tuple[Any, Any]:
        """(the kept copy of a dict or list, its content; ``_UNSHARED`` when it is not kept).

        ``keep=False``: a new dict or list of interned strings and shared children, itself
        not looked up (an object's labels: mostly its own, as a pod's index or name labels)."""
        whole = keep and len(value) <= _SHARE_UP_TO  # (no content built for a dict not kept)
        parts: list[Any]
        out: Any
        if type(value) is dict:
            out = {}
            parts = [_DICT]
            for k, v in value.items():
                if type(k) is str:
                    k = _intern(k)
                kind = type(v)
                if kind is str:
                    if len(v) <= _INTERN_UP_TO:
                        v = _intern(v)
                    part = v
                elif kind is dict or kind is list:
                    v, part = self.shared(v)
                elif kind is int or v is None:
                    part = v
                else:
                    part = _scalar_part(v)
                out[k] = v
                if whole:
                    if part is _UNSHARED:
                        whole = False
                    else:
                        parts.append(k)
                        parts.append(part)
        else:
            out = []
            parts = [_LIST]
            item: Any
            for item in value:
                v = item
                kind = type(v)
                if kind is str:
                    if len(v) <= _INTERN_UP_TO:
                        v = _intern(v)
                    part = v
                elif kind is dict or kind is list:
                    v, part = self.shared(v)
                elif kind is int or v is None:
                    part = v
                else:
                    part = _scalar_part(v)
                out.append(v)
                if whole:
                    if part is _UNSHARED:
                        whole = False
                    else:
                        parts.append(part)
        if not whole:
            return out, _UNSHARED
        return self.kept(out, tuple(parts))

    def kept(self, value: Any, content: tuple[Any, ...]) -> tuple[Any, Any]:
        """(the object kept for ``content``, ``value`` the first time; the content)."""
        table = self.table
        found = table.get(content)
        if found is not None:
            return found, content
        if len(table) >= self.limit:
            table.clear()  # see the class: objects keep what they share
        table[content] = value
        return value, content


def _scalar_part(value: Any) -> Any:
    """A scalar's part of a content: bools and floats are told apart from ints."""
    if value is True:
        return _TRUE
    if value is False:
        return _FALSE
    if type(value) is float:
        return (_FLOAT, value)
    return _UNSHARED  # not JSON: never shared


_intern = sys.intern
#: longer strings are rarely repeated (messages, JSON in annotations): not interned
_INTERN_UP_TO = 256
#: larger dicts and lists are not shared (nor is anything above them)
_SHARE_UP_TO = 32
_DICT, _LIST, _FLOAT = object(), object(), object()
_TRUE, _FALSE, _UNSHARED = object(), object(), object()
#: the process's one table: every watch's objects share with each other (a kept subtree
#: costs its entry and its content tuple, about 150 bytes)
SHARED = _Shared(1 << 17)


def _compile(
    tree: FieldTree,
    *,
    share: bool = True,
    unique: frozenset[str] = frozenset(),
    own: bool = False,
) -> Callable[[Any], tuple[Any, Any]]:
    """A function giving (what ``tree`` keeps of a value, its content), the strings interned
    and subtrees shared (:class:`_Shared`) unless ``share`` is false: an object's top level
    and metadata, whose own fields (``unique``, not interned either) make them unique.
    ``own``: a whole subtree that is not looked up itself (:data:`_OWN`)."""
    shared = SHARED.shared
    kept = SHARED.kept
    if tree is ALL:

        def whole(value: Any) -> tuple[Any, Any]:
            kind = type(value)
            if kind is dict or kind is list:
                return shared(value, not own)
            if kind is str:
                if len(value) <= _INTERN_UP_TO:
                    value = _intern(value)
                return value, value
            return value, (value if kind is int or value is None else _scalar_part(value))

        return whole
    assert isinstance(tree, Mapping)
    # each field: copied as it is (an object's own: ``unique``), a scalar kept inline where
    # the tree keeps it whole (no call per name, phase or node of 100k pods), or its function
    fields = tuple(
        (
            k,
            _COPY if k in unique else _INLINE if sub is ALL else None,
            _compile(
                sub,
                share=share or k != "metadata",
                unique=_UNIQUE if k == "metadata" and not share else frozenset(),
                own=bool(unique) and k in _OWN,
            ),
        )
        for k, sub in tree.items()
    )
    table = SHARED.table

    def keep(value: Any) -> tuple[Any, Any]:
        # dict before Mapping: decoded JSON is dicts, and the ABC check costs on 100k pods
        if type(value) is dict or isinstance(value, Mapping):
            out = {}
            parts = [_DICT]
            whole = share
            for key, how, f in fields:
                if key not in value:
                    continue
                v = value[key]
                if how is _COPY:
                    out[key] = v
                    whole = False
                    continue
                kind = type(v)
                if how is _INLINE and kind is str:
                    if len(v) <= _INTERN_UP_TO:
                        v = _intern(v)
                    part = v
                elif how is _INLINE and (kind is int or v is None):
                    part = v
                else:
                    v, part = f(v)
                out[key] = v
                if whole:
                    if part is _UNSHARED:
                        whole = False
                    else:
                        parts.append(key)
                        parts.append(part)
            if not whole:
                return out, _UNSHARED
            content = tuple(parts)
            found = table.get(content)  # SHARED.kept, inline: once per subtree of every pod
            if found is not None:
                return found, content
            return kept(out, content)
        if type(value) is list:
            items = []
            parts = [_LIST]
            whole = share
            for item in value:
                v, part = keep(item)
                items.append(v)
                if whole:
                    if part is _UNSHARED:
                        whole = False
                    else:
                        parts.append(part)
            return kept(items, tuple(parts)) if whole else (items, _UNSHARED)
        if type(value) is str:
            value = SHARED.scalar(value)
            return value, value
        return value, (value if type(value) is int or value is None else _scalar_part(value))

    return keep


#: an object's own fields: unique to it, so not interned
_UNIQUE = frozenset({"name", "uid", "resourceVersion"})
_COPY, _INLINE = object(), object()
#: metadata fields mostly unique as a whole (an index, a pod name, a hash among the labels):
#: their strings are interned, the field itself is not looked up (a table entry per object
#: would cost more than the sharing saves)
_OWN = frozenset({"labels"})


def _whole(obj: Any) -> Any:
    """A whole object, its strings interned and subtrees shared below its metadata."""
    if type(obj) is not dict and not isinstance(obj, Mapping):
        return obj
    tree = SHARED.tree

    def own(value: Any) -> Any:
        return SHARED.shared(value, False)[0] if type(value) in (dict, list) else tree(value)

    out = {}
    for key, value in obj.items():
        if key == "metadata" and (type(value) is dict or isinstance(value, Mapping)):
            out[key] = {
                k: (v if k in _UNIQUE else own(v) if k in _OWN else tree(v))
                for k, v in value.items()
            }
        else:
            out[key] = tree(value)
    return out


def _bookkeeping(out: dict[str, Any]) -> dict[str, Any]:
    """``out`` without the server's bookkeeping (copied only where something goes)."""
    meta = out.get("metadata")
    if type(meta) is not dict and not isinstance(meta, Mapping):
        return out
    notes = meta.get("annotations")
    stale = (type(notes) is dict or isinstance(notes, Mapping)) and _LAST_APPLIED in notes
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
        self._apply: _Apply = _whole
        if tree is not ALL:
            keep = _compile(tree, share=False)
            self._apply = lambda obj: keep(obj)[0]

    def __call__(self, obj: Mapping[str, Any]) -> dict[str, Any]:
        out = self._apply(obj)
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
