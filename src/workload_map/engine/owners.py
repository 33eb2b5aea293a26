"""Owner chains: which top-level object a pod (or any object) belongs to.

Two uses. Live, the CLI walks controller owner references through the API (``walk_chain`` with
a fetch function, cached). Offline (``wlmap describe --pods FILE``), every Pod in the file is a
candidate and every other object in it only serves as a chain link: a pod is left out only when
its chain resolves, through objects of the file, to a different top owner (``partition_pods``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "OwnerRef",
    "controller_ref",
    "group_of",
    "is_owned_by",
    "partition_pods",
    "top_owner",
    "walk_chain",
]

MAX_DEPTH = 16


@dataclass(frozen=True)
class OwnerRef:
    """One link of a chain (what an ``ownerReferences`` entry names)."""

    api_version: str
    kind: str
    name: str
    uid: str | None
    namespace: str | None

    @property
    def group(self) -> str:
        return group_of(self.api_version)

    def describe(self) -> str:
        return f"{self.kind}/{self.name}"


def group_of(api_version: str) -> str:
    """``apps`` for ``apps/v1``; ``""`` for ``v1``."""
    return api_version.rpartition("/")[0] if "/" in api_version else ""


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    meta = obj.get("metadata")
    return meta if isinstance(meta, Mapping) else {}


def controller_ref(obj: Mapping[str, Any]) -> OwnerRef | None:
    """The controller owner reference (``controller: true``), else the first one, else None."""
    refs = _meta(obj).get("ownerReferences")
    if not isinstance(refs, list):
        return None
    entries = [r for r in refs if isinstance(r, Mapping)]
    if not entries:
        return None
    chosen = next((r for r in entries if r.get("controller") is True), entries[0])
    namespace = _meta(obj).get("namespace")
    return OwnerRef(
        api_version=str(chosen.get("apiVersion") or ""),
        kind=str(chosen.get("kind") or ""),
        name=str(chosen.get("name") or ""),
        uid=chosen.get("uid") if isinstance(chosen.get("uid"), str) else None,
        namespace=namespace if isinstance(namespace, str) else None,
    )


def _self_ref(obj: Mapping[str, Any]) -> OwnerRef:
    meta = _meta(obj)
    uid = meta.get("uid")
    namespace = meta.get("namespace")
    return OwnerRef(
        api_version=str(obj.get("apiVersion") or ""),
        kind=str(obj.get("kind") or ""),
        name=str(meta.get("name") or ""),
        uid=uid if isinstance(uid, str) and uid else None,
        namespace=namespace if isinstance(namespace, str) else None,
    )


def walk_chain(
    obj: Mapping[str, Any],
    fetch: Callable[[OwnerRef], Mapping[str, Any] | None],
    *,
    max_depth: int = MAX_DEPTH,
    cache: dict[OwnerRef, Mapping[str, Any] | None] | None = None,
) -> list[OwnerRef]:
    """The owner references from ``obj`` upwards; the last one is the top owner reached.

    ``fetch`` returns the owner object (or None when unknown/unreadable); the walk stops there.
    Pass the same ``cache`` dict for many pods to fetch each owner once (misses included).
    """
    if cache is not None:
        raw_fetch = fetch

        def fetch(ref: OwnerRef) -> Mapping[str, Any] | None:
            if ref not in cache:
                cache[ref] = raw_fetch(ref)
            return cache[ref]

    chain: list[OwnerRef] = []
    current: Mapping[str, Any] | None = obj
    seen: set[tuple[str, str, str]] = set()
    while current is not None and len(chain) < max_depth:
        ref = controller_ref(current)
        if ref is None:
            break
        key = (ref.kind, ref.name, ref.uid or "")
        if key in seen:
            break
        seen.add(key)
        chain.append(ref)
        current = fetch(ref)
    return chain


def top_owner(
    obj: Mapping[str, Any],
    fetch: Callable[[OwnerRef], Mapping[str, Any] | None],
    *,
    cache: dict[OwnerRef, Mapping[str, Any] | None] | None = None,
) -> OwnerRef:
    """The top owner reached from ``obj`` (``obj`` itself when it has no owner)."""
    chain = walk_chain(obj, fetch, cache=cache)
    return chain[-1] if chain else _self_ref(obj)


def is_owned_by(
    obj: Mapping[str, Any],
    workload: Mapping[str, Any],
    fetch: Callable[[OwnerRef], Mapping[str, Any] | None],
    *,
    cache: dict[OwnerRef, Mapping[str, Any] | None] | None = None,
) -> bool:
    """Whether ``obj``'s controller chain reaches ``workload`` (live pod discovery)."""
    top = _self_ref(workload)
    return any(_same(ref, top) for ref in walk_chain(obj, fetch, cache=cache))


