"""References in the exporter and the web view, on the real API server: a Kubeflow Trainer v2
TrainJob whose pods and GPUs only its ClusterTrainingRuntime says.

The Trainer CRDs are installed; a runtime of 3 nodes of 2 GPUs and a TrainJob naming it (and no
node count) are created. The exporter's series and the web view's page show 3 pods and 6 GPUs
(the TrainJob alone would say 1 and 0). The runtime is edited to 5 nodes: both show 5 and 10,
through the watch of the runtimes, without a restart. The runtime is deleted: the exporter
exports the reference with ``reason="missing"`` and the page shows the finding; the TrainJob
is still exported and shown.
"""

from __future__ import annotations

import re
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest

from tests.catalog import trainjobs
from tests.integration.harness import Kube
from tests.web.browser import serving
from tests.web.conftest import TOKEN
from workload_map.exporter.service import ExporterService
from workload_map.exporter.settings import ExporterSettings
from workload_map.kube.cache import InformerSet
from workload_map.kube.connect_api import open_api
from workload_map.kube.options import ConnectionOptions
from workload_map.web import LiveSource

pytestmark = pytest.mark.integration

CRDS = (
    "kubeflow-trainer-v2/trainer.kubeflow.org_trainjobs.yaml.gz",
    "kubeflow-trainer-v2/trainer.kubeflow.org_clustertrainingruntimes.yaml.gz",
    "kubeflow-trainer-v2/trainer.kubeflow.org_trainingruntimes.yaml.gz",
)
API = trainjobs.API_VERSION
GPU = "nvidia.com/gpu"
#: how long a change may take to reach a cache and a page (watch delivery on a loaded machine)
WAIT = 60.0

T = TypeVar("T")


def _runtime(name: str, nodes: int) -> dict[str, Any]:
    container = {"name": "node", "image": "trainer", "resources": {"limits": {GPU: "2"}}}
    return trainjobs.runtime(
        name, nodes, container=container, job_labels={trainjobs.ANCESTOR_LABEL: "trainer"}
    )


def _until(what: str, check: Callable[[], T | None]) -> T:
    deadline = time.monotonic() + WAIT
    last: T | None = None
    while time.monotonic() < deadline:
        last = check()
        if last:
            return last
        time.sleep(0.2)
    raise AssertionError(f"timed out after {WAIT} s waiting for {what} (last: {last!r})")


def _get(url: str) -> str:
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {TOKEN}"})
    with urllib.request.urlopen(request, timeout=10) as resp:
        return str(resp.read().decode())


def _series(text: str, name: str, **labels: str) -> float | None:
    for line in text.splitlines():
        if not line.startswith(name + "{"):
            continue
        found = dict(re.findall(r'(\w+)="([^"]*)"', line.partition("}")[0]))
        if all(found.get(k) == v for k, v in labels.items()):
            return float(line.rpartition(" ")[2])
    return None


@pytest.fixture
def runtime_name(kube: Kube, shared_dir: Path, namespace: str) -> Iterator[str]:
    for rel in CRDS:
        kube.install_crd(shared_dir / "realworld" / rel)
    name = f"rt-{namespace}"  # cluster-scoped: one of this test's own
    yield name
    try:
        kube.delete(API, "ClusterTrainingRuntime", name)
    except Exception:  # deleted by the test already
        pass


@pytest.fixture
def exporter(kube: Kube, namespace: str, runtime_name: str) -> Iterator[str]:
    api = open_api(ConnectionOptions(kubeconfig=str(kube.kubeconfig), timeout=10.0))
    informers = InformerSet(api.transport())
    settings = ExporterSettings("127.0.0.1", 0, include_namespaces=(namespace,))
    service = ExporterService(settings, api.transport(), informers).start()
    try:
        yield f"http://127.0.0.1:{service.port}/metrics"
    finally:
        service.stop()
        informers.stop()
        api.close()


@pytest.fixture
def web(kube: Kube, namespace: str, runtime_name: str) -> Iterator[str]:
    source = LiveSource(str(kube.kubeconfig), namespaces=(namespace,))
    try:
        with serving(source) as url:
            yield url
    finally:
        source.close()


def test_the_runtime_decides_the_series_and_the_page_and_an_edit_changes_both(
    kube: Kube, namespace: str, runtime_name: str, exporter: str, web: str
) -> None:
    kube.apply(_runtime(runtime_name, 3))
    kube.apply(
        {
            "apiVersion": API,
            "kind": "TrainJob",
            "metadata": {"name": "train"},
            "spec": {"runtimeRef": {"name": runtime_name}},
        },
        namespace,
    )
    wl = {"namespace": namespace, "workload": "train", "kind": "TrainJob"}
    page = f"{web}/workloads/trainer.kubeflow.org/v1alpha1/TrainJob/{namespace}/train"

    def exported(nodes: int) -> str | None:
        text = _get(exporter)
        pods = _series(text, "workloadmap_workload_pods", state="desired", **wl)
        gpus = _series(
            text,
            "workloadmap_workload_resources",
            resource="nvidia.com/gpu",
            state="requested",
            **wl,
        )
        return text if (pods, gpus) == (nodes, 2 * nodes) else None

    def listed(nodes: int) -> str | None:
        body = _get(f"{web}/?namespace={namespace}")
        if ">train</a>" not in body:
            return None
        row = body[body.index(">train</a>") :].split("</tr>")[0]
        return row if f"0/{nodes}" in row and f"{2 * nodes} · 0 · 0" in row else None

    # the TrainJob alone would be 1 pod and 0 GPUs: these numbers are the runtime's
    text = _until("the exporter's 3 pods and 6 GPUs", lambda: exported(3))
    assert (
        _series(
            text,
            "workloadmap_workload_references",
            reference="runtime",
            object=runtime_name,
            reason="",
            **wl,
        )
        == 1
    )
    assert _series(text, "workloadmap_gang_min_members", **wl) == 3
    _until("the web list's 0/3 pods and 6 GPUs", lambda: listed(3))
    body = _get(page)
    assert "$runtime" in body and f"ClusterTrainingRuntime/{runtime_name}" in body

    # the runtime edited: both follow through the runtimes' watch
    kube.apply(_runtime(runtime_name, 5))
    text = _until("the exporter's 5 pods and 10 GPUs", lambda: exported(5))
    assert _series(text, "workloadmap_gang_min_members", **wl) == 5
    _until("the web list's 0/5 pods and 10 GPUs", lambda: listed(5))

    # the runtime deleted: a finding, the TrainJob still exported and shown
    kube.delete(API, "ClusterTrainingRuntime", runtime_name)

    def missing() -> str | None:
        text = _get(exporter)
        value = _series(
            text, "workloadmap_workload_references", reference="runtime", reason="missing", **wl
        )
        return text if value == 0 else None

    text = _until("the exporter's missing reference", missing)
    assert _series(text, "workloadmap_workload_info", **wl) == 1
    assert _series(text, "workloadmap_workload_pods", state="desired", **wl) == 1

    def finding() -> str | None:
        body = _get(page)
        return body if 'role="alert"' in body else None

    body = _until("the page's finding", finding)
    assert f"ClusterTrainingRuntime/{runtime_name}" in body and "not found" in body
