"""The operator on a real API server: conditions through a CRD's life, the API server calling
our admission webhooks over TLS on loopback (each refusal and its message), events, labels.

One operator process serves the whole module (``op``); the webhook configurations only select
Kartas labelled with this module's token, so other tests' Kartas never depend on it.
"""

from __future__ import annotations

import copy
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.operator.live import (
    CRDS,
    KARTAS,
    TEST_LABEL,
    OperatorProcess,
    api_for,
    ca_bundles,
    condition,
    delete,
    eventually,
    install_webhooks,
    put_crd,
    remove_webhooks,
    widget_crd,
    widget_karta,
)
from workload_map.kube.api import Api
from workload_map.kube.errors import ApiError

from .harness import Kube

ROOT = Path(__file__).resolve().parents[2]


def ensure_karta_crd(api: Api) -> None:
    crd = yaml.safe_load_all((ROOT / "deploy/crds/kartas.run.ai.yaml").read_text())
    put_crd(api, next(d for d in crd if d))
    eventually(lambda: api.get(KARTAS) is not None, 60, "kartas.run.ai served")


@pytest.fixture(scope="module")
def api(kube: Kube) -> Iterator[Api]:
    client = api_for(kube.kubeconfig)
    ensure_karta_crd(client)
    yield client
    client.close()


@pytest.fixture(scope="module")
def op_namespace(api: Api) -> Iterator[str]:
    ns = api.request(
        "POST",
        "/api/v1/namespaces",
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"generateName": "wlmap-op-"}},
    )["metadata"]["name"]
    yield ns
    delete(api, f"/api/v1/namespaces/{ns}")


@pytest.fixture(scope="module")
def token() -> str:
    return uuid.uuid4().hex[:8]


