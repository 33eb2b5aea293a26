"""A PyTorchJob whose pods the real Kubeflow training operator v1.8.1 makes (the test creates
only the PyTorchJob): one node short none binds, with room all bind (creation to the whole gang
bound printed, ``pytest -s``), not opted in one by one (``tests.gangs.real.gang_round``).

The training operator is built by ``make operators``; where it is not, the test skips naming
that target. Its CRD is installed with the plane, before our operator starts (as in a cluster)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.gangs.real import gang_round, pytorchjob
from tests.operator.live import OperatorProcess
from workload_map.kube.api import Api

from . import operators
from .harness import FakeNodes, Kube

ROOT = Path(__file__).resolve().parents[2]

# a hang guard, not a speed target (CRDs and operators start slowly on a loaded machine)
pytestmark = [pytest.mark.integration, pytest.mark.timeout(900)]


@pytest.fixture(scope="module")
def plane(kube_with_controllers: Kube) -> Kube:
    kube_with_controllers.install_crd(ROOT / "deploy/crds/kartas.run.ai.yaml")
    operators.install_crds(kube_with_controllers, "training-operator", "pytorchjobs")
    return kube_with_controllers


@pytest.fixture(scope="module")
def training_operator(plane: Kube) -> Iterator[None]:
    with operators.training_operator(plane, "pytorchjob"):
        yield


def test_a_pytorchjob_made_by_the_training_operator(
    plane: Kube,
    api: Api,
    op: OperatorProcess,
    training_operator: None,
    tok: str,
    fake_nodes: FakeNodes,
) -> None:
    result = gang_round("pytorchjob", api, fake_nodes, tok, pytorchjob, 3)
    assert (result.short, result.after_node, result.room, result.plain) == (0, 3, 3, 2)
