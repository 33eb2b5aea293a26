"""Library helpers on a live cluster: resolve_definition, workload_pods, supports_suspend."""

from __future__ import annotations

import copy

import pytest
import yaml

import workload_map.cluster as wc
from tests.cli.fake_cluster import JOBSET, KARTA, FakeAPI, obj, owner_ref, pod


def _setup(wlmap) -> tuple[FakeAPI, dict, dict]:  # type: ignore[no-untyped-def]
    api = FakeAPI(namespace="ml").serve(JOBSET, KARTA)
    js = obj("jobset.x-k8s.io/v1alpha2", "JobSet", "train", "ml", spec={"replicatedJobs": []})
    job = obj("batch/v1", "Job", "train-w-0", "ml", owner=owner_ref(js))
    api.add(js, job, pod("train-w-0-0", job, namespace="ml"), pod("other", None, namespace="ml"))
    karta = yaml.safe_load(
        wlmap(["definitions", "jobset-x-k8s-io-jobset-v1alpha2", "-o", "yaml"]).out
    )
    return api, js, karta


def test_public_names() -> None:
    for name in ("resolve_definition", "workload_pods", "supports_suspend", "Definitions"):
        assert (name in wc.__all__ and callable(getattr(wc, name))) or name == "Definitions"


def test_resolve_definition_prefers_cluster_kartas(wlmap) -> None:
    api, js, karta = _setup(wlmap)
    cluster = api.connect(wc.ConnectionOptions())
    assert wc.resolve_definition(js, cluster).origin == "catalog"  # type: ignore[union-attr]
    api.add({**copy.deepcopy(karta), "metadata": {"name": "team-jobset"}})
    again = api.connect(wc.ConnectionOptions())
    found = wc.resolve_definition(js, again)
    assert found is not None and (found.name, found.origin) == ("team-jobset", "cluster")
    # offline: the catalog; another version falls back unless exact=True
    other = {**js, "apiVersion": "jobset.x-k8s.io/v9"}
    assert wc.resolve_definition(other) is not None
    assert wc.resolve_definition(other, exact=True) is None
    assert wc.resolve_definition({"apiVersion": "example.com/v1", "kind": "Nope"}) is None
    with pytest.raises(wc.ClusterError, match="apiVersion and kind"):
        wc.resolve_definition({"metadata": {}})


def test_resolve_definition_takes_client_objects() -> None:
    from kubernetes import client

    typed = client.V1Pod(metadata=client.V1ObjectMeta(name="p"))  # kind left out, as in lists
    found = wc.resolve_definition(typed)
    assert found is not None and found.kind == "Pod"


def test_workload_pods_follow_the_owner_chain(wlmap) -> None:
    api, js, _ = _setup(wlmap)
    cluster = api.connect(wc.ConnectionOptions())
    assert [p["metadata"]["name"] for p in wc.workload_pods(cluster, js)] == ["train-w-0-0"]
    api.forbidden.add("/api/v1/namespaces/ml/pods")
    with pytest.raises(wc.Forbidden):
        wc.workload_pods(api.connect(wc.ConnectionOptions()), js)


def test_supports_suspend() -> None:
    jobset = wc.resolve_definition({"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet"})
    bare = wc.resolve_definition({"apiVersion": "v1", "kind": "Pod"})
    assert jobset is not None and bare is not None
    assert wc.supports_suspend(jobset) is True
    assert wc.supports_suspend(jobset.karta) is True
    assert wc.supports_suspend(bare) is False
    with pytest.raises(TypeError):
        wc.supports_suspend("jobset")
