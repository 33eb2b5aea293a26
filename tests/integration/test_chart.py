"""The Helm chart (charts/workload-map) through a real `helm`: lint, template, values, drift.

`helm` is built from its Go module by ``hack/build-helm.sh`` (``make helm``) into the same cache
as the Kubernetes binaries; like the API server, a missing binary fails with build instructions.
The rendered manifests are installed on a real API server in ``test_chart_install.py``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from .harness import cache_dir

ROOT = Path(__file__).resolve().parents[2]
CHART = ROOT / "charts" / "workload-map"
CRD_FILE = ROOT / "deploy" / "crds" / "kartas.run.ai.yaml"
DEPLOY_FILE = ROOT / "deploy" / "workload-map.yaml"
HELM_VERSION = "v3.22.0"
# the chart refuses the local name `make image` tags unless told where nodes get the image:
# every render below names a registry, as a user's install does (tests of the refusal omit it)
REGISTRY_IMAGE = "registry.example.com/workload-map-operator"
IMAGE_VALUES = ("--set", f"image.repository={REGISTRY_IMAGE}")


def helm_binary() -> Path:
    """$WLMAP_HELM, the build cache, or PATH's helm; fails (never skips) with how to build it."""
    candidates = [
        os.environ.get("WLMAP_HELM"),
        str(cache_dir() / "bin" / "helm"),
        shutil.which("helm"),
    ]
    for candidate in candidates:
        if candidate and Path(candidate).is_file() and os.access(candidate, os.X_OK):
            return Path(candidate)
    pytest.fail(
        "the chart tests need helm; build it once with `make helm` (hack/build-helm.sh, needs Go "
        "from https://go.dev/dl) or point WLMAP_HELM at a helm v3 binary",
        pytrace=False,
    )


