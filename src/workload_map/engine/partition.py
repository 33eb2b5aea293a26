"""Who holds a pod: its owner chain, else, where the chain is broken, its owner labels.

For one object and its chain (:func:`claims`, :func:`is_owned_by`, live and offline), and for
a file or list of pods (``wlmap describe --pods FILE``, a listed namespace): every Pod in it is a
candidate and every other object only serves as a chain link; a pod is left out when its chain
resolves, through objects of the file, to a different top owner (:func:`partition_pods`,
:func:`partition_listed`), or when its operator's owner labels name a different workload. The
chain rule is ``engine/owners.py``; the labels, ``engine/owner_labels.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from itertools import chain, repeat
from typing import Any, cast

from workload_map.engine.owner_labels import (
    OWNER_LABELS,
    expected_labels,
    label_checker,
    label_verdict,
)
from workload_map.engine.owners import (
    CYCLE,
    DEPTH,
    MAX_DEPTH,
    OwnerChain,
    OwnerRef,
    controller_ref,
    same_ref,
    self_ref,
    walk_chain,
)

__all__ = ["claims", "is_owned_by", "partition_listed", "partition_pods"]


def claims(workload: Mapping[str, Any], obj: Mapping[str, Any], chain: OwnerChain) -> bool:
    """Whether ``workload`` holds ``obj``, whose controller chain is ``chain``: ``obj`` is the
    workload itself or the chain reaches it; else, only when the chain broke at an owner that
    cannot be read (a Job already garbage-collected), the operator's owner labels naming it
    (:func:`label_verdict`; they never count against a chain that resolves)."""
    top = self_ref(workload)
    if same_ref(self_ref(obj), top) or any(same_ref(ref, top) for ref in chain.refs):
        return True
    return chain.broken and label_verdict(obj, workload) is True


def is_owned_by(
    obj: Mapping[str, Any],
    workload: Mapping[str, Any],
    fetch: Callable[[OwnerRef], Mapping[str, Any] | None],
    *,
    cache: dict[OwnerRef, Mapping[str, Any] | None] | None = None,
) -> bool:
    """Whether ``workload`` holds ``obj`` (:func:`claims` of its :func:`walk_chain`)."""
    return claims(workload, obj, walk_chain(obj, fetch, cache=cache))


class _Index:
    """Objects of a file, by uid and by (group, kind, namespace, name)."""

    def __init__(self, objects: Iterable[Mapping[str, Any]]):
        self.by_uid: dict[str, Mapping[str, Any]] = {}
        self.by_name: dict[tuple[str, str, str, str], Mapping[str, Any]] = {}
        for obj in objects:
            ref = self_ref(obj)
            if ref.uid:
                self.by_uid[ref.uid] = obj
            self.by_name[(ref.group, ref.kind, ref.namespace or "", ref.name)] = obj

    def fetch(self, ref: OwnerRef) -> Mapping[str, Any] | None:
        if ref.uid and ref.uid in self.by_uid:
            return self.by_uid[ref.uid]
        found = self.by_name.get((ref.group, ref.kind, ref.namespace or "", ref.name))
        if found is not None and ref.uid:
            uid = self_ref(found).uid
            if uid and uid != ref.uid:
                return None  # a namesake, not the owner
        return found


#: the links of a file of pods only: every owner a pod names is missing from it
_NO_LINKS = _Index(())


#: candidate pods, and excluded pods with the reason
_Partition = tuple[list[Mapping[str, Any]], list[tuple[Mapping[str, Any], str]]]


def partition_pods(workload: Mapping[str, Any], objects: Iterable[Mapping[str, Any]]) -> _Partition:
    """Split a file's objects into candidate pods and excluded pods (with the reason).

    A pod is excluded only when its chain reaches, through the file's objects, a top owner
    other than ``workload`` — or names an object of the workload's own kind that is not it —,
    or when its operator's owner labels name another workload (:func:`label_verdict`).
    """
    found = _partition(workload, objects, False)
    assert found is not None  # only a strict pass gives up
    return found


def partition_listed(workload: Mapping[str, Any], objects: list[Any]) -> _Partition | None:
    """:func:`partition_pods` of a list whose items are all plain objects, none of them a list
    object (``items``): what ``plain_items`` would return as it is, so the caller need not
    copy the list through it first (a pass over every pod). None when some item is not such
    an object: ``plain_items`` converts and unwraps first then."""
    return _partition(workload, objects, True)


def _partition(
    workload: Mapping[str, Any], objects: Iterable[Any], strict: bool
) -> _Partition | None:
    top = self_ref(workload)
    candidates: list[Mapping[str, Any]] = []
    excluded: list[tuple[Mapping[str, Any], str]] = []
    links: list[Mapping[str, Any]] = []
    keep, kind = candidates.append, top.kind
    rule = OWNER_LABELS.get((top.group, kind))
    expected = expected_labels(top, rule) if rule is not None else ()
    kind_label = rule.kind if rule is not None else None
    kind_values = rule.kind_values if rule is not None else frozenset()
    # read twice when the file holds links (below): an iterator is read into a list first
    listed = objects if type(objects) is list else list(objects)
    # a few C-level passes over the whole list cost more than the loop below for the pods of
    # a small workload (a get row's JobSet: two pods); measured even at about 30 pods
    if len(listed) > _LOOP_AT_MOST:
        try:
            passed = _all_candidates(listed, kind, expected, kind_label, kind_values)
        except TypeError:  # an unhashable value where a set is made: the loop decides
            passed = False
        if passed:
            return list(listed), []
    # the label checker at first need (pods whose labels or metadata are not a plain object,
    # links): the loop reads a plain labels object itself
    check: Callable[[Any], tuple[bool | None, str]] | None = None
    # One pass that decides each pod as it comes, as if the file held nothing but pods (pods
    # listed from a cluster, most --pods files): a pod's references then prove something only
    # when they name an object of the workload's kind. The first other object changes that
    # for every pod, those before it too, so from then on the pods are only collected and
    # decided after the pass, by their chains through the links (_partition_linked).
    for o in listed:
        if type(o) is not dict:
            if strict:
                return None
            if not isinstance(o, Mapping):
                continue
        if o.get("kind") != "Pod" or (o.get("apiVersion") or "v1") != "v1":
            if strict and type(o.get("items")) is list:
                return None  # (maybe) a list object: plain_items unwraps it
            links.append(o)
            continue
        if links:
            continue
        meta = o.get("metadata")
        if type(meta) is not dict:  # a Mapping, or no metadata object: the rule as it reads
            check = check or label_checker(workload, top)
            reason = _pod_verdict(o, meta if isinstance(meta, Mapping) else None, top, check)
            if reason is None:
                keep(o)
            else:
                excluded.append((o, reason))
            continue
        reason = None
        refs = meta.get("ownerReferences")
        if refs and type(refs) is list:
            reached = False
            for r in refs:  # inlined: it runs per pod
                if type(r) is not dict or r.get("kind") == kind:
                    # (anything unreadable may name the workload's kind)
                    reason, reached = _chain_verdict(o, _NO_LINKS, top)
                    break
            if reached:
                keep(o)
                continue
        if reason is None and expected:
            # the chain does not resolve to the workload: the owner labels are the evidence
            # (check() inlined for a plain labels object: it runs per pod)
            labels = meta.get("labels")
            if type(labels) is dict:
                seen = False
                for key, wanted, what in expected:
                    value = labels.get(key)
                    if value is None:
                        continue
                    if value == wanted:  # (only a str equals a str): most pods' labels
                        seen = True
                    elif type(value) is str:
                        if wanted:
                            reason = f"its label {key}={value} names another {kind}{what}"
                            break
                        seen = True
                else:
                    if seen and kind_label is not None:
                        value = labels.get(kind_label)
                        if type(value) is str and value not in kind_values:
                            reason = (
                                f"its label {kind_label}={value} names a workload of another kind"
                            )
            elif (check := check or label_checker(workload, top)) is not None:
                by_labels, why = check(labels)
                if by_labels is False:
                    reason = why
        if reason is None:
            keep(o)
        else:
            excluded.append((o, reason))
    if links:
        pods = [o for o in listed if _is_pod(o)]
        return _partition_linked(pods, links, top, check or label_checker(workload, top))
    return candidates, excluded


#: the longest list :func:`_partition` decides by its loop alone, not :func:`_all_candidates`
_LOOP_AT_MOST = 16

#: ``dict.get`` unbound, for ``map`` over a list of plain objects
_GET = cast(Callable[[Any, str], Any], dict.get)
_NONE = type(None)
_DICT_OR_NONE = frozenset((dict, _NONE))


def _all_candidates(
    listed: list[Any],
    kind: str,
    expected: tuple[tuple[str, str, str], ...],
    kind_label: str | None,
    kind_values: frozenset[str],
) -> bool:
    """Whether :func:`_partition`'s loop would keep every item of ``listed`` without a word:
    all plain pods (``v1``), their metadata plain objects, no owner reference that is not an
    object or names the workload's kind, no owner label naming another workload. Decided in a
    few passes of C-level ``map``/``set`` over the whole list, not a Python step per pod (the
    pods of one workload listed from a cluster, nearly always); any other list (False, or
    TypeError on an unhashable value) is left to the loop, which finds what is odd."""
    n = len(listed)
    get = _GET
    if list(map(type, listed)).count(dict) != n:
        return False
    if list(map(get, listed, repeat("kind"))).count("Pod") != n:
        return False
    versions = list(map(get, listed, repeat("apiVersion")))
    if versions.count("v1") + versions.count(None) != n:
        return False  # (another falsy version is read as v1 too: the loop says so)
    metas = list(map(get, listed, repeat("metadata")))
    if list(map(type, metas)).count(dict) != n:
        return False
    # (no references, or an empty value, the loop ignores: only the rest is read)
    refs = list(filter(None, map(get, metas, repeat("ownerReferences"))))
    if refs and list(map(type, refs)).count(list) != len(refs):
        return False  # (a reference list that is not a list is ignored: the loop says so)
    items = list(chain.from_iterable(refs))
    if items:
        if list(map(type, items)).count(dict) != len(items):
            return False
        if kind in map(get, items, repeat("kind")):
            return False  # the chain decides
    if not expected:
        return True
    labels = list(map(get, metas, repeat("labels")))
    types = set(map(type, labels))
    if not _DICT_OR_NONE.issuperset(types):
        return False
    if _NONE in types:
        labels = list(filter(None, labels))  # (no labels, or none: no evidence)
    for key, wanted, _ in expected:
        # a string other than the workload's name or uid names another workload
        for value in set(map(get, labels, repeat(key))):
            if type(value) is str and value != wanted and wanted:
                return False
    if kind_label is not None:
        # a kind label naming another kind counts only where a name label was seen: the
        # loop decides such pods
        for value in set(map(get, labels, repeat(kind_label))):
            if type(value) is str and value not in kind_values:
                return False
    return True


def _is_pod(obj: Any) -> bool:
    """An object the pass decides as a pod (not a link)."""
    return (type(obj) is dict or isinstance(obj, Mapping)) and (
        obj.get("kind") == "Pod" and (obj.get("apiVersion") or "v1") == "v1"
    )


def _pod_verdict(
    obj: Mapping[str, Any],
    meta: Mapping[str, Any] | None,
    top: OwnerRef,
    check: Callable[[Any], tuple[bool | None, str]] | None,
) -> str | None:
    """Why a pod of a file of pods is not the workload's (None: a candidate), read as the rule
    states it: :func:`_partition`'s loop for a pod whose metadata is not a plain object."""
    refs = meta.get("ownerReferences") if meta is not None else None
    if refs and type(refs) is list:
        if any(type(r) is not dict or r.get("kind") == top.kind for r in refs):
            reason, reached = _chain_verdict(obj, _NO_LINKS, top)
            if reached:
                return None
            if reason is not None:
                return reason
    if check is not None:
        by_labels, why = check(meta.get("labels") if meta is not None else None)
        if by_labels is False:
            return why
    return None


