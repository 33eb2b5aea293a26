"""The generic statuses as an enum (``Phase``), apart from :mod:`workload_map.model.types`:
building a StrEnum costs about 1M instructions, and the commands read the statuses as the plain
strings of ``types.STATUS_ORDER`` and ``types.SEVERITY_ORDER``; ``workload_map.model.Phase``
loads this module when it is first asked for."""

from __future__ import annotations

from enum import StrEnum

__all__ = ["Phase"]


class Phase(StrEnum):
    """The generic statuses (``UNDEFINED`` when none matches); str-valued, so JSON is unchanged."""

    RESUMING = "Resuming"
    SUSPENDING = "Suspending"
    SUSPENDED = "Suspended"
    RUNNING = "Running"
    FAILED = "Failed"
    COMPLETED = "Completed"
    INITIALIZING = "Initializing"
    DEGRADED = "Degraded"
    UNDEFINED = "Undefined"
