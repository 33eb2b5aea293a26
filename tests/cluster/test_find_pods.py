"""A workload's pods without reading its namespace's (issue 21): label queries where the
operator's owner labels or the object's own selector identify the pods, metadata-only lists
to walk owner chains otherwise, and only the members read in full.

Every case is also checked against the owner rule on the whole namespace (the shared index
``pods_by_owner`` reads every pod): the answers agree except where a pod's operator label
names another workload (the label query does not read it; the engine leaves it out anyway).
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.cli.fake_cluster import JOBSET, FakeAPI, Res, obj, owner_ref, pod
from workload_map.cluster import ownership
from workload_map.cluster.ownership import (
    find_pods,
    pod_query,
    pods_by_owner,
    selector_string,
    selects,
)
from workload_map.engine.owner_labels import label_verdict
from workload_map.kube.client import Cluster
from workload_map.kube.errors import Forbidden

NS = "ml"
JS = "jobset.x-k8s.io/v1alpha2"
NAME = "jobset.sigs.k8s.io/jobset-name"
UID = "jobset.sigs.k8s.io/jobset-uid"
METADATA = "application/json;as=PartialObjectMetadataList"
LINK = Res("example.com", "v1", "Link", "links")  # a kind no definition covers


def _jobset(name: str) -> dict[str, Any]:
    return obj(JS, "JobSet", name, NS, spec={"replicatedJobs": []})


def _job(name: str, owner: dict[str, Any] | None) -> dict[str, Any]:
    return obj("batch/v1", "Job", name, NS, owner=owner_ref(owner) if owner else None)


def _mine(js: dict[str, Any]) -> dict[str, str]:
    return {NAME: js["metadata"]["name"], UID: js["metadata"]["uid"]}


def _names(pods: list[dict[str, Any]]) -> list[str]:
    return sorted(p["metadata"]["name"] for p in pods)


def _full_pods(api: FakeAPI) -> list[str]:
    """The names of the pods the fake answered in full (lists and GETs)."""
    out: list[str] = []
    for path, query, accept in api.calls:
        partial = accept is not None and "PartialObject" in accept
        if partial or "/pods" not in path:
            continue
        parts = path.rstrip("/").split("/")
        if parts[-1] != "pods":  # a GET by name
            out.append(parts[-1])
            continue
        selector = query.get("labelSelector")
        for o in api.objects:
            if o["kind"] == "Pod" and o["metadata"].get("namespace") == NS:
                from tests.cli.fake_cluster import matches

                if not selector or matches(selector, o["metadata"].get("labels") or {}):
                    out.append(o["metadata"]["name"])
    return sorted(out)


def _pod_lists(api: FakeAPI) -> list[tuple[str | None, bool]]:
    """Each list of pods: (its label selector, whether metadata only)."""
    return [
        (query.get("labelSelector"), accept is not None and METADATA in accept)
        for path, query, accept in api.calls
        if path.endswith("/pods")
    ]


@pytest.fixture
def fleet() -> tuple[FakeAPI, dict[str, Any], dict[str, Any]]:
    """Two JobSets in a busy namespace: each has Jobs with labelled pods; plus 40 pods of
    Deployments and the odd cases of the owner rule."""
    api = FakeAPI(namespace=NS).serve(JOBSET, LINK)
    train, other = _jobset("train"), _jobset("other")
    job0, job1 = _job("train-w-0", train), _job("train-w-1", train)
    other_job = _job("other-w-0", other)
    gone = _job("train-w-9", train)  # deleted: never served
    api.add(train, other, job0, job1, other_job)
    api.add(
        *(
            pod(f"train-w-{j}-{i}", job, namespace=NS, labels=_mine(train))
            for j, job in enumerate((job0, job1))
            for i in range(3)
        )
    )
    api.add(
        *(pod(f"other-w-0-{i}", other_job, namespace=NS, labels=_mine(other)) for i in range(3))
    )
    # a pod of train's Job without the JobSet's labels: the chain says it is train's
    api.add(pod("train-unlabelled", job0, namespace=NS))
    # a broken chain (its Job is gone) whose labels name train: train's by the labels
    api.add(pod("train-orphan", gone, namespace=NS, labels=_mine(train)))
    # a broken chain whose labels name another JobSet's uid: not train's
    stale = {NAME: "train", UID: "uid-of-an-earlier-train"}
    api.add(pod("train-stale", gone, namespace=NS, labels=stale))
    # claims the name, but its chain resolves to the other JobSet: not train's
    api.add(pod("impostor", other_job, namespace=NS, labels=_mine(train)))
    # a bare pod with train's labels: no broken chain, so labels do not decide
    api.add(pod("bare-labelled", None, namespace=NS, labels=_mine(train)))
    # the rest of the namespace
    rs = obj("apps/v1", "ReplicaSet", "web-1", NS)
    api.add(rs, *(pod(f"web-1-{i}", rs, namespace=NS, labels={"app": "web"}) for i in range(40)))
    return api, train, other


def test_owner_labels_ask_for_the_workloads_pods_only(fleet: Any) -> None:
    api, train, _ = fleet
    found = find_pods(Cluster(api), train)
    assert _names(found) == [
        "train-orphan",
        "train-unlabelled",
        "train-w-0-0",
        "train-w-0-1",
        "train-w-0-2",
        "train-w-1-0",
        "train-w-1-1",
        "train-w-1-2",
    ]
    # one list of the pods labelled train, one metadata-only list of the unlabelled ones
    assert _pod_lists(api) == [(f"{NAME}=train", False), (f"!{NAME}", True)]
    # read in full: the labelled pods (members and the two that claim the name) and the one
    # unlabelled member, by a GET; never the other JobSet's pods nor the Deployment's
    full = _full_pods(api)
    assert "train-unlabelled" in full
    assert not [n for n in full if n.startswith(("other-", "web-"))]
    assert full.count("train-unlabelled") == 1


def test_every_answer_is_the_owner_rules(fleet: Any) -> None:
    api, train, other = fleet
    cluster = Cluster(api)
    index = pods_by_owner(Cluster(api), NS)
    for workload in (train, other):
        # the rule's pods, but for those whose operator labels name another workload (the
        # impostor is other's by its chain; it claims train's name)
        rule = [p for p in index.pods_of(workload) if label_verdict(p, workload) is not False]
        assert _names(find_pods(cluster, workload)) == _names(rule)
    assert "impostor" in _names(index.pods_of(other))


def test_owners_are_read_once_then_by_kind() -> None:
    """Few owners: a GET each; past GETS_BEFORE_LIST of one kind, one metadata-only list."""
    api = FakeAPI(namespace=NS).serve(JOBSET, LINK)
    train = _jobset("train")
    jobs = [_job(f"train-w-{i}", train) for i in range(ownership.GETS_BEFORE_LIST + 5)]
    api.add(train, *jobs)
    api.add(*(pod(f"{j['metadata']['name']}-0", j, namespace=NS) for j in jobs))  # unlabelled
    assert len(find_pods(Cluster(api), train)) == len(jobs)
    job_gets = [p for p, _, _ in api.calls if "/jobs/" in p]
    job_lists = [(p, a) for p, _, a in api.calls if p.endswith("/jobs")]
    assert len(job_gets) == ownership.GETS_BEFORE_LIST
    assert len(job_lists) == 1 and job_lists[0][1] is not None and METADATA in job_lists[0][1]


def test_a_deployment_asks_by_its_selector() -> None:
    api = FakeAPI(namespace=NS)
    spec = {
        "selector": {"matchLabels": {"app": "web"}},
        "template": {"metadata": {"labels": {"app": "web", "tier": "1"}}},
    }
    deploy = obj("apps/v1", "Deployment", "web", NS, spec=spec)
    rs = obj("apps/v1", "ReplicaSet", "web-1", NS, owner=owner_ref(deploy))
    stray_rs = obj("apps/v1", "ReplicaSet", "api-1", NS)
    api.add(deploy, rs, stray_rs)
    api.add(*(pod(f"web-1-{i}", rs, namespace=NS, labels={"app": "web"}) for i in range(3)))
    # matches the selector, owned by another ReplicaSet: not the Deployment's
    api.add(pod("api-1-0", stray_rs, namespace=NS, labels={"app": "web"}))
    api.add(*(pod(f"db-{i}", None, namespace=NS, labels={"app": "db"}) for i in range(20)))
    assert pod_query(deploy) == ownership.PodQuery("app=web", None, ".spec.selector")
    assert _names(find_pods(Cluster(api), deploy)) == ["web-1-0", "web-1-1", "web-1-2"]
    assert _pod_lists(api) == [("app=web", False)]


def test_without_a_query_the_namespace_is_walked_as_metadata() -> None:
    """A kind with no owner labels and no selector (a CronJob): one metadata-only list of the
    namespace, and the members in full (a GET each when few)."""
    api = FakeAPI(namespace=NS)
    cron = obj("batch/v1", "CronJob", "nightly", NS, spec={"schedule": "@daily"})
    run = _job("nightly-1", cron)
    api.add(cron, run, pod("nightly-1-a", run, namespace=NS))
    api.add(*(pod(f"other-{i}", None, namespace=NS) for i in range(30)))
    assert pod_query(cron) is None
    assert _names(find_pods(Cluster(api), cron)) == ["nightly-1-a"]
    assert _pod_lists(api) == [(None, True)]
    assert _full_pods(api) == ["nightly-1-a"]


def test_many_members_are_read_by_their_shared_labels() -> None:
    api = FakeAPI(namespace=NS)
    cron = obj("batch/v1", "CronJob", "nightly", NS, spec={"schedule": "@daily"})
    run = _job("nightly-1", cron)
    n = ownership.GETS_OF_MEMBERS + 5
    members = [
        pod(f"nightly-1-{i}", run, namespace=NS, labels={"app": "nightly", "i": str(i)})
        for i in range(n)
    ]
    api.add(cron, run, *members)
    api.add(*(pod(f"other-{i}", None, namespace=NS, labels={"app": "x"}) for i in range(30)))
    assert len(find_pods(Cluster(api), cron)) == n
    assert _pod_lists(api) == [(None, True), ("app=nightly", False)]
    assert not [p for p, _, _ in api.calls if "/pods/" in p]  # no GET one by one


def test_a_pod_deleted_between_the_list_and_its_get_is_gone() -> None:
    api = FakeAPI(namespace=NS)
    cron = obj("batch/v1", "CronJob", "nightly", NS, spec={"schedule": "@daily"})
    run = _job("nightly-1", cron)
    api.add(cron, run, pod("nightly-1-a", run, namespace=NS), pod("nightly-1-b", run, namespace=NS))
    real_get = api.get

    def get(path: str, query: Any = (), *, accept: str | None = None) -> Any:
        if path.endswith("/pods/nightly-1-b"):
            api.objects = [o for o in api.objects if o["metadata"]["name"] != "nightly-1-b"]
        return real_get(path, query, accept=accept)

    api.get = get  # type: ignore[method-assign]
    assert _names(find_pods(Cluster(api), cron)) == ["nightly-1-a"]


def test_forbidden_pods_say_so() -> None:
    api = FakeAPI(namespace=NS).serve(JOBSET)
    train = _jobset("train")
    api.add(train)
    api.forbidden.add(f"/api/v1/namespaces/{NS}/pods")
    with pytest.raises(Forbidden, match="cannot list pods in namespace ml"):
        find_pods(Cluster(api), train)


def test_a_bare_pod_is_its_own() -> None:
    bare = pod("solo", None, namespace=NS)
    api = FakeAPI(namespace=NS).add(bare)
    assert find_pods(Cluster(api), bare) == [bare]
    assert api.calls == []


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        ({"matchLabels": {"a": "1", "b": "2"}}, "a=1,b=2"),
        (
            {
                "matchExpressions": [
                    {"key": "a", "operator": "In", "values": ["1", "2"]},
                    {"key": "b", "operator": "NotIn", "values": ["3"]},
                    {"key": "c", "operator": "Exists"},
                    {"key": "d", "operator": "DoesNotExist"},
                ]
            },
            "a in (1,2),b notin (3),c,!d",
        ),
        ({}, None),  # selects everything: no query
        ({"matchLabels": {"a": 1}}, None),
        ({"matchExpressions": [{"key": "a", "operator": "Gt", "values": ["1"]}]}, None),
        ("app=web", None),
    ],
)
def test_selector_strings(selector: Any, expected: str | None) -> None:
    assert selector_string(selector) == expected


def test_selects_as_the_api_server() -> None:
    sel = {
        "matchLabels": {"app": "web"},
        "matchExpressions": [{"key": "tier", "operator": "In", "values": ["1", "2"]}],
    }
    assert selects(sel, {"app": "web", "tier": "2"})
    assert not selects(sel, {"app": "web"})
    assert not selects(sel, {"app": "db", "tier": "1"})


def test_no_query_when_the_selector_does_not_select_the_template() -> None:
    spec = {
        "selector": {"matchLabels": {"app": "web"}},
        "template": {"metadata": {"labels": {"app": "api"}}},
    }
    assert pod_query(obj("apps/v1", "Deployment", "web", NS, spec=spec)) is None


def test_the_shared_index_reads_owners_by_kind_not_one_by_one() -> None:
    """``get TYPE -A``: the Jobs of many JobSets in one metadata-only list, the listed JobSets
    from the cluster's cache (no request)."""
    api = FakeAPI(namespace=NS).serve(JOBSET)
    jobsets = [_jobset(f"js-{i}") for i in range(20)]
    jobs = [_job(f"js-{i}-w-0", js) for i, js in enumerate(jobsets)]
    api.add(*jobsets, *jobs, *(pod(f"{j['metadata']['name']}-0", j, namespace=NS) for j in jobs))
    cluster = Cluster(api)
    for js in jobsets:
        cluster.remember(js)
    index = pods_by_owner(cluster, None)
    assert all(len(index.pods_of(js)) == 1 for js in jobsets)
    # the pods, listed first, name 20 Jobs not read yet: their list at once, no GET before it
    assert [p for p, _, _ in api.calls if "/jobs/" in p] == []
    assert [p for p, _, _ in api.calls if p.endswith("/jobs")] == ["/apis/batch/v1/jobs"]
    assert not [p for p, _, _ in api.calls if "/jobsets" in p]