def _partition_linked(
    pods: list[Mapping[str, Any]],
    links: list[Mapping[str, Any]],
    top: OwnerRef,
    check: Callable[[Any], tuple[bool | None, str]] | None,
) -> tuple[list[Mapping[str, Any]], list[tuple[Mapping[str, Any], str]]]:
    """:func:`partition_pods` of a file that holds other objects than pods: every pod with
    owner references is decided by its chain through them."""
    index = _Index(links)
    candidates: list[Mapping[str, Any]] = []
    excluded: list[tuple[Mapping[str, Any], str]] = []
    for obj in pods:
        meta = obj.get("metadata")
        if type(meta) is not dict and not isinstance(meta, Mapping):
            meta = None
        refs = meta.get("ownerReferences") if meta is not None else None
        reason: str | None = None
        if refs and type(refs) is list:
            reason, reached = _chain_verdict(obj, index, top)
            if reached:
                candidates.append(obj)
                continue
        if reason is None and check is not None:
            by_labels, why = check(meta.get("labels") if meta is not None else None)
            if by_labels is False:
                reason = why
        if reason is None:
            candidates.append(obj)
        else:
            excluded.append((obj, reason))
    return candidates, excluded


def _chain_verdict(obj: Mapping[str, Any], index: _Index, top: OwnerRef) -> tuple[str | None, bool]:
    """(why the chain rules the pod out or None, whether the chain reaches the workload)."""
    if controller_ref(obj) is None:
        return None, False
    chain = walk_chain(obj, index.fetch)
    if any(same_ref(ref, top) for ref in chain.refs):
        return None, True
    return _verdict(chain, top), False


def _verdict(chain: OwnerChain, top: OwnerRef) -> str | None:
    """None when the pod may belong to ``top``; else why it does not."""
    for ref in chain.refs:
        if same_ref(ref, top):
            return None
        if (ref.group, ref.kind) == (top.group, top.kind):
            return f"owned by another {ref.kind}: {ref.name}"
    if not chain.refs:
        return None  # a bare pod: a candidate
    if chain.broken:
        return None  # the chain leaves the file: it may still reach the workload
    # it ends at a top owner (or, as there, at a cycle or the depth limit) that is not ours
    last = chain.refs[-1].describe()
    if chain.end == CYCLE:
        return f"its owner chain loops back after {last}, not reaching {top.describe()}"
    if chain.end == DEPTH:
        return (
            f"its owner chain is longer than {MAX_DEPTH} (at {last}), not reaching {top.describe()}"
        )
    return f"its owner chain ends at {last}, not {top.describe()}"
