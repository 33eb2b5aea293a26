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
from typing import Any

from workload_map.model.views import view

__all__ = [
    "OWNER_LABELS",
    "OwnerLabels",
    "OwnerRef",
    "controller_ref",
    "group_of",
    "is_owned_by",
    "label_verdict",
    "partition_pods",
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
    workload: Mapping[str, Any],
) -> Callable[[Any], tuple[bool | None, str]] | None:
    """:func:`label_verdict`, with the reason, of a pod's ``metadata.labels`` (any value) for
    one workload: its rule is looked up once, as a file of many pods is checked pod by pod.
    None when the workload's kind has no owner labels (no evidence, whatever the labels)."""
    top = _self_ref(workload)
    rule = OWNER_LABELS.get((top.group, top.kind))
    if rule is None:
        return None
    kind = top.kind
    # (label, the value this workload's pods carry or "" when unknown, what the label names),
    # name labels first: one loop per pod
    expected = (
        *((key, top.name, "") for key in rule.name),
        *((key, top.uid or "", " (uid)") for key in rule.uid),
    )
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
    """Whether ``obj``'s controller chain reaches ``workload`` (live pod discovery).

    When the chain breaks before reaching a top owner (an owner that cannot be fetched, e.g. a
    Job already garbage-collected), the pod's owner labels decide (:func:`label_verdict`).
    """
    top = _self_ref(workload)
    chain = walk_chain(obj, fetch, cache=cache)
    if any(_same(ref, top) for ref in chain):
        return True
    if not chain:
        return False
    last = chain[-1]
    owner = cache[last] if cache is not None and last in cache else fetch(last)
    if owner is None:
        return label_verdict(obj, workload) is True
    return False


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
    other than ``workload`` — or names an object of the workload's own kind that is not it —,
    or when its operator's owner labels name another workload (:func:`label_verdict`).
    """
    pods: list[Mapping[str, Any]] = []
    links: list[Mapping[str, Any]] = []
    add_pod, add_link = pods.append, links.append
    for o in objects:
        if type(o) is dict or isinstance(o, Mapping):
            if o.get("kind") == "Pod" and (o.get("apiVersion") or "v1") == "v1":
                add_pod(o)
            else:
                add_link(o)
    index = _Index(links)
    top = _self_ref(workload)
    check = _label_checker(workload)
    candidates: list[Mapping[str, Any]] = []
    excluded: list[tuple[Mapping[str, Any], str]] = []
    keep = candidates.append
    kind = top.kind
    for obj in pods:
        meta = obj.get("metadata")
        if type(meta) is not dict and not isinstance(meta, Mapping):
            meta = None
        refs = meta.get("ownerReferences") if meta is not None else None
        reason: str | None = None
        # a bare pod, or (without other objects in the file) a chain that leaves the file at
        # once, is no evidence either way unless it names an object of the workload's kind
        if refs and type(refs) is list:
            named = bool(links)
            for r in () if named else refs:  # inlined: it runs per pod
                if type(r) is not dict or r.get("kind") == kind:
                    named = True  # (anything unreadable may name the workload's kind)
                    break
            if named:
                reason, reached = _chain_verdict(obj, index, top)
                if reached:
                    keep(obj)
                    continue
        if reason is None and check is not None:
            # the chain does not resolve to the workload: the owner labels are the evidence
            by_labels, why = check(meta.get("labels") if meta is not None else None)
            if by_labels is False:
                reason = why
        if reason is None:
            keep(obj)
        else:
            excluded.append((obj, reason))
    return candidates, excluded


def _chain_verdict(obj: Mapping[str, Any], index: _Index, top: OwnerRef) -> tuple[str | None, bool]:
    """(why the chain rules the pod out or None, whether the chain reaches the workload)."""
    if controller_ref(obj) is None:
        return None, False
    chain = walk_chain(obj, index.fetch)
    if any(_same(ref, top) for ref in chain):
        return None, True
    return _verdict(chain, top, index), False


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
