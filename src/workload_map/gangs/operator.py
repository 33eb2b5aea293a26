"""The gang room's plug-in of ``wlmap operator`` (``--enable-gang-scheduling``, docs/gangs.md).

The operator calls :func:`register` once, through its entry-point group
(``[project.entry-points."workload_map.operator.controllers"]`` in pyproject.toml,
``gangs = "workload_map.gangs.operator:register"``; see ``workload_map.operator.plugins``);
importing this module registers nothing. Two controllers share one
:class:`~workload_map.gangs.runtime.GangRuntime` per process:

- ``gangs-watch`` (every replica): :class:`~workload_map.gangs.watcher.GangWatcher`, the watch
  caches, the pod webhook (:mod:`workload_map.gangs.webhook`) and the ``GenericWorkload`` probe;
- ``gangs`` (the leader only): :class:`~workload_map.gangs.controller.GangController`, which
  keeps each workload's scheduling objects in step.

Nothing is ever written to a workload object or to the pods' owners; pods are deleted only in
the opt-in ``delete-unbound`` mode.
"""

from __future__ import annotations

import threading

from workload_map.gangs.controller import GangController
from workload_map.gangs.flags import add_flags, config_from_args, enabled
from workload_map.gangs.runtime import GangRuntime
from workload_map.gangs.watcher import GangWatcher
from workload_map.operator import controllers
from workload_map.operator.controllers import OperatorConfig

__all__ = ["register"]


class _Shared:
    """The one runtime of an operator (its configuration), made for whichever of the two
    controllers is made first; an operator made later in the same process gets its own."""

    def __init__(self) -> None:
        self._made: tuple[OperatorConfig, GangRuntime] | None = None
        self._lock = threading.Lock()

    def runtime_for(self, cfg: OperatorConfig) -> GangRuntime:
        with self._lock:
            if self._made is None or self._made[0] is not cfg:
                args = cfg.args
                runtime = GangRuntime(
                    config_from_args(args, cfg.namespace), miss_wait=args.gang_webhook_miss_wait
                )
                self._made = (cfg, runtime)
            return self._made[1]


def register() -> None:
    """Add the gang flags and the two controller factories to the operator's registry
    (idempotent: registering twice keeps one of each)."""
    shared = _Shared()

    def watcher(cfg: OperatorConfig) -> GangWatcher | None:
        return GangWatcher(shared.runtime_for(cfg), cfg) if enabled(cfg.args) else None

    def leader(cfg: OperatorConfig) -> GangController | None:
        return GangController(shared.runtime_for(cfg), cfg) if enabled(cfg.args) else None

    controllers.register_flags(add_flags)
    controllers.register(watcher, name="gangs-watch")
    controllers.register(leader, name="gangs")
