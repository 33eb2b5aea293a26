"""One owner rule, every consumer: a table of the cases the six copies of the rule disagreed on.

The rule is the engine's (:func:`workload_map.engine.owners.walk_chain`, docs/engine.md, *The
owner rule*): only a reference with ``controller: true`` is an object's controller; the chain
ends at a top owner, at an owner that cannot be read (or whose uid is not the reference's), at
a cycle or after ``MAX_DEPTH`` links. Each row runs through every consumer of the rule, and each
consumer must give the answer the row states:

* the live readers (the engine's ``is_owned_by``, live ``describe``'s ``find_pods``, ``get``'s
  pod index, the exporter's and web view's inventory) hold the pod for the workloads its chain
  reaches; only when the chain breaks at an owner that cannot be read do the operator's owner
  labels decide;
* the file reader (``describe -f --pods``) does the same, except that a chain leaving the file
  with no owner labels keeps the pod (a file is a partial dump);
* the pod webhook and the gang controller act on a chain that reaches its top: a broken chain
  makes the webhook admit the pod unchanged and the controller wait for the owner.

A second table asks the same of workloads: whether ``get``, the inventory and the gang
controller see a workload as top-level (no covered owner up its controller chain).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import pytest

from tests.cli.fake_cluster import JOBSET, FakeAPI, Res
from tests.gangs.cases import example, opted
from tests.gangs.test_admission import cache_with
from workload_map.cluster.inventory import Inventory
from workload_map.cluster.ownership import find_pods, owning_workload, pods_by_owner
from workload_map.engine.owners import (
    MAX_DEPTH,
    MISSING,
    OwnerRef,
    chain_uids,
    covered_owner,
    has_covered_owner,
    top_covered,
    walk_chain,
)
from workload_map.engine.partition import is_owned_by, partition_pods
from workload_map.gangs.admission import PodAdmitter
from workload_map.gangs.config import GangConfig
from workload_map.gangs.controller import GangController
from workload_map.gangs.operator import GangRuntime
from workload_map.kube.client import Cluster

Obj = dict[str, Any]
NS = "default"
LINK = Res("example.com", "v1", "Link", "links")  # a kind no definition covers
TRAINJOB = Res("trainer.kubeflow.org", "v1alpha1", "TrainJob", "trainjobs")
JOBSET_NAME = "jobset.sigs.k8s.io/jobset-name"
JOBSET_UID = "jobset.sigs.k8s.io/jobset-uid"


def _jobset(name: str) -> Obj:
    obj = opted(example("jobset")[0])
    obj["metadata"].update(name=name, namespace=NS, uid=f"u-{name}")
    return obj


TRAIN, OTHER = _jobset("train"), _jobset("other")


def ref(obj: Obj, controller: Any = True, uid: str | None = None) -> Obj:
    out = {
        "apiVersion": obj["apiVersion"],
        "kind": obj["kind"],
        "name": obj["metadata"]["name"],
        "uid": uid or obj["metadata"]["uid"],
    }
    if controller is not None:
        out["controller"] = controller
    return out


def link(name: str, *refs: Obj, uid: str | None = None) -> Obj:
    meta: Obj = {"name": name, "namespace": NS, "uid": uid or f"u-{name}"}
    if refs:
        meta["ownerReferences"] = list(refs)
    return {"apiVersion": LINK.api_version, "kind": "Link", "metadata": meta}


def pod(*refs: Obj, labels: dict[str, str] | None = None) -> Obj:
    meta: Obj = {"name": "p", "namespace": NS, "uid": "u-p", "labels": dict(labels or {})}
    if refs:
        meta["ownerReferences"] = list(refs)
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": {"containers": [{"name": "c", "image": "x"}]},
    }


def chain_to(top: Obj, length: int, prefix: str) -> list[Obj]:
    """``length`` links, the last controlled by ``top``; the first is the pod's controller."""
    links: list[Obj] = []
    above = top
    for i in reversed(range(length)):
        links.insert(0, link(f"{prefix}{i}", ref(above)))
        above = links[0]
    return links


