"""A workload's pods without its namespace's, on the real API server (issue 21 item 1).

The label query, the metadata-only lists (``PartialObjectMetadataList`` as kube-apiserver
v1.37 answers it) and the member GETs of :func:`workload_map.cluster.ownership.find_pods`,
through ``wlmap describe`` and ``wlmap get KIND NAME`` too, on a namespace that also holds
another JobSet's pods: unlabelled members count (found by their Job's selector), a pod
claiming the name with another owner does not, a broken chain's labels decide; a Job's pods by
its selector alone.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from tests.integration.test_cli_live import JOBSET_CRD, install_crd, wlmap
from workload_map.cluster.ownership import find_pods
from workload_map.kube.client import Cluster, connect
from workload_map.kube.options import ConnectionOptions

JS = "jobset.x-k8s.io/v1alpha2"
NAME = "jobset.sigs.k8s.io/jobset-name"
RJOB = "jobset.sigs.k8s.io/replicatedjob-name"
CUID = "batch.kubernetes.io/controller-uid"


class _Recording:
    """A transport that records each GET (path, query, accept) before passing it on."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.namespace, self.context, self.server = inner.namespace, inner.context, inner.server
        self.calls: list[tuple[str, dict[str, str], str | None]] = []

    def get(
        self, path: str, query: Sequence[tuple[str, str]] = (), *, accept: str | None = None
    ) -> Any:
        self.calls.append((path, dict(query), accept))
        return self.inner.get(path, query, accept=accept)


def _owner(o: dict[str, Any]) -> dict[str, Any]:
    meta = o["metadata"]
    return {
        "apiVersion": o["apiVersion"],
        "kind": o["kind"],
        "name": meta["name"],
        "uid": meta["uid"],
        "controller": True,
    }


def _pod(
    kube: Any, ns: str, name: str, owner: dict[str, Any] | None, labels: dict[str, str]
) -> None:
    meta: dict[str, Any] = {"name": name, "namespace": ns, "labels": labels}
    if owner is not None:
        meta["ownerReferences"] = [owner]
    kube.apply(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": meta,
            "spec": {"containers": [{"name": "c", "image": "busybox"}]},
        },
        ns,
    )


def _jobset(kube: Any, ns: str, name: str) -> dict[str, Any]:
    js = {"apiVersion": JS, "kind": "JobSet", "metadata": {"name": name, "namespace": ns}}
    js["spec"] = {
        "replicatedJobs": [
            {
                "name": "w",
                "replicas": 1,
                "template": {
                    "spec": {
                        "parallelism": 3,
                        "completions": 3,
                        "template": {"spec": {"containers": [{"name": "c", "image": "x"}]}},
                    }
                },
            }
        ]
    }
    created: dict[str, Any] = kube.apply(js, ns)
    return created


def _job(kube: Any, ns: str, name: str, owner: dict[str, Any] | None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": ns}
    if owner is not None:
        meta["ownerReferences"] = [_owner(owner)]
    created: dict[str, Any] = kube.apply(
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": meta,
            "spec": {
                "template": {
                    "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "x"}]}
                }
            },
        },
        ns,
    )
    return created


def _cluster(kube: Any, ns: str) -> tuple[Cluster, _Recording]:
    inner = connect(ConnectionOptions(kubeconfig=str(kube.kubeconfig), namespace=ns))
    recording = _Recording(inner.transport)
    return Cluster(recording), recording  # type: ignore[arg-type]


def test_jobset_pods_by_label_on_a_busy_namespace(kube: Any, namespace: str) -> None:
    install_crd(kube, JOBSET_CRD)
    ns = namespace
    train, other = _jobset(kube, ns, "train"), _jobset(kube, ns, "other")
    job, other_job = _job(kube, ns, "train-w-0", train), _job(kube, ns, "other-w-0", other)
    mine = {NAME: "train", RJOB: "w"}
    for i in range(3):
        _pod(kube, ns, f"train-w-0-{i}", _owner(job), mine)
    # lost the JobSet's labels, kept its Job's selector (the API server's controller-uid):
    # asked for by that selector, not by a walk of every pod without the JobSet label
    cuid = job["spec"]["selector"]["matchLabels"][CUID]
    _pod(kube, ns, "train-unlabelled", _owner(job), {"app": "x", CUID: cuid})
    _pod(kube, ns, "impostor", _owner(other_job), {NAME: "train"})
    # an owner of a kind the server does not serve: the chain breaks there, labels decide
    gone = {
        "apiVersion": "example.com/v1",
        "kind": "Gone",
        "name": "g",
        "uid": "0c0c0c0c-0000-4000-8000-000000000001",
        "controller": True,
    }
    _pod(kube, ns, "train-broken", gone, mine)
    _pod(kube, ns, "other-broken", gone, {NAME: "other"})
    for i in range(25):
        _pod(kube, ns, f"other-w-0-{i}", _owner(other_job), {NAME: "other"})

    cluster, seen = _cluster(kube, ns)
    found = sorted(p["metadata"]["name"] for p in find_pods(cluster, train))
    assert found == [
        "train-broken",
        "train-unlabelled",
        "train-w-0-0",
        "train-w-0-1",
        "train-w-0-2",
    ]
    assert all("spec" in p for p in find_pods(cluster, train))  # members in full
    lists = [(q.get("labelSelector"), a) for p, q, a in seen.calls if p.endswith("/pods")]
    assert [s for s, _ in lists] == [f"{NAME}=train", f"{CUID}={cuid},!{NAME}"] * 2
    assert lists[1][1] is not None and "PartialObjectMetadataList" in lists[1][1]

    code, out, err = wlmap(kube, "-n", ns, "describe", "jobset/train", "-o", "json")
    assert code == 0, err
    view = json.loads(out)
    # the unlabelled pod is read (its chain reaches train) but no component claims it
    assert view["pods"]["current"] == 4
    assert view["unattributedPods"] == ["train-unlabelled"]
    code, out, err = wlmap(kube, "-n", ns, "get", "jobset", "train", "-o", "json")
    assert code == 0, err
    row = json.loads(out)  # one name: the item itself, as kubectl prints it
    assert row["name"] == "train" and row["pods"]["current"] == 4