@pytest.mark.parametrize("count", [ownership.GETS_BEFORE_LIST, ownership.GETS_BEFORE_LIST + 1])
def test_the_shared_index_gets_few_owners_and_lists_many(count: int) -> None:
    """Up to GETS_BEFORE_LIST owners of a kind the pods name: a GET each (a list of the
    namespace's Jobs may be far bigger); one more: the kind's metadata-only list alone."""
    api = FakeAPI(namespace=NS).serve(JOBSET)
    jobsets = [_jobset(f"js-{i}") for i in range(count)]
    jobs = [_job(f"js-{i}-w-0", js) for i, js in enumerate(jobsets)]
    api.add(*jobsets, *jobs, *(pod(f"{j['metadata']['name']}-0", j, namespace=NS) for j in jobs))
    cluster = Cluster(api)
    for js in jobsets:
        cluster.remember(js)
    index = pods_by_owner(cluster, NS)
    assert all(len(index.pods_of(js)) == 1 for js in jobsets)
    gets = [p for p, _, _ in api.calls if "/jobs/" in p]
    lists = [a for p, _, a in api.calls if p.endswith("/jobs")]
    if count <= ownership.GETS_BEFORE_LIST:
        assert (len(gets), lists) == (count, [])
    else:
        assert gets == [] and len(lists) == 1 and lists[0] is not None and METADATA in lists[0]


def test_the_shared_index_lists_again_when_its_continue_token_expired() -> None:
    api = FakeAPI(namespace=NS)
    api.add(*(pod(f"p-{i}", None, namespace=NS) for i in range(5)))
    real_get = api.get
    expired = []

    def get(path: str, query: Any = (), *, accept: str | None = None) -> Any:
        if dict(query).get("continue") and not expired:
            expired.append(path)
            return api._fail(410, "The provided continue parameter is too old", path)
        return real_get(path, query, accept=accept)

    api.get = get  # type: ignore[method-assign]
    index = pods_by_owner(Cluster(api), NS, chunk_size=2)
    assert len(index) == 5 and expired
