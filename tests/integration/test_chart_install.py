"""The rendered chart on a real API server, and the operator with exactly the chart's RBAC.

``deploy/workload-map.yaml`` (the chart rendered with its defaults) and the chart's hook objects
are applied with strict field validation; the pod template passes the ``restricted`` Pod
Security level; the controller-manager fills the aggregated workload-reader role; every request
the operator makes is allowed for its service account and neighbouring ones are not; finally
the real operator runs on a token of that service account (nothing else) and reconciles.
"""

from __future__ import annotations

import base64
import contextlib
import copy
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes.client.exceptions import ApiException

from tests.operator.live import OperatorProcess, api_for, eventually, reconciled_again, running

from .harness import Kube
from .test_chart import CRD_FILE, DEPLOY_FILE, render

# A log line's own timestamp ("14:26:23,403") and hex serials may contain "403": only the
# message after the timestamp counts, and only 403 as a whole number.
_LOG_PREFIX = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d[,.]\d+\s+")
_STATUS_403 = re.compile(r"(?<![\w.,:])403(?![\w.,:])")


def permission_denials(log: str) -> list[str]:
    """The lines of an operator log that report an RBAC refusal (403 or "forbidden")."""
    lines = (_LOG_PREFIX.sub("", line) for line in log.splitlines())
    return [line for line in lines if "forbidden" in line.lower() or _STATUS_403.search(line)]


NS = "workload-map"
SA_NAME = "workload-map"
USER = f"system:serviceaccount:{NS}:{SA_NAME}"
GROUPS = ["system:serviceaccounts", f"system:serviceaccounts:{NS}", "system:authenticated"]
MUTATING, VALIDATING = "workload-map-mutating", "workload-map-validating"
CERT_SECRET = "workload-map-webhook-cert"
LEASE = "workload-map-operator.run.ai"
READER = "workload-map-workload-reader"

# (verb, group, resource, namespace, name) — every request the operator makes (F2's list).
NEEDED = [
    ("get", "run.ai", "kartas", None, None),
    ("list", "run.ai", "kartas", None, None),
    ("watch", "run.ai", "kartas", None, None),
    ("patch", "run.ai", "kartas", None, "any-karta"),
    ("patch", "run.ai", "kartas/status", None, "any-karta"),
    ("get", "apiextensions.k8s.io", "customresourcedefinitions", None, None),
    ("list", "apiextensions.k8s.io", "customresourcedefinitions", None, None),
    ("watch", "apiextensions.k8s.io", "customresourcedefinitions", None, None),
    ("create", "", "events", "default", None),
    ("create", "events.k8s.io", "events", NS, None),
    ("create", "coordination.k8s.io", "leases", NS, None),
    ("get", "coordination.k8s.io", "leases", NS, LEASE),
    ("update", "coordination.k8s.io", "leases", NS, LEASE),
    ("create", "", "secrets", NS, None),
    ("get", "", "secrets", NS, CERT_SECRET),
    ("list", "", "secrets", NS, CERT_SECRET),
    ("watch", "", "secrets", NS, CERT_SECRET),
    ("update", "", "secrets", NS, CERT_SECRET),
    ("get", "admissionregistration.k8s.io", "mutatingwebhookconfigurations", None, MUTATING),
    ("update", "admissionregistration.k8s.io", "mutatingwebhookconfigurations", None, MUTATING),
    ("get", "admissionregistration.k8s.io", "validatingwebhookconfigurations", None, VALIDATING),
    (
        "update",
        "admissionregistration.k8s.io",
        "validatingwebhookconfigurations",
        None,
        VALIDATING,
    ),
    ("create", "authorization.k8s.io", "selfsubjectaccessreviews", None, None),
    # Read access to workload kinds, through the aggregated role.
    ("list", "", "pods", None, None),
    ("watch", "apps", "deployments", None, None),
    ("list", "jobset.x-k8s.io", "jobsets", None, None),
    ("watch", "kubeflow.org", "pytorchjobs", None, None),
]
# Close neighbours that least privilege must refuse.
REFUSED = [
    ("get", "", "secrets", NS, "someone-elses-secret"),
    ("list", "", "secrets", NS, None),
    ("get", "", "secrets", "kube-system", CERT_SECRET),
    ("delete", "run.ai", "kartas", None, "any-karta"),
    ("create", "run.ai", "kartas", None, None),
    ("update", "apiextensions.k8s.io", "customresourcedefinitions", None, "kartas.run.ai"),
    ("delete", "apiextensions.k8s.io", "customresourcedefinitions", None, "kartas.run.ai"),
    ("update", "admissionregistration.k8s.io", "mutatingwebhookconfigurations", None, "other"),
    ("update", "coordination.k8s.io", "leases", NS, "another-lease"),
    ("create", "coordination.k8s.io", "leases", "kube-system", None),
    ("create", "", "pods", NS, None),
    ("patch", "jobset.x-k8s.io", "jobsets", "default", "js"),
    ("get", "", "configmaps", "kube-system", None),
]


