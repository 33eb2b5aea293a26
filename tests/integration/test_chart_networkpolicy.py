"""The chart's opt-in NetworkPolicy for the metrics endpoints (issue 25 item 6): rendered by the
real `helm` and accepted by the real API server (a server-side dry run). Enforcement is the
network plugin's and is not tested here (the harness runs none)."""

from __future__ import annotations

from typing import Any

import pytest

from .harness import Kube
from .test_chart import CHART, by_kind, helm, one, render

POLICY = "networkPolicy.enabled=true"


def _policy(*sets: str) -> dict[str, Any]:
    return one(render(POLICY, *sets), "NetworkPolicy")


def test_off_by_default() -> None:
    assert by_kind(render(), "NetworkPolicy") == []
    assert by_kind(render("exporter.enabled=true"), "NetworkPolicy") == []


def test_named_namespaces_reach_only_the_metrics_ports() -> None:
    policy = _policy("networkPolicy.metrics.namespaces={monitoring,obs}", "exporter.enabled=true")
    spec = policy["spec"]
    assert spec["podSelector"]["matchLabels"] == {
        "app.kubernetes.io/name": "workload-map",
        "app.kubernetes.io/instance": "wlmap",
    }
    assert spec["policyTypes"] == ["Ingress"]
    metrics, others = spec["ingress"]
    assert [p["port"] for p in metrics["ports"]] == [8080, 8082]  # operator, workload metrics
    assert metrics["from"] == [
        {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "monitoring"}}},
        {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "obs"}}},
    ]
    # the API server (webhook) and the kubelet (health) come from no selectable pod: open
    assert "from" not in others and [p["port"] for p in others["ports"]] == [8081, 9443]


def test_pods_in_namespaces_and_a_namespace_selector() -> None:
    spec = _policy(
        "networkPolicy.metrics.namespaces={monitoring}",
        "networkPolicy.metrics.namespaceSelector.matchLabels.team=sre",
        "networkPolicy.metrics.podSelector.matchLabels.app\\.kubernetes\\.io/name=prometheus",
    )["spec"]
    pods = {"matchLabels": {"app.kubernetes.io/name": "prometheus"}}
    assert spec["ingress"][0]["from"] == [
        {
            "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "monitoring"}},
            "podSelector": pods,
        },
        {"namespaceSelector": {"matchLabels": {"team": "sre"}}, "podSelector": pods},
    ]
    assert [p["port"] for p in spec["ingress"][0]["ports"]] == [8080]  # exporter off


def test_pods_alone_are_the_releases_namespace_and_no_webhook_port_without_webhook() -> None:
    spec = _policy(
        "networkPolicy.metrics.podSelector.matchLabels.app=scraper", "webhook.enabled=false"
    )["spec"]
    assert spec["ingress"][0]["from"] == [{"podSelector": {"matchLabels": {"app": "scraper"}}}]
    assert [p["port"] for p in spec["ingress"][1]["ports"]] == [8081]


def test_enabled_without_anyone_allowed_fails_naming_the_values() -> None:
    run = helm("template", "x", str(CHART), "--set", POLICY, check=False)
    assert run.returncode != 0
    assert "networkPolicy.metrics.namespaces, .namespaceSelector or .podSelector" in run.stderr


@pytest.mark.parametrize(
    "sets",
    [
        ("networkPolicy.metrics.namespaces={monitoring}", "exporter.enabled=true"),
        (
            "networkPolicy.metrics.namespaceSelector.matchExpressions[0].key=team",
            "networkPolicy.metrics.namespaceSelector.matchExpressions[0].operator=In",
            "networkPolicy.metrics.namespaceSelector.matchExpressions[0].values={sre,ml}",
            "networkPolicy.metrics.podSelector.matchLabels.app=prometheus",
        ),
    ],
    ids=["namespaces", "selectors"],
)
def test_the_api_server_accepts_it(kube: Kube, namespace: str, sets: tuple[str, ...]) -> None:
    policy = one(render(POLICY, *sets, namespace=namespace), "NetworkPolicy")
    stored = kube.request(
        "POST",
        f"/apis/networking.k8s.io/v1/namespaces/{namespace}/networkpolicies",
        policy,
        query={"dryRun": "All"},
    )
    assert stored["spec"]["ingress"] == policy["spec"]["ingress"]
    assert stored["spec"]["podSelector"] == policy["spec"]["podSelector"]
