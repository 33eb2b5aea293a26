"""Helpers for the operator's tests on a real API server: webhook configurations pointing at
loopback, test Kartas and CRDs, polling; the operator process itself (``OperatorProcess``) is
the harness's (``hack.localkube.operator``), re-exported here."""

from __future__ import annotations

import base64
import contextlib
import copy
import functools
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import yaml

from hack.localkube.operator import (
    LEASE_DURATION,
    MUTATING,
    RETRY_PERIOD,
    OperatorProcess,
    delete,
)
from tests.ports import free_port
from workload_map.catalog import catalog
from workload_map.kube.api import Api
from workload_map.kube.errors import NotFound
from workload_map.kube.options import ConnectionOptions

T = TypeVar("T")

KARTAS = "/apis/run.ai/v1alpha1/kartas"
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
VALIDATING = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations"
POLICIES = "/apis/admissionregistration.k8s.io/v1/mutatingadmissionpolicies"
POLICY_BINDINGS = "/apis/admissionregistration.k8s.io/v1/mutatingadmissionpolicybindings"
LABEL_POLICY_FILE = (
    Path(__file__).resolve().parents[2] / "charts/workload-map/files/karta-label-policy.yaml"
)
TEST_LABEL = "wlmap-test/operator"


__all__ = [
    "CRDS",
    "KARTAS",
    "LEASE_DURATION",
    "MUTATING",
    "POLICIES",
    "POLICY_BINDINGS",
    "RETRY_PERIOD",
    "TEST_LABEL",
    "VALIDATING",
    "OperatorProcess",
    "api_for",
    "ca_bundles",
    "condition",
    "delete",
    "eventually",
    "free_port",
    "install_label_policy",
    "install_webhooks",
    "label_policy",
    "put_crd",
    "reconciled_again",
    "remove_label_policy",
    "remove_webhooks",
    "running",
    "widget_crd",
    "widget_karta",
]


def api_for(kubeconfig: Path | str) -> Api:
    return Api.connect(ConnectionOptions(kubeconfig=str(kubeconfig)))


def eventually(
    fn: Callable[[], T | None], timeout: float = 30.0, what: str | Callable[[], str] = ""
) -> T:
    """Poll ``fn`` until it returns something truthy; fail with the last value/exception.

    ``what`` may be a callable, called on failure: a log tail then shows the end of the wait,
    not its start."""
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        try:
            value = fn()
            if value:
                return value
            last = value
        except Exception as exc:  # the thing polled may not exist yet
            last = exc
        time.sleep(0.2)
    described = what() if callable(what) else what
    raise AssertionError(f"timed out after {timeout}s waiting for {described or fn}: last {last!r}")


def reconciled_again(api: Api, proc: OperatorProcess, name: str) -> None:
    """Wait until ``proc``'s Karta controller has reconciled Karta ``name`` once more (a
    change to its annotations is an update event; the reconcile counter moves past where it
    was): what a "still up a while later" check waits for instead of a sleep, which a loaded
    machine can end before the controller looked again."""
    metric = "workloadmap_operator_karta_reconciles_total"
    before = proc.metric(metric)
    api.merge_patch(
        f"{KARTAS}/{name}",
        {"metadata": {"annotations": {"workload-map.run.ai/test-touch": uuid.uuid4().hex}}},
    )
    eventually(lambda: proc.metric(metric) > before, 60, f"another reconcile of {name}")


@functools.cache
def _job_karta() -> dict[str, Any]:
    # building every catalog object takes ~30 ms: once per process, not once per Karta (the
    # webhook bench's writers made them between timed creates, holding the GIL)
    return next(o for o in catalog.as_cluster_objects() if o["metadata"]["name"] == "batch-job-v1")


def widget_karta(name: str, group: str, *, version: str = "v1", token: str = "") -> dict[str, Any]:
    """The catalog's batch/v1 Job definition retargeted at ``group``/``version`` Widget."""
    obj = copy.deepcopy(_job_karta())
    obj["metadata"] = {"name": name, "labels": {TEST_LABEL: token}} if token else {"name": name}
    obj["spec"]["structureDefinition"]["rootComponent"]["kind"] = {
        "group": group,
        "version": version,
        "kind": "Widget",
    }
    return obj


def widget_crd(
    group: str, versions: list[tuple[str, bool]], *, strict: bool = False
) -> dict[str, Any]:
    spec: dict[str, Any] = (
        {"type": "object", "properties": {"size": {"type": "integer"}}}
        if strict
        else {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    )
    schema = {
        "openAPIV3Schema": {
            "type": "object",
            "properties": {
                "metadata": {"type": "object"},
                "spec": spec,
                "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
            },
        }
    }
    storage = (
        next(v for v, served in versions if served)
        if any(s for _, s in versions)
        else versions[0][0]
    )
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"widgets.{group}"},
        "spec": {
            "group": group,
            "names": {
                "kind": "Widget",
                "plural": "widgets",
                "singular": "widget",
                "listKind": "WidgetList",
            },
            "scope": "Namespaced",
            "versions": [
                {"name": v, "served": served, "storage": v == storage, "schema": schema}
                for v, served in versions
            ],
        },
    }


def put_crd(api: Api, crd: dict[str, Any]) -> dict[str, Any]:
    """Create or replace a CRD (plain create/update: the harness way)."""
    name = crd["metadata"]["name"]
    try:
        current = api.get(f"{CRDS}/{name}")
    except NotFound:
        return dict(api.request("POST", CRDS, crd))
    body = copy.deepcopy(crd)
    body["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"]
    return dict(api.request("PUT", f"{CRDS}/{name}", body))