def review(
    kube: Kube, verb: str, group: str, resource: str, ns: str | None, name: str | None
) -> bool:
    res, _, sub = resource.partition("/")
    attrs: dict[str, Any] = {"verb": verb, "group": group, "resource": res}
    if sub:
        attrs["subresource"] = sub
    if ns:
        attrs["namespace"] = ns
    if name:
        attrs["name"] = name
    answer = kube.request(
        "POST",
        "/apis/authorization.k8s.io/v1/subjectaccessreviews",
        {
            "apiVersion": "authorization.k8s.io/v1",
            "kind": "SubjectAccessReview",
            "spec": {"user": USER, "groups": GROUPS, "resourceAttributes": attrs},
        },
    )
    return bool(answer["status"].get("allowed"))


@pytest.fixture(scope="module")
def installed(module_kube: Kube) -> Iterator[dict[tuple[str, str], Any]]:
    """deploy/workload-map.yaml + the chart's hook objects, applied strictly; stored objects."""
    kube = module_kube
    kube.install_crd(CRD_FILE)
    docs = [d for d in yaml.safe_load_all(DEPLOY_FILE.read_text()) if d]
    hooks = [
        d
        for d in render(namespace=NS, release="workload-map")
        if "helm.sh/hook" in (d["metadata"].get("annotations") or {})
    ]
    assert hooks, "the chart renders its CRD-upgrade hook objects"
    stored = {}
    for doc in docs + hooks:
        obj = kube.apply(doc, field_validation="Strict")
        stored[(obj["kind"], obj["metadata"]["name"])] = obj
    # failurePolicy Fail against a Service with no pods would refuse every Karta write on this
    # plane; the configurations were accepted as rendered, now let the tests write Kartas.
    for kind in ("mutatingwebhookconfigurations", "validatingwebhookconfigurations"):
        name = MUTATING if kind.startswith("mutating") else VALIDATING
        kube.request(
            "PATCH",
            f"/apis/admissionregistration.k8s.io/v1/{kind}/{name}",
            {"webhooks": [{"name": stored_name(stored, kind), "failurePolicy": "Ignore"}]},
            content_type="application/strategic-merge-patch+json",
        )
    yield stored


def stored_name(stored: dict[tuple[str, str], Any], kind: str) -> str:
    singular = (
        "MutatingWebhookConfiguration"
        if kind.startswith("mutating")
        else "ValidatingWebhookConfiguration"
    )
    obj = next(v for (k, _), v in stored.items() if k == singular)
    return str(obj["webhooks"][0]["name"])


