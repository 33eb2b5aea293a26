"""The coscheduling and Volcano objects and pod metadata we write, on a real API server with
their CRDs installed (no scheduler of theirs can be built here): created with strict field
validation, so an unknown or mistyped field is refused as their users would see it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.gangs.test_contracts import SCHEDULERS, objects_for
from tests.gangs.test_parity import FIXTURES, load, ours_for
from tests.operator.live import api_for
from workload_map.gangs import COSCHEDULING_API, VOLCANO_API
from workload_map.gangs.config import (
    COSCHEDULING_LABEL,
    VOLCANO_GROUP_ANNOTATION,
    VOLCANO_TASK_ANNOTATION,
)
from workload_map.gangs.reconcile import object_path
from workload_map.kube.api import Api

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
    if backend == VOLCANO_API:  # every multi-task example carries its task minimums
        assert sum(1 for o in objects if len(o["spec"].get("minTaskMember") or {}) >= 2) >= 4


def _create(api: Api, namespace: str, body: dict[str, Any]) -> dict[str, Any]:
    body = {**body, "metadata": {**body["metadata"], "namespace": namespace}}
    body["metadata"].pop("ownerReferences", None)  # their owners do not exist here
    pods = f"/api/v1/namespaces/{namespace}/pods"
    path = pods if body["kind"] == "Pod" else object_path(body, collection=True)
    stored: dict[str, Any] = api.request("POST", path, body, query=[("fieldValidation", "Strict")])
    return stored


@pytest.mark.parametrize("path", FIXTURES, ids=[p.stem for p in FIXTURES])
def test_the_parity_workloads_gang_on_the_server(api: Api, namespace: str, path: Path) -> None:
    """For each peer fixture: our PodGroup and the operator-made pods with the webhook's
    metadata are stored as written (strict validation); every pod names the group, and on
    Volcano its task is one of the group's task minimums, each with enough pods."""
    fixture = load(path)
    group, decisions = ours_for(fixture)
    stored = _create(api, namespace, group)
    assert stored["spec"] == group["spec"]
    name = stored["metadata"]["name"]
    tasks = stored["spec"].get("minTaskMember") or {}
    counts: dict[str, int] = {}
    members = [d for d in decisions if d["podGroup"] == name]
    assert len(members) >= stored["spec"]["minMember"]
    for decision in members:
        pod = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": decision["pod"],
                "labels": decision["labels"],
                "annotations": decision["annotations"],
            },
            "spec": {
                "schedulerName": SCHEDULERS[group["apiVersion"]],
                "containers": [{"name": "c", "image": "x"}],
            },
        }
        kept = _create(api, namespace, pod)
        meta = kept["metadata"]
        if group["apiVersion"] == VOLCANO_API:
            assert meta["annotations"][VOLCANO_GROUP_ANNOTATION] == name
            if tasks:
                task = meta["annotations"][VOLCANO_TASK_ANNOTATION]
                counts[task] = counts.get(task, 0) + 1
        else:
            assert meta["labels"][COSCHEDULING_LABEL] == name
    assert set(counts) == set(tasks)
    assert all(counts[t] >= m for t, m in tasks.items())


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
