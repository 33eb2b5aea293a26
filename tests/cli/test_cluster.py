"""Cluster access against the in-memory API: discovery, TYPE matching, paging, owner chains,
error mapping and kubeconfig resolution."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.fake_cluster import JOBSET, FakeAPI, obj, owner_ref, pod
from workload_map.catalog.registry import version_priority
from workload_map.cluster.ownership import find_pods, owning_workload, pods_by_owner
from workload_map.kube import Cluster, ConnectionOptions
from workload_map.kube.discovery import _from_aggregated, discover, match_type
from workload_map.kube.errors import (
    ClusterError,
    Forbidden,
    NotConfigured,
    NotFound,
    Unauthorized,
    api_error,
)
from workload_map.kube.kubeconfig import resolve


def test_legacy_discovery_and_type_matching() -> None:
    api = FakeAPI().serve(JOBSET)
    resources = discover(api)
    kinds = {(r.group, r.kind) for r in resources}
    assert ("jobset.x-k8s.io", "JobSet") in kinds and ("", "Pod") in kinds
    for token in (
        "jobsets",
        "jobset",
        "JobSet",
        "js",
        "jobsets.jobset.x-k8s.io",
        "jobset.v1alpha2.jobset.x-k8s.io",
    ):
        found = match_type(token, resources)
        assert [r.kind for r in found] == ["JobSet"], token
    assert match_type("nope", resources) == []
    deploy = match_type("deploy", resources)[0]
    assert deploy.path("ns1", "web") == "/apis/apps/v1/namespaces/ns1/deployments/web"
    assert match_type("po", resources)[0].path("ns1") == "/api/v1/namespaces/ns1/pods"


def test_aggregated_discovery_parsing() -> None:
    doc = {
        "kind": "APIGroupDiscoveryList",
        "items": [
            {
                "metadata": {"name": "jobset.x-k8s.io"},
                "versions": [
                    {
                        "version": "v1alpha2",
                        "resources": [
                            {
                                "resource": "jobsets",
                                "singularResource": "jobset",
                                "responseKind": {
                                    "group": "jobset.x-k8s.io",
                                    "version": "v1alpha2",
                                    "kind": "JobSet",
                                },
                                "scope": "Namespaced",
                                "shortNames": ["js"],
                                "verbs": ["list"],
                            }
                        ],
                    },
                    {
                        "version": "v1alpha1",
                        "resources": [
                            {
                                "resource": "jobsets",
                                "responseKind": {"kind": "JobSet"},
                                "scope": "Namespaced",
                            }
                        ],
                    },
                ],
            }
        ],
    }
    resources = _from_aggregated(doc)
    assert [(r.version, r.preferred) for r in resources] == [
        ("v1alpha2", True),
        ("v1alpha1", False),
    ]
    assert resources[0].short_names == ("js",) and resources[0].namespaced


def test_version_priority() -> None:
    versions = ["v1alpha1", "v2beta1", "v1", "v1beta2", "v2", "foo"]
    assert sorted(versions, key=version_priority) == [
        "v2",
        "v1",
        "v2beta1",
        "v1beta2",
        "v1alpha1",
        "foo",
    ]


def test_paged_listing_follows_continue_tokens() -> None:
    api = FakeAPI().serve(JOBSET)
    api.add(*[obj("jobset.x-k8s.io/v1alpha2", "JobSet", f"js-{i:02d}") for i in range(7)])
    cluster = Cluster(api)
    res = cluster.resource_for("jobset.x-k8s.io/v1alpha2", "JobSet")
    assert res is not None
    names = [o["metadata"]["name"] for o in cluster.iter_list(res, "default", chunk_size=3)]
    assert names == [f"js-{i:02d}" for i in range(7)]
    list_calls = [p for p in api.requests if p.endswith("/jobsets")]
    assert len(list_calls) == 3
    items = list(cluster.iter_list(res, "default", chunk_size=0))
    assert items[0]["kind"] == "JobSet" and items[0]["apiVersion"] == "jobset.x-k8s.io/v1alpha2"


def test_get_errors_name_the_object() -> None:
    api = FakeAPI().serve(JOBSET)
    cluster = Cluster(api)
    res = cluster.resource_for("jobset.x-k8s.io/v1alpha2", "JobSet")
    assert res is not None
    with pytest.raises(NotFound, match='JobSet "x" not found in namespace default'):
        cluster.get(res, "x", "default")
    api.forbidden.add("/apis/jobset.x-k8s.io/v1alpha2/namespaces/default/jobsets")
    with pytest.raises(
        Forbidden, match=r"cannot list jobsets\.jobset\.x-k8s\.io in namespace default"
    ):
        list(cluster.iter_list(res, "default"))


def test_api_error_mapping() -> None:
    status = json.dumps({"kind": "Status", "message": "nope", "reason": "Forbidden"})
    assert isinstance(api_error(401, status, "/api"), Unauthorized)
    err = api_error(403, status, "/api/v1/pods")
    assert isinstance(err, Forbidden) and err.detail == "nope" and "nope" in str(err)
    assert "503" in str(api_error(503, "x" * 1000, "/api"))
    assert len(str(api_error(500, "y" * 1000, "/api"))) < 400


def _jobset_with_pods(api: FakeAPI) -> dict:
    js = obj("jobset.x-k8s.io/v1alpha2", "JobSet", "train")
    job = obj("batch/v1", "Job", "train-workers-0", owner=owner_ref(js))
    other = obj("jobset.x-k8s.io/v1alpha2", "JobSet", "other")
    other_job = obj("batch/v1", "Job", "other-workers-0", owner=owner_ref(other))
    api.add(
        js,
        job,
        other,
        other_job,
        pod("train-workers-0-0", job),
        pod("train-workers-0-1", job, ready=False),
        pod("other-workers-0-0", other_job),
        pod("bare", None),
    )
    return js


def test_find_pods_walks_controller_chains_with_cache() -> None:
    api = FakeAPI().serve(JOBSET)
    js = _jobset_with_pods(api)
    cluster = Cluster(api)
    pods = find_pods(cluster, js)
    assert sorted(p["metadata"]["name"] for p in pods) == ["train-workers-0-0", "train-workers-0-1"]
    job_gets = [p for p in api.requests if p.endswith("/jobs/train-workers-0")]
    assert len(job_gets) == 1  # cached across pods
    bare = obj("v1", "Pod", "solo")
    assert find_pods(cluster, bare) == [bare]


def test_find_pods_uses_owner_labels_when_a_chain_breaks() -> None:
    """A Job already garbage-collected: the JobSet's owner labels place its pod; a pod whose
    labels name another JobSet stays out even when its chain breaks the same way."""
    api = FakeAPI().serve(JOBSET)
    js = _jobset_with_pods(api)
    gone = obj("batch/v1", "Job", "train-workers-1")  # never served: deleted
    mine = {"jobset.sigs.k8s.io/jobset-name": "train"}
    theirs = {"jobset.sigs.k8s.io/jobset-name": "other"}
    api.add(
        pod("train-workers-1-0", gone, labels=mine),
        pod("other-workers-1-0", gone, labels=theirs),
        pod("unlabelled-1-0", gone),
    )
    names = sorted(p["metadata"]["name"] for p in find_pods(Cluster(api), js))
    assert names == ["train-workers-0-0", "train-workers-0-1", "train-workers-1-0"]


def test_pods_by_owner_indexes_every_ancestor() -> None:
    api = FakeAPI().serve(JOBSET)
    js = _jobset_with_pods(api)
    index = pods_by_owner(Cluster(api), "default")
    assert len(index.pods_of(js)) == 2 and len(index) == 4
    job = {"metadata": {"uid": "uid-job-train-workers-0", "namespace": "default"}}
    assert len(index.pods_of(job)) == 2


def test_owning_workload() -> None:
    api = FakeAPI().serve(JOBSET)
    js = obj("jobset.x-k8s.io/v1alpha2", "JobSet", "train")
    job = obj("batch/v1", "Job", "train-0", owner=owner_ref(js))
    lone = obj("batch/v1", "Job", "lone")
    orphan = obj(
        "batch/v1",
        "Job",
        "orphan",
        owner={
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "name": "gone",
            "uid": "u",
            "controller": True,
        },
    )
    api.add(js, job, lone)
    cluster = Cluster(api)

    def covered(api_version: str, kind: str) -> bool:
        return kind in ("JobSet", "Job")

    assert owning_workload(cluster, job, covered)["name"] == "train"
    assert owning_workload(cluster, lone, covered) is None
    seen: list[dict] = []
    assert owning_workload(cluster, orphan, covered, seen.append) is None
    assert seen and seen[0]["name"] == "gone"


KUBECONFIG = """
apiVersion: v1
kind: Config
clusters:
- name: c1
  cluster: {server: "https://127.0.0.1:1", insecure-skip-tls-verify: true}
