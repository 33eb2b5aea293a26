"""The operator's command line and registry: the reference's flags and defaults, durations,
JSON logs, and controllers plugging in through one registry."""

from __future__ import annotations

import argparse
import io
import json
import logging

import pytest

from workload_map.cli.main import main as wlmap
from workload_map.operator import controllers
from workload_map.operator.main import _JsonFormatter, _load_builtin_controllers, build_parser


def parse(*argv: str) -> argparse.Namespace:
    _load_builtin_controllers()
    return build_parser().parse_args(list(argv))


def test_defaults_follow_the_reference() -> None:
    args = parse()
    assert args.metrics_bind_address == ":8080"
    assert args.health_probe_bind_address == ":8081"
    assert args.leader_elect is False
    assert args.leader_election_id == "workload-map-operator.run.ai"
    assert args.enable_webhook is False
    assert args.webhook_port == 9443
    assert args.webhook_cert_dir == "/tmp/k8s-webhook-server/serving-certs"
    assert args.webhook_cert_mode == "auto"
    assert args.webhook_cert_lifetime == 8760 * 3600
    assert args.leader_elect_lease_duration == 15
    assert args.install_catalog is False
    assert args.gc_thresholds == (50_000, 20, 100)


def test_flags_are_parsed() -> None:
    args = parse(
        "--leader-elect",
        "--webhook-cert-mode=manual",
        "--webhook-cert-lifetime=90s",
        "--leader-elect-lease-duration=1m",
        "--log-json",
        "--log-level=debug",
    )
    assert args.leader_elect and args.webhook_cert_mode == "manual"
    assert args.webhook_cert_lifetime == 90 and args.leader_elect_lease_duration == 60
    with pytest.raises(SystemExit):
        build_parser().parse_args(["--webhook-cert-mode=sometimes"])
    with pytest.raises(SystemExit):
        build_parser().parse_args(["--webhook-cert-lifetime=soon"])
    assert parse("--gc-thresholds=700,10,10").gc_thresholds == (700, 10, 10)
    for bad in ("700,10", "a,b,c", "700,-1,10"):
        with pytest.raises(SystemExit):
            build_parser().parse_args([f"--gc-thresholds={bad}"])


def test_wlmap_operator_is_the_same_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert wlmap(["operator", "--version"]) == 0
    assert capsys.readouterr().out.strip() == "0.1.0"


def test_json_logs() -> None:
    record = logging.LogRecord(
        "workload_map.operator", logging.WARNING, "f", 1, "hello %s", ("x",), None
    )
    line = json.loads(_JsonFormatter().format(record))
    assert line["level"] == "warning" and line["msg"] == "hello x"
    assert line["logger"] == "workload_map.operator"


def test_registry_plugs_controllers_in_without_editing_others() -> None:
    _load_builtin_controllers()
    before = len(controllers.factories())

    class Probe:
        name = "probe"
        needs_leader = False
        started = False

        def start(self, ctx: controllers.OperatorContext) -> None:
            self.started = True

        def stop(self) -> None:
            pass

    def factory(cfg: controllers.OperatorConfig) -> Probe | None:
        return Probe() if getattr(cfg.args, "enable_probe", False) else None

    controllers.register(factory, name="probe-test")
    controllers.register(factory, name="probe-test")  # once per name
    controllers.register_flags(lambda p: p.add_argument("--enable-probe", action="store_true"))
    try:
        assert len(controllers.factories()) == before + 1
        args = build_parser().parse_args(["--enable-probe"])
        cfg = controllers.OperatorConfig(args, "ns", "me")
        made = [f(cfg) for f in controllers.factories()]
        probes = [m for m in made if isinstance(m, Probe)]
        assert len(probes) == 1 and isinstance(probes[0], controllers.Controller)
        names = {m.name for m in made if m is not None}
        assert "karta" in names  # the Karta controller is one registered controller among others
    finally:
        controllers._factories[:] = [(k, f) for k, f in controllers._factories if k != "probe-test"]
        controllers._flag_adders.pop()


def test_help_lists_the_flags() -> None:
    out = io.StringIO()
    build_parser().print_help(out)
    for flag in (
        "--metrics-bind-address",
        "--webhook-cert-mode",
        "--leader-election-id",
        "--install-catalog",
    ):
        assert flag in out.getvalue()
