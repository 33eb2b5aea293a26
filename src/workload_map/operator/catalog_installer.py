"""``--install-catalog``: the leader applies every built-in definition once, at start.

The work is :func:`workload_map.cluster.catalog_install.install`, the same call as
``wlmap definitions install --all``; this module only runs it on the leader and retries with
backoff while the API server (or the Karta CRD) is not there yet.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from workload_map.cluster.catalog_install import install
from workload_map.errors import WlmapError
from workload_map.kube.errors import ApiError
from workload_map.operator import controllers

if TYPE_CHECKING:
    from workload_map.operator.controllers import OperatorConfig, OperatorContext

__all__ = ["CatalogInstaller"]

log = logging.getLogger("workload_map.operator.catalog")


class CatalogInstaller:
    """``--install-catalog``: the leader applies every built-in definition once."""

    name = "catalog-installer"
    needs_leader = True

    def start(self, ctx: OperatorContext) -> None:
        def run() -> None:
            for attempt in range(10):
                try:
                    results = install(ctx.api, all_=True)
                except (WlmapError, ApiError) as exc:
                    log.warning("installing the catalog (attempt %d): %s", attempt + 1, exc)
                    if ctx.stopping.wait(min(30, 2**attempt)):
                        return
                    continue
                for r in results:
                    if r.action not in ("unchanged",):
                        log.info("catalog %s", r)
                return

        ctx.spawn(run, "catalog-installer")

    def stop(self) -> None:
        pass


def _factory(config: OperatorConfig) -> CatalogInstaller | None:
    return CatalogInstaller() if getattr(config.args, "install_catalog", False) else None


controllers.register(_factory, name="catalog-installer")
