"""Client objects in, plain data out: real objects of the kubernetes client (typed models, typed
lists, the dynamic client), kr8s and lightkube, lists and list objects; anything else refused."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from tests.engine.conftest import load_fixture
from workload_map.engine import EngineError, Workload
from workload_map.engine.objects import plain_items, to_plain


def _pod_list(pods: list[dict[str, Any]]) -> dict[str, Any]:
    """What the API server answers a LIST with: items without apiVersion/kind."""
    items = [{k: v for k, v in p.items() if k not in ("apiVersion", "kind")} for p in pods]
    return {"apiVersion": "v1", "kind": "PodList", "metadata": {}, "items": items}


def _typed(doc: dict[str, Any], model: str) -> Any:
    """Deserialise as the kubernetes client does for CoreV1Api.list_namespaced_pod()."""
    from kubernetes.client import ApiClient

    return ApiClient().deserialize(json.dumps(_served(doc)), model, "application/json")


def _served(value: Any, key: str = "") -> Any:
    """Quantities as the API server writes them (strings; the YAML fixtures use numbers)."""
    if isinstance(value, dict):
        return {k: _served(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_served(v) for v in value]
    return (
        str(value)
        if key and isinstance(value, int) and key.startswith(("nvidia", "cpu", "memory"))
        else value
    )


def _counts(obj: Any, pods: Any) -> dict[str, Any]:
    karta, _, _ = load_fixture("trainer")
    return dict(Workload(karta, obj, pods).describe()["pods"])


def test_kubernetes_typed_models_lists_and_list_items() -> None:
    _, obj, pods = load_fixture("trainer")
    expected = _counts(obj, pods)
    assert expected["current"] == 4
    typed_list = _typed(_pod_list(pods), "V1PodList")
    assert type(typed_list).__name__ == "V1PodList"
    # .items of a typed list carry kind=None: they must still count as pods
    assert typed_list.items[0].kind is None
    assert _counts(obj, typed_list.items) == expected
    assert _counts(obj, typed_list) == expected
    assert _counts(obj, [typed_list]) == expected
    plain = to_plain(typed_list.items[0])
    assert plain["kind"] == "Pod" and plain["metadata"]["name"] == pods[0]["metadata"]["name"]
    # the API's own JSON: camelCase keys, RFC 3339 timestamps as the server writes them
    created = pods[0]["metadata"].get("creationTimestamp")
    if created:
        assert plain["metadata"]["creationTimestamp"].endswith("Z")


def test_typed_conversion_builds_no_api_client(monkeypatch: pytest.MonkeyPatch) -> None:
    from kubernetes.client import api_client

    karta, obj, pods = load_fixture("trainer")
    typed = _typed(_pod_list(pods), "V1PodList")
    built: list[int] = []
    original = api_client.ApiClient.__init__

    def counting(self: Any, *args: Any, **kwargs: Any) -> None:
        built.append(1)
        original(self, *args, **kwargs)

    monkeypatch.setattr(api_client.ApiClient, "__init__", counting)
    Workload(karta, obj, typed.items).describe()
    assert built == []


def test_kubernetes_dynamic_client_instances_and_lists() -> None:
    from kubernetes.dynamic.resource import ResourceInstance

    karta, obj, pods = load_fixture("trainer")
    expected = _counts(obj, pods)
    listed = ResourceInstance(None, copy.deepcopy(_pod_list(pods)))
    workload = ResourceInstance(None, copy.deepcopy(obj))
    assert _counts(workload, listed) == expected
    assert _counts(workload, listed.items) == expected  # ResourceField items
    assert Workload(karta, workload).obj["metadata"]["name"] == obj["metadata"]["name"]


def test_kr8s_objects() -> None:
    from kr8s.objects import Pod

    _, obj, pods = load_fixture("trainer")
    expected = _counts(obj, pods)
    # api= given so that no kubeconfig is looked up (the objects are kr8s' own classes)
    kr8s_pods = [Pod(copy.deepcopy(p), api=object()) for p in pods]  # type: ignore[arg-type]
    assert type(kr8s_pods[0].raw).__name__ == "Box"
    assert _counts(obj, kr8s_pods) == expected
    plain = to_plain(kr8s_pods[0])
    assert type(plain) is dict and type(plain["metadata"]) is dict


def test_lightkube_models_and_generic_resources() -> None:
    from lightkube.codecs import from_dict
    from lightkube.generic_resource import create_namespaced_resource

    _, obj, pods = load_fixture("trainer")
    expected = _counts(obj, pods)
    light_pods = [from_dict(copy.deepcopy(p)) for p in pods]
    assert type(light_pods[0]).__module__.startswith("lightkube")
    assert _counts(obj, light_pods) == expected
    group, _, version = obj["apiVersion"].rpartition("/")
    trainer_cls = create_namespaced_resource(group, version, obj["kind"], "trainers")
    generic = trainer_cls.from_dict(copy.deepcopy(obj))
    assert _counts(generic, iter(light_pods)) == expected  # any iterable, generators too


@pytest.mark.parametrize(
    ("pods", "message"),
    [
        ("abc", r"pods: expected a list of Kubernetes objects .* got a string \('abc'\)"),
        ([1, 2], r"pods\[0\]: expected a Kubernetes object, got a number \(1\)"),
        ([{"kind": "Pod"}, "x"], r"pods\[1\]: expected a Kubernetes object, got a string"),
        (5, r"pods: expected .* got a number \(5\)"),
        ({"kind": "Pod", "metadata": {}}, r"pods: expected a list .* got one Pod"),
        ([object()], r"pods\[0\]: expected a dict or a Kubernetes client object .* got object"),
    ],
)
def test_anything_else_is_refused_clearly(pods: Any, message: str) -> None:
    karta, obj, _ = load_fixture("trainer")
    with pytest.raises(EngineError, match=message):
        Workload(karta, obj, pods)


def test_workload_argument_checks() -> None:
    karta, obj, pods = load_fixture("trainer")
    with pytest.raises(
        EngineError, match="workload: expected a dict or a Kubernetes client object"
    ):
        Workload(karta, object())
    with pytest.raises(EngineError, match="workload: expected one object, got a PodList"):
        Workload(karta, _pod_list(pods))
    other = {**obj, "kind": "JobSet", "apiVersion": "jobset.x-k8s.io/v1alpha2"}
    with pytest.raises(EngineError, match=r"describes Trainer .* but the object is a JobSet"):
        Workload(karta, other)
    kindless = {k: v for k, v in obj.items() if k not in ("apiVersion", "kind")}
    assert Workload(karta, kindless).obj["kind"] == "Trainer"


def test_plain_items_unwraps_lists_and_keeps_dicts_untouched() -> None:
    _, _, pods = load_fixture("trainer")
    assert plain_items(pods)[0] is pods[0]
    nested = {"apiVersion": "v1", "kind": "List", "items": [_pod_list(pods[:2]), pods[2]]}
    names = [p["metadata"]["name"] for p in plain_items([nested, pods[3]])]
    assert names == [p["metadata"]["name"] for p in pods]
    assert {p["kind"] for p in plain_items(nested)} == {"Pod"}
