"""``pods_by_owner`` walks one chain per controller and gives it to the controller's other pods
(``ownership._Chains``): the index must be the one a walk of every pod gives, whatever the
chains hold: shared Jobs, Jobs gone (broken chains), owners without a uid, namesakes of another
uid, cycles through a pod's own uid or between owners, chains past the depth bound."""

from __future__ import annotations

import random
from typing import Any

import pytest

from tests.cli.fake_cluster import JOBSET, FakeAPI, obj, owner_ref, pod
from workload_map.cluster import ownership
from workload_map.cluster.ownership import OwnerReader, PodIndex, pods_by_owner
from workload_map.engine.owners import MAX_DEPTH, walk_chain
from workload_map.kube.client import Cluster

NS = "ml"


def _ref(o: dict[str, Any], *, uid: bool = True) -> dict[str, Any]:
    out = owner_ref(o)
    if not uid:
        out.pop("uid")
    return out


def _fleet(seed: int) -> tuple[FakeAPI, list[dict[str, Any]]]:
    rng = random.Random(seed)
    api = FakeAPI(namespace=NS).serve(JOBSET)
    workloads: list[dict[str, Any]] = []
    for w in range(rng.randint(1, 6)):
        js = obj("jobset.x-k8s.io/v1alpha2", "JobSet", f"js-{w}", NS)
        workloads.append(js)
        api.add(js)
        for j in range(rng.randint(1, 4)):
            job = obj("batch/v1", "Job", f"js-{w}-{j}", NS, owner=_ref(js))
            shape = rng.random()
            if shape < 0.15:
                pass  # the Job is gone: its pods' chains break
            elif shape < 0.25:  # a namesake: the Job of that name now has another uid
                api.add(obj("batch/v1", "Job", f"js-{w}-{j}", NS, uid=f"other-{w}-{j}"))
            elif shape < 0.35:  # the Job names its owner without a uid
                api.add(obj("batch/v1", "Job", f"js-{w}-{j}", NS, owner=_ref(js, uid=False)))
            else:
                api.add(job)
            labels = {"jobset.sigs.k8s.io/jobset-name": f"js-{w}"} if rng.random() < 0.7 else {}
            for p in range(rng.randint(1, 5)):
                made = pod(f"js-{w}-{j}-{p}", job, namespace=NS, labels=labels)
                if rng.random() < 0.1:  # a pod whose uid is its Job's: a cycle at once
                    made["metadata"]["uid"] = job["metadata"]["uid"]
                if rng.random() < 0.05:
                    made["metadata"].pop("uid")
                api.add(made)
    # a cycle between two owners, and a chain deeper than the walk goes
    a = obj("batch/v1", "Job", "loop-a", NS, uid="loop-a")
    b = obj("batch/v1", "Job", "loop-b", NS, uid="loop-b", owner=_ref(a))
    a["metadata"]["ownerReferences"] = [_ref(b)]
    api.add(a, b, pod("loop-pod-0", a, namespace=NS), pod("loop-pod-1", a, namespace=NS))
    chain: list[dict[str, Any]] = [obj("batch/v1", "Job", "deep-0", NS)]
    for d in range(1, MAX_DEPTH + 3):
        chain.append(obj("batch/v1", "Job", f"deep-{d}", NS, owner=_ref(chain[-1])))
    api.add(*chain, pod("deep-pod-0", chain[-1], namespace=NS))
    api.add(pod("deep-pod-1", chain[-1], namespace=NS))
    # a pod named as the owner of the Job its pods come from (a cycle through a pod's uid)
    odd = pod("odd-pod", None, namespace=NS)
    odd_job = obj("batch/v1", "Job", "odd-job", NS, owner=_ref(odd))
    odd["metadata"]["ownerReferences"] = [_ref(odd_job)]
    api.add(odd, odd_job, pod("odd-sibling", odd_job, namespace=NS))
    return api, workloads


def _walked(api: FakeAPI) -> PodIndex:
    """The index of a walk of every pod (what pods_by_owner gave before sharing chains)."""
    cluster = Cluster(api)
    res = cluster.resource_for("v1", "Pod")
    assert res is not None
    pods = list(cluster.iter_list(res, NS, resource_version="0"))
    owners = OwnerReader(cluster, NS)
    owners.expect(pods)
    index = PodIndex()
    for at, one in enumerate(pods):  # PodIndex.add as it was, on the walk of each pod
        chain = walk_chain(one, owners)
        index._pods.append(one)
        index._chains.append(chain)
        own = str(one["metadata"].get("uid") or "")
        for uid in dict.fromkeys((own, *chain.uids) if own else chain.uids):
            index._by_uid.setdefault(uid, []).append(at)
        if chain.broken:
            index._broken.setdefault(one["metadata"].get("namespace"), []).append(at)
    return index


@pytest.mark.parametrize("seed", range(40))
def test_the_shared_chains_index_the_pods_as_a_walk_of_each(seed: int) -> None:
    api, workloads = _fleet(seed)
    shared = pods_by_owner(Cluster(api), NS)
    walked = _walked(api)
    assert [(c.refs, c.end) for c in shared._chains] == [(c.refs, c.end) for c in walked._chains]
    assert shared._by_uid == walked._by_uid
    assert shared._broken == walked._broken
    for workload in workloads:
        assert shared.pods_of(workload) == walked.pods_of(workload)


def test_the_pods_of_one_job_share_its_chain() -> None:
    api = FakeAPI(namespace=NS).serve(JOBSET)
    js = obj("jobset.x-k8s.io/v1alpha2", "JobSet", "train", NS)
    job = obj("batch/v1", "Job", "train-0", NS, owner=_ref(js))
    api.add(js, job, *(pod(f"train-0-{i}", job, namespace=NS) for i in range(4)))
    index = pods_by_owner(Cluster(api), NS)
    assert len({id(c) for c in index._chains}) == 1
    assert [p["metadata"]["name"] for p in index.pods_of(js)] == [f"train-0-{i}" for i in range(4)]


def test_each_pods_controller_reference_is_read_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The index reads a pod's controller reference once, for both the owners it expects and
    its chain (a fleet's pods are most of a ``get -A``'s work): counted, not timed."""
    api, _ = _fleet(3)
    calls: list[str] = []
    real = ownership.controller_ref

    def counted(obj: Any) -> Any:
        calls.append(str(obj["metadata"].get("uid")))
        return real(obj)

    monkeypatch.setattr(ownership, "controller_ref", counted)
    index = pods_by_owner(Cluster(api), NS)
    assert len(index) > 0
    assert sorted(calls) == sorted(str(p["metadata"].get("uid")) for p in index._pods)
