"""``--install-catalog``: the leader applies the built-in definitions of the kinds the cluster
serves, at start and whenever a catalog kind's CRD appears later.

The work is :func:`workload_map.cluster.catalog_install.install`, the same call as
``wlmap definitions install --all``; this module runs it on the leader, retries with backoff
while the API server (or the Karta CRD) is not there yet, then looks at discovery every
``RECHECK_SECONDS``: a definition of a kind the cluster does not serve would only say
CRDNotFound (one warning event per kind), so it is applied once its CRD is served.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from workload_map.cluster.catalog_install import install, served_gvks
from workload_map.errors import WlmapError
from workload_map.kube.errors import ApiError
from workload_map.operator import controllers

if TYPE_CHECKING:
    from workload_map.operator.controllers import OperatorConfig, OperatorContext

__all__ = ["CatalogInstaller"]

log = logging.getLogger("workload_map.operator.catalog")

#: how often the leader looks for catalog kinds whose CRD appeared since
RECHECK_SECONDS = 30.0


class CatalogInstaller:
    """``--install-catalog``: the leader applies every built-in definition once."""

    name = "catalog-installer"
    needs_leader = True

    def start(self, ctx: OperatorContext) -> None:
        def once(served: set[tuple[str, str, str]]) -> None:
            results = install(ctx.api, all_=True, served=served)
            for r in results:
                if r.action not in ("unchanged", "not-served"):
                    log.info("catalog %s", r)
            unserved = sorted(r.detail for r in results if r.action == "not-served")
            if unserved:
                log.info(
                    "catalog: %d definition(s) wait for their CRD (installed when it is "
                    "served): %s",
                    len(unserved),
                    ", ".join(unserved),
                )

        def run() -> None:
            served: set[tuple[str, str, str]] = set()
            for attempt in range(10):
                try:
                    served = served_gvks(ctx.api)
                    once(served)
                except (WlmapError, ApiError) as exc:
                    log.warning("installing the catalog (attempt %d): %s", attempt + 1, exc)
                    if ctx.stopping.wait(min(30, 2**attempt)):
                        return
                    continue
                break
            else:
                return
            while not ctx.stopping.wait(RECHECK_SECONDS):
                try:
                    now = served_gvks(ctx.api)
                    if now - served:  # a kind appeared: apply what the catalog has for it
                        once(now)
                    served = now
                except (WlmapError, ApiError) as exc:
                    log.warning("looking for new catalog kinds: %s", exc)

        ctx.spawn(run, "catalog-installer")

    def stop(self) -> None:
        pass


def _factory(config: OperatorConfig) -> CatalogInstaller | None:
    return CatalogInstaller() if getattr(config.args, "install_catalog", False) else None


controllers.register(_factory, name="catalog-installer")