class _Index:
    """Objects of a file, by uid and by (group, kind, namespace, name)."""

    def __init__(self, objects: Iterable[Mapping[str, Any]]):
        self.by_uid: dict[str, Mapping[str, Any]] = {}
        self.by_name: dict[tuple[str, str, str, str], Mapping[str, Any]] = {}
        for obj in objects:
            ref = _self_ref(obj)
            if ref.uid:
                self.by_uid[ref.uid] = obj
            self.by_name[(ref.group, ref.kind, ref.namespace or "", ref.name)] = obj

    def fetch(self, ref: OwnerRef) -> Mapping[str, Any] | None:
        if ref.uid and ref.uid in self.by_uid:
            return self.by_uid[ref.uid]
        found = self.by_name.get((ref.group, ref.kind, ref.namespace or "", ref.name))
        if found is not None and ref.uid:
            uid = _self_ref(found).uid
            if uid and uid != ref.uid:
                return None  # a namesake, not the owner
        return found


def _same(ref: OwnerRef, top: OwnerRef) -> bool:
    if ref.uid and top.uid:
        return ref.uid == top.uid
    return (ref.group, ref.kind, ref.name) == (top.group, top.kind, top.name) and (
        not ref.namespace or not top.namespace or ref.namespace == top.namespace
    )


def partition_pods(
    workload: Mapping[str, Any], objects: Iterable[Mapping[str, Any]]
) -> tuple[list[Mapping[str, Any]], list[tuple[Mapping[str, Any], str]]]:
    """Split a file's objects into candidate pods and excluded pods (with the reason).

    A pod is excluded only when its chain reaches, through the file's objects, a top owner
    other than ``workload`` — or names an object of the workload's own kind that is not it.
    """
    pods: list[Mapping[str, Any]] = []
    links: list[Mapping[str, Any]] = []
    for o in objects:
        if type(o) is dict or isinstance(o, Mapping):
            is_pod = o.get("kind") == "Pod" and (o.get("apiVersion") or "v1") == "v1"
            (pods if is_pod else links).append(o)
    index = _Index(links)
    top = _self_ref(workload)
    top_kind = top.kind
    candidates: list[Mapping[str, Any]] = []
    excluded: list[tuple[Mapping[str, Any], str]] = []
    for obj in pods:
        if not links:  # a bare pod, or a chain that leaves the file at once, unless it names
            meta = obj.get("metadata")  # an object of the workload's kind
            refs = meta.get("ownerReferences") if type(meta) is dict else None
            if refs is None and meta is not None and isinstance(meta, Mapping):
                refs = meta.get("ownerReferences")
            if not refs or type(refs) is not list:
                candidates.append(obj)
                continue
            for r in refs:
                if type(r) is not dict or r.get("kind") == top_kind:
                    break
            else:
                candidates.append(obj)
                continue
        ref = controller_ref(obj)
        if ref is None:
            candidates.append(obj)
            continue
        chain = walk_chain(obj, index.fetch)
        verdict = _verdict(chain, top, index)
        if verdict is None:
            candidates.append(obj)
        else:
            excluded.append((obj, verdict))
    return candidates, excluded


def _verdict(chain: list[OwnerRef], top: OwnerRef, index: _Index) -> str | None:
    """None when the pod may belong to ``top``; else why it does not."""
    for ref in chain:
        if _same(ref, top):
            return None
        if (ref.group, ref.kind) == (top.group, top.kind):
            return f"owned by another {ref.kind}: {ref.name}"
    if not chain:
        return None  # a bare pod: a candidate
    last = chain[-1]
    owner = index.fetch(last)
    if owner is not None and controller_ref(owner) is None:
        return f"its owner chain ends at {last.describe()}, not {top.describe()}"
    return None  # the chain leaves the file: it may still reach the workload
