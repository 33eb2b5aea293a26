"""Client objects in, plain data out (kubernetes models, kr8s ``.raw``, lightkube ``.to_dict()``)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.engine.conftest import load_fixture
from workload_map.engine import EngineError, Workload
from workload_map.engine.objects import to_plain


def test_kubernetes_models_are_serialised_with_api_names() -> None:
    from kubernetes import client

    pod = client.V1Pod(
        api_version="v1",
        kind="Pod",
        metadata=client.V1ObjectMeta(name="p", labels={"train.example.com/replica-type": "worker"}),
        spec=client.V1PodSpec(node_name="n1", containers=[client.V1Container(name="c")]),
    )
    plain = to_plain(pod)
    assert plain["spec"]["nodeName"] == "n1" and plain["metadata"]["name"] == "p"
    karta, obj, _ = load_fixture("trainer")
    wl = Workload(karta, obj, [pod])
    assert wl.placements[0].component == "worker"


def test_kr8s_and_lightkube_style_objects() -> None:
    class Kr8s:
        raw: dict[str, Any] = {"kind": "Pod", "metadata": {"name": "a"}}

    class Lightkube:
        def to_dict(self) -> dict[str, Any]:
            return {"kind": "Pod", "metadata": {"name": "b"}}

    assert to_plain(Kr8s())["metadata"]["name"] == "a"
    assert to_plain(Lightkube())["metadata"]["name"] == "b"
    plain = {"a": 1}
    assert to_plain(plain) is plain


def test_unknown_objects_are_a_clear_error() -> None:
    with pytest.raises(
        EngineError, match="workload: expected a dict or a Kubernetes client object, got object"
    ):
        karta, _, _ = load_fixture("trainer")
        Workload(karta, object())