def condition(obj: dict[str, Any], ctype: str) -> dict[str, Any]:
    for c in (obj.get("status") or {}).get("conditions") or []:
        if c.get("type") == ctype:
            return dict(c)
    return {}


def install_webhooks(
    api: Api,
    *,
    port: int,
    name: str,
    token: str,
    ca_bundle: bytes | None = None,
    validate_host: str = "127.0.0.1",
    mutating: bool = True,
) -> None:
    """Both webhook configurations, calling ``https://127.0.0.1:port`` (the validating one
    ``validate_host``: another name is another host to the API server's connection pool);
    only objects labelled with ``token`` go through them (other tests' Kartas are not
    affected). ``mutating=False``: the validating one only (the labels stamped by the
    chart's MutatingAdmissionPolicy instead, :func:`install_label_policy`)."""
    selector = {"matchLabels": {TEST_LABEL: token}}
    rules = [
        {
            "apiGroups": ["run.ai"],
            "apiVersions": ["v1alpha1"],
            "resources": ["kartas"],
            "scope": "*",
        }
    ]
    common = {
        "admissionReviewVersions": ["v1"],
        "sideEffects": "None",
        "failurePolicy": "Fail",
        "timeoutSeconds": 10,
        "objectSelector": selector,
    }
    mutating_config: dict[str, Any] = {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "MutatingWebhookConfiguration",
        "metadata": {"name": f"{name}-mutating"},
        "webhooks": [
            {
                "name": "mutate.kartas.run.ai",
                "clientConfig": {"url": f"https://127.0.0.1:{port}/mutate-run-ai-v1alpha1-karta"},
                "rules": [{**rules[0], "operations": ["CREATE"]}],
                **common,
            }
        ],
    }
    validating: dict[str, Any] = {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": f"{name}-validating"},
        "webhooks": [
            {
                "name": "validate.kartas.run.ai",
                "clientConfig": {
                    "url": f"https://{validate_host}:{port}/validate-run-ai-v1alpha1-karta"
                },
                "rules": [{**rules[0], "operations": ["CREATE", "UPDATE"]}],
                **common,
            }
        ],
    }
    configs = [(MUTATING, mutating_config), (VALIDATING, validating)]
    delete(api, f"{MUTATING}/{name}-mutating")
    for path, body in configs if mutating else configs[1:]:
        if ca_bundle is not None:
            body["webhooks"][0]["clientConfig"]["caBundle"] = base64.b64encode(ca_bundle).decode()
        delete(api, f"{path}/{body['metadata']['name']}")
        api.request("POST", path, body)


def remove_webhooks(api: Api, name: str) -> None:
    delete(api, f"{MUTATING}/{name}-mutating")
    delete(api, f"{VALIDATING}/{name}-validating")


def label_policy(name: str, token: str) -> list[dict[str, Any]]:
    """The chart's MutatingAdmissionPolicy for the Karta labels (its spec read from
    charts/workload-map/files/karta-label-policy.yaml, failurePolicy Fail as the chart's
    default) and its binding, bound to the objects labelled with ``token`` only."""
    spec = yaml.safe_load(LABEL_POLICY_FILE.read_text())
    policy = {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "MutatingAdmissionPolicy",
        "metadata": {"name": name},
        "spec": {"failurePolicy": "Fail", **spec},
    }
    binding = {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "MutatingAdmissionPolicyBinding",
        "metadata": {"name": name},
        "spec": {
            "policyName": name,
            "matchResources": {"objectSelector": {"matchLabels": {TEST_LABEL: token}}},
        },
    }
    return [policy, binding]


def install_label_policy(api: Api, name: str, token: str) -> None:
    """:func:`label_policy` created, then waited for: the API server's policy informer makes
    it effective a moment after the create (a probe Karta is created until it is stamped)."""
    for path, body in zip((POLICIES, POLICY_BINDINGS), label_policy(name, token), strict=True):
        delete(api, f"{path}/{name}")
        api.request("POST", path, body)
    probe = f"probe-{name}"

    def stamped() -> bool:
        delete(api, f"{KARTAS}/{probe}")
        obj = api.request("POST", KARTAS, widget_karta(probe, f"{probe}.example.com", token=token))
        delete(api, f"{KARTAS}/{probe}")
        return bool(obj["metadata"].get("labels", {}).get("run.ai/karta-kind") == "Widget")

    eventually(stamped, 30, "the label policy in force")


def remove_label_policy(api: Api, name: str) -> None:
    delete(api, f"{POLICY_BINDINGS}/{name}")
    delete(api, f"{POLICIES}/{name}")


def ca_bundles(api: Api, name: str, *, mutating: bool = True) -> list[bytes]:
    """The caBundles of the webhook configurations ``install_webhooks`` made (``mutating``
    False: the validating one only)."""
    out = []
    configs = ((MUTATING, "mutating"), (VALIDATING, "validating"))
    for path, suffix in configs if mutating else configs[1:]:
        config = api.get(f"{path}/{name}-{suffix}")
        out.append(base64.b64decode(config["webhooks"][0]["clientConfig"].get("caBundle") or ""))
    return out


@contextlib.contextmanager
def running(op: OperatorProcess) -> Iterator[OperatorProcess]:
    op.start()
    try:
        yield op
    finally:
        op.stop()
