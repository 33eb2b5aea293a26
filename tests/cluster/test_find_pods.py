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


# -- the workload's own controllers' selectors (issue 21: cost flat in the namespace) ------

CUID = "batch.kubernetes.io/controller-uid"


def _real_job(name: str, owner: dict[str, Any] | None) -> dict[str, Any]:
    """A Job as the API server stores it: its selector and template carry its uid."""
    uid = f"uid-job-{name}"
    spec = {
        "selector": {"matchLabels": {CUID: uid}},
        "template": {"metadata": {"labels": {CUID: uid, "batch.kubernetes.io/job-name": name}}},
    }
    return obj(
        "batch/v1", "Job", name, NS, uid=uid, owner=owner_ref(owner) if owner else None, spec=spec
    )


@pytest.fixture
def mixed() -> tuple[FakeAPI, dict[str, Any], dict[str, Any]]:
    """The fleet's odd cases with Jobs as the API server makes them (their pods carry their
    selector), in a namespace whose other pods (a Deployment's, another team's Jobs') carry
    no JobSet label at all."""
    api = FakeAPI(namespace=NS).serve(JOBSET, LINK)
    train, other = _jobset("train"), _jobset("other")
    job0, job1 = _real_job("train-w-0", train), _real_job("train-w-1", train)
    other_job = _real_job("other-w-0", other)
    gone = _real_job("train-w-9", train)  # deleted: never served
    api.add(train, other, job0, job1, other_job)

    def of(job: dict[str, Any], labels: dict[str, str]) -> dict[str, str]:
        return {**labels, CUID: job["metadata"]["uid"]}

    api.add(
        *(
            pod(f"train-w-{j}-{i}", job, namespace=NS, labels=of(job, _mine(train)))
            for j, job in enumerate((job0, job1))
            for i in range(3)
        )
    )
    api.add(
        *(
            pod(f"other-w-0-{i}", other_job, namespace=NS, labels=of(other_job, _mine(other)))
            for i in range(3)
        )
    )
    # lost the JobSet's labels, still matches its Job's selector: train's by its chain
    api.add(pod("train-unlabelled", job1, namespace=NS, labels=of(job1, {})))
    api.add(pod("train-orphan", gone, namespace=NS, labels=of(gone, _mine(train))))
    api.add(pod("impostor", other_job, namespace=NS, labels=of(other_job, _mine(train))))
    api.add(pod("bare-labelled", None, namespace=NS, labels=_mine(train)))
    # the rest of the namespace: pods without the JobSet label, under owners of their own
    rs = obj("apps/v1", "ReplicaSet", "web-1", NS)
    api.add(rs, *(pod(f"web-1-{i}", rs, namespace=NS, labels={"app": "web"}) for i in range(40)))
    batch = _real_job("etl-1", None)
    api.add(
        batch, *(pod(f"etl-1-{i}", batch, namespace=NS, labels=of(batch, {})) for i in range(20))
    )
    return api, train, other


def _listed_pods(api: FakeAPI) -> set[str]:
    """Every pod any list of pods answered with (metadata or whole)."""
    from tests.cli.fake_cluster import matches

    out: set[str] = set()
    for path, query, _ in api.calls:
        if not path.endswith("/pods"):
            continue
        selector = query.get("labelSelector")
        for o in api.objects:
            if o["kind"] == "Pod" and o["metadata"].get("namespace") == NS:
                if not selector or matches(selector, o["metadata"].get("labels") or {}):
                    out.add(o["metadata"]["name"])
    return out


def test_unlabelled_pods_are_asked_for_by_the_jobs_selectors(mixed: Any) -> None:
    api, train, _ = mixed
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
    uids = "uid-job-train-w-0,uid-job-train-w-1"
    # the labelled pods, then the unlabelled pods of train's two Jobs in one set-based list
    assert _pod_lists(api) == [(f"{NAME}=train", False), (f"{CUID} in ({uids}),!{NAME}", True)]
    # no pod of the rest of the namespace is read, not even as metadata
    assert not [n for n in _listed_pods(api) if n.startswith(("web-", "etl-", "other-"))]
    assert _full_pods(api).count("train-unlabelled") == 1


