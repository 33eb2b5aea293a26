"""The shared pod index of ``get``/``describe TYPE`` finds the same pods as ``find_pods``.

Both decide through :func:`workload_map.cluster.ownership.claims`: a pod belongs to a workload
when its controller chain reaches it, or when the chain broke at a deleted owner (a Job already
garbage-collected) and the operator's owner labels name the workload, never against them.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from tests.cli.fake_cluster import JOBSET, FakeAPI, obj, owner_ref, pod
from workload_map.catalog import catalog
from workload_map.catalog.definitions import Definition
from workload_map.cli.workload_view import describe_view
from workload_map.cluster.ownership import claims, find_pods, owner_chain, pods_by_owner
from workload_map.kube.client import Cluster

_KARTA = catalog.get("jobset.x-k8s.io", "v1alpha2", "JobSet")
assert _KARTA is not None
JOBSET_DEF = Definition(_KARTA, _KARTA.name or "", "catalog")

MINE = {
    "jobset.sigs.k8s.io/jobset-name": "train",
    "jobset.sigs.k8s.io/replicatedjob-name": "workers",
}
THEIRS = {
    "jobset.sigs.k8s.io/jobset-name": "other",
    "jobset.sigs.k8s.io/replicatedjob-name": "workers",
}
SPEC = {
    "replicatedJobs": [
        {
            "name": "workers",
            "replicas": 2,
            "template": {
                "spec": {"template": {"spec": {"containers": [{"name": "c", "image": "x"}]}}}
            },
        }
    ]
}


def _cluster(namespace: str = "default") -> tuple[FakeAPI, dict[str, Any], dict[str, Any]]:
    """Two JobSets; each has a live Job with pods, and pods whose Job is gone."""
    api = FakeAPI(namespace=namespace).serve(JOBSET)
    train = obj("jobset.x-k8s.io/v1alpha2", "JobSet", "train", namespace, spec=SPEC)
    other = obj("jobset.x-k8s.io/v1alpha2", "JobSet", "other", namespace, spec=SPEC)
    job = obj("batch/v1", "Job", "train-workers-0", namespace, owner=owner_ref(train))
    other_job = obj("batch/v1", "Job", "other-workers-0", namespace, owner=owner_ref(other))
    gone = obj("batch/v1", "Job", "train-workers-1", namespace)  # never served: deleted
    other_gone = obj("batch/v1", "Job", "other-workers-1", namespace)
    api.add(
        train,
        other,
        job,
        other_job,
        pod("train-workers-0-0", job, namespace=namespace, labels=MINE),
        pod("train-workers-1-0", gone, namespace=namespace, labels=MINE),
        pod("other-workers-0-0", other_job, namespace=namespace, labels=THEIRS),
        pod("other-workers-1-0", other_gone, namespace=namespace, labels=THEIRS),
        pod("unlabelled-1-0", gone, namespace=namespace),
        # the chain reaches train: labels naming another JobSet do not take it away
        pod("train-workers-0-9", job, namespace=namespace, labels=THEIRS),
        pod("bare", None, namespace=namespace),
    )
    return api, train, other


def _names(pods: list[dict[str, Any]]) -> list[str]:
    return sorted(p["metadata"]["name"] for p in pods)


def test_the_index_falls_back_to_owner_labels_like_find_pods() -> None:
    api, train, other = _cluster()
    cluster = Cluster(api)
    index = pods_by_owner(cluster, "default")
    assert _names(index.pods_of(train)) == [
        "train-workers-0-0",
        "train-workers-0-9",
        "train-workers-1-0",
    ]
    assert _names(index.pods_of(other)) == ["other-workers-0-0", "other-workers-1-0"]
    # find_pods asks for the pods labelled with the JobSet's name (and walks the unlabelled
    # ones): train-workers-0-9, whose operator label names another JobSet, is not read. The
    # engine leaves such a pod out of the workload anyway: the views differ only in the
    # index's listing it as unattributed
    assert _names(find_pods(cluster, train)) == ["train-workers-0-0", "train-workers-1-0"]
    assert _names(find_pods(cluster, other)) == _names(index.pods_of(other))
    for workload in (train, other):
        found = describe_view(workload, find_pods(cluster, workload), JOBSET_DEF)
        indexed = describe_view(workload, index.pods_of(workload), JOBSET_DEF)
        for view in (found, indexed):
            view.pop("unattributedPods")
            view.pop("unattributedReasons")
        assert found == indexed
    bare = next(p for p in api.objects if p["metadata"]["name"] == "bare")
    assert index.pods_of(bare) == [bare]
    # a workload of another namespace gets nothing from this namespace's broken chains
    elsewhere = obj("jobset.x-k8s.io/v1alpha2", "JobSet", "train", "ml", uid="uid-ml-train")
    assert index.pods_of(elsewhere) == []


def test_chain_and_claims() -> None:
    api, train, _ = _cluster()
    cluster = Cluster(api)
    pods = {p["metadata"]["name"]: p for p in api.objects if p["kind"] == "Pod"}
    live = owner_chain(cluster, pods["train-workers-0-0"])
    assert live.uids == ("uid-job-train-workers-0", train["metadata"]["uid"]) and not live.broken
    broken = owner_chain(cluster, pods["train-workers-1-0"])
    assert broken.uids == ("uid-job-train-workers-1",) and broken.broken
    stopped = owner_chain(cluster, pods["train-workers-0-0"], stop=("uid-job-train-workers-0",))
    assert stopped.uids == ("uid-job-train-workers-0",)
    assert claims(train, pods["train-workers-1-0"], broken)
    assert not claims(train, pods["unlabelled-1-0"], owner_chain(cluster, pods["unlabelled-1-0"]))
    # labels alone never claim a pod whose chain is whole (it ends at a top-level owner)
    whole = owner_chain(cluster, pods["other-workers-0-0"])
    relabelled = {
        **pods["other-workers-0-0"],
        "metadata": {**pods["other-workers-0-0"]["metadata"], "labels": MINE},
    }
    assert not whole.broken and not claims(train, relabelled, whole)


def test_get_all_types_counts_the_pods_of_a_deleted_job(wlmap) -> None:
    api, _, _ = _cluster("ml")
    r = wlmap(["get", "--all-types", "-o", "json"], api=api)
    assert r.code == 0, r.err
    doc = json.loads(r.out)
    rows = {item["name"]: item for item in doc["items"] if item["kind"] == "JobSet"}
    # train-workers-1-0 (its Job deleted) counts; train-workers-0-9 is the index's but the
    # engine leaves it out, its labels naming another JobSet
    assert rows["train"]["pods"]["current"] == 2
    assert rows["other"]["pods"]["current"] == 2


def test_watch_refreshes_the_workload_a_broken_chain_pod_belongs_to(wlmap) -> None:
    """``get -w``: a pod whose Job is gone turns not ready; the JobSet its labels name is
    refreshed with it, the other JobSet is not."""
    api, _, _ = _cluster("ml")
    changed = copy.deepcopy(
        next(o for o in api.objects if o["metadata"]["name"] == "train-workers-1-0")
    )
    changed["status"]["conditions"] = [{"type": "Ready", "status": "False"}]
    changed["metadata"]["resourceVersion"] = "42"
    api.pod_events = [{"type": "MODIFIED", "object": changed}]
    r = wlmap(["get", "jobsets", "-w"], api=api)
    assert r.code == 130, r.err
    rows = [(line.split()[0], line.split()[2]) for line in r.out.splitlines()[1:]]
    assert rows == [("other", "2/2"), ("train", "2/2"), ("train", "1/2")]
