"""Owner chains on a live cluster: a workload's pods, and whether an object is top-level.

The rule is the engine's (:func:`workload_map.engine.owners.walk_chain`, docs/engine.md *The
owner rule*): a pod belongs to a workload when its controller chain reaches the workload, or
when the chain broke at an owner that cannot be read and the operator's owner labels name it;
an object is top-level when no covered workload type is up its chain. Here the owners are read
through the :class:`Cluster`, each fetched once and cached there.
"""

from __future__ import annotations

from collections.abc import Callable, Container, Iterable, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

from workload_map.engine.owner_labels import OWNER_LABELS
from workload_map.engine.owners import (
    MAX_DEPTH,
    MISSING,
    STOPPED,
    TOP,
    OwnerChain,
    OwnerRef,
    controller_ref,
    group_of,
    is_owner,
    walk_chain,
)
from workload_map.engine.partition import claims
from workload_map.kube.client import Cluster
from workload_map.kube.errors import ApiError, Gone, NotFound
from workload_map.kube.pager import METADATA_LIST

if TYPE_CHECKING:
    from workload_map.model import Karta

__all__ = [
    "GETS_BEFORE_LIST",
    "GETS_OF_MEMBERS",
    "LISTED_PER_GET",
    "Chain",
    "OwnerReader",
    "PodIndex",
    "PodQuery",
    "claims",
    "find_pods",
    "owner_chain",
    "owning_workload",
    "pod_path",
    "pod_query",
    "pods_by_owner",
    "reaching",
    "selector_string",
    "selects",
]

#: an object's controller chain (the engine's :class:`~workload_map.engine.owners.OwnerChain`)
Chain = OwnerChain


