"""Gangs whose pods real controllers make: the tests create only the workload.

- an Indexed Job stating its minimum (the in-tree Job controller),
- a StatefulSet gang-scheduled through a cluster Karta of the test's (the in-tree StatefulSet
  controller): a kind whose gangs only a custom Karta defines,
- a RayCluster (KubeRay's ``ray-operator``, built by ``make operators``).

Each goes through ``tests.gangs.real.gang_round``: one node short, none binds; with room, all
bind (the seconds from creation to the whole gang bound are printed: ``pytest -s``); not opted
in, the pods bind one by one. KubeRay's test skips, naming ``make operators``, where its binary
is not built. The plane (with the in-tree workload controllers),
our operator and the real operators are shared by the module."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.gangs.real import (
    STATEFULSET_KARTA,
    gang_round,
    indexed_job,
    raycluster,
    statefulset,
    statefulset_karta,
)
from tests.operator.live import KARTAS, OperatorProcess
from workload_map.kube.api import Api

from . import operators
from .harness import FakeNodes, Kube

ROOT = Path(__file__).resolve().parents[2]

# a hang guard, not a speed target: the operators' CRDs (KubeRay's are 3 MB) and processes
# take minutes to install and start on a loaded machine, inside the first test's limit
pytestmark = [pytest.mark.integration, pytest.mark.timeout(1800)]


@pytest.fixture(scope="module")
def plane(kube_with_controllers: Kube) -> Kube:
    kube_with_controllers.install_crd(ROOT / "deploy/crds/kartas.run.ai.yaml")
    operators.install_crds(kube_with_controllers, "kuberay")
    # before our operator starts, so that its first sync knows it (no other StatefulSet here)
    kube_with_controllers.request("POST", KARTAS, statefulset_karta())
    return kube_with_controllers


@pytest.fixture(scope="module")
def kuberay(plane: Kube) -> Iterator[None]:
    with operators.kuberay(plane):
        yield


def test_an_indexed_job_with_a_stated_minimum(
    plane: Kube, api: Api, op: OperatorProcess, tok: str, fake_nodes: FakeNodes
) -> None:
    result = gang_round(
        "job", api, fake_nodes, tok, lambda a, ns, pool: indexed_job(a, ns, pool, size=4), 4
    )
    assert (result.short, result.after_node, result.room, result.plain) == (0, 4, 4, 3)


def test_a_statefulset_gang_scheduled_through_a_custom_karta(
    plane: Kube, api: Api, op: OperatorProcess, tok: str, fake_nodes: FakeNodes
) -> None:
    assert api.get(f"{KARTAS}/{STATEFULSET_KARTA}")["metadata"]["name"] == STATEFULSET_KARTA
    result = gang_round("statefulset", api, fake_nodes, tok, statefulset, 3)
    assert (result.short, result.after_node, result.room, result.plain) == (0, 3, 3, 2)


def test_a_raycluster_made_by_kuberay(
    plane: Kube, api: Api, op: OperatorProcess, kuberay: None, tok: str, fake_nodes: FakeNodes
) -> None:
    result = gang_round("raycluster", api, fake_nodes, tok, raycluster, 3)
    assert (result.short, result.after_node, result.room, result.plain) == (0, 3, 3, 2)
