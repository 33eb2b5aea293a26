"""Fixtures for tests that talk to a real Kubernetes API server (see ``harness.py``).

``kube`` (session) starts etcd + kube-apiserver once per session, or uses the cluster named by
``WLMAP_TEST_KUBECONFIG``; ``namespace`` gives each test a fresh namespace. Every test in this
folder is marked ``integration``. Missing binaries make the tests FAIL with build instructions:
these tests are part of the suite, never silently skipped.
"""

from __future__ import annotations

from collections.abc import Generator, Iterator
from pathlib import Path

import pytest

from .harness import HarnessError, Kube, open_kube

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


@pytest.fixture
def namespace(kube: Kube) -> Iterator[str]:
    """A fresh namespace (server-generated ``wlmap-test-xxxxx`` name), deleted afterwards."""
    name = kube.create_namespace()
    yield name
    kube.delete_namespace(name)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """On a failure, show the local apiserver/etcd log tails next to the traceback."""
    report = yield
    if report.failed and "kube" in getattr(item, "fixturenames", ()):
        cluster = getattr(item, "funcargs", {}).get("kube")
        if isinstance(cluster, Kube) and cluster.plane is not None:
            report.sections.append(("control plane logs", cluster.plane.log_tails()))
    return report