@dataclass(frozen=True)
class Case:
    """A pod, the objects the cluster (or the file) holds besides the two JobSets, and which
    of them holds the pod by the rule: ``expect`` for the live readers, ``file`` when the file
    reader differs, ``broken`` when the chain breaks (the gang consumers then wait)."""

    name: str
    pod: Obj
    objects: list[Obj] = field(default_factory=list)
    expect: str | None = None
    broken: bool = False
    #: the workloads the file reader keeps the pod for, when not just ``expect``'s: a pod
    #: with no controller, or whose chain leaves the file without owner labels, is no
    #: evidence either way and stays a candidate of any workload (its selectors decide)
    file: frozenset[str] | None = None

    @property
    def expect_file(self) -> frozenset[str]:
        if self.file is not None:
            return self.file
        return frozenset({self.expect} if self.expect else ())

    @property
    def expect_gangs(self) -> str | None:
        return None if self.broken else self.expect


L1 = link("l1", ref(TRAIN))
L2 = link("l2", ref(OTHER))
A = link("a", ref(link("b"), uid="u-b"))
B = link("b", ref(A))
MINE = {JOBSET_NAME: "train", JOBSET_UID: "u-train"}
OLD_TRAIN = {JOBSET_NAME: "train", JOBSET_UID: "u-train-before"}
GONE = link("gone", ref(TRAIN))

ANY = frozenset({"train", "other"})

CASES = [
    Case("controller", pod(ref(L1)), [L1], expect="train"),
    Case("bare pod", pod(), [], file=ANY),
    # only a flagged reference is a controller: one or several unflagged ones name no owner
    Case("one unflagged reference", pod(ref(L1, controller=None)), [L1], file=ANY),
    Case(
        "several unflagged",
        pod(ref(L1, controller=None), ref(L2, controller=None)),
        [L1, L2],
        file=ANY,
    ),
    Case("controller: false", pod(ref(L1, controller=False)), [L1], file=ANY),
    Case('controller: "true" (a string)', pod(ref(L1, controller="true")), [L1], file=ANY),
    Case(
        "the flagged one after an unflagged one",
        pod(ref(L2, controller=None), ref(L1)),
        [L1, L2],
        expect="train",
    ),
    Case("two flagged: the first", pod(ref(L1), ref(L2)), [L1, L2], expect="train"),
    # a KServe pod is 6 links below its InferenceService: deeper than the old limit of 6
    Case(
        "deep chain (9 links)",
        pod(ref(chain_to(TRAIN, 8, "d")[0])),
        chain_to(TRAIN, 8, "d"),
        "train",
    ),
    Case(
        f"longer than {MAX_DEPTH} links",
        pod(ref(chain_to(TRAIN, MAX_DEPTH + 2, "x")[0])),
        chain_to(TRAIN, MAX_DEPTH + 2, "x"),
    ),
    # a cycle ends the chain as a top owner would: not broken, so labels do not decide
    Case("cycle", pod(ref(A), labels=MINE), [A, B]),
    Case("missing owner, labels name it", pod(ref(GONE), labels=MINE), [], "train", broken=True),
    Case("missing owner, no labels", pod(ref(GONE)), [], None, broken=True, file=ANY),
    # the owner was deleted and a namesake made since (by a new JobSet train): not the owner
    Case(
        "owner of another uid",
        pod(ref(GONE, uid="u-gone-before"), labels=OLD_TRAIN),
        [GONE],
        None,
        broken=True,
    ),
]


def _present(case: Case) -> list[Obj]:
    return [TRAIN, OTHER, *case.objects]


def _names(pods: list[Obj]) -> bool:
    return any(p["metadata"]["name"] == "p" for p in pods)


def _holder(held: Callable[[Obj], bool]) -> str | None:
    found = [w["metadata"]["name"] for w in (TRAIN, OTHER) if held(w)]
    assert len(found) <= 1, found
    return found[0] if found else None


# -- the consumers ----------------------------------------------------------------------------


def engine_live(case: Case) -> str | None:
    by_name = {(o["kind"], o["metadata"]["name"]): o for o in _present(case)}
    return _holder(lambda w: is_owned_by(case.pod, w, lambda r: by_name.get((r.kind, r.name))))