def test_the_jobs_selectors_give_the_owner_rules_answer(mixed: Any) -> None:
    api, train, other = mixed
    index = pods_by_owner(Cluster(api), NS)
    for workload in (train, other):
        rule = [p for p in index.pods_of(workload) if label_verdict(p, workload) is not False]
        assert _names(find_pods(Cluster(api), workload)) == _names(rule)


def test_a_pod_its_job_no_longer_selects_is_not_asked_for(mixed: Any) -> None:
    """The Job controller releases a pod that stops matching its selector: one that lost
    both the JobSet's labels and its Job's is not read (the whole namespace's walk still
    links it until the controller releases it)."""
    api, train, _ = mixed
    job0 = next(o for o in api.objects if o["metadata"]["name"] == "train-w-0")
    api.add(pod("train-stripped", job0, namespace=NS))
    assert "train-stripped" not in _names(find_pods(Cluster(api), train))
    assert "train-stripped" in _names(pods_by_owner(Cluster(api), NS).pods_of(train))


def test_without_selecting_controllers_the_unlabelled_pods_are_walked() -> None:
    """Pods the workload's operator owns itself (no Job between): the pods without the label
    are walked as before, so an unlabelled one still counts."""
    from tests.cli.fake_cluster import PYTORCHJOB

    api = FakeAPI(namespace=NS).serve(PYTORCHJOB)
    ptj = obj("kubeflow.org/v1", "PyTorchJob", "bert", NS, spec={})
    kf = "training.kubeflow.org/job-name"
    api.add(ptj, pod("bert-master-0", ptj, namespace=NS, labels={kf: "bert"}))
    api.add(pod("bert-worker-0", ptj, namespace=NS, labels={"app": "x"}))
    assert _names(find_pods(Cluster(api), ptj)) == ["bert-master-0", "bert-worker-0"]
    assert _pod_lists(api) == [(f"{kf}=bert", False), (f"!{kf}", True)]


def test_a_job_asks_by_its_selector_alone() -> None:
    """A Job: its selector finds its pods, with or without ``job-name``, in one list."""
    api = FakeAPI(namespace=NS)
    job = _real_job("etl", None)
    api.add(job, pod("etl-0", job, namespace=NS, labels={CUID: "uid-job-etl"}))
    api.add(pod("etl-1", job, namespace=NS, labels={CUID: "uid-job-etl", "job-name": "etl"}))
    api.add(*(pod(f"web-{i}", None, namespace=NS, labels={"app": "web"}) for i in range(10)))
    assert pod_query(job) == ownership.PodQuery(f"{CUID}=uid-job-etl", None, ".spec.selector")
    assert _names(find_pods(Cluster(api), job)) == ["etl-0", "etl-1"]
    assert _pod_lists(api) == [(f"{CUID}=uid-job-etl", False)]


def _ref(kind: str, name: str, api_version: str = "apps/v1") -> Any:
    from workload_map.engine.owners import OwnerRef

    return OwnerRef(api_version, kind, name, f"uid-{name}", NS)


