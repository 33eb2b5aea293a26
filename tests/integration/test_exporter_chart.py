"""The chart's exporter objects, rendered by helm and strict-decoded by the real API server.

No Prometheus Operator runs here, so its published CRDs (hack/fetch-monitoring-crds.sh, from its
Go module) are installed and our ServiceMonitor and PrometheusRule are created with
``fieldValidation=Strict``: an unknown or misplaced field is an error, not silently pruned.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.integration.harness import Kube
from tests.integration.test_chart import CHART, helm

PROMETHEUS_OPERATOR = "v0.85.0"
RULES = CHART / "files/workloadmap-rules.yaml"
DASHBOARD = CHART / "files/workloadmap-dashboard.json"
#: recorded for one more release under their old meaning (GPUs of active pods, bound or not);
#: the dashboard reads their successors, workloadmap:{namespace,kind}_gpus:sum{state=...}
DEPRECATED_RULES = {"workloadmap:namespace_gpus_held:sum", "workloadmap:kind_gpus_held:sum"}


def monitoring_crds() -> Path:
    root = Path(os.environ.get("WLMAP_CACHE") or Path.home() / ".cache/workload-map")
    folder = root / "crds" / f"prometheus-operator-{PROMETHEUS_OPERATOR}"
    if not (folder / "monitoring.coreos.com_servicemonitors.yaml").is_file():
        pytest.fail(
            f"the Prometheus Operator CRDs are missing from {folder}: run "
            "`bash hack/fetch-monitoring-crds.sh` (part of `make tools`)",
            pytrace=False,
        )
    return folder


def render(namespace: str, *values: str) -> list[dict[str, Any]]:
    args = ["template", "wm", str(CHART), "--namespace", namespace]
    for value in values:
        args += ["--set", value]
    docs = yaml.safe_load_all(helm(*args).stdout)
    return [d for d in docs if isinstance(d, dict)]


def by_kind(docs: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [d for d in docs if d.get("kind") == kind]


def test_exporter_is_opt_in() -> None:
    docs = render("wm-system")
    assert not by_kind(docs, "ServiceMonitor")
    assert not by_kind(docs, "PrometheusRule")
    args = [
        a
        for d in by_kind(docs, "Deployment")
        for c in d["spec"]["template"]["spec"]["containers"]
        for a in c.get("args", [])
    ]
    assert "--enable-workload-metrics" not in args


def test_rendered_monitoring_objects_strict_decode(kube: Kube, namespace: str) -> None:
    folder = monitoring_crds()
    for name in ("servicemonitors", "prometheusrules"):
        kube.install_crd(folder / f"monitoring.coreos.com_{name}.yaml")
    docs = render(
        namespace,
        "exporter.enabled=true",
        "exporter.namespaces={ml,research}",
        "exporter.workloadLabels={team}",
    )
    container = by_kind(docs, "Deployment")[0]["spec"]["template"]["spec"]["containers"][0]
    assert {
        "--enable-workload-metrics",
        "--workload-metrics-bind-address=:8082",
        "--metrics-namespaces=ml,research",
        "--metrics-workload-labels=team",
    } <= set(container["args"])
    assert {"name": "workload-metrics", "containerPort": 8082} in container["ports"]
    monitors, rules = by_kind(docs, "ServiceMonitor"), by_kind(docs, "PrometheusRule")
    assert len(monitors) == 1 and len(rules) == 1
    for obj in (*monitors, *rules):
        stored = kube.apply(obj, namespace, field_validation="Strict")
        assert stored["spec"] == obj["spec"]  # nothing pruned
    # the PrometheusRule carries exactly the rule file promtool and the Prometheus test check
    assert rules[0]["spec"]["groups"] == yaml.safe_load(RULES.read_text())["groups"]
    service = [
        d
        for d in by_kind(docs, "Service")
        if d["metadata"]["name"].endswith("-metrics")
        and any(p["name"] == "workload-metrics" for p in d["spec"]["ports"])
    ]
    assert service, "a Service exposes the workload-metrics port"
    selector = monitors[0]["spec"]["selector"]["matchLabels"]
    assert all(service[0]["metadata"]["labels"].get(k) == v for k, v in selector.items())
    dashboards = [d for d in by_kind(docs, "ConfigMap") if "workload-map.json" in d.get("data", {})]
    assert len(dashboards) == 1
    assert dashboards[0]["metadata"]["labels"]["grafana_dashboard"] == "1"
    board = json.loads(dashboards[0]["data"]["workload-map.json"])
    assert board == json.loads(DASHBOARD.read_text())
    recorded = {
        r["record"]
        for g in yaml.safe_load(RULES.read_text())["groups"]
        for r in g["rules"]
        if "record" in r
    }
    used = {t["expr"] for p in board["panels"] for t in p["targets"]}
    for record in recorded - DEPRECATED_RULES:
        assert any(record in expr for expr in used), f"{record} is on no dashboard panel"
    # the deprecated rules stay recorded for one release (docs/metrics.md), off the dashboard
    assert DEPRECATED_RULES <= recorded
    assert not any(r in expr for r in DEPRECATED_RULES for expr in used)