def describe_file(case: Case) -> frozenset[str]:
    objects = copy.deepcopy([*case.objects, case.pod])
    return frozenset(
        w["metadata"]["name"]
        for w in (TRAIN, OTHER)
        if _names([dict(p) for p in partition_pods(w, objects)[0]])
    )


def _api(case: Case) -> FakeAPI:
    return FakeAPI(namespace=NS).serve(JOBSET, LINK).add(*_present(case), case.pod)


def describe_live(case: Case) -> str | None:
    cluster = Cluster(_api(case))
    return _holder(lambda w: _names(find_pods(cluster, w)))


def get_pods(case: Case) -> str | None:
    index = pods_by_owner(Cluster(_api(case)), NS)
    return _holder(lambda w: _names(index.pods_of(w)))


def inventory(case: Case) -> str | None:
    inv = Inventory(evaluate=lambda d, w, p: {})
    inv.apply_documents(copy.deepcopy([*_present(case), case.pod]))

    def held(w: Obj) -> bool:
        entry = inv.entry(w["metadata"]["uid"])
        return entry is not None and _names([dict(p) for p in entry.pods])

    return _holder(held)


def webhook(case: Case) -> str | None:
    admitter = PodAdmitter(cache_with(*_present(case)), miss_wait=0.0)
    decision = admitter.decide(copy.deepcopy(case.pod))
    return decision.workload.name if decision.workload is not None else None


def _controller(objects: list[Obj]) -> GangController:
    runtime = GangRuntime(GangConfig(), miss_wait=0.0)
    for obj in objects:
        runtime.cache.upsert(copy.deepcopy(obj))
    args = SimpleNamespace(gang_missed_member_mode="lower", gang_resync_period=60.0)
    return GangController(runtime, SimpleNamespace(args=args))  # type: ignore[arg-type]


def gang_controller(case: Case) -> str | None:
    key, _ = _controller(_present(case)).workload_of(case.pod)
    return key.split("|")[-1] if key else None


READERS = [engine_live, describe_live, get_pods, inventory]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_every_consumer_gives_the_rules_answer(case: Case) -> None:
    answers: dict[str, object] = {f.__name__: f(case) for f in READERS}
    answers["describe_file"] = describe_file(case)
    answers["webhook"] = webhook(case)
    answers["gang_controller"] = gang_controller(case)
    expected: dict[str, object] = {f.__name__: case.expect for f in READERS}
    expected["describe_file"] = case.expect_file
    expected["webhook"] = expected["gang_controller"] = case.expect_gangs
    assert answers == expected


# -- top-level workloads ----------------------------------------------------------------------

OUTER = {
    "apiVersion": TRAINJOB.api_version,
    "kind": "TrainJob",
    "metadata": {"name": "outer", "namespace": NS, "uid": "u-outer"},
    "spec": {},
}
M1 = link("m1", ref(OUTER))


def inner(*refs: Obj) -> Obj:
    obj = _jobset("inner")
    if refs:
        obj["metadata"]["ownerReferences"] = list(refs)
    return obj


@dataclass(frozen=True)
class Nested:
    """A JobSet ``inner``, the objects the cluster holds besides it, and whether it is
    top-level: no reference up its controller chain names a covered kind, whether that owner
    is read or is the one where the chain breaks (hidden from us, or gone and its dependents
    about to be collected)."""

    name: str
    workload: Obj
    objects: list[Obj]
    top_level: bool


NESTED = [
    Nested("under a covered owner", inner(ref(M1)), [OUTER, M1], False),
    Nested("unflagged reference", inner(ref(M1, controller=None)), [OUTER, M1], True),
    Nested("controller: false", inner(ref(M1, controller=False)), [OUTER, M1], True),
    Nested(
        "deep", inner(ref(chain_to(OUTER, 8, "n")[0])), [OUTER, *chain_to(OUTER, 8, "n")], False
    ),
    Nested("its covered owner is missing", inner(ref(OUTER)), [], False),
    Nested("its covered owner has another uid", inner(ref(OUTER, uid="u-old")), [OUTER], False),
    Nested("an uncovered owner is missing", inner(ref(M1)), [OUTER], True),
    Nested("cycle below", inner(ref(A)), [OUTER, A, B], True),
]


