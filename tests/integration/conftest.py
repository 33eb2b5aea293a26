"""Fixtures for tests that talk to a real Kubernetes control plane (see ``harness.py``).

- ``kube`` (session): etcd + kube-apiserver + kube-controller-manager v1.37, workload API on,
  shared by the whole session; or the cluster named by ``WLMAP_TEST_KUBECONFIG``.
- ``scheduler`` (module): starts kube-scheduler on ``kube``'s plane for the module's tests.
- ``module_kube`` (module): a private plane with the scheduler, for tests that restart the API
  server (``module_kube.restart_apiserver()``) or would disturb others.
- ``kube_without_generic_workload`` (module): the same binaries with ``GenericWorkload`` off.
- ``kube_with_controllers`` (module): a private plane that also runs the in-tree Job,
  ReplicaSet, Deployment and StatefulSet controllers (tests create only the workload).
- ``kube_with_gates`` (module): a private plane with the module's ``PLANE_OPTIONS`` (more
  feature gates, more API versions served, the workload controllers).
- ``namespace`` (function): a fresh namespace on the test's cluster (the module plane when the
  test uses one, else ``kube``), its pods force-deleted and the namespace deleted afterwards.
- ``fake_nodes`` (function): a ``FakeNodes`` on the same cluster; ``fake_nodes.add(n, capacity)``
  / ``remove(name)``; its nodes are deleted afterwards.
- ``api``, ``tok`` (module): a client of the module's own ``plane`` fixture and a token for its
  namespaces (the gang modules define ``plane``; the others define their own ``api``).
- ``kubelet`` (function): a stand-in for the kubelet that completes the deletion of terminating
  pods bound to fake nodes (preemption, deletes), which no real kubelet would finish here.

Every test in this folder is marked ``integration``. Missing binaries make the tests FAIL with
build instructions: these tests are part of the suite, never silently skipped.
"""

from __future__ import annotations

from collections.abc import Generator, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.gangs.e2e import gang_operator, make_namespace, token
from tests.operator.live import OperatorProcess, api_for, delete
from workload_map.kube.api import Api

from .harness import FakeNodes, HarnessError, Kube, open_kube
from .kubelet import FakeKubelet

HERE = Path(__file__).resolve().parent

_session_error: str | None = None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if HERE in Path(str(item.path)).resolve().parents:
            item.add_marker(pytest.mark.integration)


@pytest.fixture(scope="session")
def kube() -> Iterator[Kube]:
    global _session_error
    if _session_error is None:  # a failed start is not retried per test (minutes of timeouts)
        try:
            cluster = open_kube()
        except HarnessError as err:
            _session_error = str(err)
    if _session_error is not None:
        pytest.fail(_session_error, pytrace=False)
    try:
        yield cluster
    finally:
        cluster.shutdown()


@pytest.fixture(scope="module")
def scheduler(kube: Kube) -> Iterator[Kube]:
    """``kube`` with kube-scheduler running for this module (an external cluster has its own)."""
    if kube.plane is None:
        yield kube
        return
    kube.plane.start_scheduler()
    try:
        yield kube
    finally:
        kube.plane.stop_scheduler()


def _private_plane(**options: Any) -> Iterator[Kube]:
    try:
        cluster = open_kube(external_ok=False, **options)
    except HarnessError as err:
        pytest.fail(str(err), pytrace=False)
    try:
        yield cluster
    finally:
        cluster.shutdown()


@pytest.fixture(scope="module")
def module_kube() -> Iterator[Kube]:
    """A control plane of this module's own (scheduler included), free to restart."""
    yield from _private_plane(scheduler=True)


@pytest.fixture(scope="module")
def kube_without_generic_workload() -> Iterator[Kube]:
    """The same binaries with GenericWorkload off and no scheduling.k8s.io/v1beta1."""
    yield from _private_plane(scheduler=True, generic_workload=False)


