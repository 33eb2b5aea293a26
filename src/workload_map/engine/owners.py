"""Owner chains: which top-level object a pod (or any object) belongs to.

The one owner rule of the project: an object's controller (:func:`controller_ref`), its chain
of controllers upwards (:func:`walk_chain`, and the walks that ask one thing of a chain without
building it: :func:`top_covered`, :func:`has_covered_owner`, :func:`chain_uids`), and which of
its owners are covered (:func:`covered_owner`). Live, the CLI walks the chain through the API (a
fetch function, cached); offline, through the objects of a file. The evidence that is left when a
chain does not resolve, the operators' owner labels, is ``engine/owner_labels.py``; who holds a
pod, by its chain or else its labels, for one object or a whole file, ``engine/partition.py``.

``self_ref`` (an object's own reference) and ``same_ref`` (whether two references name one
object) are engine-internal, shared with those two modules: not in ``__all__``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final, Literal

from workload_map.model.views import View

__all__ = [
    "CYCLE",
    "DEPTH",
    "MAX_DEPTH",
    "MISSING",
    "STOPPED",
    "TOP",
    "ChainEnd",
    "OwnerChain",
    "OwnerRef",
    "chain_uids",
    "controller_ref",
    "covered_owner",
    "group_of",
    "has_covered_owner",
    "is_owner",
    "top_covered",
    "top_owner",
    "walk_chain",
]

MAX_DEPTH = 16


class OwnerRef(View):
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
    # type() first: isinstance against the Mapping ABC costs several times more per call,
    # and chains are walked per pod of a cluster
    return meta if type(meta) is dict or isinstance(meta, Mapping) else {}


def controller_ref(obj: Mapping[str, Any]) -> OwnerRef | None:
    """The object's controller: its first owner reference with ``controller: true``, else None.

    The one owner rule of the project, as Kubernetes' ``metav1.GetControllerOf``: references
    without the flag (or with ``controller: false``, or any value other than the JSON ``true``)
    name owners for garbage collection only, never the object's controller, however many there
    are. The API server admits at most one flagged reference; a file with several counts the
    first.
    """
    return _controller(_meta(obj))


def _controller(meta: Mapping[str, Any]) -> OwnerRef | None:
    """:func:`controller_ref` of an object's ``metadata``."""
    refs = meta.get("ownerReferences")
    if type(refs) is not list:
        return None
    for chosen in refs:
        if (type(chosen) is dict or isinstance(chosen, Mapping)) and chosen.get(
            "controller"
        ) is True:
            # inlined and positional: this runs per link of every pod's chain
            api_version, kind, name = (
                chosen.get("apiVersion"),
                chosen.get("kind"),
                chosen.get("name"),
            )
            uid, namespace = chosen.get("uid"), meta.get("namespace")
            return OwnerRef(
                api_version if type(api_version) is str else str(api_version or ""),
                kind if type(kind) is str else str(kind or ""),
                name if type(name) is str else str(name or ""),
                uid if type(uid) is str and uid else None,
                namespace if type(namespace) is str else None,
            )
    return None


def self_ref(obj: Mapping[str, Any]) -> OwnerRef:
    """The reference that names ``obj`` itself (its apiVersion, kind, name, uid, namespace)."""
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


def same_ref(ref: OwnerRef, top: OwnerRef) -> bool:
    """Whether ``ref`` names the object ``top`` names: by uid when both have one, else by
    group, kind and name, in the same namespace when both say one."""
    if ref.uid and top.uid:
        return ref.uid == top.uid
    return (ref.group, ref.kind, ref.name) == (top.group, top.kind, top.name) and (
        not ref.namespace or not top.namespace or ref.namespace == top.namespace
    )


#: how a walk ended (:attr:`OwnerChain.end`)
TOP: Final = "top"  # at an object without a controller: the last reference is the top owner
MISSING: Final = (
    "missing"  # the next owner cannot be read, or the object of its name has another uid
)
CYCLE: Final = "cycle"  # the next controller is already on the chain (or is the object itself)
DEPTH: Final = "depth"  # MAX_DEPTH references walked and the last owner has a controller still
STOPPED: Final = "stopped"  # the caller's ``until`` held for the last reference