users:
- name: u1
  user: {token: abc}
contexts:
- name: dev
  context: {cluster: c1, user: u1, namespace: team-a}
- name: prod
  context: {cluster: c1, user: u1}
current-context: dev
"""


def test_kubeconfig_contexts_and_namespaces(tmp_path: Path) -> None:
    path = tmp_path / "config"
    path.write_text(KUBECONFIG)
    env = {"HOME": str(tmp_path)}
    resolved = resolve(ConnectionOptions(kubeconfig=str(path), environ=env))
    assert (resolved.context, resolved.namespace) == ("dev", "team-a")
    assert resolved.server == "https://127.0.0.1:1"
    prod = resolve(ConnectionOptions(kubeconfig=str(path), context="prod", environ=env))
    assert prod.namespace == "default"
    override = resolve(ConnectionOptions(kubeconfig=str(path), namespace="x", environ=env))
    assert override.namespace == "x"
    via_env = resolve(ConnectionOptions(environ={"HOME": str(tmp_path), "KUBECONFIG": str(path)}))
    assert via_env.context == "dev"
    with pytest.raises(ClusterError, match=r'context "nope" not found.*dev, prod'):
        resolve(ConnectionOptions(kubeconfig=str(path), context="nope", environ=env))
    with pytest.raises(ClusterError, match="no such file"):
        resolve(ConnectionOptions(kubeconfig=str(tmp_path / "missing"), environ=env))


def test_no_kubeconfig_is_not_configured(tmp_path: Path) -> None:
    with pytest.raises(NotConfigured, match="no cluster configured"):
        resolve(ConnectionOptions(environ={"HOME": str(tmp_path)}))


def test_unreachable_server_is_a_clear_error(tmp_path: Path) -> None:
    from workload_map.kube import Unreachable, connect

    path = tmp_path / "config"
    path.write_text(KUBECONFIG)
    cluster = connect(
        ConnectionOptions(kubeconfig=str(path), timeout=2, environ={"HOME": str(tmp_path)})
    )
    with pytest.raises(Unreachable, match=r"cannot reach the cluster at https://127\.0\.0\.1:1"):
        cluster.resources()


def test_in_cluster_service_account(tmp_path: Path) -> None:
    sa = tmp_path / "sa"
    sa.mkdir()
    (sa / "token").write_text("tok")
    (sa / "ca.crt").write_text("-----BEGIN CERTIFICATE-----\n")
    (sa / "namespace").write_text("team-b\n")
    env = {
        "HOME": str(tmp_path),
        "KUBERNETES_SERVICE_HOST": "10.0.0.1",
        "KUBERNETES_SERVICE_PORT": "443",
    }
    resolved = resolve(ConnectionOptions(environ=env, service_account_dir=sa))
    assert resolved.source == "in-cluster"
    assert resolved.server == "https://10.0.0.1:443"
    assert resolved.namespace == "team-b"
    override = resolve(ConnectionOptions(environ=env, service_account_dir=sa, namespace="x"))
    assert override.namespace == "x"
    # without the service host it is not in-cluster
    with pytest.raises(NotConfigured):
        resolve(ConnectionOptions(environ={"HOME": str(tmp_path)}, service_account_dir=sa))


def test_kubeconfig_env_naming_only_missing_files(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path), "KUBECONFIG": f"{tmp_path}/a:{tmp_path}/b"}
    with pytest.raises(NotConfigured, match=rf"KUBECONFIG names {tmp_path}/a, {tmp_path}/b"):
        resolve(ConnectionOptions(environ=env))
