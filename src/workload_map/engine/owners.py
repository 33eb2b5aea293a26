"""Owner chains: which top-level object a pod (or any object) belongs to.

Two uses. Live, the CLI walks controller owner references through the API (``walk_chain`` with
a fetch function, cached). Offline (``wlmap describe --pods FILE``), every Pod in the file is a
candidate and every other object in it only serves as a chain link: a pod is left out when its
chain resolves, through objects of the file, to a different top owner (``partition_pods``), or
when its operator's owner labels name a different workload.

Owner labels are the evidence that is left when a chain does not resolve (a ``--pods`` file
without the intermediate Jobs, a Job already garbage-collected): each operator stamps its
pods with the name (some also the uid) of the workload they serve, e.g. JobSet's
``jobset.sigs.k8s.io/jobset-name`` and ``jobset-uid``. :data:`OWNER_LABELS` lists them per
workload kind, from the operators' sources; no library collects them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final, Literal

from workload_map.model.views import view

__all__ = [
    "CYCLE",
    "DEPTH",
    "MAX_DEPTH",
    "MISSING",
    "OWNER_LABELS",
    "STOPPED",
    "TOP",
    "ChainEnd",
    "OwnerChain",
    "OwnerLabels",
    "OwnerRef",
    "chain_uids",
    "claims",
    "controller_ref",
    "covered_owner",
    "group_of",
    "has_covered_owner",
    "is_owned_by",
    "is_owner",
    "label_verdict",
    "partition_listed",
    "partition_pods",
    "top_covered",
    "top_owner",
    "walk_chain",
]

MAX_DEPTH = 16


@view
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


@view
class OwnerLabels:
    """The labels an operator puts on the pods of one workload kind.

    ``name``/``uid``: labels whose value is the workload's name / uid; ``kind``: a label whose
    value, when present, tells which kind of workload the pod serves (one of ``kind_values``).
    """

    name: tuple[str, ...] = ()
    uid: tuple[str, ...] = ()
    kind: str | None = None
    kind_values: frozenset[str] = frozenset()


def _kubeflow(*operators: str) -> OwnerLabels:
    return OwnerLabels(
        name=("training.kubeflow.org/job-name",),
        kind="training.kubeflow.org/operator-name",
        kind_values=frozenset(operators),
    )


#: (group, kind) of a workload -> the owner labels its operator stamps on its pods
OWNER_LABELS: dict[tuple[str, str], OwnerLabels] = {
    ("jobset.x-k8s.io", "JobSet"): OwnerLabels(
        name=("jobset.sigs.k8s.io/jobset-name",), uid=("jobset.sigs.k8s.io/jobset-uid",)
    ),
    # the trainer creates a JobSet of the TrainJob's own name (its uid is the JobSet's)
    ("trainer.kubeflow.org", "TrainJob"): OwnerLabels(name=("jobset.sigs.k8s.io/jobset-name",)),
    ("leaderworkerset.x-k8s.io", "LeaderWorkerSet"): OwnerLabels(
        name=("leaderworkerset.sigs.k8s.io/name",)
    ),
    ("kubeflow.org", "PyTorchJob"): _kubeflow("pytorchjob-controller"),
    ("kubeflow.org", "TFJob"): _kubeflow("tfjob-controller"),
    ("kubeflow.org", "XGBoostJob"): _kubeflow("xgboostjob-controller"),
    ("kubeflow.org", "PaddleJob"): _kubeflow("paddlejob-controller"),
    ("kubeflow.org", "JAXJob"): _kubeflow("jaxjob-controller"),
    ("kubeflow.org", "MPIJob"): _kubeflow("mpijob-controller", "mpi-operator"),
    ("batch", "Job"): OwnerLabels(
        name=("batch.kubernetes.io/job-name", "job-name"),
        uid=("batch.kubernetes.io/controller-uid", "controller-uid"),
    ),
    ("ray.io", "RayCluster"): OwnerLabels(name=("ray.io/cluster",)),
    ("ray.io", "RayJob"): OwnerLabels(
        name=("ray.io/originated-from-cr-name",),
        kind="ray.io/originated-from-crd",
        kind_values=frozenset({"RayJob"}),
    ),
    ("ray.io", "RayService"): OwnerLabels(
        name=("ray.io/originated-from-cr-name",),
        kind="ray.io/originated-from-crd",
        kind_values=frozenset({"RayService"}),
    ),
    ("batch.volcano.sh", "Job"): OwnerLabels(name=("volcano.sh/job-name",)),
    ("sparkoperator.k8s.io", "SparkApplication"): OwnerLabels(
        name=("sparkoperator.k8s.io/app-name",)
    ),
    ("serving.knative.dev", "Service"): OwnerLabels(name=("serving.knative.dev/service",)),
    ("serving.kserve.io", "InferenceService"): OwnerLabels(
        name=("serving.kserve.io/inferenceservice",)
    ),
    ("workload.codeflare.dev", "AppWrapper"): OwnerLabels(
        name=("workload.codeflare.dev/appwrapper",)
    ),
    ("argoproj.io", "Workflow"): OwnerLabels(name=("workflows.argoproj.io/workflow",)),
    ("tekton.dev", "PipelineRun"): OwnerLabels(name=("tekton.dev/pipelineRun",)),
    ("tekton.dev", "TaskRun"): OwnerLabels(name=("tekton.dev/taskRun",)),
    ("kubeflow.org", "Notebook"): OwnerLabels(name=("notebook-name",)),
}


def label_verdict(pod: Mapping[str, Any], workload: Mapping[str, Any]) -> bool | None:
    """What the pod's owner labels say about ``workload``'s claim on it.

    True: they name this workload; False: they name a different one (another name or uid, or
    a workload of another kind of the same operator); None: no owner labels of the workload's
    kind (no evidence either way).
    """
    check = _label_checker(workload)
    if check is None:
        return None
    meta = pod.get("metadata")
    return check(meta.get("labels") if isinstance(meta, Mapping) else None)[0]


_NO_EVIDENCE: tuple[bool | None, str] = (None, "")
_NAMED: tuple[bool | None, str] = (True, "")


def _label_checker(
    workload: Mapping[str, Any], top: OwnerRef | None = None
) -> Callable[[Any], tuple[bool | None, str]] | None:
    """:func:`label_verdict`, with the reason, of a pod's ``metadata.labels`` (any value) for
    one workload (``top``: its reference, when the caller has it): its rule is looked up once,
    as a file of many pods is checked pod by pod. None when the workload's kind has no owner
    labels (no evidence, whatever the labels)."""
    top = top if top is not None else _self_ref(workload)
    rule = OWNER_LABELS.get((top.group, top.kind))
    if rule is None:
        return None
    kind = top.kind
    expected = _expected_labels(top, rule)
    kind_label, kind_values = rule.kind, rule.kind_values

    def check(labels: Any) -> tuple[bool | None, str]:
        if type(labels) is not dict and not isinstance(labels, Mapping):
            return _NO_EVIDENCE
        seen = False
        for key, wanted, what in expected:
            value = labels.get(key)
            if type(value) is str:
                if wanted and value != wanted:
                    return False, f"its label {key}={value} names another {kind}{what}"
                seen = True
        if not seen:
            return _NO_EVIDENCE
        if kind_label is not None:
            value = labels.get(kind_label)
            if type(value) is str and value not in kind_values:
                return False, f"its label {kind_label}={value} names a workload of another kind"
        return _NAMED

    return check


def _expected_labels(top: OwnerRef, rule: OwnerLabels) -> tuple[tuple[str, str, str], ...]:
    """(label, the value the workload's pods carry or "" when unknown, what the label names)
    of the rule, name labels first: one loop per pod."""
    return (
        *((key, top.name, "") for key in rule.name),
        *((key, top.uid or "", " (uid)") for key in rule.uid),
    )


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


#: how a walk ended (:attr:`OwnerChain.end`)
TOP: Final = "top"  # at an object without a controller: the last reference is the top owner
MISSING: Final = (
    "missing"  # the next owner cannot be read, or the object of its name has another uid
)
CYCLE: Final = "cycle"  # the next controller is already on the chain (or is the object itself)
DEPTH: Final = "depth"  # MAX_DEPTH references walked and the last owner has a controller still
STOPPED: Final = "stopped"  # the caller's ``until`` held for the last reference

ChainEnd = Literal["top", "missing", "cycle", "depth", "stopped"]


@view
class OwnerChain:
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
        top = _self_ref(workload)
        return any(_same(ref, top) for ref in self.refs)


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
    me = _self_ref(obj)
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
    return chain.refs[-1] if chain.refs else _self_ref(obj)


def claims(workload: Mapping[str, Any], obj: Mapping[str, Any], chain: OwnerChain) -> bool:
    """Whether ``workload`` holds ``obj``, whose controller chain is ``chain``: ``obj`` is the
    workload itself or the chain reaches it; else, only when the chain broke at an owner that
    cannot be read (a Job already garbage-collected), the operator's owner labels naming it
    (:func:`label_verdict`; they never count against a chain that resolves)."""
    top = _self_ref(workload)
    if _same(_self_ref(obj), top) or any(_same(ref, top) for ref in chain.refs):
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


#: the links of a file of pods only: every owner a pod names is missing from it
_NO_LINKS = _Index(())


def _same(ref: OwnerRef, top: OwnerRef) -> bool:
    if ref.uid and top.uid:
        return ref.uid == top.uid
    return (ref.group, ref.kind, ref.name) == (top.group, top.kind, top.name) and (
        not ref.namespace or not top.namespace or ref.namespace == top.namespace
    )


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
    top = _self_ref(workload)
    check = _label_checker(workload, top)
    candidates: list[Mapping[str, Any]] = []
    excluded: list[tuple[Mapping[str, Any], str]] = []
    links: list[Mapping[str, Any]] = []
    keep, kind = candidates.append, top.kind
    rule = OWNER_LABELS.get((top.group, kind))
    expected = _expected_labels(top, rule) if rule is not None else ()
    kind_label = rule.kind if rule is not None else None
    kind_values = rule.kind_values if rule is not None else frozenset()
    # read twice when the file holds links (below): an iterator is read into a list first
    listed = objects if type(objects) is list else list(objects)
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
            elif check is not None:
                by_labels, why = check(labels)
                if by_labels is False:
                    reason = why
        if reason is None:
            keep(o)
        else:
            excluded.append((o, reason))
    if links:
        pods = [o for o in listed if _is_pod(o)]
        return _partition_linked(pods, links, top, check)
    return candidates, excluded


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
    if any(_same(ref, top) for ref in chain.refs):
        return None, True
    return _verdict(chain, top), False


def _verdict(chain: OwnerChain, top: OwnerRef) -> str | None:
    """None when the pod may belong to ``top``; else why it does not."""
    for ref in chain.refs:
        if _same(ref, top):
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