ChainEnd = Literal["top", "missing", "cycle", "depth", "stopped"]


class OwnerChain(View):
    """An object's controller chain, nearest owner first (never the object itself).

    ``owners`` holds the owner objects read, one per reference, except that a chain ending
    ``missing`` has one reference more than owners: the owner that could not be read.
    """

    refs: tuple[OwnerRef, ...] = ()
    owners: tuple[Mapping[str, Any], ...] = ()
    end: str = TOP

    @property
    def broken(self) -> bool:
        """The walk stopped at an owner it could not read: only then may labels decide."""
        return self.end == MISSING

    @property
    def missing(self) -> OwnerRef | None:
        return self.refs[-1] if self.end == MISSING else None

    @property
    def uids(self) -> tuple[str, ...]:
        return tuple(r.uid for r in self.refs if r.uid)

    def reaches(self, workload: Mapping[str, Any]) -> bool:
        """Whether ``workload`` is one of the chain's owners (read or not)."""
        top = self_ref(workload)
        return any(same_ref(ref, top) for ref in self.refs)


def is_owner(ref: OwnerRef, found: Mapping[str, Any] | None) -> bool:
    """Whether ``found`` (the object a fetch returned for ``ref``) is that owner: an object of
    the same name with another uid is a namesake created after the owner went."""
    if found is None:
        return False
    if ref.uid is None:
        return True
    uid = _meta(found).get("uid")
    return type(uid) is not str or not uid or uid == ref.uid


def walk_chain(
    obj: Mapping[str, Any],
    fetch: Callable[[OwnerRef], Mapping[str, Any] | None] | dict[str, Any],
    *,
    until: Callable[[OwnerRef], bool] | None = None,
    max_depth: int = MAX_DEPTH,
    cache: dict[OwnerRef, Mapping[str, Any] | None] | None = None,
) -> OwnerChain:
    """``obj``'s controller chain (:func:`controller_ref` upwards), read through ``fetch``.

    ``fetch`` returns the owner object, or None when it is unknown or unreadable (or is a dict
    of the owners at hand by uid, as a watch cache keeps them); an object of
    another uid than the reference's is not the owner (:func:`is_owner`). The walk ends at an
    object without a controller (``top``), at an owner it cannot read (``missing``: that
    reference is kept as the chain's last), at a controller already on the chain (``cycle``:
    the chain keeps each owner once, and ends there as at a top owner), after ``max_depth``
    references (``depth``, likewise), or right after a reference for which ``until`` holds
    (``stopped``, without reading that owner: the caller knows enough). Pass the same
    ``cache`` dict for many objects to fetch each owner once (misses included).
    """
    by_uid: dict[str, Any] | None = None  # looked up inline: no call per link
    read: Callable[[OwnerRef], Mapping[str, Any] | None] | None = None
    if isinstance(fetch, dict):
        by_uid = fetch
    else:
        read = fetch
    if cache is not None:
        raw_fetch = read if read is not None else _by_uid(by_uid or {})
        by_uid = None

        def read(ref: OwnerRef) -> Mapping[str, Any] | None:
            if ref not in cache:
                cache[ref] = raw_fetch(ref)
            return cache[ref]

    refs: list[OwnerRef] = []
    owners: list[Mapping[str, Any]] = []
    # an owner is on the chain already when its uid is (the object's own included), or, for
    # a reference without a uid, when the object or a reference has its (group, kind, name)
    meta: Any = obj.get("metadata")
    if type(meta) is not dict and not isinstance(meta, Mapping):
        meta = {}
    # a list: chains are a few links long, where a list's scan beats building a set
    uids: list[Any] = [meta.get("uid")]
    end = TOP
    while True:
        ref = _controller(meta)
        if ref is None:
            break
        if (ref.uid in uids) if ref.uid is not None else _named(ref, obj, refs):
            end = CYCLE
            break
        if len(refs) >= max_depth:
            end = DEPTH
            break
        if ref.uid is not None:
            uids.append(ref.uid)
        refs.append(ref)
        if until is not None and until(ref):
            end = STOPPED
            break
        if read is None:
            found = by_uid.get(ref.uid) if by_uid is not None and ref.uid is not None else None
        else:
            found = read(ref)
        if found is None:
            end = MISSING
            break
        meta = found.get("metadata")
        if type(meta) is not dict and not isinstance(meta, Mapping):
            meta = {}
        if ref.uid is not None:  # an object of the owner's name and another uid: a namesake
            uid = meta.get("uid")
            if type(uid) is str and uid and uid != ref.uid:
                end = MISSING
                break
        owners.append(found)
    return OwnerChain(tuple(refs), tuple(owners), end)


