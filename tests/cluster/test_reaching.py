"""``ownership.reaching``: whether the objects a namespace's warnings concern belong to a
workload, for many at once (describe's events, issue 21 item 1). Its answers are those of
:func:`owner_chain` walked per object (each object and owner a GET), on every kind of chain the
owner rule meets: deep chains, the root in their middle, cycles, deleted owners, namesakes,
references without a uid, a cluster-scoped owner; its reads are a GET each for a few objects of
a kind on one level of the chains, one metadata-only list of the kind for more."""

from __future__ import annotations

from typing import Any

import pytest

from tests.cli.fake_cluster import FakeAPI, Res, obj, owner_ref, pod
from workload_map.cluster.ownership import (
    GETS_BEFORE_LIST,
    LISTED_PER_GET,
    OwnerReader,
    owner_chain,
    reaching,
)
from workload_map.engine.owners import TOP, OwnerRef, walk_chain
from workload_map.kube.client import Cluster

NS = "ml"
NODE = Res("", "v1", "Node", "nodes", namespaced=False)
METADATA = "application/json;as=PartialObjectMetadataList"


def _tangle(deployments: int) -> tuple[FakeAPI, list[dict[str, Any]]]:
    """Deployments -> ReplicaSets -> pods, plus every odd chain: a cycle, a deleted owner, a
    namesake of a deleted owner, an owner reference without a uid, mirror pods of Nodes."""
    api = FakeAPI().serve(NODE)
    named: list[dict[str, Any]] = []
    for i in range(deployments):
        deploy = obj("apps/v1", "Deployment", f"web-{i}", NS)
        rs = obj("apps/v1", "ReplicaSet", f"web-{i}-1", NS, owner=owner_ref(deploy))
        pods = [pod(f"web-{i}-1-{k}", rs, namespace=NS) for k in range(2)]
        api.add(deploy, rs, *pods)
        named += [deploy, rs, *pods]
    # a cycle: a owns b owns a, and a pod of b
    a = obj("apps/v1", "ReplicaSet", "loop-a", NS, uid="uid-loop-a")
    b = obj("apps/v1", "ReplicaSet", "loop-b", NS, uid="uid-loop-b", owner=owner_ref(a))
    a["metadata"]["ownerReferences"] = [owner_ref(b)]
    looped = pod("loop-0", b, namespace=NS)
    # a pod whose ReplicaSet is gone, and one whose owner's name is now another object's
    gone = obj("apps/v1", "ReplicaSet", "gone", NS)
    orphan = pod("orphan-0", gone, namespace=NS)
    namesake_of = obj("apps/v1", "ReplicaSet", "reborn", NS, uid="uid-old-reborn")
    reborn = obj("apps/v1", "ReplicaSet", "reborn", NS, uid="uid-new-reborn")
    stale = pod("stale-0", namesake_of, namespace=NS)
    # a reference without a uid (to the first Deployment's ReplicaSet)
    loose = pod("loose-0", None, namespace=NS)
    ref = owner_ref(named[1])
    del ref["uid"]
    loose["metadata"]["ownerReferences"] = [ref]
    api.add(a, b, looped, orphan, reborn, stale, loose)
    named += [a, b, looped, orphan, gone, reborn, stale, namesake_of, loose]
    # mirror pods: controlled by their (cluster-scoped) Node
    for i in range(GETS_BEFORE_LIST + 2):
        node = obj("v1", "Node", f"node-{i}", None)
        mirror = pod(f"etcd-node-{i}", node, namespace=NS)
        api.add(node, mirror)
        named += [mirror]
    return api, named


def _ref(o: dict[str, Any]) -> OwnerRef:
    meta = o["metadata"]
    return OwnerRef(o["apiVersion"], o["kind"], meta["name"], meta["uid"], NS)


def _one_by_one(api: FakeAPI, named: list[dict[str, Any]], root_uid: str) -> set[str]:
    """What describe's events did per warned object: a GET of it, then its owner chain."""
    cluster = Cluster(api)
    out: set[str] = set()
    for o in named:
        meta = o["metadata"]
        found = cluster.get_cached(o["apiVersion"], o["kind"], meta["name"], NS)
        if found is None or found["metadata"]["uid"] != meta["uid"]:
            continue
        if root_uid in owner_chain(cluster, found, stop=(root_uid,)).uids:
            out.add(meta["uid"])
    return out


@pytest.mark.parametrize("deployments", [1, 12])
def test_reaching_answers_as_each_objects_owner_chain(deployments: int) -> None:
    api, named = _tangle(deployments)
    roots = {o["metadata"]["uid"] for o in named} | {"uid-loop-a", "uid-replicaset-gone"}
    for root in sorted(roots):
        expected = _one_by_one(api, named, root)
        got = reaching(Cluster(api), NS, [_ref(o) for o in named], root)
        assert got == expected, root
    # the cases meant: a Deployment reaches its pods through their ReplicaSet, a cycle's
    # members reach each other, a deleted owner (or one replaced by a namesake) is reached by
    # the reference naming it but nothing is read above it
    refs = [_ref(o) for o in named]
    assert {"uid-pod-web-0-1-1", "uid-replicaset-web-0-1"} <= reaching(
        Cluster(api), NS, refs, "uid-deployment-web-0"
    )
    assert reaching(Cluster(api), NS, refs, "uid-loop-a") == {"uid-loop-b", "uid-pod-loop-0"}
    assert reaching(Cluster(api), NS, refs, "uid-old-reborn") == {"uid-pod-stale-0"}
    assert reaching(Cluster(api), NS, refs, "uid-replicaset-gone") == {"uid-pod-orphan-0"}
    assert reaching(Cluster(api), NS, refs, "uid-new-reborn") == set()