def test_metadata_walk_and_selector_on_the_real_server(kube: Any, namespace: str) -> None:
    ns = namespace
    cron = kube.apply(
        {
            "apiVersion": "batch/v1",
            "kind": "CronJob",
            "metadata": {"name": "nightly", "namespace": ns},
            "spec": {
                "schedule": "@daily",
                "jobTemplate": {
                    "spec": {
                        "template": {
                            "spec": {
                                "restartPolicy": "Never",
                                "containers": [{"name": "c", "image": "x"}],
                            }
                        }
                    }
                },
            },
        },
        ns,
    )
    run = _job(kube, ns, "nightly-1", cron)
    _pod(kube, ns, "nightly-1-a", _owner(run), {"run": "1"})
    for i in range(5):
        _pod(kube, ns, f"noise-{i}", None, {"app": "noise"})
    deploy = kube.apply(
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "web", "namespace": ns},
            "spec": {
                "replicas": 2,
                "selector": {"matchLabels": {"app": "web"}},
                "template": {
                    "metadata": {"labels": {"app": "web"}},
                    "spec": {"containers": [{"name": "c", "image": "x"}]},
                },
            },
        },
        ns,
    )
    rs = kube.apply(
        {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": {"name": "web-1", "namespace": ns, "ownerReferences": [_owner(deploy)]},
            "spec": {
                "replicas": 2,
                "selector": {"matchLabels": {"app": "web", "h": "1"}},
                "template": {
                    "metadata": {"labels": {"app": "web", "h": "1"}},
                    "spec": {"containers": [{"name": "c", "image": "x"}]},
                },
            },
        },
        ns,
    )
    for i in range(2):
        _pod(kube, ns, f"web-1-{i}", _owner(rs), {"app": "web", "h": "1"})

    cluster, seen = _cluster(kube, ns)
    assert [p["metadata"]["name"] for p in find_pods(cluster, cron)] == ["nightly-1-a"]
    pod_calls = [(p, q.get("labelSelector"), a) for p, q, a in seen.calls if "/pods" in p]
    assert pod_calls[0][1] is None and "PartialObjectMetadataList" in str(pod_calls[0][2])
    assert pod_calls[1][0].endswith("/pods/nightly-1-a")  # the member alone, in full
    assert len(pod_calls) == 2

    seen.calls.clear()
    assert sorted(p["metadata"]["name"] for p in find_pods(cluster, deploy)) == [
        "web-1-0",
        "web-1-1",
    ]
    assert [q.get("labelSelector") for p, q, _ in seen.calls if p.endswith("/pods")] == ["app=web"]


def test_a_jobs_pods_by_its_selector_on_the_real_server(kube: Any, namespace: str) -> None:
    """A Job's selector, as the API server gives it (``controller-uid``), finds its pods in
    one list, ``job-name`` or not."""
    ns = namespace
    job = _job(kube, ns, "etl", None)
    cuid = job["spec"]["selector"]["matchLabels"][CUID]
    _pod(kube, ns, "etl-0", _owner(job), {CUID: cuid})
    _pod(kube, ns, "etl-1", _owner(job), {CUID: cuid, "batch.kubernetes.io/job-name": "etl"})
    _pod(kube, ns, "etl-namesake", None, {"batch.kubernetes.io/job-name": "etl"})
    for i in range(5):
        _pod(kube, ns, f"noise-{i}", None, {"app": "noise"})
    cluster, seen = _cluster(kube, ns)
    assert sorted(p["metadata"]["name"] for p in find_pods(cluster, job)) == ["etl-0", "etl-1"]
    lists = [q.get("labelSelector") for p, q, _ in seen.calls if p.endswith("/pods")]
    assert lists == [f"{CUID}={cuid}"]