def top_covered(
    obj: Mapping[str, Any],
    fetch: Callable[[OwnerRef], Mapping[str, Any] | None],
    covered: Callable[[Mapping[str, Any]], bool],
    *,
    max_depth: int = MAX_DEPTH,
) -> tuple[Mapping[str, Any] | None, OwnerRef | None]:
    """(the farthest owner read up ``obj``'s controller chain for which ``covered`` holds, or
    None; the reference of the owner the walk could not read, or None): the answer of
    ``walk_chain(obj, fetch)``'s ``owners`` and ``missing``, read on the way up.

    The gang webhook asks it per admitted pod and the gang controller per pod event, and
    they need nothing else of the chain: this walk builds no :class:`OwnerChain`, no tuples
    of references and owners, and asks ``covered`` once per owner read. The steps are
    :func:`walk_chain`'s (``test_owner_rule_table`` runs both consumers over its table, and
    ``test_owners`` compares the two walks case by case).
    """
    meta: Any = obj.get("metadata")
    if type(meta) is not dict and not isinstance(meta, Mapping):
        meta = {}
    uids: list[Any] = [meta.get("uid")]
    refs: list[OwnerRef] = []  # only a reference without a uid looks at them (a cycle check)
    found_covered: Mapping[str, Any] | None = None
    while True:
        ref = _controller(meta)
        if ref is None:
            break
        uid = ref.uid
        if (uid in uids) if uid is not None else _named(ref, obj, refs):
            break  # a cycle: it ends as at a top owner
        if len(refs) >= max_depth:
            break  # the depth limit: likewise
        if uid is not None:
            uids.append(uid)
        refs.append(ref)
        found = fetch(ref)
        if found is None:
            return found_covered, ref
        meta = found.get("metadata")
        if type(meta) is not dict and not isinstance(meta, Mapping):
            meta = {}
        if uid is not None:  # an object of the owner's name and another uid: a namesake
            other = meta.get("uid")
            if type(other) is str and other and other != uid:
                return found_covered, ref
        if covered(found):
            found_covered = found
    return found_covered, None


def chain_uids(
    obj: Mapping[str, Any], owners: Mapping[str, Mapping[str, Any]], *, max_depth: int = MAX_DEPTH
) -> tuple[list[str], str | None]:
    """(the uids of the owners read up ``obj``'s controller chain, nearest first; the uid of
    the reference where the chain broke, ``""`` for one without a uid, or None when it did
    not): ``walk_chain(obj, owners)`` for ``owners`` by uid (a watch cache), as uids.

    The inventory asks it per pod event and needs nothing else of the chain: this walk builds
    no references (a chain with a reference without a uid, which only files have, is left to
    :func:`walk_chain`). ``test_owner_rule_table`` compares it with :func:`walk_chain`.
    """
    meta: Any = obj.get("metadata")
    if type(meta) is not dict and not isinstance(meta, Mapping):
        meta = {}
    seen: list[Any] = [meta.get("uid")]
    path: list[str] = []
    while True:
        refs = meta.get("ownerReferences")
        if type(refs) is not list:
            return path, None
        for chosen in refs:  # the first flagged reference: _controller's rule, inlined
            if (type(chosen) is dict or isinstance(chosen, Mapping)) and chosen.get(
                "controller"
            ) is True:
                break
        else:
            return path, None
        uid = chosen.get("uid")
        if type(uid) is not str or not uid:
            chain = walk_chain(obj, owners if type(owners) is dict else dict(owners))
            broken = chain.end == MISSING
            kept = chain.refs[:-1] if broken else chain.refs
            return [str(r.uid) for r in kept], (chain.refs[-1].uid or "") if broken else None
        if uid in seen or len(path) >= max_depth:
            return path, None  # a cycle, or the depth limit: ends as at a top owner
        seen.append(uid)
        found = owners.get(uid)
        if found is None:
            return path, uid
        meta = found.get("metadata")
        if type(meta) is not dict and not isinstance(meta, Mapping):
            meta = {}
        other = meta.get("uid")
        if type(other) is str and other and other != uid:
            return path, uid  # a namesake of another uid: not the owner
        path.append(uid)