def helm(*args: str, check: bool = True, image: bool = True) -> subprocess.CompletedProcess[str]:
    """``helm ARGS``; template/lint/install/upgrade name a registry image unless ``image`` is
    False or the arguments set an image value themselves."""
    if image and args and args[0] in ("template", "lint", "install", "upgrade"):
        if not any(a.startswith("image.") for a in args):
            args = (*args, *IMAGE_VALUES)
    run = subprocess.run(
        [str(helm_binary()), *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={
            **os.environ,
            "HELM_CACHE_HOME": "/tmp/wlmap-helm-cache",
            "HELM_CONFIG_HOME": "/tmp/wlmap-helm-config",
        },
    )
    if check:
        assert run.returncode == 0, run.stderr
    return run


def render(
    *sets: str,
    namespace: str = "workload-map",
    release: str = "wlmap",
    extra: tuple[str, ...] = (),
) -> list[dict[str, Any]]:
    args = ["template", release, str(CHART), "--namespace", namespace, *extra]
    for value in sets:
        args += ["--set", value]
    return [d for d in yaml.safe_load_all(helm(*args).stdout) if d]


def by_kind(docs: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [d for d in docs if d["kind"] == kind]


def one(docs: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    found = by_kind(docs, kind)
    assert len(found) == 1, [d["metadata"]["name"] for d in found]
    return found[0]


def test_helm_is_the_pinned_release() -> None:
    assert helm("version", "--template", "{{.Version}}").stdout.strip() == HELM_VERSION


def test_lint_passes_strict_in_both_cert_modes() -> None:
    helm("lint", "--strict", str(CHART))
    helm(
        "lint",
        "--strict",
        str(CHART),
        "--set",
        "webhook.cert.provisionMode=manual,webhook.cert.secretName=from-cert-manager",
    )


def test_default_render_is_the_hardened_operator() -> None:
    docs = render()
    deploy = one(docs, "Deployment")
    pod = deploy["spec"]["template"]["spec"]
    [container] = pod["containers"]
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["runAsUser"] == 65532
    sec = container["securityContext"]
    assert sec["readOnlyRootFilesystem"] is True
    assert sec["allowPrivilegeEscalation"] is False
    assert sec["capabilities"]["drop"] == ["ALL"]
    assert container["image"] == f"{REGISTRY_IMAGE}:0.1.0"
    assert container["command"] == ["workload-map-operator"]
    args = container["args"]
    for flag in (
        "--metrics-bind-address=:8080",
        "--health-probe-bind-address=:8081",
        "--leader-elect",
        "--enable-webhook",
        "--webhook-port=9443",
        "--webhook-cert-mode=auto",
        "--webhook-service-name=wlmap-workload-map-webhook",
    ):
        assert flag in args, args
    assert container["resources"] == {
        "requests": {"cpu": "50m", "memory": "64Mi"},
        "limits": {"cpu": "200m", "memory": "2Gi"},
    }
    # A read-only root needs somewhere to write the auto-mode certificates.
    assert {"name": "tmp", "mountPath": "/tmp"} in container["volumeMounts"]
    assert deploy["metadata"]["namespace"] == "workload-map"


def test_webhooks_match_the_reference_paths_and_fail_closed() -> None:
    docs = render()
    mutating = one(docs, "MutatingWebhookConfiguration")
    validating = one(docs, "ValidatingWebhookConfiguration")
    [m] = mutating["webhooks"]
    [v] = validating["webhooks"]
    assert m["clientConfig"]["service"]["path"] == "/mutate-run-ai-v1alpha1-karta"
    assert v["clientConfig"]["service"]["path"] == "/validate-run-ai-v1alpha1-karta"
    assert m["rules"][0]["operations"] == ["CREATE"]
    assert v["rules"][0]["operations"] == ["CREATE", "UPDATE"]
    assert m["failurePolicy"] == v["failurePolicy"] == "Fail"
    assert "caBundle" not in m["clientConfig"]  # auto mode: the operator patches it in
    service = next(
        s for s in by_kind(docs, "Service") if s["metadata"]["name"].endswith("-webhook")
    )
    assert m["clientConfig"]["service"]["name"] == service["metadata"]["name"]
    assert service["spec"]["ports"][0]["port"] == 443


def test_manual_cert_mode_mounts_the_secret_and_sets_the_ca_bundle() -> None:
    docs = render(
        "webhook.cert.provisionMode=manual",
        "webhook.cert.secretName=wlmap-tls",
        "webhook.cert.caBundle=Q0E=",
        "webhook.cert.annotations.cert-manager\\.io/inject-ca-from=workload-map/wlmap-tls",
    )
    pod = one(docs, "Deployment")["spec"]["template"]["spec"]
    assert {"name": "webhook-cert", "secret": {"secretName": "wlmap-tls"}} in pod["volumes"]
    for kind in ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"):
        config = one(docs, kind)
        assert config["webhooks"][0]["clientConfig"]["caBundle"] == "Q0E="
        assert config["metadata"]["annotations"] == {
            "cert-manager.io/inject-ca-from": "workload-map/wlmap-tls"
        }
    # manual mode needs no Secret or webhook-configuration write access
    role = next(r for r in by_kind(docs, "Role"))
    assert all("secrets" not in rule["resources"] for rule in role["rules"])
    cluster_role = next(
        r
        for r in by_kind(docs, "ClusterRole")
        if "aggregationRule" not in r and not r["metadata"]["name"].endswith("-catalog")
    )
    assert all(
        rule["apiGroups"] != ["admissionregistration.k8s.io"] for rule in cluster_role["rules"]
    )


def test_webhook_and_leader_election_off() -> None:
    docs = render("webhook.enabled=false", "leaderElection.enabled=false")
    args = one(docs, "Deployment")["spec"]["template"]["spec"]["containers"][0]["args"]
    assert not any(a.startswith(("--enable-webhook", "--leader-elect")) for a in args)
    assert by_kind(docs, "MutatingWebhookConfiguration") == []
    assert by_kind(docs, "ValidatingWebhookConfiguration") == []


def test_operator_off_installs_only_the_crd_and_its_upgrader() -> None:
    docs = render("operator.enabled=false", extra=("--include-crds",))
    kinds = sorted({d["kind"] for d in docs})
    assert kinds == [
        "ClusterRole",
        "ClusterRoleBinding",
        "CustomResourceDefinition",
        "Job",
        "ServiceAccount",
    ]
    assert all(
        d["kind"] == "CustomResourceDefinition"
        or d["metadata"]["annotations"]["helm.sh/hook"] == "pre-upgrade"
        for d in docs
    )


def test_crd_upgrader_is_a_pre_upgrade_job_running_wlmap() -> None:
    docs = render()
    job = one(docs, "Job")
    assert job["metadata"]["annotations"]["helm.sh/hook"] == "pre-upgrade"
    [container] = job["spec"]["template"]["spec"]["containers"]
    assert container["command"] == ["wlmap", "crd", "apply"]
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
    role = next(
        r
        for r in by_kind(docs, "ClusterRole")
        if r["metadata"].get("annotations", {}).get("helm.sh/hook") == "pre-upgrade"
    )
    assert {"resourceNames": ["kartas.run.ai"], "verbs": ["get", "patch"]}.items() <= role["rules"][
        0
    ].items()


def test_chart_crd_is_the_generated_one() -> None:
    assert (CHART / "crds" / "kartas.run.ai.yaml").read_text() == CRD_FILE.read_text()


MAP_API = ("--api-versions", "admissionregistration.k8s.io/v1/MutatingAdmissionPolicy")


def test_label_policy_replaces_the_mutating_karta_webhook_where_served() -> None:
    """webhook.labelPolicy=auto: the Karta labels by a MutatingAdmissionPolicy when the cluster
    serves the kind (helm sees it through --api-versions here, discovery on install), the
    mutating webhook otherwise; the validating webhook either way."""
    policy_file = CHART / "files" / "karta-label-policy.yaml"
    docs = render(extra=MAP_API)
    [policy] = by_kind(docs, "MutatingAdmissionPolicy")
    [binding] = by_kind(docs, "MutatingAdmissionPolicyBinding")
    assert policy["spec"] == {"failurePolicy": "Fail", **yaml.safe_load(policy_file.read_text())}
    assert binding["spec"] == {"policyName": policy["metadata"]["name"]}
    assert by_kind(docs, "MutatingWebhookConfiguration") == []  # nothing else to mutate
    [v] = one(docs, "ValidatingWebhookConfiguration")["webhooks"]
    assert v["clientConfig"]["service"]["path"] == "/validate-run-ai-v1alpha1-karta"
    # the pod gang webhook keeps the configuration, without the Karta entry
    docs = render("gangScheduling.enabled=true", extra=MAP_API)
    hooks = one(docs, "MutatingWebhookConfiguration")["webhooks"]
    assert [h["name"] for h in hooks] == ["gangs.pods.workload-map.run.ai"]
    assert len(by_kind(docs, "MutatingAdmissionPolicy")) == 1
    # no policy API known (helm template's default), or the policy turned off: the webhook
    for docs in (render(), render("webhook.labelPolicy=false", extra=MAP_API)):
        assert by_kind(docs, "MutatingAdmissionPolicy") == []
        [m] = one(docs, "MutatingWebhookConfiguration")["webhooks"]
        assert m["clientConfig"]["service"]["path"] == "/mutate-run-ai-v1alpha1-karta"
    # forced on: the policy whatever helm knows
    assert len(by_kind(render("webhook.labelPolicy=true"), "MutatingAdmissionPolicy")) == 1
    # webhooks off: neither
    assert by_kind(render("webhook.enabled=false", extra=MAP_API), "MutatingAdmissionPolicy") == []


def test_bad_values_fail_naming_the_value() -> None:
    run = helm(
        "template", "x", str(CHART), "--set", "webhook.cert.provisionMode=sometimes", check=False
    )
    # values.schema.json refuses it first, naming the value's path
    assert run.returncode != 0 and "at '/webhook/cert/provisionMode'" in run.stderr, run.stderr
    run = helm(
        "template",
        "x",
        str(CHART),
        "--set",
        "replicaCount=2,leaderElection.enabled=false",
        check=False,
    )
    assert run.returncode != 0 and "needs leaderElection.enabled=true" in run.stderr
    run = helm(
        "template", "x", str(CHART), "--set", "webhook.cert.provisionMode=manual", check=False
    )
    assert run.returncode != 0 and "needs webhook.cert.secretName" in run.stderr
    run = helm("template", "x", str(CHART), "--set", "webhook.labelPolicy=maybe", check=False)
    assert run.returncode != 0 and "at '/webhook/labelPolicy'" in run.stderr, run.stderr
    for value, path in (
        ("replicaCount=two", "/replicaCount"),
        ("image.pullPolicy=Sometimes", "/image/pullPolicy"),
        ("image.digest=latest", "/image/digest"),
        ("image.pulPolicy=Never", "/image"),
        ("gangScheduling.missedMemberMode=drop", "/gangScheduling/missedMemberMode"),
        ("webhook.port=70000", "/webhook/port"),
        ("logLevel=loud", "/logLevel"),
    ):
        run = helm("template", "x", str(CHART), "--set", value, check=False)
        assert run.returncode != 0 and f"at '{path}'" in run.stderr, (value, run.stderr)


def test_the_local_image_name_needs_a_registry_or_side_loading() -> None:
    """The default repository is the name `make image` tags; no node can pull it."""
    run = helm("template", "x", str(CHART), check=False, image=False)
    assert run.returncode != 0
    assert "--set image.repository=REGISTRY/workload-map-operator" in run.stderr, run.stderr
    assert "--set image.pullPolicy=Never" in run.stderr
    # side-loaded: the local name, never pulled (the CRD upgrade hook's Job too)
    docs = render("image.pullPolicy=Never")
    [container] = one(docs, "Deployment")["spec"]["template"]["spec"]["containers"]
    assert container["image"] == "localhost/workload-map-operator:0.1.0"
    assert container["imagePullPolicy"] == "Never"
    hooks = helm("template", "x", str(CHART), "--set", "image.pullPolicy=Never").stdout
    assert "image: localhost/workload-map-operator:0.1.0" in hooks
    # pinned by digest: the digest replaces the tag everywhere
    digest = "sha256:" + "ab" * 32
    text = helm(
        "template", "x", str(CHART), *IMAGE_VALUES, "--set", f"image.digest={digest}"
    ).stdout
    images = {line.split()[-1] for line in text.splitlines() if line.strip().startswith("image:")}
    assert images == {f"{REGISTRY_IMAGE}@{digest}"}


def test_helm_package_makes_the_chart_archive(tmp_path: Path) -> None:
    helm("package", str(CHART), "--destination", str(tmp_path))
    [archive] = tmp_path.glob("workload-map-*.tgz")
    run = helm("template", "x", str(archive))
    assert run.returncode == 0
    shown = helm("show", "values", str(archive)).stdout
    assert shown.strip() == (CHART / "values.yaml").read_text().strip()


def test_workload_reader_covers_every_catalog_kind() -> None:
    from workload_map.catalog import catalog

    docs = render()
    reader = next(r for r in by_kind(docs, "ClusterRole") if "aggregationRule" in r)
    selector = reader["aggregationRule"]["clusterRoleSelectors"][0]["matchLabels"]
    parts = [
        r
        for r in by_kind(docs, "ClusterRole")
        if selector.items() <= (r["metadata"].get("labels") or {}).items()
    ]
    assert parts, "the chart contributes its own rules to the aggregated role"
    granted = {
        (group, resource)
        for part in parts
        for rule in part["rules"]
        if set(rule["verbs"]) >= {"get", "list", "watch"}
        for group in rule["apiGroups"]
        for resource in rule["resources"]
    }
    builtin_plural = {
        "Pod": "pods",
        "Deployment": "deployments",
        "ReplicaSet": "replicasets",
        "StatefulSet": "statefulsets",
        "DaemonSet": "daemonsets",
        "Job": "jobs",
        "CronJob": "cronjobs",
    }
    from workload_map.engine.references import referenced_kinds

    missing = set()
    for karta in catalog.list():
        # what its components are, and what its references read (a TrainJob's runtime): the
        # exporter, the web view and the gang controller watch both
        for gvk in [c.kind for c in karta.components()] + list(referenced_kinds(karta)):
            if gvk is None:
                continue
            if gvk.group in ("", "apps", "batch"):
                ok = (gvk.group, builtin_plural.get(gvk.kind, "?")) in granted
            else:
                ok = (gvk.group, "*") in granted
            if not ok:
                missing.add(f"{gvk.group}/{gvk.kind}")
    assert not missing, sorted(missing)
    # Nothing beyond reading: no write verb on any workload kind, no secrets.
    for part in parts:
        for rule in part["rules"]:
            assert set(rule["verbs"]) <= {"get", "list", "watch"}
            assert "secrets" not in rule["resources"]


def test_deploy_manifests_are_the_rendered_chart() -> None:
    """deploy/workload-map.yaml is `make deploy` output; regenerate it when the chart changes."""
    run = subprocess.run(
        ["bash", str(ROOT / "hack" / "render-deploy.sh"), "-"],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "WLMAP_HELM": str(helm_binary())},
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout == DEPLOY_FILE.read_text(), (
        "deploy/workload-map.yaml drifted: run `make deploy`"
    )
    docs = [d for d in yaml.safe_load_all(run.stdout) if d]
    assert docs[0] == {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {
            "name": "workload-map",
            "labels": {"pod-security.kubernetes.io/enforce": "restricted"},
        },
    }
    assert not any("helm.sh/hook" in (d["metadata"].get("annotations") or {}) for d in docs)


def test_gang_scheduling_adds_flags_pod_webhook_and_rules() -> None:
    assert not [
        r for r in by_kind(render(), "ClusterRole") if r["metadata"]["name"].endswith("-gangs")
    ]
    docs = render("gangScheduling.enabled=true", "gangScheduling.missedMemberMode=delete-unbound")
    args = one(docs, "Deployment")["spec"]["template"]["spec"]["containers"][0]["args"]
    assert "--enable-gang-scheduling" in args
    assert "--gang-missed-member-mode=delete-unbound" in args
    hooks = one(docs, "MutatingWebhookConfiguration")["webhooks"]
    assert [h["clientConfig"]["service"]["path"] for h in hooks] == [
        "/mutate-run-ai-v1alpha1-karta",
        "/mutate-v1-pod-gangs",
    ]
    pods = hooks[1]
    assert pods["failurePolicy"] == "Ignore" and pods["timeoutSeconds"] == 3
    excluded = pods["namespaceSelector"]["matchExpressions"][0]["values"]
    assert {"kube-system", "workload-map"} <= set(excluded)  # never its own namespace
    role = next(r for r in by_kind(docs, "ClusterRole") if r["metadata"]["name"].endswith("-gangs"))
    verbs = {
        (g, res): set(rule["verbs"])
        for rule in role["rules"]
        for g in rule["apiGroups"]
        for res in rule["resources"]
    }
    assert {"create", "patch", "delete"} <= verbs[("scheduling.k8s.io", "podgroups")]
    # PriorityClass values order the minResources fill: read only
    assert verbs[("scheduling.k8s.io", "priorityclasses")] == {"get", "list", "watch"}
    assert verbs[("", "pods")] == {"delete"}  # only in delete-unbound mode
    lower = render("gangScheduling.enabled=true")
    role = next(
        r for r in by_kind(lower, "ClusterRole") if r["metadata"]["name"].endswith("-gangs")
    )
    assert all("pods" not in rule["resources"] for rule in role["rules"])


def test_install_catalog_alone_adds_karta_create() -> None:
    def karta_verbs(docs: list[dict[str, Any]]) -> set[str]:
        role = next(
            r for r in by_kind(docs, "ClusterRole") if r["metadata"]["name"] == "wlmap-workload-map"
        )
        return next(set(r["verbs"]) for r in role["rules"] if r["resources"] == ["kartas"])

    assert "create" not in karta_verbs(render())
    docs = render("installCatalog=true")
    assert "create" in karta_verbs(docs)
    args = one(docs, "Deployment")["spec"]["template"]["spec"]["containers"][0]["args"]
    assert "--install-catalog" in args
