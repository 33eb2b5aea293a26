"""The chart's MutatingAdmissionPolicy for the Karta labels does what the mutating webhook does.

The same Karta creates go through the real API server twice, beside the operator's validating
webhook: once with the operator's mutating webhook stamping the ``run.ai/karta-*`` labels, once
with the policy (charts/workload-map/files/karta-label-policy.yaml) instead. Each create's
outcome, the stored labels or the refusal, must be the same both ways and match
``workload_map.operator.karta_webhooks.mutate`` applied to the body.
"""

from __future__ import annotations

import copy
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.operator.live import (
    KARTAS,
    MUTATING,
    OperatorProcess,
    api_for,
    ca_bundles,
    delete,
    eventually,
    install_label_policy,
    install_webhooks,
    remove_label_policy,
    remove_webhooks,
    widget_karta,
)
from workload_map.kube.api import Api
from workload_map.kube.errors import ApiError
from workload_map.operator.karta_webhooks import mutate

from .harness import Kube
from .test_operator import ensure_karta_crd

Edit = Callable[[dict[str, Any]], None]


def _labels(**extra: str) -> Edit:
    def edit(obj: dict[str, Any]) -> None:
        obj["metadata"]["labels"].update(extra)

    return edit


def _root_kind(value: Any) -> Edit:
    def edit(obj: dict[str, Any]) -> None:
        root = obj["spec"]["structureDefinition"]["rootComponent"]
        if value is None:
            root.pop("kind", None)
        else:
            root["kind"] = value

    return edit


# name -> how the case's Karta differs from a plain Widget Karta (group made unique per case)
CASES: dict[str, Callable[[str], Edit]] = {
    "plain": lambda g: lambda obj: None,
    "other-labels": lambda g: _labels(team="ml", **{"app.kubernetes.io/name": "x"}),
    "wrong-labels": lambda g: _labels(
        **{"run.ai/karta-kind": "Gadget", "run.ai/karta-group": "elsewhere.example.com"}
    ),
    "right-labels": lambda g: _labels(
        **{"run.ai/karta-group": g, "run.ai/karta-version": "v1", "run.ai/karta-kind": "Widget"}
    ),
    "core-group": lambda g: _root_kind(
        {"group": "", "version": "v1", "kind": "W" + g.split(".")[0].replace("-", "")}
    ),
    "no-group": lambda g: _root_kind({"version": "v1", "kind": "Widget"}),
    "empty-kind": lambda g: _root_kind({"group": g, "version": "v1", "kind": ""}),
    "no-root-kind": lambda g: _root_kind(None),
    "version-not-a-string": lambda g: _root_kind({"group": g, "version": 1, "kind": "Widget"}),
    "kind-not-a-string": lambda g: _root_kind({"group": g, "version": "v1", "kind": 7}),
    "group-not-a-string": lambda g: _root_kind({"group": 2, "version": "v1", "kind": "Widget"}),
}


@pytest.fixture(scope="module")
def api(kube: Kube) -> Iterator[Api]:
    client = api_for(kube.kubeconfig)
    ensure_karta_crd(client)
    yield client
    client.close()


def _body(case: str, phase: str, token: str) -> dict[str, Any]:
    name = f"lp-{case}-{phase}-{token}"
    group = f"{case}-{phase}-{token}.lp.example.com"
    obj = widget_karta(name, group, token=token)
    CASES[case](group)(obj)
    return obj


def _outcome(api: Api, body: dict[str, Any], phase: str) -> dict[str, Any]:
    """The stored labels, or the refusal (its code and message, the phase's names made
    neutral), of one create."""
    try:
        stored = api.request("POST", KARTAS, copy.deepcopy(body))
    except ApiError as exc:
        return {"refused": exc.status, "message": str(exc).replace(f"-{phase}-", "-*-")}
    labels = dict(stored["metadata"].get("labels") or {})
    return {"labels": {k: v.replace(f"-{phase}-", "-*-") for k, v in labels.items()}}


def _expected(body: dict[str, Any], phase: str) -> dict[str, str]:
    """The labels the mutating webhook's own function gives the body."""
    labels = dict(body["metadata"].get("labels") or {})
    answer = mutate({"operation": "CREATE", "object": copy.deepcopy(body)})
    for op in answer.get("patch") or []:
        if op["path"] == "/metadata/labels":
            labels = dict(op["value"])
        else:
            key = op["path"].rsplit("/", 1)[1].replace("~1", "/").replace("~0", "~")
            labels[key] = op["value"]
    return {k: v.replace(f"-{phase}-", "-*-") for k, v in labels.items()}


def test_the_label_policy_stamps_what_the_mutating_webhook_stamps(
    kube: Kube, api: Api, tmp_path: Path
) -> None:
    token = uuid.uuid4().hex[:6]
    config = f"lp-{token}"
    op = OperatorProcess(
        kube.kubeconfig,
        "default",
        tmp_path / "op",
        config_name=config,
        extra=["--disable-karta-controller"],
    )
    install_webhooks(api, port=op.webhook_port, name=config, token=token)
    op.start()
    outcomes: dict[str, dict[str, dict[str, Any]]] = {"webhook": {}, "policy": {}}
    try:
        op.wait_ready(90)
        eventually(lambda: all(ca_bundles(api, config)), 30, "caBundle")
        for case in CASES:
            body = _body(case, "webhook", token)
            outcomes["webhook"][case] = _outcome(api, body, "webhook")
            if "labels" in outcomes["webhook"][case]:
                assert outcomes["webhook"][case]["labels"] == _expected(body, "webhook"), case
        # the policy instead of the mutating webhook; the validating webhook stays
        delete(api, f"{MUTATING}/{config}-mutating")
        install_label_policy(api, config, token)
        for case in CASES:
            outcomes["policy"][case] = _outcome(api, _body(case, "policy", token), "policy")
    finally:
        op.stop()
        remove_webhooks(api, config)
        remove_label_policy(api, config)
        for phase in ("webhook", "policy"):
            for case in CASES:
                delete(api, f"{KARTAS}/lp-{case}-{phase}-{token}")
    assert outcomes["policy"] == outcomes["webhook"]
    # the cases cover both sides: labels stamped (added, replaced, kept) and refusals, by the
    # validating webhook (a root kind left unlabelled) or by the CRD's schema after admission
    webhook = outcomes["webhook"]
    assert webhook["plain"]["labels"]["run.ai/karta-kind"] == "Widget"
    assert webhook["wrong-labels"]["labels"]["run.ai/karta-kind"] == "Widget"
    assert webhook["other-labels"]["labels"]["team"] == "ml"
    refused = {case: o["refused"] for case, o in webhook.items() if "refused" in o}
    assert refused == {
        "core-group": 403,
        "empty-kind": 403,
        "no-root-kind": 403,
        "no-group": 422,
        "version-not-a-string": 422,
        "kind-not-a-string": 422,
        "group-not-a-string": 422,
    }
