"""A real Helm release of the chart on the test API server: install, upgrade, uninstall.

The upgrade must not blank the ``caBundle`` the operator patched into the webhook
configurations (the chart looks the live value up); on this v1.37 API server the chart's
default ``webhook.labelPolicy=auto`` installs the MutatingAdmissionPolicy for the Karta labels
instead of the mutating webhook, and ``false`` brings the webhook back; ``crds/`` is installed once and survives an
uninstall, as Helm does with CRDs. The CRD-upgrade hook Job is off here: without a kubelet no Job
ever completes (``test_crd_upgrade.py`` runs its command instead).
"""

from __future__ import annotations

import base64
import os
import subprocess
from pathlib import Path

import pytest
from kubernetes.client.exceptions import ApiException

from .harness import Kube
from .test_chart import CHART, IMAGE_VALUES, helm_binary

NS = "wlmap-release"
RELEASE = "workload-map"
MUTATING, VALIDATING = f"{RELEASE}-mutating", f"{RELEASE}-validating"
ADMISSION = "admissionregistration.k8s.io/v1"


def helm_on(kube: Kube, tmp: Path, *args: str) -> str:
    run = subprocess.run(
        [str(helm_binary()), *args, "--kubeconfig", str(kube.kubeconfig), "--namespace", NS],
        capture_output=True,
        text=True,
        timeout=300,
        env={
            **os.environ,
            "HELM_CACHE_HOME": str(tmp / "cache"),
            "HELM_CONFIG_HOME": str(tmp / "config"),
            "HELM_DATA_HOME": str(tmp / "data"),
        },
    )
    assert run.returncode == 0, run.stderr
    return run.stdout


def test_install_upgrade_keeps_the_ca_bundle_and_uninstall_keeps_the_crd(
    module_kube: Kube, tmp_path: Path
) -> None:
    kube = module_kube
    values = ["--set", "crdUpgrader.enabled=false", *IMAGE_VALUES]
    helm_on(kube, tmp_path, "install", RELEASE, str(CHART), "--create-namespace", *values)
    crd = kube.request(
        "GET", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/kartas.run.ai"
    )
    assert crd["spec"]["group"] == "run.ai"
    deploy = kube.get("apps/v1", "Deployment", RELEASE, NS)
    assert deploy["spec"]["replicas"] == 1

    # webhook.labelPolicy=auto on a v1.37 API server: helm's discovery finds the
    # MutatingAdmissionPolicy kind, so the policy stamps the Karta labels and no mutating
    # webhook configuration is left (the gang pod webhook is off)
    policy = kube.get(ADMISSION, "MutatingAdmissionPolicy", f"{RELEASE}-karta-labels")
    assert policy["spec"]["failurePolicy"] == "Fail"
    kube.get(ADMISSION, "MutatingAdmissionPolicyBinding", f"{RELEASE}-karta-labels")
    with pytest.raises(ApiException) as err:
        kube.get(ADMISSION, "MutatingWebhookConfiguration", MUTATING)
    assert err.value.status == 404

    # What the operator does in auto mode: patch its CA into the webhook configurations.
    bundle = base64.b64encode(b"-----BEGIN CERTIFICATE-----\nnot checked here\n").decode()

    def patch(kind: str, name: str) -> None:
        path = f"/apis/{ADMISSION}/{kind}/{name}"
        config = kube.request("GET", path)
        config["webhooks"][0]["clientConfig"]["caBundle"] = bundle
        kube.request("PUT", path, config)

    def kept(kind: str, name: str) -> bool:
        config = kube.get(ADMISSION, kind, name)
        return bool(config["webhooks"][0]["clientConfig"].get("caBundle") == bundle)

    patch("validatingwebhookconfigurations", VALIDATING)
    helm_on(kube, tmp_path, "upgrade", RELEASE, str(CHART), *values, "--set", "replicaCount=2")
    assert kube.get("apps/v1", "Deployment", RELEASE, NS)["spec"]["replicas"] == 2
    assert kept("ValidatingWebhookConfiguration", VALIDATING)

    # the policy turned off: the mutating webhook comes back, the policy goes
    values += ["--set", "webhook.labelPolicy=false,replicaCount=2"]
    helm_on(kube, tmp_path, "upgrade", RELEASE, str(CHART), *values)
    with pytest.raises(ApiException) as err:
        kube.get(ADMISSION, "MutatingAdmissionPolicy", f"{RELEASE}-karta-labels")
    assert err.value.status == 404
    patch("mutatingwebhookconfigurations", MUTATING)
    helm_on(kube, tmp_path, "upgrade", RELEASE, str(CHART), *values, "--set", "replicaCount=1")
    for kind, name in (
        ("MutatingWebhookConfiguration", MUTATING),
        ("ValidatingWebhookConfiguration", VALIDATING),
    ):
        assert kept(kind, name), kind

    helm_on(kube, tmp_path, "uninstall", RELEASE)
    with pytest.raises(ApiException) as err:
        kube.get(ADMISSION, "MutatingWebhookConfiguration", MUTATING)
    assert err.value.status == 404
    kube.request("GET", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/kartas.run.ai")
