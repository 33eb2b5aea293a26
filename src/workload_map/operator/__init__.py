"""The in-cluster operator: one process whose controllers register in one place.

``wlmap operator`` (:mod:`workload_map.operator.main`) runs the Karta controller, the Karta
admission webhooks and their certificates, and every other controller registered through
:mod:`workload_map.operator.controllers`. Nothing heavy is imported here, so the CLI can use
:mod:`workload_map.operator.catalog_install` without starting a server.
"""

from __future__ import annotations

__all__: list[str] = []
