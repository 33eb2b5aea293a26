"""A private control plane (``module_kube``) whose API server a test restarts.

The restart keeps etcd's data and the address; the controller-manager and the scheduler
reconnect by themselves, so the cluster schedules again afterwards.
"""

from __future__ import annotations

import re

from kubernetes import client

from tests.gangs.e2e import wait

from .harness import FakeNodes, Kube
from .test_scheduling import GPU_NODE, bound, pod


def test_module_plane_runs_every_component(module_kube: Kube) -> None:
    plane = module_kube.local_plane()
    # an API server another test of this module adds (`kube-apiserver-2`, on the same etcd)
    # may be running too: the module's tests run in any order
    assert {re.sub(r"-\d+$", "", name) for name in plane.rss_mb()} == {
        "etcd",
        "kube-apiserver",
        "kube-controller-manager",
        "kube-scheduler",
    }
    assert plane.scheduler_running


def test_restart_keeps_data_and_address_and_scheduling_resumes(
    module_kube: Kube, namespace: str, fake_nodes: FakeNodes
) -> None:
    plane = module_kube.local_plane()
    before = module_kube.apply(
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "kept"}, "data": {"a": "1"}},
        namespace,
    )
    old = next(p.popen for p in plane.procs if p.name == "kube-apiserver")
    server = module_kube.server

    # returns once the new server is ready; past the configured start timeout
    # (WLMAP_TEST_START_TIMEOUT) it raises: the bound comes from the configuration, and what is
    # asserted is the order (the old process gone before the new one serves), not the seconds
    module_kube.restart_apiserver()

    new_pid = next(p.popen.pid for p in plane.procs if p.name == "kube-apiserver")
    assert new_pid != old.pid and module_kube.server == server
    assert old.poll() is not None
    after = module_kube.get("v1", "ConfigMap", "kept", namespace)
    assert after["metadata"]["uid"] == before["metadata"]["uid"]
    assert after["data"] == {"a": "1"}
    # A client made before the restart keeps working: the address did not change.
    names = {
        ns.metadata.name for ns in client.CoreV1Api(module_kube.api_client()).list_namespace().items
    }
    assert namespace in names

    [node] = fake_nodes.add(1, GPU_NODE)
    module_kube.apply(pod("after-restart", gpus=1), namespace)
    placed = wait(
        "the scheduler to bind after the restart",
        lambda: bound(module_kube, namespace, ["after-restart"]),
        timeout=90,
    )
    assert placed == {"after-restart": node}
    assert plane.scheduler_running


def test_stopped_apiserver_refuses_then_serves_again(module_kube: Kube, namespace: str) -> None:
    plane = module_kube.local_plane()
    plane.stop_apiserver()
    try:
        import urllib.error
        import urllib.request

        try:
            urllib.request.urlopen(f"{module_kube.server}/readyz", timeout=2)
            reachable = True
        except (urllib.error.URLError, OSError):
            reachable = False
        assert not reachable
    finally:
        plane.start_apiserver()
    assert module_kube.get("v1", "Namespace", namespace)["metadata"]["name"] == namespace


def test_a_second_apiserver_serves_the_same_data(module_kube: Kube, namespace: str) -> None:
    plane = module_kube.local_plane()
    server, kubeconfig = plane.add_apiserver("--watch-cache=false")
    assert server != module_kube.server
    second = Kube(kubeconfig=kubeconfig)
    try:
        module_kube.apply(
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "seen-twice"}},
            namespace,
        )
        read = second.get("v1", "ConfigMap", "seen-twice", namespace)
        assert read["metadata"]["namespace"] == namespace
    finally:
        second.close()
    assert "kube-apiserver-2" in {p.name for p in plane.procs}