def has_covered_owner(
    obj: Mapping[str, Any],
    fetch: Callable[[OwnerRef], Mapping[str, Any] | None],
    covered: Callable[[str, str], bool],
    *,
    max_depth: int = MAX_DEPTH,
) -> bool:
    """Whether a reference up ``obj``'s controller chain names a covered kind (``covered``
    of its apiVersion and kind), read or not: whether :func:`covered_owner` finds one on
    ``walk_chain(obj, fetch, until=...)``, without building the chain. The owners from that
    reference up are not read.

    The gang controller asks it per workload of every resync, and the answer is nearly always
    in the first reference (a JobSet's Job): that one is read from the object's own
    ``ownerReferences`` without building an :class:`OwnerRef` (about half of the cost of
    the question); a chain that goes further walks as :func:`walk_chain`.
    """
    meta: Any = obj.get("metadata")
    if type(meta) is not dict and not isinstance(meta, Mapping):
        meta = {}
    entries = meta.get("ownerReferences")
    if type(entries) is not list:
        return False
    for chosen in entries:  # _controller's rule, without the OwnerRef
        if (type(chosen) is dict or isinstance(chosen, Mapping)) and chosen.get(
            "controller"
        ) is True:
            break
    else:
        return False
    uid = chosen.get("uid")
    own = meta.get("uid")
    if type(uid) is str and uid and uid != own and max_depth > 0:
        api_version, kind = chosen.get("apiVersion"), chosen.get("kind")
        if covered(
            api_version if type(api_version) is str else str(api_version or ""),
            kind if type(kind) is str else str(kind or ""),
        ):
            return True
    chain = walk_chain(obj, fetch, until=lambda ref: covered(ref.api_version, ref.kind))
    return chain.end == STOPPED


def _by_uid(owners: dict[str, Any]) -> Callable[[OwnerRef], Mapping[str, Any] | None]:
    def read(ref: OwnerRef) -> Mapping[str, Any] | None:
        return owners.get(ref.uid) if ref.uid is not None else None

    return read


def _named(ref: OwnerRef, obj: Mapping[str, Any], refs: list[OwnerRef]) -> bool:
    """Whether a reference without a uid names ``obj`` or an owner already on the chain."""
    key = (ref.group, ref.kind, ref.name)
    me = self_ref(obj)
    return (me.group, me.kind, me.name) == key or any(
        (r.group, r.kind, r.name) == key for r in refs
    )


def top_owner(
    obj: Mapping[str, Any],
    fetch: Callable[[OwnerRef], Mapping[str, Any] | None],
    *,
    cache: dict[OwnerRef, Mapping[str, Any] | None] | None = None,
) -> OwnerRef:
    """The top owner reached from ``obj`` (``obj`` itself when it has no controller)."""
    chain = walk_chain(obj, fetch, cache=cache)
    return chain.refs[-1] if chain.refs else self_ref(obj)


def covered_owner(
    chain: OwnerChain, covered: Callable[[OwnerRef], bool], *, top_most: bool = False
) -> OwnerRef | None:
    """The nearest (or, with ``top_most``, the farthest) reference of the chain for which
    ``covered`` holds; the reference of a ``missing`` owner is asked too (its kind is known)."""
    found: OwnerRef | None = None
    for ref in chain.refs:
        if covered(ref):
            if not top_most:
                return ref
            found = ref
    return found