def _uid(obj: dict[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("uid") or "")


def _namespace(obj: dict[str, Any]) -> str | None:
    ns = (obj.get("metadata") or {}).get("namespace")
    return ns if isinstance(ns, str) else None


def _fetch(cluster: Cluster, namespace: str | None) -> Callable[[OwnerRef], dict[str, Any] | None]:
    """Owners through the cluster's cache of fetched objects (each read once)."""

    def fetch(ref: OwnerRef) -> dict[str, Any] | None:
        return cluster.get_cached(ref.api_version, ref.kind, ref.name, namespace)

    return fetch


def owner_chain(
    cluster: Cluster,
    obj: dict[str, Any],
    namespace: str | None = None,
    *,
    stop: Container[str] = (),
) -> Chain:
    """``obj``'s controller chain through the cluster's cached owners, ending early at a uid in
    ``stop`` (nothing above it is read)."""
    namespace = namespace if namespace is not None else _namespace(obj)
    if not stop:
        return walk_chain(obj, _fetch(cluster, namespace))
    return walk_chain(
        obj, _fetch(cluster, namespace), until=lambda ref: ref.uid is not None and ref.uid in stop
    )


#: after this many owners of one kind and namespace read one GET at a time, the rest of that
#: kind is read in one metadata-only list (a chain walk over a namespace's unlabelled pods
#: needs many owners; a workload's own pods need two or three)
GETS_BEFORE_LIST = 8
#: a GET costs about what listing this many objects' metadata does (docs/cli.md: a GET or a
#: field-selected list 2-3 ms; the metadata of 40k pods 2.7 s and 0.6 s of CPU, a GET ~0.4 ms)
LISTED_PER_GET = 30
#: members found in a metadata-only list are fetched one GET each up to this many; more are
#: read in one list selected by the labels they all share
GETS_OF_MEMBERS = 10


#: How a workload's pods are asked for: pods matching ``selector`` are candidates (read in
#: full, then each checked by the owner rule); with ``complement``, the pods that lack the
#: identifying label (read as metadata only) are walked too, so a pod whose chain reaches the
#: workload counts without the label. ``source`` says where the selector comes from. (Fields
#: given as types: string annotations would each be a ForwardRef, see docs/cli.md#start-up.)
PodQuery = NamedTuple(  # noqa: UP014
    "PodQuery", [("selector", str), ("complement", str | None), ("source", str)]
)


def pod_query(workload: Mapping[str, Any]) -> PodQuery | None:
    """The label query that finds ``workload``'s pods without reading its namespace's, or None
    (then a metadata-only list of the namespace is walked).

    * The object's own ``.spec.selector`` when it is a label selector that selects its
      ``.spec.template`` (the convention of Deployment, ReplicaSet, StatefulSet, DaemonSet and
      Job: their controllers own only pods that match it and release any other, so it finds
      every pod whose chain reaches the object, labelled or not, in one list). A Job takes
      this way although its controller also stamps owner labels: its selector (the
      ``controller-uid`` the API server gives it) finds its pods that lost ``job-name`` too,
      where the owner label would need a second list of the pods without it.
    * Else the operator's owner labels (:data:`~workload_map.engine.owner_labels.OWNER_LABELS`,
      the ones the owner rule reads on a broken chain): its first name label equal to the
      workload's name, and the pods without that label as the complement.
    """
    group = group_of(str(workload.get("apiVersion") or ""))
    meta = workload.get("metadata")
    name = meta.get("name") if isinstance(meta, Mapping) else None
    if not isinstance(name, str) or not name:
        return None
    spec = workload.get("spec")
    if isinstance(spec, Mapping):
        selector = selector_string(spec.get("selector"))
        template = spec.get("template")
        tmeta = template.get("metadata") if isinstance(template, Mapping) else None
        labels = tmeta.get("labels") if isinstance(tmeta, Mapping) else None
        if selector and isinstance(labels, Mapping) and selects(spec.get("selector"), labels):
            return PodQuery(selector, None, ".spec.selector")
    rule = OWNER_LABELS.get((group, str(workload.get("kind") or "")))
    if rule is not None and rule.name and _label_value_ok(name):
        key = rule.name[0]
        return PodQuery(f"{key}={name}", f"!{key}", f"owner label {key}")
    return None


def pod_path(karta: Karta) -> str:
    """Which way :func:`find_pods` reads the pods of a definition's kind, in words (for
    docs/cli.md, which a test keeps equal to the catalog)."""
    root = karta.root
    gvk = root.kind
    if gvk is None:
        return "metadata"
    if (gvk.group, gvk.kind) == ("", "Pod"):
        return "itself"
    spec = root.spec_definition
    if spec is not None and spec.pod_template_spec_path == ".spec.template":
        return "`.spec.selector`"
    rule = OWNER_LABELS.get((gvk.group, gvk.kind))
    if rule is not None and rule.name:
        return f"label `{rule.name[0]}`"
    return "metadata"


def _label_value_ok(value: str) -> bool:
    """Whether a name can be a label value (63 characters at most; object names may be 253)."""
    return len(value) <= 63


def selector_string(selector: Any) -> str | None:
    """A ``LabelSelector`` (``matchLabels``, ``matchExpressions``) as a ``labelSelector`` query
    value; None when it is not one, is empty (it would select everything) or cannot be said."""
    if not isinstance(selector, Mapping):
        return None
    terms: list[str] = []
    match = selector.get("matchLabels") or {}
    if not isinstance(match, Mapping):
        return None
    for key, value in match.items():
        if not isinstance(key, str) or not isinstance(value, str):
            return None
        terms.append(f"{key}={value}")
    exprs = selector.get("matchExpressions") or []
    if not isinstance(exprs, list):
        return None
    for expr in exprs:
        if not isinstance(expr, Mapping):
            return None
        key, op, values = expr.get("key"), expr.get("operator"), expr.get("values") or []
        if not isinstance(key, str) or not isinstance(values, list):
            return None
        if not all(isinstance(v, str) for v in values):
            return None
        if op == "In" and values:
            terms.append(f"{key} in ({','.join(values)})")
        elif op == "NotIn" and values:
            terms.append(f"{key} notin ({','.join(values)})")
        elif op == "Exists":
            terms.append(key)
        elif op == "DoesNotExist":
            terms.append(f"!{key}")
        else:
            return None
    return ",".join(terms) or None


def selects(selector: Any, labels: Mapping[str, Any]) -> bool:
    """Whether a ``LabelSelector`` matches ``labels`` (as the API server evaluates it)."""
    if not isinstance(selector, Mapping):
        return False
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    for expr in selector.get("matchExpressions") or []:
        key, op = expr.get("key"), expr.get("operator")
        values = expr.get("values") or []
        present = key in labels
        if op == "In" and not (present and labels[key] in values):
            return False
        if op == "NotIn" and present and labels[key] in values:
            return False
        if op == "Exists" and not present:
            return False
        if op == "DoesNotExist" and present:
            return False
    return True


class OwnerReader:
    """Owner-chain links of one namespace (None: of all): what the cluster has already read
    (the listed workloads), else a GET each (cached on the cluster) for the first
    :data:`GETS_BEFORE_LIST` of a kind, then that kind's metadata-only list, read once. A kind
    that may not be listed stays one GET per owner.

    With ``selector`` (a workload's owner label), that list is of the kind's objects bearing
    the label, whole (their selectors are read), and an owner it lacks is a GET: the
    namespace's other objects of the kind are not read."""

    def __init__(
        self, cluster: Cluster, namespace: str | None, selector: str | None = None
    ) -> None:
        self.cluster = cluster
        self.namespace = namespace
        self.selector = selector
        self._gets: dict[tuple[str, str], int] = {}
        self._lists: dict[tuple[str, str], dict[tuple[str, str], dict[str, Any]] | None] = {}
        self._cluster_scoped: set[tuple[str, str]] = set()
        #: per object uid, the uids of its whole chain (empty: gone), walked by reaching
        self.walked: dict[str, tuple[str, ...]] = {}

    def __call__(self, ref: OwnerRef) -> dict[str, Any] | None:
        namespace = self.namespace if self.namespace is not None else ref.namespace
        cluster = self.cluster
        if cluster.has_cached(ref.api_version, ref.kind, ref.name, namespace):
            return cluster.get_cached(ref.api_version, ref.kind, ref.name, namespace)
        kind = (ref.api_version, ref.kind)
        listed = self._lists.get(kind)
        if listed is None and kind not in self._lists:
            if self._gets.get(kind, 0) >= GETS_BEFORE_LIST:
                listed = self._list(kind)
        if listed is not None:
            # a cluster-scoped owner (the Node of a mirror pod) is listed without a namespace
            scope = "" if kind in self._cluster_scoped else namespace or ""
            found = listed.get((scope, ref.name))
            if found is not None or self.selector is None:
                return found
        self._gets[kind] = self._gets.get(kind, 0) + 1
        return cluster.get_cached(ref.api_version, ref.kind, ref.name, namespace)

    def expect(self, objs: Iterable[Mapping[str, Any]]) -> None:
        """Know ahead which owners a walk over ``objs`` asks for first: a kind with more than
        :data:`GETS_BEFORE_LIST` of them not yet read is read in its list at the first ask,
        not after that many GETs (a listed namespace's pods say which owners their chains
        start at: the Jobs of 20 JobSets are one list, not 8 GETs and a list; each request is
        a round trip and ~1.5M instructions of a live ``get``, docs/cli.md)."""
        self.expect_refs([controller_ref(obj) for obj in objs])

    def expect_refs(self, refs: Iterable[OwnerRef | None], *, weigh: bool = False) -> None:
        """:meth:`expect` of the objects whose controller references these are.

        ``weigh``: a kind with more than :data:`GETS_BEFORE_LIST` of them is listed only
        when the namespace holds at most :data:`LISTED_PER_GET` times as many objects of
        it (asked first by a one-object list, which says how many remain: a request as
        cheap as a GET), else each is a GET (and the kind is never listed by this reader):
        20 pods wanted of a namespace of 40k are 20 GETs, not a list of 40k."""
        wanted: dict[tuple[str, str], set[tuple[str, str]]] = {}
        cluster = self.cluster
        for ref in refs:
            if ref is None:
                continue
            namespace = self.namespace if self.namespace is not None else ref.namespace
            if cluster.has_cached(ref.api_version, ref.kind, ref.name, namespace):
                continue
            wanted.setdefault((ref.api_version, ref.kind), set()).add((namespace or "", ref.name))
        for kind, names in wanted.items():
            if len(names) <= GETS_BEFORE_LIST or kind in self._lists:
                continue
            if weigh:
                held = self._count(kind)
                if held is None or held > LISTED_PER_GET * len(names):
                    self._lists[kind] = None  # a GET each
                    continue
            self._gets[kind] = max(self._gets.get(kind, 0), GETS_BEFORE_LIST)

    def _count(self, kind: tuple[str, str]) -> int | None:
        """How many objects of the kind the namespace holds (None: unknown), from a list of
        one object's metadata (from etcd, which counts the rest: ``remainingItemCount``)."""
        res = self.cluster.resource_for(*kind)
        if res is None:
            return None
        namespace = self.namespace if res.namespaced else None
        try:
            doc = self.cluster.transport.get(
                res.path(namespace), [("limit", "1")], accept=METADATA_LIST
            )
        except ApiError:
            return None
        meta = doc.get("metadata") if isinstance(doc, dict) else None
        items = doc.get("items") if isinstance(doc, dict) else None
        if not isinstance(meta, dict) or not isinstance(items, list):
            return None
        if not meta.get("continue"):
            return len(items)
        rest = meta.get("remainingItemCount")
        return len(items) + rest if isinstance(rest, int) else None

    def listed(self, kind: tuple[str, str]) -> dict[tuple[str, str], dict[str, Any]] | None:
        """The kind's list (read once): by ``apiVersion`` and kind; None if it may not be
        listed."""
        if kind in self._lists:
            return self._lists[kind]
        return self._list(kind)

    def _list(self, kind: tuple[str, str]) -> dict[tuple[str, str], dict[str, Any]] | None:
        res = self.cluster.resource_for(*kind)
        found: dict[tuple[str, str], dict[str, Any]] | None = None
        if res is not None and not res.namespaced:
            self._cluster_scoped.add(kind)
        if res is not None:
            try:
                found = {}
                for o in self.cluster.iter_list(
                    res,
                    self.namespace,
                    label_selector=self.selector,
                    resource_version="0",
                    metadata_only=self.selector is None,
                ):
                    meta = o["metadata"]
                    found[(str(meta.get("namespace") or ""), str(meta.get("name")))] = o
                    if self.selector is not None:
                        self.cluster.remember(o)  # whole: any later walk reads it there
            except ApiError:
                found = None  # may not list it: a GET per owner, as before
        self._lists[kind] = found
        return found


def find_pods(cluster: Cluster, workload: dict[str, Any]) -> list[dict[str, Any]]:
    """The pods whose controller chain reaches ``workload`` (a bare Pod is its own pod), and
    those whose chain breaks at a deleted owner while their operator's owner labels name
    ``workload`` (:func:`claims`).

    The namespace's pods are not all read: where :func:`pod_query` has a label query, the
    matching pods are read and checked, plus (owner labels) the metadata of the pods without
    the label; otherwise the metadata of every pod of the namespace is walked. Either way
    only the members are read in full. Owners are read through :class:`OwnerReader`."""
    if workload.get("apiVersion") == "v1" and workload.get("kind") == "Pod":
        return [workload]
    root_uid = _uid(workload)
    namespace = _namespace(workload)
    pods_res = cluster.resource_for("v1", "Pod")
    if pods_res is None or not root_uid:
        return []
    owners = OwnerReader(cluster, namespace)

    def member(pod: dict[str, Any]) -> bool:
        chain = walk_chain(
            pod, owners, until=lambda ref: ref.uid is not None and ref.uid == root_uid
        )
        return claims(workload, pod, chain)

    query = pod_query(workload)
    walks: list[str | None] = [None]  # without a query: the whole namespace
    if query is not None:
        found: list[dict[str, Any]] = []
        chains: list[Chain] = []
        labelled = list(
            cluster.iter_list(
                pods_res, namespace, label_selector=query.selector, resource_version="0"
            )
        )
        # their owners (a JobSet's Jobs) by GET, or past GETS_BEFORE_LIST of a kind by one
        # list of that kind's objects labelled as the pods are, never the namespace's all
        ahead = (
            owners if query.complement is None else OwnerReader(cluster, namespace, query.selector)
        )
        ahead.expect(labelled)
        if ahead is not owners:
            # the pods' own controllers (a JobSet's Jobs) bearing the label: one list, read
            # whole, that the walk reads instead of a GET each and that finds those none of
            # whose pods kept the label (_labelled_children)
            refs = [controller_ref(pod) for pod in labelled]
            for kind in {(r.api_version, r.kind) for r in refs if r is not None}:
                if (group_of(kind[0]), kind[1]) in SELECTING:
                    ahead.listed(kind)
        for pod in labelled:
            chain = walk_chain(
                pod, ahead, until=lambda ref: ref.uid is not None and ref.uid == root_uid
            )
            if claims(workload, pod, chain):
                found.append(pod)
                chains.append(chain)
        if query.complement is None:
            return found
        children = _children_selectors(
            chains, root_uid, _labelled_children(ahead, chains, root_uid)
        )
        walks = (
            [f"{sel},{query.complement}" for sel in children]
            if children is not None
            else [query.complement]
        )
    else:
        found = []
    metas = [
        m
        for walked in walks
        for m in cluster.iter_list(
            pods_res, namespace, label_selector=walked, resource_version="0", metadata_only=True
        )
        if member(m)
    ]
    if not metas:
        return found
    return _merge(found, _in_full(cluster, pods_res, namespace, _once_each(metas)))


#: built-in controllers that own only the pods their ``.spec.selector`` matches: they adopt
#: and release pods by it (Kubernetes' ``ControllerRefManager``), so their selector finds
#: every pod they own, whatever else its labels say
SELECTING = frozenset(
    {
        ("batch", "Job"),
        ("apps", "ReplicaSet"),
        ("apps", "StatefulSet"),
        ("apps", "DaemonSet"),
        ("", "ReplicationController"),
    }
)
#: at most this many selector lists in place of the list of the pods without the owner label
#: (each list of pods costs the API server a scan of the namespace's pods, docs/cli.md)
CHILD_LISTS = 2


def _labelled_children(
    owners: OwnerReader, chains: list[Chain], root_uid: str
) -> list[dict[str, Any]]:
    """The controllers of the kinds met on the labelled pods' chains (:data:`SELECTING`)
    that bear the workload's owner label and are owned by an owner met above them: one list
    of that kind, by the label (:meth:`OwnerReader._list`, shared with the owners' walk), so a
    Job of the JobSet none of whose pods kept the label is still asked for by its selector."""
    parents: dict[tuple[str, str], set[str]] = {}
    for chain in chains:
        refs = chain.refs
        for i, ref in enumerate(refs[:-1]):
            if ref.uid is not None and ref.uid == root_uid:
                break
            parent = refs[i + 1].uid
            if parent is not None and (group_of(ref.api_version), ref.kind) in SELECTING:
                parents.setdefault((ref.api_version, ref.kind), set()).add(parent)
    out: list[dict[str, Any]] = []
    for kind, uids in parents.items():
        listed = owners.listed(kind)
        for obj in (listed or {}).values():
            controller = controller_ref(obj)
            if controller is not None and controller.uid in uids:
                out.append(obj)
    return out


def _children_selectors(
    chains: list[Chain], root_uid: str, labelled: Iterable[dict[str, Any]] = ()
) -> list[str] | None:
    """The label selectors that find the pods of the workload's own controllers (its Jobs,
    ReplicaSets, StatefulSets: :data:`SELECTING`) met on the chains of its labelled pods, and
    of ``labelled`` (those bearing its owner label, :func:`_labelled_children`), merged into
    ``key in (...)`` where they are one label each; None when a chain gives no such
    controller or one whose selector cannot be read (then the pods without the owner label
    are all walked, as before).

    A pod of the workload without its owner label is, through its controller's chain, a pod
    of one of these controllers, which owns it only while the pod matches its selector; a
    controller that lost the owner label and none of whose pods kept it is not known here
    (docs/cli.md)."""
    found: dict[str, Mapping[str, Any]] = {}
    for chain in chains:
        # the owners read, one per reference; a broken chain's missing owner owns no pods
        # (those it had count by their labels, and the label list has them)
        for ref, owner in zip(chain.refs, chain.owners, strict=False):
            if ref.uid is not None and ref.uid == root_uid:
                break
            if ref.uid is not None and (group_of(ref.api_version), ref.kind) in SELECTING:
                found.setdefault(ref.uid, owner)
    if not found:
        return None
    for obj in labelled:
        found.setdefault(_uid(obj), obj)
    terms: list[frozenset[str]] = []
    for owner in found.values():
        spec = owner.get("spec")
        # a controller read as metadata only (past GETS_BEFORE_LIST of its kind) has no spec
        selector = selector_string(spec.get("selector")) if isinstance(spec, Mapping) else None
        if selector is None:
            return None
        # a set-based term holds commas of its own: such a selector is kept whole
        terms.append(frozenset([selector] if "(" in selector else selector.split(",")))
    # a selector holding all of another's terms selects fewer pods: the other finds them too
    kept = sorted({t for t in terms if not any(o < t for o in terms)}, key=sorted)
    single: dict[str, set[str]] = {}
    out: list[str] = []
    for t in kept:
        key, eq, value = next(iter(t)).partition("=") if len(t) == 1 else ("", "", "")
        if eq and key and not key.endswith("!") and "(" not in key:
            single.setdefault(key, set()).add(value.removeprefix("="))
        else:
            out.append(",".join(sorted(t)))
    merged = [
        f"{key}={next(iter(values))}"
        if len(values) == 1
        else f"{key} in ({','.join(sorted(values))})"
        for key, values in sorted(single.items())
    ]
    out = merged + out
    return out if len(out) <= CHILD_LISTS else None


def _once_each(objs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Objects found by several lists, once each (by uid)."""
    return list({_uid(o): o for o in objs}.values())


def _merge(first: list[dict[str, Any]], more: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Both lists' pods once each, ordered by name (as one list of the namespace gives them)."""
    by_uid = {_uid(p): p for p in first}
    for pod in more:
        by_uid.setdefault(_uid(pod), pod)
    return sorted(by_uid.values(), key=lambda p: str((p.get("metadata") or {}).get("name")))


def _in_full(
    cluster: Cluster, pods_res: Any, namespace: str | None, metas: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """The whole pods of these metadata-only ones: a GET each when few, else one list selected
    by the labels they share (then a GET for any it missed); a pod deleted meanwhile is gone."""
    wanted = {_uid(m): m for m in metas}
    out: list[dict[str, Any]] = []
    if len(metas) > GETS_OF_MEMBERS:
        shared = _shared_labels(metas)
        if shared:
            selector = ",".join(f"{k}={v}" for k, v in sorted(shared.items()))
            for pod in cluster.iter_list(
                pods_res, namespace, label_selector=selector, resource_version="0"
            ):
                if wanted.pop(_uid(pod), None) is not None:
                    out.append(pod)
    for meta in wanted.values():
        name = str(meta["metadata"].get("name") or "")
        try:
            pod = cluster.get(pods_res, name, namespace)
        except NotFound:
            continue
        if _uid(pod) == _uid(meta):  # not a namesake made since the list
            out.append(pod)
    return out


def _shared_labels(objs: list[dict[str, Any]]) -> dict[str, str]:
    shared: dict[str, str] | None = None
    for obj in objs:
        labels = (obj.get("metadata") or {}).get("labels")
        items = {
            k: v for k, v in (labels or {}).items() if isinstance(k, str) and isinstance(v, str)
        }
        shared = items if shared is None else {k: v for k, v in shared.items() if items.get(k) == v}
        if not shared:
            return {}
    return shared or {}


class PodIndex:
    """One pod list shared by many workloads: each pod under its own uid and every uid of its
    controller chain, plus the pods whose chain broke, which :meth:`pods_of` gives to the
    workload their owner labels name (as :func:`find_pods` does for one workload)."""

    def __init__(self) -> None:
        self._pods: list[dict[str, Any]] = []
        self._chains: list[Chain] = []
        self._by_uid: dict[str, list[int]] = {}
        self._broken: dict[str | None, list[int]] = {}
        # the last chain added and its uids (the pods of one controller share one chain)
        self._last: tuple[Chain | None, tuple[str, ...]] = (None, ())

    def add(self, pod: dict[str, Any], chain: Chain) -> None:
        at = len(self._pods)
        self._pods.append(pod)
        self._chains.append(chain)
        last, uids = self._last
        if chain is not last:
            uids = chain.uids
            self._last = (chain, uids)
        own = _uid(pod)
        by_uid = self._by_uid
        # a bare Pod listed as a workload is its own (only) pod; a uid twice on one chain (a
        # cycle's end) counts once
        for uid in (own, *uids) if own else uids:
            found = by_uid.get(uid)
            if found is None:
                by_uid[uid] = [at]
            elif found[-1] != at:
                found.append(at)
        if chain.end == MISSING:  # chain.broken
            self._broken.setdefault(_namespace(pod), []).append(at)

    def pods_of(self, workload: dict[str, Any]) -> list[dict[str, Any]]:
        """The pods that belong to ``workload``, in list order."""
        found = set(self._by_uid.get(_uid(workload), ()) if _uid(workload) else ())
        for at in self._broken.get(_namespace(workload), ()):
            if at not in found and claims(workload, self._pods[at], self._chains[at]):
                found.add(at)
        return [self._pods[at] for at in sorted(found)]

    def __len__(self) -> int:
        return len(self._pods)


def reaching(
    cluster: Cluster,
    namespace: str,
    refs: Iterable[OwnerRef],
    root_uid: str,
    *,
    owners: OwnerReader | None = None,
) -> set[str]:
    """The uids of the objects of ``namespace`` named by ``refs`` (each with its uid) that
    exist with that uid and whose controller chain reaches ``root_uid``: what
    :func:`owner_chain` of each, stopped at the root, says, for many objects at once (the
    objects a namespace's warnings concern: 400 pending pods of other JobSets were 400 GETs,
    then one per Job and one per JobSet above them).

    The objects and their owners are read as :class:`OwnerReader` reads owners, a level of the
    chains at a time, so that a kind with more than :data:`GETS_BEFORE_LIST` unread objects
    on one level is one metadata-only list of the namespace's objects of that kind, read
    before the first of them is needed; fewer are a GET each, as before. Each object's chain
    is walked whole, once per reader (a walk stopped at the root is the start of the whole
    walk, ending at the root's reference: the root is on one iff on the other), so
    ``owners`` (an :class:`OwnerReader` of ``namespace``) shares the reads and the walks
    between calls: the workloads of one ``describe TYPE`` ask about the same warnings."""
    owners = owners if owners is not None else OwnerReader(cluster, namespace)
    walked = owners.walked
    level = list({ref.uid: ref for ref in refs if ref.uid and ref.uid not in walked}.values())
    named = list(level)
    seen = {ref.uid for ref in level}
    for depth in range(MAX_DEPTH + 1):
        if not level:
            break
        owners.expect_refs(level, weigh=True)
        above: list[OwnerRef] = []
        for ref in level:
            found = owners(ref)
            # the object itself: gone, or a namesake made since the event, reaches nothing
            if found is None or (
                _uid(found) != ref.uid if depth == 0 else not is_owner(ref, found)
            ):
                continue
            up = controller_ref(found)
            # read ahead what the walks below read, each owner once (a shared Job, a cycle)
            if up is not None and up.uid is not None and up.uid not in seen:
                seen.add(up.uid)
                above.append(up)
        level = above
    for ref in named:
        found = owners(ref)
        ok = found is not None and _uid(found) == ref.uid
        walked[str(ref.uid)] = walk_chain(found, owners).uids if ok and found else ()
    return {str(ref.uid) for ref in refs if ref.uid and root_uid in walked.get(ref.uid, ())}


def owning_workload(
    cluster: Cluster,
    obj: dict[str, Any],
    is_covered: Callable[[str, str], bool],
    on_unreadable: Callable[[dict[str, Any]], None] | None = None,
) -> dict[str, Any] | None:
    """The reference to the nearest covered owner up the controller chain; None if top-level.

    ``is_covered(apiVersion, kind)`` says whether a type is a workload type. A covered owner
    counts without being read (one we may not list, or one gone whose dependents are about to
    be collected); an owner that cannot be read before any covered one keeps ``obj``
    top-level and is reported through ``on_unreadable``.
    """
    chain = walk_chain(
        obj,
        _fetch(cluster, _namespace(obj)),
        until=lambda ref: is_covered(ref.api_version, ref.kind),
    )
    if not chain.refs:
        return None
    last = chain.refs[-1]
    if chain.end == STOPPED:
        return _ref_dict(last)
    if chain.broken and on_unreadable is not None:
        on_unreadable(_ref_dict(last))
    return None


def _ref_dict(ref: OwnerRef) -> dict[str, Any]:
    """The ``ownerReferences`` entry naming ``ref`` (the chain follows controllers only)."""
    out: dict[str, Any] = {"apiVersion": ref.api_version, "kind": ref.kind, "name": ref.name}
    if ref.uid is not None:
        out["uid"] = ref.uid
    out["controller"] = True
    return out


class _Chains:
    """:func:`walk_chain` of many pods, walked once per controller: the pods of one Job share
    its chain above them. A pod's chain is the chain walked from another pod of the same
    controller reference when that walk could not have gone otherwise: it ended at a top
    owner or at one it could not read (not at a cycle, the depth bound or ``until``), every
    reference on it has a uid (a reference without one is compared with the object itself),
    and neither pod's uid is one of the chain's (the walk stops at an owner naming the object
    itself). The owners come from one reader, which answers a reference the same way each
    time (fetched once, listed once); ``tests/cluster/test_shared_chains.py`` holds the index
    to one walked pod by pod."""

    def __init__(self, owners: Callable[[OwnerRef], dict[str, Any] | None]) -> None:
        self.owners = owners
        self._shared: dict[OwnerRef, tuple[Chain, frozenset[str]]] = {}

    def of(self, pod: dict[str, Any], ref: OwnerRef | None) -> Chain:
        """``pod``'s chain; ``ref`` is its :func:`controller_ref` (the caller has read it)."""
        if ref is None or ref.uid is None:
            return walk_chain(pod, self.owners)
        own = _uid(pod)
        found = self._shared.get(ref)
        if found is not None and own not in found[1]:
            return found[0]
        chain = walk_chain(pod, self.owners)
        if found is None and chain.end in (TOP, MISSING):
            uids = frozenset(r.uid for r in chain.refs if r.uid is not None)
            if len(uids) == len(chain.refs) and own not in uids:
                self._shared[ref] = (chain, uids)
        return chain


def pods_by_owner(cluster: Cluster, namespace: str | None, *, chunk_size: int = 500) -> PodIndex:
    """Every pod of ``namespace`` (None: all) indexed by its controller chain, so many
    workloads share one pod list (``index.pods_of(workload)``). Owners are read as
    :class:`OwnerReader` reads them (the Jobs of 10k JobSets: one metadata-only list, not 20k
    GETs); a list that outlives its continue token is read again once.

    The pods are read as :func:`find_pods` reads a workload's, from the API server's watch
    cache (``resourceVersion=0``), which serves the whole list at once: paged from etcd (what
    a list without a version is), 8000 pods took the v1.37 API server 3.7 s in 16 pages of 500
    where the cache answered in 1.1 s (docs/cli.md)."""
    pods_res = cluster.resource_for("v1", "Pod")
    if pods_res is None:
        return PodIndex()
    owners = OwnerReader(cluster, namespace)
    for attempt in (1, 2):
        index = PodIndex()
        try:
            # listed before the chains are walked: the owners they start at are then known
            # (the index keeps every pod anyway)
            pods = list(
                cluster.iter_list(pods_res, namespace, chunk_size=chunk_size, resource_version="0")
            )
            # each pod's controller reference read once, for both (8000 pods: 8000 fewer)
            refs = [controller_ref(pod) for pod in pods]
            owners.expect_refs(refs)
            chains = _Chains(owners)
            for pod, ref in zip(pods, refs, strict=True):
                index.add(pod, chains.of(pod, ref))
        except Gone:
            # the list outlived its continue token (the API server compacted meanwhile)
            if attempt == 2:
                raise
            continue
        break
    return index
