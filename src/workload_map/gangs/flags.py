"""The gang room's flags of ``wlmap operator`` and the :class:`GangConfig` they make."""

from __future__ import annotations

import argparse

from workload_map.gangs.config import GangConfig
from workload_map.gangs.reconcile import DELETE_UNBOUND, LOWER_MINIMUM

__all__ = ["add_flags", "config_from_args", "enabled"]


def _split(text: str) -> frozenset[str]:
    return frozenset(s.strip() for s in text.split(",") if s.strip())


def enabled(args: argparse.Namespace) -> bool:
    """Whether ``--enable-gang-scheduling`` was given (absent when the flags were not added)."""
    return bool(getattr(args, "enable_gang_scheduling", False))


def add_flags(parser: argparse.ArgumentParser) -> None:
    g = parser.add_argument_group("gang scheduling (docs/gangs.md)")
    g.add_argument(
        "--enable-gang-scheduling",
        action="store_true",
        help="run the gang controller and pod webhook",
    )
    g.add_argument(
        "--gang-default-enabled",
        action="store_true",
        help="handle every workload (default: only opted-in namespaces or workloads)",
    )
    g.add_argument("--gang-native-schedulers", default="default-scheduler")
    g.add_argument("--gang-coscheduling-schedulers", default="scheduler-plugins-scheduler")
    g.add_argument("--gang-volcano-schedulers", default="volcano")
    g.add_argument("--gang-kai-schedulers", default="kai-scheduler")
    g.add_argument("--gang-excluded-namespaces", default="kube-system,kube-public,kube-node-lease")
    g.add_argument(
        "--gang-missed-member-mode",
        choices=(LOWER_MINIMUM, DELETE_UNBOUND),
        default=LOWER_MINIMUM,
        help="what to do with gang members created without their group reference",
    )
    g.add_argument("--gang-webhook-miss-wait", type=float, default=1.0, help="seconds")
    g.add_argument("--gang-schedule-timeout-seconds", type=int, default=60)
    g.add_argument("--gang-volcano-queue", default="default")
    g.add_argument("--gang-resync-period", type=float, default=300.0, help="seconds")
    g.add_argument("--gang-workers", type=int, default=2)
    g.add_argument(
        "--gang-probe-namespace",
        default="",
        help="namespace of the GenericWorkload dry-run probe (default: the operator's)",
    )
    g.add_argument(
        "--gang-workload-with-job",
        choices=("auto", "on", "off"),
        default="auto",
        help="whether the Job controller makes Jobs' Workloads and PodGroups (WorkloadWithJob): "
        "auto probes the API server at start and learns from the Job controller's Workloads",
    )


def config_from_args(args: argparse.Namespace, operator_namespace: str = "") -> GangConfig:
    excluded = set(_split(args.gang_excluded_namespaces))
    if operator_namespace:
        excluded.add(operator_namespace)  # the operator's own pods never wait on it
    return GangConfig(
        native_schedulers=_split(args.gang_native_schedulers),
        coscheduling_schedulers=_split(args.gang_coscheduling_schedulers),
        volcano_schedulers=_split(args.gang_volcano_schedulers),
        kai_schedulers=_split(args.gang_kai_schedulers),
        default_enabled=bool(args.gang_default_enabled),
        schedule_timeout_seconds=int(args.gang_schedule_timeout_seconds),
        volcano_queue=str(args.gang_volcano_queue),
        excluded_namespaces=frozenset(excluded),
        workload_with_job=getattr(args, "gang_workload_with_job", "auto") == "on",
    )