@pytest.fixture(scope="module")
def kube_with_controllers() -> Iterator[Kube]:
    """A plane of this module's own whose in-tree Job, ReplicaSet, Deployment and StatefulSet
    controllers make the pods: tests create only the workload."""
    yield from _private_plane(scheduler=True, workload_controllers=True)


@pytest.fixture(scope="module")
def kube_with_gates(request: pytest.FixtureRequest) -> Iterator[Kube]:
    """A plane of this module's own with the module's ``PLANE_OPTIONS`` (a dict of
    ``open_kube`` options: ``extra_gates``, ``extra_apis``, ``workload_controllers``)."""
    options = dict(getattr(request.module, "PLANE_OPTIONS", {}))
    yield from _private_plane(scheduler=True, **options)


_PRIVATE_PLANES = (
    "module_kube",
    "kube_without_generic_workload",
    "kube_with_controllers",
    "kube_with_gates",
)


def _cluster_of(request: pytest.FixtureRequest) -> Kube:
    """The cluster a test works on: its module plane if it uses one, else the session's."""
    for name in _PRIVATE_PLANES:
        if name in request.fixturenames:
            cluster: Kube = request.getfixturevalue(name)
            return cluster
    shared: Kube = request.getfixturevalue("kube")
    return shared


@pytest.fixture
def namespace(request: pytest.FixtureRequest) -> Iterator[str]:
    """A fresh namespace (server-generated ``wlmap-test-xxxxx`` name), deleted afterwards."""
    cluster = _cluster_of(request)
    name = cluster.create_namespace()
    yield name
    cluster.delete_namespace(name)


@pytest.fixture
def fake_nodes(request: pytest.FixtureRequest) -> Iterator[FakeNodes]:
    """Add/remove fake nodes (``add(count, capacity)``); all deleted after the test."""
    cluster = _cluster_of(request)
    if cluster.plane is None:
        pytest.skip("fake nodes need the local control plane (node lifecycle off)")
    nodes = FakeNodes(cluster)
    try:
        yield nodes
    finally:
        nodes.remove_all()


@pytest.fixture(scope="module")
def api(plane: Kube) -> Iterator[Api]:
    """A client of the module's ``plane`` fixture (the gang modules' plane with its CRDs)."""
    client = api_for(plane.kubeconfig)
    yield client
    client.close()


@pytest.fixture(scope="module")
def tok() -> str:
    """The module's token: its namespaces and webhook configuration carry it."""
    return token()


@pytest.fixture(scope="module")
def op(
    plane: Kube, api: Api, tok: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[OperatorProcess]:
    """The gang operator over the module's ``plane`` (its own namespace, not opted in), for the
    gang modules; a module that needs other flags defines its own ``op``."""
    ns = make_namespace(api, tok, opted_in=False)
    with gang_operator(api, plane.kubeconfig, ns, tmp_path_factory.mktemp("gangs"), tok) as proc:
        yield proc
    delete(api, f"/api/v1/namespaces/{ns}")


@pytest.fixture
def kubelet(request: pytest.FixtureRequest) -> Iterator[FakeKubelet]:
    """The kubelet's part in pod deletion for fake nodes: terminating pods bound to them are
    deleted with grace 0, as a kubelet does once their containers stop (``kubelet.py``)."""
    cluster = _cluster_of(request)
    if cluster.plane is None:
        pytest.skip("the stand-in kubelet serves the local control plane's fake nodes")
    stand_in = FakeKubelet(cluster).start()
    try:
        yield stand_in
    finally:
        stand_in.stop()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """On a failure, show the local apiserver/etcd log tails next to the traceback."""
    report = yield
    if report.failed:
        args = getattr(item, "funcargs", {})
        for name in ("kube", "scheduler", *_PRIVATE_PLANES):
            cluster = args.get(name)
            if isinstance(cluster, Kube) and cluster.plane is not None:
                report.sections.append((f"control plane logs ({name})", cluster.plane.log_tails()))
    return report
