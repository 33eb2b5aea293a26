"""``wlmap serve`` on the real API server, in a real Chromium, with one namespace's permissions.

A ServiceAccount that may only read one namespace (a Role, no ClusterRole, no Karta access)
gets a token; the web view runs with a kubeconfig of that token, watches that namespace, lists
workloads of several kinds, shows a workload's graph and events, and updates the page live when
a pod becomes ready (the status written as the kubelet would).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.integration.harness import Kube
from tests.web.browser import VIEWPORT, browser, serving
from tests.web.conftest import TOKEN
from workload_map.web import LiveSource


def reader_kubeconfig(kube: Kube, namespace: str, path: Path) -> Path:
    """A kubeconfig of a ServiceAccount that may get/list/watch everything in ``namespace``."""
    kube.apply(
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "viewer"}}, namespace
    )
    kube.apply(
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "Role",
            "metadata": {"name": "viewer"},
            # everything the view needs here, but not StatefulSets (a kind it may not read)
            "rules": [
                {
                    "apiGroups": ["", "batch"],
                    "resources": ["pods", "events", "jobs"],
                    "verbs": ["get", "list", "watch"],
                },
                {
                    "apiGroups": ["apps"],
                    "resources": ["deployments", "replicasets", "daemonsets"],
                    "verbs": ["get", "list", "watch"],
                },
            ],
        },
        namespace,
    )
    kube.apply(
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding",
            "metadata": {"name": "viewer"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "viewer"},
            "subjects": [{"kind": "ServiceAccount", "name": "viewer", "namespace": namespace}],
        },
        namespace,
    )
    token = kube.request(
        "POST",
        f"/api/v1/namespaces/{namespace}/serviceaccounts/viewer/token",
        {
            "apiVersion": "authentication.k8s.io/v1",
            "kind": "TokenRequest",
            "spec": {"expirationSeconds": 3600},
        },
    )["status"]["token"]
    admin = yaml.safe_load(Path(kube.kubeconfig).read_text())
    cluster = admin["clusters"][0]["cluster"]
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "current-context": "viewer",
        "clusters": [{"name": "test", "cluster": cluster}],
        "users": [{"name": "viewer", "user": {"token": token}}],
        "contexts": [
            {
                "name": "viewer",
                "context": {"cluster": "test", "user": "viewer", "namespace": namespace},
            }
        ],
    }
    path.write_text(yaml.safe_dump(config))
    return path


def owned_pod(name: str, owner: dict[str, Any]) -> dict[str, Any]:
    meta = owner["metadata"]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "ownerReferences": [
                {
                    "apiVersion": owner["apiVersion"],
                    "kind": owner["kind"],
                    "name": meta["name"],
                    "uid": meta["uid"],
                    "controller": True,
                }
            ],
        },
        "spec": {
            "containers": [
                {"name": "c", "image": "x", "resources": {"limits": {"nvidia.com/gpu": "1"}}}
            ]
        },
    }


@pytest.fixture
def cluster_workloads(kube: Kube, namespace: str) -> dict[str, Any]:
    job = kube.apply(
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": "train"},
            "spec": {
                "parallelism": 2,
                "completions": 2,
                "template": {
                    "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "x"}]}
                },
            },
        },
        namespace,
    )
    sts = kube.apply(
        {
            "apiVersion": "apps/v1",
            "kind": "StatefulSet",
            "metadata": {"name": "db"},
            "spec": {
                "replicas": 1,
                "serviceName": "db",
                "selector": {"matchLabels": {"app": "db"}},
                "template": {
                    "metadata": {"labels": {"app": "db"}},
                    "spec": {"containers": [{"name": "c", "image": "x"}]},
                },
            },
        },
        namespace,
    )
    pods = {}
    for name, owner in (("train-0", job), ("train-1", job), ("db-0", sts)):
        created = kube.apply(owned_pod(name, owner), namespace)
        pods[name] = created
    kube.set_status(
        {
            **pods["train-0"],
            "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]},
        }
    )
    kube.request(
        "POST",
        f"/api/v1/namespaces/{namespace}/events",
        {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": "train.1"},
            "involvedObject": {
                "apiVersion": "batch/v1",
                "kind": "Job",
                "name": "train",
                "namespace": namespace,
                "uid": job["metadata"]["uid"],
            },
            "reason": "SuccessfulCreate",
            "message": "Created pod: train-1",
            "type": "Normal",
            "source": {"component": "job-controller"},
        },
    )
    return {"job": job, "pods": pods}


@pytest.fixture
def live(
    kube: Kube, namespace: str, tmp_path: Path, cluster_workloads: dict[str, Any]
) -> Iterator[LiveSource]:
    config = reader_kubeconfig(kube, namespace, tmp_path / "viewer.kubeconfig")
    source = LiveSource(str(config), namespaces=(namespace,))
    yield source
    source.close()


def test_live_view_with_one_namespace_of_permissions(
    kube: Kube, namespace: str, live: LiveSource, cluster_workloads: dict[str, Any]
) -> None:
    from playwright.sync_api import expect

    # the viewer may not list Kartas cluster-wide, nor anything outside its namespace: the
    # catalog serves, and the unreadable kinds are reported, not fatal
    with serving(live) as url, browser() as chromium:
        context = chromium.new_context(viewport=VIEWPORT)
        page = context.new_page()
        page.goto(f"{url}/?token={TOKEN}")
        rows = page.locator("table.workloads tbody tr")
        expect(rows).to_have_count(1, timeout=20000)  # the Job; the StatefulSet is not readable
        text = page.locator("table.workloads").inner_text()
        assert "train" in text and namespace in text
        notice = page.locator("details.notice").inner_text()
        assert "kinds or files could not be read" in notice
        page.get_by_role("link", name="train").click()
        page.wait_for_url("**/Job/**/train")
        assert page.locator("svg.graph g.node-pod").count() == 2
        assert "Created pod: train-1" in page.locator("#events ~ table").inner_text()
        not_ready = page.locator("svg.graph g.state-pending")
        expect(not_ready).to_have_count(1)
        kube.set_status(
            {
                **cluster_workloads["pods"]["train-1"],
                "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]},
            }
        )
        expect(not_ready).to_have_count(0, timeout=20000)  # pushed by server-sent events
        page.get_by_role("link", name="Definitions").click()
        page.wait_for_url("**/definitions")
        job_row = page.locator("tr", has=page.get_by_role("cell", name="batch-job-v1"))
        assert "ok" in job_row.inner_text()
        sts_row = page.locator("tr", has=page.get_by_role("cell", name="apps-statefulset-v1"))
        assert "no permission" in sts_row.inner_text()
        # no test installs a Sandbox CRD (none is published for it in ../shared)
        crd_row = page.locator(
            "tr", has=page.get_by_role("cell", name="agents-x-k8s-io-sandbox-v1alpha1")
        )
        assert "CRD missing" in crd_row.inner_text()
        context.close()