def test_children_selectors_merge_and_narrow() -> None:
    """Single-label selectors of one key are one ``in`` list; a selector holding all of
    another's terms is left to the other; more than CHILD_LISTS lists: none (walk)."""
    from workload_map.engine.owners import OwnerChain

    sel = {
        "deploy": {"matchLabels": {"app": "web"}},
        "rs-1": {"matchLabels": {"app": "web", "hash": "1"}},
        "job-a": {"matchLabels": {CUID: "a"}},
        "job-b": {"matchLabels": {CUID: "b"}},
        "sts": {"matchExpressions": [{"key": "g", "operator": "In", "values": ["1", "2"]}]},
        "sts-2": {"matchLabels": {"x": "1", "y": "2"}},
        "sts-web": {"matchLabels": {"app": "web"}},
    }
    objs = {n: {"spec": {"selector": s}} for n, s in sel.items()}

    def chains(*names: str) -> list[Any]:
        # a Deployment owns ReplicaSets, not pods: not one of SELECTING
        kinds = {"deploy": "Deployment", "rs-1": "ReplicaSet", "sts": "StatefulSet"}
        kinds |= {"sts-2": "StatefulSet", "sts-web": "StatefulSet", "job-a": "Job", "job-b": "Job"}
        out = []
        for n in names:
            ref = _ref(kinds[n], n, "batch/v1" if kinds[n] == "Job" else "apps/v1")
            root = _ref("Root", "root", "example.com/v1")
            out.append(OwnerChain(refs=(ref, root), owners=(objs.get(n, {}), {}), end="top"))
        return out

    children = ownership._children_selectors
    assert children(chains("job-a", "job-b"), "uid-root") == [f"{CUID} in (a,b)"]
    assert children(chains("job-a"), "uid-root") == [f"{CUID}=a"]
    assert children(chains("rs-1"), "uid-root") == ["app=web,hash=1"]
    # app=web selects every pod app=web,hash=1 does
    assert children(chains("rs-1", "sts-web"), "uid-root") == ["app=web"]
    assert children(chains("rs-1", "deploy"), "uid-root") == ["app=web,hash=1"]
    assert children(chains("job-a", "sts"), "uid-root") == [f"{CUID}=a", "g in (1,2)"]
    assert children(chains("job-a", "sts", "sts-2"), "uid-root") is None
    # the chain stops at the workload: nothing above it counts
    assert children(chains("job-a"), "uid-job-a") is None
    assert children([], "uid-root") is None
    objs.pop("job-b")  # unreadable (or read as metadata only): no selector, walk instead
    assert children(chains("job-a", "job-b"), "uid-root") is None


def test_many_jobs_are_one_list_of_the_jobsets_jobs() -> None:
    """Past GETS_BEFORE_LIST Jobs, the labelled pods' Jobs are one list of the Jobs bearing the
    JobSet's label, whole (their selectors then ask for the unlabelled pods), not a metadata
    list of every Job of the namespace; a Job that list lacks is a GET."""
    api = FakeAPI(namespace=NS).serve(JOBSET)
    train = _jobset("train")
    count = ownership.GETS_BEFORE_LIST + 5
    jobs = [_real_job(f"train-w-{i}", train) for i in range(count)]
    for job in jobs[:-1]:
        job["metadata"]["labels"] = {NAME: "train"}
    api.add(train, *jobs)
    api.add(
        *(
            pod(
                f"{j['metadata']['name']}-0",
                j,
                namespace=NS,
                labels={NAME: "train", CUID: j["metadata"]["uid"]},
            )
            for j in jobs
        )
    )
    api.add(pod("train-w-0-x", jobs[0], namespace=NS, labels={CUID: jobs[0]["metadata"]["uid"]}))
    others = [_real_job(f"etl-{i}", None) for i in range(30)]
    api.add(*others)
    found = _names(find_pods(Cluster(api), train))
    assert len(found) == count + 1 and "train-w-0-x" in found
    job_lists = [(q.get("labelSelector"), a) for p, q, a in api.calls if p.endswith("/jobs")]
    job_gets = [p.rsplit("/", 1)[-1] for p, _, _ in api.calls if "/jobs/" in p]
    assert job_lists == [(f"{NAME}=train", None)]
    assert job_gets == [f"train-w-{count - 1}"]  # not labelled: not in the list
    uids = ",".join(sorted(j["metadata"]["uid"] for j in jobs))
    assert _pod_lists(api) == [(f"{NAME}=train", False), (f"{CUID} in ({uids}),!{NAME}", True)]
