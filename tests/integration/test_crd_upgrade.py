"""The chart's CRD upgrade: `wlmap crd apply` run with exactly the hook Job's permissions.

Helm never upgrades ``crds/``; the chart's pre-upgrade hook runs ``wlmap crd apply`` under its
own service account. Here the hook's objects are applied as rendered, a token of that account
is the only credential, an older Karta CRD (without ``spec.optimizationInstructions``) holds a
Karta, and the upgrade must make the new field valid while the stored Karta stays untouched.
"""

from __future__ import annotations

import copy
import io
import json
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes.client.exceptions import ApiException

from workload_map.cli.main import main
from workload_map.model.crd import CRD_NAME, crd_manifest

from .harness import Kube
from .test_chart import render

NS = "wlmap-hooks"
CRD_PATH = f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{CRD_NAME}"


def previous_crd() -> dict[str, Any]:
    """The Karta CRD as an older release shipped it: no spec.optimizationInstructions."""
    crd = copy.deepcopy(crd_manifest())
    for version in crd["spec"]["versions"]:
        spec = version["schema"]["openAPIV3Schema"]["properties"]["spec"]
        spec["properties"].pop("optimizationInstructions")
    return crd


def karta(name: str, *, optimization: bool = False) -> dict[str, Any]:
    """A built-in definition that has optimization instructions, with or without them."""
    from workload_map.catalog import catalog

    obj = copy.deepcopy(
        next(k for k in catalog.as_cluster_objects() if k["spec"].get("optimizationInstructions"))
    )
    obj["metadata"] = {"name": name}
    if not optimization:
        del obj["spec"]["optimizationInstructions"]
    return obj


@pytest.fixture(scope="module")
def hook_kubeconfig(module_kube: Kube, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The hook's ServiceAccount/ClusterRole/Binding as rendered; a kubeconfig of its token."""
    kube = module_kube
    kube.request(
        "POST",
        "/api/v1/namespaces",
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}},
    )
    hooks = [
        d
        for d in render(namespace=NS, release="workload-map")
        if (d["metadata"].get("annotations") or {}).get("helm.sh/hook") == "pre-upgrade"
    ]
    account = next(d for d in hooks if d["kind"] == "ServiceAccount")["metadata"]["name"]
    for doc in hooks:
        if doc["kind"] != "Job":  # no kubelet would run it; its command is run below instead
            kube.apply(doc, field_validation="Strict")
    token = kube.request(
        "POST",
        f"/api/v1/namespaces/{NS}/serviceaccounts/{account}/token",
        {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {}},
    )["status"]["token"]
    admin = yaml.safe_load(Path(kube.kubeconfig).read_text())
    path = tmp_path_factory.mktemp("hook") / "kubeconfig"
    path.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "current-context": "hook",
                "clusters": [{"name": "c", "cluster": admin["clusters"][0]["cluster"]}],
                "users": [{"name": "hook", "user": {"token": token}}],
                "contexts": [{"name": "hook", "context": {"cluster": "c", "user": "hook"}}],
            }
        )
    )
    return path


def create_strict(kube: Kube, obj: dict[str, Any]) -> Any:
    """A plain create with strict field validation (server-side apply answers an undeclared
    field with a 500 "failed to create typed patch object"; create says 400 and names it)."""
    return kube.request(
        "POST", "/apis/run.ai/v1alpha1/kartas", obj, query={"fieldValidation": "Strict"}
    )


def crd_apply(kubeconfig: Path) -> tuple[int, dict[str, Any] | None, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(["crd", "apply", "--kubeconfig", str(kubeconfig)], io.StringIO(), out, err)
    text = out.getvalue().strip()
    return code, (json.loads(text) if code == 0 else None), err.getvalue()


def remove_crd(kube: Kube) -> None:
    try:
        kube.request("DELETE", CRD_PATH)
    except ApiException as err:
        if err.status != 404:
            raise
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            kube.request("GET", CRD_PATH)
        except ApiException as err:
            if err.status == 404:
                return
            raise
        time.sleep(0.2)
    raise AssertionError(f"{CRD_NAME} not deleted after 60 s")


def test_apply_creates_the_crd_on_a_fresh_cluster(module_kube: Kube, hook_kubeconfig: Path) -> None:
    remove_crd(module_kube)
    code, result, err = crd_apply(hook_kubeconfig)
    assert code == 0, err
    assert result is not None and result["action"] == "created"
    assert result["versions"] == ["v1alpha1"]
    created = create_strict(module_kube, karta("fresh", optimization=True))
    assert created["spec"]["optimizationInstructions"]


def test_upgrade_keeps_kartas_and_accepts_the_new_field(
    module_kube: Kube, hook_kubeconfig: Path
) -> None:
    kube = module_kube
    remove_crd(kube)
    kube.install_crd(previous_crd())
    old = kube.apply(karta("kept"))
    with pytest.raises(ApiException) as refused:
        create_strict(kube, karta("too-new", optimization=True))
    assert refused.value.status == 400
    assert "optimizationInstructions" in str(refused.value.body)

    code, result, err = crd_apply(hook_kubeconfig)
    assert code == 0, err
    assert result is not None and result["action"] == "configured"
    assert result["storedVersions"] == ["v1alpha1"]

    stored = kube.request("GET", CRD_PATH)
    schema = stored["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    assert "optimizationInstructions" in schema["properties"]["spec"]["properties"]
    after = kube.get("run.ai/v1alpha1", "Karta", "kept")
    assert after["metadata"]["uid"] == old["metadata"]["uid"]
    assert after["metadata"]["resourceVersion"] == old["metadata"]["resourceVersion"]
    assert after["spec"] == old["spec"]

    def accepted() -> bool:
        try:
            create_strict(kube, karta("now-valid", optimization=True))
        except ApiException as err:
            if err.status == 400:
                return False  # the new schema takes a moment to be served
            raise
        return True

    deadline = time.monotonic() + 30
    while not accepted():
        assert time.monotonic() < deadline, "the upgraded schema was never served"
        time.sleep(0.2)


def test_the_hook_account_can_touch_nothing_else(module_kube: Kube, hook_kubeconfig: Path) -> None:
    hook = Kube(kubeconfig=hook_kubeconfig)
    try:
        with pytest.raises(ApiException) as err:
            hook.request("DELETE", CRD_PATH)
        assert err.value.status == 403
        with pytest.raises(ApiException) as err:
            hook.request(
                "GET", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/other.example.com"
            )
        assert err.value.status == 403
        with pytest.raises(ApiException) as err:
            hook.request("GET", "/apis/run.ai/v1alpha1/kartas")
        assert err.value.status == 403
    finally:
        hook.close()