def test_every_rendered_object_is_accepted(installed: dict[tuple[str, str], Any]) -> None:
    kinds = {kind for kind, _ in installed}
    assert {
        "Namespace",
        "ServiceAccount",
        "ClusterRole",
        "ClusterRoleBinding",
        "Role",
        "RoleBinding",
        "Service",
        "Deployment",
        "MutatingWebhookConfiguration",
        "ValidatingWebhookConfiguration",
        "Job",
    } <= kinds
    deploy = installed[("Deployment", "workload-map")]
    assert deploy["metadata"]["namespace"] == NS
    assert deploy["spec"]["template"]["spec"]["serviceAccountName"] == SA_NAME


def test_pod_template_passes_restricted_pod_security(
    module_kube: Kube, installed: dict[tuple[str, str], Any]
) -> None:
    for key in (("Deployment", "workload-map"), ("Job", "workload-map-crd-upgrade")):
        template = installed[key]["spec"]["template"]
        pod = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": f"psa-{key[0].lower()}", "labels": template["metadata"]["labels"]},
            "spec": template["spec"],
        }
        module_kube.request("POST", f"/api/v1/namespaces/{NS}/pods", pod, query={"dryRun": "All"})
    # The namespace really enforces: the same pod with privilege escalation allowed is refused.
    weak = copy.deepcopy(pod)
    weak["spec"]["containers"][0]["securityContext"]["allowPrivilegeEscalation"] = True
    with pytest.raises(ApiException) as err:
        module_kube.request("POST", f"/api/v1/namespaces/{NS}/pods", weak, query={"dryRun": "All"})
    assert err.value.status == 403 and "restricted" in str(err.value.body)


def test_aggregated_reader_role_is_filled(
    module_kube: Kube, installed: dict[tuple[str, str], Any]
) -> None:
    catalog_rules = installed[("ClusterRole", f"{READER}-catalog")]["rules"]

    def filled() -> list[Any]:
        return (
            module_kube.get("rbac.authorization.k8s.io/v1", "ClusterRole", READER).get("rules")
            or []
        )

    rules = eventually(filled, 30, "the clusterrole-aggregation controller to fill the role")
    assert len(rules) == len(catalog_rules)


@pytest.mark.parametrize("attrs", NEEDED, ids=lambda a: "-".join(x for x in a if x))
def test_operator_account_may_do_what_it_needs(
    module_kube: Kube, installed: dict[tuple[str, str], Any], attrs: tuple[Any, ...]
) -> None:
    if attrs[2] in ("pods", "deployments", "jobsets", "pytorchjobs"):  # granted by aggregation
        eventually(
            lambda: module_kube.get("rbac.authorization.k8s.io/v1", "ClusterRole", READER).get(
                "rules"
            ),
            30,
            "aggregation",
        )
    assert review(module_kube, *attrs), attrs


@pytest.mark.parametrize("attrs", REFUSED, ids=lambda a: "-".join(x for x in a if x))
def test_operator_account_may_not_do_more(
    module_kube: Kube, installed: dict[tuple[str, str], Any], attrs: tuple[Any, ...]
) -> None:
    assert not review(module_kube, *attrs), attrs


def service_account_kubeconfig(kube: Kube, path: Path) -> Path:
    """A kubeconfig holding only a token of the chart's service account (TokenRequest)."""
    token = kube.request(
        "POST",
        f"/api/v1/namespaces/{NS}/serviceaccounts/{SA_NAME}/token",
        {
            "apiVersion": "authentication.k8s.io/v1",
            "kind": "TokenRequest",
            "spec": {"expirationSeconds": 3600},
        },
    )["status"]["token"]
    admin = yaml.safe_load(Path(kube.kubeconfig).read_text())
    cluster = admin["clusters"][0]["cluster"]
    path.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "current-context": "sa",
                "clusters": [{"name": "c", "cluster": cluster}],
                "users": [{"name": "sa", "user": {"token": token}}],
                "contexts": [{"name": "sa", "context": {"cluster": "c", "user": "sa"}}],
            }
        )
    )
    path.chmod(0o600)
    return path