def _top_level_get(case: Nested) -> bool:
    api = FakeAPI(namespace=NS).serve(JOBSET, LINK, TRAINJOB)
    api.add(*case.objects, case.workload)
    covered = {("jobset.x-k8s.io", "JobSet"), ("trainer.kubeflow.org", "TrainJob")}

    def is_covered(api_version: str, kind: str) -> bool:
        return (api_version.rpartition("/")[0], kind) in covered

    return owning_workload(Cluster(api), case.workload, is_covered) is None


def _top_level_inventory(case: Nested) -> bool:
    inv = Inventory(evaluate=lambda d, w, p: {})
    inv.apply_documents(copy.deepcopy([*case.objects, case.workload]))
    entry = inv.entry("u-inner")
    assert entry is not None
    return entry.top_level


def _top_level_gangs(case: Nested) -> bool:
    return not _controller([*case.objects, case.workload]).nested(case.workload)


@pytest.mark.parametrize("case", NESTED, ids=[c.name for c in NESTED])
def test_get_the_inventory_and_the_gang_controller_agree_on_top_level(case: Nested) -> None:
    answers = {
        "get": _top_level_get(case),
        "inventory": _top_level_inventory(case),
        "gang_controller": _top_level_gangs(case),
    }
    assert answers == dict.fromkeys(answers, case.top_level)


# -- the gang consumers' lean walks are walk_chain's ----------------------------------------

#: a chain of references without uids that loops (the cycle check by kind and name)
NO_UID = {
    "apiVersion": LINK.api_version,
    "kind": "Link",
    "metadata": {
        "name": "n1",
        "namespace": NS,
        "ownerReferences": [
            {"apiVersion": LINK.api_version, "kind": "Link", "name": "n2", "controller": True}
        ],
    },
}
NO_UID_2 = {
    "apiVersion": LINK.api_version,
    "kind": "Link",
    "metadata": {
        "name": "n2",
        "namespace": NS,
        "ownerReferences": [
            {"apiVersion": LINK.api_version, "kind": "Link", "name": "n1", "controller": True}
        ],
    },
}
WALKS = [
    *((c.name, c.pod, _present(c)) for c in CASES),
    *((f"workload: {c.name}", c.workload, [*c.objects, c.workload]) for c in NESTED),
    (
        "no uids, a cycle",
        pod({"apiVersion": LINK.api_version, "kind": "Link", "name": "n1", "controller": True}),
        [NO_UID, NO_UID_2],
    ),
    ("no uids, to a JobSet", pod({**ref(TRAIN), "uid": ""}), [TRAIN]),
]


@pytest.mark.parametrize(("obj", "objects"), [w[1:] for w in WALKS], ids=[w[0] for w in WALKS])
def test_the_lean_walks_answer_as_walk_chain(obj: Obj, objects: list[Obj]) -> None:
    """The gang webhook and controller walk with ``top_covered`` and ``has_covered_owner``, the
    inventory with ``chain_uids``, which build no chain: for every row of both tables they give
    what ``walk_chain`` gives."""
    by_name = {(o["kind"], o["metadata"]["name"]): o for o in objects}

    def fetch(r: OwnerRef) -> Obj | None:
        return by_name.get((r.kind, r.name))

    def covered_obj(o: Any) -> bool:
        return o["kind"] in ("JobSet", "TrainJob")

    def covered(r: OwnerRef) -> bool:
        return r.kind in ("JobSet", "TrainJob")

    chain = walk_chain(obj, fetch)
    tops = [o for o in chain.owners if covered_obj(o)]
    assert top_covered(obj, fetch, covered_obj) == (tops[-1] if tops else None, chain.missing)

    def covered_kind(api_version: str, kind: str) -> bool:
        return kind in ("JobSet", "TrainJob")

    assert has_covered_owner(obj, fetch, covered_kind) == (
        covered_owner(chain, covered) is not None
    )
    by_uid = {o["metadata"]["uid"]: o for o in objects if o["metadata"].get("uid")}
    chain = walk_chain(obj, by_uid)
    broken = chain.end == MISSING
    kept = chain.refs[:-1] if broken else chain.refs
    missing = (chain.refs[-1].uid or "") if broken else None
    assert chain_uids(obj, by_uid) == ([str(r.uid) for r in kept], missing)
