"""The coscheduling and Volcano objects and pod metadata we write, on a real API server with
their CRDs installed (no scheduler of theirs can be built here): created with strict field
validation, so an unknown or mistyped field is refused as their users would see it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.gangs.test_contracts import SCHEDULERS, objects_for
from tests.operator.live import api_for
from workload_map.gangs import COSCHEDULING_API, VOLCANO_API
from workload_map.gangs.reconcile import object_path
from workload_map.operator.kube import Api

from .harness import Kube

pytestmark = pytest.mark.integration

CRDS = ("scheduling.x-k8s.io_podgroups.yaml", "scheduling.volcano.sh_podgroups.yaml")


@pytest.fixture(scope="module")
def api(kube: Kube, shared_dir: Path) -> Iterator[Api]:
    for name in CRDS:
        kube.install_crd(shared_dir / "realworld" / "podgroup-gang-scheduling" / name)
    client = api_for(kube.kubeconfig)
    yield client
    client.close()


@pytest.mark.parametrize("backend", [COSCHEDULING_API, VOLCANO_API])
def test_our_podgroups_install_with_strict_validation(
    api: Api, namespace: str, backend: str
) -> None:
    objects = objects_for(backend)
    assert objects
    for obj in objects:
        body = {**obj, "metadata": {**obj["metadata"], "namespace": namespace}}
        body["metadata"].pop("ownerReferences", None)  # their owners do not exist here
        stored = api.request(
            "POST",
            object_path(body, collection=True),
            body,
            query=[("fieldValidation", "Strict")],
        )
        assert stored["spec"]["minMember"] == obj["spec"]["minMember"]
        for key, value in obj["spec"].items():
            assert stored["spec"][key] == value, key  # nothing pruned or defaulted away


def test_pods_with_our_metadata_are_accepted(api: Api, namespace: str) -> None:
    from tests.gangs.cases import example, karta_of, opted, set_scheduler
    from workload_map.gangs.admission import pod_decisions

    for backend, scheduler in SCHEDULERS.items():
        obj = opted(set_scheduler(example("raycluster")[0], scheduler))
        head = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": f"head-{backend.split('.')[1]}",
                "labels": {"ray.io/node-type": "head", "ray.io/group": "headgroup"},
            },
            "spec": {"schedulerName": scheduler, "containers": [{"name": "c", "image": "x"}]},
        }
        (decision,) = pod_decisions(karta_of(obj), obj, [head])
        head["metadata"]["labels"].update(decision["labels"])
        head["metadata"]["annotations"] = decision["annotations"]
        stored = api.request(
            "POST",
            f"/api/v1/namespaces/{namespace}/pods",
            head,
            query=[("fieldValidation", "Strict")],
        )
        assert (
            stored["metadata"]["labels"]["workload-map.run.ai/workload"] == obj["metadata"]["name"]
        )
        if backend == VOLCANO_API:
            assert (
                stored["metadata"]["annotations"]["scheduling.k8s.io/group-name"]
                == decision["podGroup"]
            )
            assert stored["metadata"]["annotations"]["volcano.sh/task-spec"] == "head"
        else:
            assert (
                stored["metadata"]["labels"]["scheduling.x-k8s.io/pod-group"]
                == decision["podGroup"]
            )