def test_operator_runs_on_the_charts_permissions_alone(
    module_kube: Kube, installed: dict[tuple[str, str], Any], tmp_path: Path
) -> None:
    kube = module_kube
    kubeconfig = service_account_kubeconfig(kube, tmp_path / "sa.kubeconfig")
    review_self = Kube(kubeconfig=kubeconfig).request(
        "POST",
        "/apis/authentication.k8s.io/v1/selfsubjectreviews",
        {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"},
    )
    assert review_self["status"]["userInfo"]["username"] == USER
    from workload_map.catalog import catalog

    karta = next(k for k in catalog.as_cluster_objects() if k["metadata"]["name"] == "batch-job-v1")
    name = karta["metadata"]["name"]
    kube.apply(karta)
    op = _as_the_chart_runs_it(kubeconfig, tmp_path)
    with running(op):
        op.wait_ready(90)

        def reconciled() -> bool:
            status = kube.get("run.ai/v1alpha1", "Karta", name).get("status") or {}
            types = {c["type"] for c in status.get("conditions") or []}
            return {"Validated", "CRDExists", "Ready"} <= types

        eventually(reconciled, 60, lambda: f"the Karta reconciled ({op.log_tail()})")
        lease = kube.get("coordination.k8s.io/v1", "Lease", LEASE, NS)
        assert lease["spec"].get("holderIdentity")
        secret = kube.get("v1", "Secret", CERT_SECRET, NS)
        assert set(secret["data"]) >= {"tls.crt", "tls.key"}

        def patched() -> bool:
            config = kube.get(
                "admissionregistration.k8s.io/v1", "MutatingWebhookConfiguration", MUTATING
            )
            return bool(config["webhooks"][0]["clientConfig"].get("caBundle"))

        eventually(patched, 60, lambda: f"the caBundle patched ({op.log_tail()})")
        bundle = kube.get(
            "admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration", VALIDATING
        )["webhooks"][0]["clientConfig"]["caBundle"]
        assert b"BEGIN CERTIFICATE" in base64.b64decode(bundle)
    log = op.log.read_text(errors="replace")
    assert not permission_denials(log), log[-3000:]


def test_gang_controller_runs_on_the_charts_gang_permissions(
    module_kube: Kube, installed: dict[tuple[str, str], Any], tmp_path: Path
) -> None:
    """gangScheduling.enabled=true and installCatalog=true add RBAC; the operator then installs
    the catalog, its gang controller probes GenericWorkload and watches what it needs, without a
    single 403."""
    kube = module_kube
    extra = [
        d
        for d in render(
            "gangScheduling.enabled=true",
            "installCatalog=true",
            namespace=NS,
            release="workload-map",
        )
        if d["kind"] in ("ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding")
        and ("-gangs" in d["metadata"]["name"] or d["metadata"]["name"] == "workload-map")
    ]
    assert extra
    # the module's other tests (in any order) check the default install's permissions: what
    # this test widens is put back at its end
    before = [installed.get((d["kind"], d["metadata"]["name"])) for d in extra]
    for doc in extra:
        kube.apply(doc, field_validation="Strict")
    try:
        _run_gang_controller(kube, tmp_path)
    finally:
        for doc, stored in zip(extra, before, strict=True):
            if stored is not None:
                kube.apply(stored, field_validation="Strict")
            else:
                meta = doc["metadata"]
                kube.delete(doc["apiVersion"], doc["kind"], meta["name"], meta.get("namespace"))


def _as_the_chart_runs_it(kubeconfig: Path, tmp_path: Path, *flags: str) -> OperatorProcess:
    """The operator on ``kubeconfig`` with the chart's names for its lease, certificate Secret,
    webhook configurations and Service (what its permissions are scoped to), and ``flags``."""
    return OperatorProcess(
        kubeconfig,
        NS,
        tmp_path / "op",
        webhook=True,
        leader_elect=True,
        extra=[
            f"--leader-election-id={LEASE}",
            f"--webhook-cert-secret={CERT_SECRET}",
            f"--mutating-webhook-name={MUTATING}",
            f"--validating-webhook-name={VALIDATING}",
            "--webhook-service-name=workload-map-webhook",
            *flags,
        ],
    )


def _run_gang_controller(kube: Kube, tmp_path: Path) -> None:
    kubeconfig = service_account_kubeconfig(kube, tmp_path / "sa.kubeconfig")
    op = _as_the_chart_runs_it(
        kubeconfig, tmp_path, "--enable-gang-scheduling", "--install-catalog"
    )
    from workload_map.catalog import catalog
    from workload_map.cluster.catalog_install import served_gvks

    # --install-catalog installs the definitions of the kinds the cluster serves (the others
    # wait for their CRD), so those are what the chart's permissions must let it write
    served = served_gvks(api_for(kube.kubeconfig))
    wanted = {
        o["metadata"]["name"]
        for o in catalog.as_cluster_objects()
        if (r := o["spec"]["structureDefinition"]["rootComponent"]["kind"])
        and (r.get("group", ""), r["version"], r["kind"]) in served
    }
    assert "batch-job-v1" in wanted

    with running(op):
        op.wait_ready(90)

        def catalog_installed() -> bool:
            names = {
                k["metadata"]["name"]
                for k in kube.request("GET", "/apis/run.ai/v1alpha1/kartas")["items"]
            }
            return wanted <= names

        eventually(catalog_installed, 90, lambda: f"--install-catalog ({op.log_tail()})")
        eventually(
            lambda: op.metric('workloadmap_gangs_generic_workload{state="works"}') == 1,
            60,
            lambda: f"the GenericWorkload probe ({op.log_tail()})",
        )
        # the PriorityClass watch (minResources fill order) runs on the chart's read rule
        path = "/apis/scheduling.k8s.io/v1/priorityclasses"
        kube.request(
            "POST",
            path,
            {
                "apiVersion": "scheduling.k8s.io/v1",
                "kind": "PriorityClass",
                "metadata": {"name": "wlmap-gangs-fill"},
                "value": 1234,
            },
        )
        try:
            count = len(kube.request("GET", path)["items"])
            eventually(
                lambda: op.metric("workloadmap_gangs_priority_classes") == count,
                30,
                lambda: f"the PriorityClass watch ({op.log_tail()})",
            )
        finally:
            kube.request("DELETE", f"{path}/wlmap-gangs-fill")
    log = op.log.read_text(errors="replace")
    assert not permission_denials(log), log[-3000:]


def impersonating_kubeconfig(kube: Kube, path: Path, user: str, groups: list[str]) -> Path:
    """The harness's admin kubeconfig whose user acts as ``user`` in ``groups`` (the
    kubeconfig ``as``/``as-groups`` fields, which the operator's client honours)."""
    config = yaml.safe_load(Path(kube.kubeconfig).read_text())
    current = next(c for c in config["contexts"] if c["name"] == config["current-context"])
    for entry in config["users"]:
        if entry["name"] == current["context"]["user"]:
            entry["user"]["as"] = user
            entry["user"]["as-groups"] = list(groups)
    path.write_text(yaml.safe_dump(config))
    path.chmod(0o600)
    return path


@contextlib.contextmanager
def webhooks_on_loopback(kube: Kube, port: int) -> Iterator[None]:
    """The chart's two webhook configurations, as rendered, but calling the operator on
    ``https://127.0.0.1:port`` with failure policy Fail; put back as they were afterwards."""
    kinds = {
        "MutatingWebhookConfiguration": MUTATING,
        "ValidatingWebhookConfiguration": VALIDATING,
    }
    saved = {}
    for kind, name in kinds.items():
        obj = kube.get("admissionregistration.k8s.io/v1", kind, name)
        saved[kind] = copy.deepcopy(obj["webhooks"])
        for hook in obj["webhooks"]:
            path = hook["clientConfig"]["service"]["path"]
            hook["clientConfig"] = {
                "url": f"https://127.0.0.1:{port}{path}",
                **(
                    {"caBundle": hook["clientConfig"]["caBundle"]}
                    if "caBundle" in hook["clientConfig"]
                    else {}
                ),
            }
            hook["failurePolicy"] = "Fail"
        kube.request("PUT", f"/apis/admissionregistration.k8s.io/v1/{kind.lower()}s/{name}", obj)
    try:
        yield
    finally:
        for kind, name in kinds.items():
            obj = kube.get("admissionregistration.k8s.io/v1", kind, name)
            obj["webhooks"] = saved[kind]
            kube.request(
                "PUT", f"/apis/admissionregistration.k8s.io/v1/{kind.lower()}s/{name}", obj
            )


def test_operator_runs_impersonating_the_charts_account(
    module_kube: Kube, installed: dict[tuple[str, str], Any], tmp_path: Path
) -> None:
    """The admin's credentials, impersonating the chart's service account and its groups:
    every request carries exactly the chart's permissions. The operator reconciles, keeps its
    certificate and both caBundles, and the API server calls its webhooks, which stamp labels
    and refuse an invalid Karta."""
    from tests.operator.live import widget_karta

    kube = module_kube
    kubeconfig = impersonating_kubeconfig(kube, tmp_path / "as.kubeconfig", USER, GROUPS)
    from workload_map.kube.api import Api
    from workload_map.kube.options import ConnectionOptions

    api = Api.connect(ConnectionOptions(kubeconfig=str(kubeconfig)))
    try:
        me = api.request(
            "POST",
            "/apis/authentication.k8s.io/v1/selfsubjectreviews",
            {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"},
        )["status"]["userInfo"]
        # and the impersonated identity has no more than the chart grants
        with pytest.raises(Exception, match=r"403|forbidden"):
            api.get("/api/v1/namespaces/kube-system/configmaps")
    finally:
        api.close()
    assert me["username"] == USER
    assert set(GROUPS) <= set(me["groups"])

    op = _as_the_chart_runs_it(kubeconfig, tmp_path)
    token = tmp_path.name[-8:].lower().replace("_", "-")
    good = widget_karta(f"as-good-{token}", f"as-good-{token}.example.com")
    bad = widget_karta(f"as-bad-{token}", f"as-bad-{token}.example.com")
    bad["spec"]["structureDefinition"]["rootComponent"]["kind"]["kind"] = ""
    bad["spec"]["structureDefinition"]["rootComponent"]["name"] = ""
    with running(op), webhooks_on_loopback(kube, op.webhook_port):
        op.wait_ready(90)

        def bundles() -> bool:
            return all(
                kube.get("admissionregistration.k8s.io/v1", kind, name)["webhooks"][0][
                    "clientConfig"
                ].get("caBundle")
                for kind, name in (
                    ("MutatingWebhookConfiguration", MUTATING),
                    ("ValidatingWebhookConfiguration", VALIDATING),
                )
            )

        eventually(bundles, 60, lambda: f"both caBundles patched ({op.log_tail()})")

        def create_good() -> Any:
            return kube.request("POST", "/apis/run.ai/v1alpha1/kartas", good)

        # the API server may still hold the previous caBundle for a moment
        created = eventually(create_good, 30, lambda: f"a Karta admitted ({op.log_tail()})")
        assert (
            created["metadata"]["labels"]["run.ai/karta-group"]
            == good["spec"]["structureDefinition"]["rootComponent"]["kind"]["group"]
        )
        with pytest.raises(ApiException) as err:
            kube.request("POST", "/apis/run.ai/v1alpha1/kartas", bad)
        assert err.value.status == 403
        assert "the Karta definition is invalid" in str(err.value.body)

        def reconciled() -> bool:
            status = kube.get("run.ai/v1alpha1", "Karta", good["metadata"]["name"]).get("status")
            return {"Validated", "CRDExists", "Ready"} <= {
                c["type"] for c in (status or {}).get("conditions") or []
            }

        eventually(reconciled, 60, lambda: f"the Karta reconciled ({op.log_tail()})")
    kube.delete("run.ai/v1alpha1", "Karta", good["metadata"]["name"])
    log = op.log.read_text(errors="replace")
    assert not permission_denials(log), log[-3000:]


def test_a_removed_permission_is_a_condition_not_a_crash_loop(
    module_kube: Kube, installed: dict[tuple[str, str], Any], tmp_path: Path
) -> None:
    """The chart's ClusterRole minus its CRD rule, bound to another impersonated account: the
    operator stays up and ready, and every Karta says it cannot read CRDs (CRDExists Unknown,
    CRDsNotReadable) instead of the process failing."""
    kube = module_kube
    user = f"system:serviceaccount:{NS}:workload-map-limited"
    role = copy.deepcopy(installed[("ClusterRole", "workload-map")])
    rules = [
        r for r in role["rules"] if "customresourcedefinitions" not in (r.get("resources") or [])
    ]
    assert len(rules) == len(role["rules"]) - 1
    limited = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": "workload-map-limited"},
        "rules": rules,
    }
    binding = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": {"name": "workload-map-limited"},
        "roleRef": {
            "apiGroup": "rbac.authorization.k8s.io",
            "kind": "ClusterRole",
            "name": "workload-map-limited",
        },
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}],
    }
    for doc in (limited, binding):
        kube.apply(doc, field_validation="Strict")
    from tests.operator.live import widget_karta

    # a kind from a CRD (none installed): without CRD access the operator cannot tell
    token = tmp_path.name[-8:].lower().replace("_", "-")
    karta = widget_karta(f"limited-{token}", f"limited-{token}.example.com")
    karta["metadata"]["labels"] = {
        "run.ai/karta-group": f"limited-{token}.example.com",
        "run.ai/karta-version": "v1",
        "run.ai/karta-kind": "Widget",
    }
    kube.request("POST", "/apis/run.ai/v1alpha1/kartas", karta)
    name = karta["metadata"]["name"]
    # the CRD rule must really be gone for this account
    allowed = kube.request(
        "POST",
        "/apis/authorization.k8s.io/v1/subjectaccessreviews",
        {
            "apiVersion": "authorization.k8s.io/v1",
            "kind": "SubjectAccessReview",
            "spec": {
                "user": user,
                "groups": GROUPS,
                "resourceAttributes": {
                    "verb": "list",
                    "group": "apiextensions.k8s.io",
                    "resource": "customresourcedefinitions",
                },
            },
        },
    )["status"].get("allowed")
    assert not allowed
    kubeconfig = impersonating_kubeconfig(kube, tmp_path / "limited.kubeconfig", user, GROUPS)
    # no webhooks, no election: the namespaced Role of the chart is bound to the real account
    op = OperatorProcess(kubeconfig, NS, tmp_path / "op", webhook=False)
    try:
        with running(op):
            op.wait_ready(120)

            def unreadable() -> dict[str, Any] | None:
                status = kube.get("run.ai/v1alpha1", "Karta", name).get("status") or {}
                for cond in status.get("conditions") or []:
                    if cond["type"] == "CRDExists" and cond["reason"] == "CRDsNotReadable":
                        return dict(cond)
                return None

            cond = eventually(unreadable, 90, lambda: f"CRDExists says so ({op.log_tail()})")
            assert cond["status"] == "Unknown"
            assert (
                "customresourcedefinitions" in cond["message"].lower()
                or "403" in cond["message"]
                or "forbidden" in cond["message"].lower()
            ), cond
            # still up, still ready, once it has met the refusal again (not after a sleep,
            # which can end before the controller looked again)
            admin = api_for(kube.kubeconfig)
            try:
                reconciled_again(admin, op, name)
            finally:
                admin.close()
            assert op.alive() and op.ready(), op.log_tail()
    finally:
        kube.delete("run.ai/v1alpha1", "Karta", name)
        for doc in (binding, limited):
            kube.delete(doc["apiVersion"], doc["kind"], doc["metadata"]["name"])
