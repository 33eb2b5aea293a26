"""The exporter as a controller of ``wlmap operator`` (``--enable-workload-metrics``).

It runs on every replica, so each serves exporter health, but only the leader exports workload
series: two replicas never duplicate one. The operator calls :func:`register` through its
entry-point group (``metrics = "workload_map.exporter.operator:register"``); importing this
module registers nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from workload_map.engine.evaluations import Evaluations
from workload_map.exporter.service import ExporterService
from workload_map.exporter.settings import add_flags, settings_from
from workload_map.operator import controllers

if TYPE_CHECKING:
    from workload_map.operator.controllers import OperatorConfig, OperatorContext

__all__ = ["WorkloadMetrics", "register"]


class WorkloadMetrics:
    name = "workload-metrics"
    needs_leader = False

    def __init__(self, config: OperatorConfig) -> None:
        self.settings = settings_from(config.args)
        self.service: ExporterService | None = None

    def start(self, ctx: OperatorContext) -> None:
        service = ExporterService(self.settings, ctx.api.transport(), ctx, is_leader=ctx.is_leader)
        shared = getattr(ctx, "evaluations", None)  # the operator's (operator/main.py)
        if isinstance(shared, Evaluations):
            # the gang planner evaluates the same objects: one evaluation serves both
            service.inventory.share_evaluations(shared)
        self.service = service.start()
        # not ready before the first full evaluation (no workload series are served then)
        ctx.add_readiness("workload-metrics", lambda: service.ready)

    def stop(self) -> None:
        if self.service is not None:
            self.service.stop()


def _factory(config: OperatorConfig) -> WorkloadMetrics | None:
    return WorkloadMetrics(config) if config.args.enable_workload_metrics else None


def register() -> None:
    """Add the exporter's flags and its controller factory to the operator's registry."""
    controllers.register_flags(add_flags)
    controllers.register(_factory, name="workload-metrics")