@pytest.fixture(scope="module")
def op(
    kube: Kube, api: Api, op_namespace: str, token: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[OperatorProcess]:
    name = f"wlmap-op-{token}"
    proc = OperatorProcess(
        kube.kubeconfig, op_namespace, tmp_path_factory.mktemp("operator"), config_name=name
    )
    install_webhooks(api, port=proc.webhook_port, name=name, token=token)
    proc.start()
    try:
        proc.wait_ready(90)
        # the API server trusts us once the leader has written caBundle into both configurations
        eventually(lambda: all(ca_bundles(api, name)), 30, "caBundle patched")
        yield proc
    finally:
        code = proc.stop()
        remove_webhooks(api, name)
        assert code == 0, f"operator exit code {code}:\n{proc.log_tail()}"


def group_for(token: str, what: str) -> str:
    return f"{what}-{token}.wlmap-test.example.com"


def get_karta(api: Api, name: str) -> dict[str, Any]:
    return dict(api.get(f"{KARTAS}/{name}"))


def wait_condition(
    api: Api, name: str, ctype: str, status: str, timeout: float = 30
) -> dict[str, Any]:
    def check() -> dict[str, Any] | None:
        obj = get_karta(api, name)
        c = condition(obj, ctype)
        return obj if c.get("status") == status else None

    return eventually(check, timeout, f"{name} {ctype}={status}")


def create(api: Api, obj: dict[str, Any]) -> dict[str, Any]:
    return dict(api.request("POST", KARTAS, obj))


def refusal(api: Api, method: str, path: str, body: Any) -> str:
    with pytest.raises(ApiError) as err:
        api.request(method, path, body)
    assert err.value.status in (400, 403, 422), err.value
    return err.value.detail or str(err.value)


# --------------------------------------------------------------------------- conditions


def test_conditions_follow_the_crd_install_version_change_and_removal(
    api: Api, op: OperatorProcess, token: str
) -> None:
    group = group_for(token, "life")
    name = f"widgets-{token}"
    created = create(api, widget_karta(name, group, token=token))
    # the mutating webhook stamped the labels on create
    assert created["metadata"]["labels"]["run.ai/karta-group"] == group
    assert created["metadata"]["labels"]["run.ai/karta-kind"] == "Widget"
    obj = wait_condition(api, name, "CRDExists", "False")
    assert condition(obj, "Validated")["status"] == "True"
    ready = condition(obj, "Ready")
    assert (ready["status"], ready["reason"]) == ("False", "NotReady")
    exists = condition(obj, "CRDExists")
    assert exists["reason"] == "CRDNotFound"
    assert exists["message"] == f"CRD for {group}/Widget not found or does not serve version v1"
    assert all(
        c["observedGeneration"] == obj["metadata"]["generation"]
        for c in obj["status"]["conditions"]
    )
    generation = obj["metadata"]["generation"]
    try:
        put_crd(api, widget_crd(group, [("v1", True)]))
        obj = wait_condition(api, name, "Ready", "True")
        assert condition(obj, "CRDExists")["message"] == f"CRD widgets.{group} serves version v1"
        schema = eventually(
            lambda: (
                condition(get_karta(api, name), "SchemaCompatible").get("status")
                in ("True", "False")
                and condition(get_karta(api, name), "SchemaCompatible")
            ),
            30,
            "schema checked",
        )
        assert schema["reason"] in ("SchemaCompatible", "SchemaMismatch")

        # a stricter schema: the Karta's paths no longer match
        put_crd(api, widget_crd(group, [("v1", True)], strict=True))
        obj = wait_condition(api, name, "SchemaCompatible", "False")
        assert (
            "spec.structureDefinition.rootComponent.specDefinition.podTemplateSpecPath"
            in (condition(obj, "SchemaCompatible")["message"])
        )

        # the CRD stops serving v1 (serves v2): CRDExists flips back
        put_crd(api, widget_crd(group, [("v1", False), ("v2", True)]))
        obj = wait_condition(api, name, "CRDExists", "False")
        assert condition(obj, "Ready")["status"] == "False"
        put_crd(api, widget_crd(group, [("v1", True), ("v2", True)]))
        wait_condition(api, name, "CRDExists", "True")
    finally:
        delete(api, f"{CRDS}/widgets.{group}")
    obj = wait_condition(api, name, "CRDExists", "False", timeout=60)
    # all of it without touching the Karta itself
    assert obj["metadata"]["generation"] == generation
    assert "annotations" not in obj["metadata"] or not any(
        k.startswith("workload-map.run.ai/") for k in obj["metadata"]["annotations"]
    )
    assert not obj["metadata"].get("finalizers")
    delete(api, f"{KARTAS}/{name}")


def test_invalid_karta_without_webhook_gets_validated_false_with_paths_and_an_event(
    api: Api, op: OperatorProcess, token: str
) -> None:
    # not labelled with the token: the webhooks do not see it, the controller does
    name = f"broken-{token}"
    obj = widget_karta(name, group_for(token, "broken"))
    obj["spec"]["structureDefinition"]["childComponents"] = [
        {"name": "orphan", "kind": {"group": "", "version": "v1", "kind": "Pod"}}
    ]
    create(api, obj)
    try:
        stored = wait_condition(api, name, "Validated", "False")
        v = condition(stored, "Validated")
        assert v["reason"] == "ValidationFailed"
        assert "- spec.structureDefinition.childComponents[0].ownerRef" in v["message"]
        # the labels are stamped by the controller too (merge patch)
        assert stored["metadata"]["labels"]["run.ai/karta-kind"] == "Widget"

        def warning() -> list[dict[str, Any]]:
            events = api.get(
                "/api/v1/namespaces/default/events",
                [("fieldSelector", f"involvedObject.name={name}")],
            )["items"]
            return [
                e for e in events if e["reason"] == "ValidationFailed" and e["type"] == "Warning"
            ]

        event = eventually(warning, 30, "ValidationFailed event")[0]
        assert event["action"] == "Validating"
        assert "childComponents[0].ownerRef" in event["message"]
    finally:
        delete(api, f"{KARTAS}/{name}")


# --------------------------------------------------------------------------- webhooks


def test_webhook_refusals_and_their_messages(api: Api, op: OperatorProcess, token: str) -> None:
    group = group_for(token, "hooks")
    first = f"first-{token}"
    create(api, widget_karta(first, group, token=token))
    try:
        # invalid definition: every finding, with its path
        bad = widget_karta(f"bad-{token}", group_for(token, "bad"), token=token)
        bad["spec"]["structureDefinition"]["childComponents"] = [{"name": "a"}, {"name": "b"}]
        msg = refusal(api, "POST", KARTAS, bad)
        assert "the Karta definition is invalid" in msg
        assert "childComponents[0].ownerRef" in msg and "childComponents[1].ownerRef" in msg

        # a second Karta of the same GVK
        msg = refusal(api, "POST", KARTAS, widget_karta(f"second-{token}", group, token=token))
        assert (
            f'a Karta for group "{group}" version "v1" kind "Widget" already exists ({first}); '
            "only one Karta per group/version/kind is allowed"
        ) in msg
        # the same group/kind at another version is fine
        other = create(api, widget_karta(f"v2-{token}", group, version="v2", token=token))
        delete(api, f"{KARTAS}/{other['metadata']['name']}")

        # the root GVK is immutable
        current = get_karta(api, first)
        moved = copy.deepcopy(current)
        moved["spec"]["structureDefinition"]["rootComponent"]["kind"]["version"] = "v3"
        moved["metadata"]["labels"]["run.ai/karta-version"] = "v3"
        msg = refusal(api, "PUT", f"{KARTAS}/{first}", moved)
        assert "the root component GVK is immutable and cannot be changed after creation" in msg

        # managed labels: edited or removed
        edited = copy.deepcopy(current)
        edited["metadata"]["labels"]["run.ai/karta-kind"] = "Gadget"
        msg = refusal(api, "PUT", f"{KARTAS}/{first}", edited)
        assert (
            'label "run.ai/karta-kind" is managed by the operator and must equal "Widget"; '
            "it cannot be edited or removed"
        ) in msg
        removed = copy.deepcopy(current)
        del removed["metadata"]["labels"]["run.ai/karta-group"]
        msg = refusal(api, "PUT", f"{KARTAS}/{first}", removed)
        assert 'label "run.ai/karta-group" is managed by the operator' in msg

        # an allowed update goes through
        fine = copy.deepcopy(current)
        fine["metadata"]["labels"]["team"] = "ml"
        api.request("PUT", f"{KARTAS}/{first}", fine)
    finally:
        # delete is always allowed
        api.request("DELETE", f"{KARTAS}/{first}")


def test_webhook_stamps_labels_the_user_got_wrong(
    api: Api, op: OperatorProcess, token: str
) -> None:
    name = f"stamp-{token}"
    obj = widget_karta(name, group_for(token, "stamp"), token=token)
    obj["metadata"]["labels"]["run.ai/karta-kind"] = "NotWidget"
    created = create(api, obj)
    try:
        assert created["metadata"]["labels"]["run.ai/karta-kind"] == "Widget"
        assert created["metadata"]["labels"][TEST_LABEL] == token
    finally:
        delete(api, f"{KARTAS}/{name}")


def test_metrics_and_health(api: Api, op: OperatorProcess, token: str) -> None:
    assert op.get(op.health, "/healthz") == (200, "ok")
    code, body = op.get(op.health, "/readyz")
    assert code == 200 and "[+]webhook-server" in body
    assert op.metric("workloadmap_operator_leader") == 1
    # a Karta of its own, admitted and reconciled: the counters do not depend on which tests
    # of the module ran before this one (or in which order)
    name = f"metrics-{token}"
    create(api, widget_karta(name, group_for(token, "metrics"), token=token))
    try:
        wait_condition(api, name, "CRDExists", "False")  # reconciled: its status was written
        for counter in (
            "workloadmap_operator_admission_requests_total",
            "workloadmap_operator_karta_status_writes_total",
        ):
            # counted once the request or write has returned, a moment after it is visible
            eventually(lambda c=counter: op.metric(c) >= 1, 30, counter)
    finally:
        delete(api, f"{KARTAS}/{name}")