def _reads(api: FakeAPI) -> tuple[list[str], list[str]]:
    """(the GETs by name, the kinds listed as metadata) the fake answered."""
    # a GET by name has no query and a name after the plural (discovery's paths are shorter)
    gets = [p.rsplit("/", 2)[-2] for p, q, _ in api.calls if not q and p.count("/") >= 4]
    # a one-object list counts the kind first (limit=1)
    lists = [
        p.rsplit("/", 1)[-1] for p, q, a in api.calls if a and METADATA in a and q["limit"] != "1"
    ]
    return gets, lists


def test_many_objects_of_a_kind_on_a_level_are_one_list() -> None:
    api, named = _tangle(12)  # 24 pods, 12 ReplicaSets, 12 Deployments (+ the odd ones)
    pods = [o for o in named if o["kind"] == "Pod" and o["metadata"]["name"].startswith("web")]
    api.calls.clear()
    reaching(Cluster(api), NS, [_ref(o) for o in pods], "uid-deployment-web-3")
    gets, lists = _reads(api)
    assert gets == []  # not 24 + 12 + 12 GETs
    assert lists == ["pods", "replicasets", "deployments"]


def test_a_few_of_a_big_namespace_are_a_get_each() -> None:
    """More than GETS_BEFORE_LIST wanted, but the namespace holds more than LISTED_PER_GET
    times as many of the kind: counted, then a GET each (not a list of the namespace)."""
    api, named = _tangle(12)
    wanted = [o for o in named if o["kind"] == "Pod"][: GETS_BEFORE_LIST + 1]
    for i in range(LISTED_PER_GET * len(wanted)):
        api.add(pod(f"crowd-{i}", None, namespace=NS))
    api.calls.clear()
    cluster = Cluster(api)
    assert reaching(cluster, NS, [_ref(o) for o in wanted], "uid-deployment-web-0") == {
        "uid-pod-web-0-1-0",
        "uid-pod-web-0-1-1",
    }
    gets, lists = _reads(api)
    assert gets.count("pods") == len(wanted) and "pods" not in lists
    counted = [p.rsplit("/", 1)[-1] for p, q, _ in api.calls if q.get("limit") == "1"]
    assert counted == ["pods"]  # the ReplicaSets above: 5 of them, GETs without asking


def test_few_objects_are_a_get_each() -> None:
    api, named = _tangle(3)
    pods = [o for o in named if o["kind"] == "Pod" and o["metadata"]["name"].startswith("web")]
    api.calls.clear()
    found = reaching(Cluster(api), NS, [_ref(o) for o in pods[:2]], "uid-deployment-web-0")
    assert found == {"uid-pod-web-0-1-0", "uid-pod-web-0-1-1"}
    gets, lists = _reads(api)
    assert lists == []
    # the shared ReplicaSet and the Deployment above it read once (a chain is walked whole)
    assert gets == ["pods", "pods", "replicasets", "deployments"]


def test_a_reader_walks_each_chain_once_for_every_root() -> None:
    """The workloads of one ``describe TYPE`` ask about the same objects: with one reader,
    the second asks nothing of the server, and each answer is its own root's."""
    api, named = _tangle(12)
    pods = [o for o in named if o["kind"] == "Pod" and o["metadata"]["name"].startswith("web")]
    cluster = Cluster(api)
    owners = OwnerReader(cluster, NS)
    refs = [_ref(o) for o in pods]
    assert reaching(cluster, NS, refs, "uid-deployment-web-1", owners=owners) == {
        "uid-pod-web-1-1-0",
        "uid-pod-web-1-1-1",
    }
    before = len(api.calls)
    assert reaching(cluster, NS, refs, "uid-replicaset-web-2-1", owners=owners) == {
        "uid-pod-web-2-1-0",
        "uid-pod-web-2-1-1",
    }
    assert len(api.calls) == before


def test_a_listed_cluster_scoped_owner_is_found() -> None:
    """Past GETS_BEFORE_LIST Nodes, the owners of mirror pods are one list of Nodes, whose
    objects have no namespace: the walk still finds them (its chain ends at the top, not at a
    missing owner)."""
    api, named = _tangle(1)
    mirrors = [o for o in named if o["metadata"]["name"].startswith("etcd-")]
    owners = OwnerReader(Cluster(api), NS)
    owners.expect(mirrors)
    chains = [walk_chain(m, owners) for m in mirrors]
    assert [c.end for c in chains] == [TOP] * len(mirrors)
    assert _reads(api)[1] == ["nodes"]
