"""The in-cluster operator: one process whose controllers register in one place.

``wlmap operator`` (:mod:`workload_map.operator.main`) runs the Karta controller, the Karta
admission webhooks and their certificates, and every other controller registered through
:mod:`workload_map.operator.controllers`, the operator's public plug-in API (the one module
other rooms may import from here; docs/operator.md, "Plugging in a controller"). Nothing heavy
is imported here.
"""

from __future__ import annotations

__all__: list[str] = []
