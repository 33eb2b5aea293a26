"""The engine's errors: one class per kind of failure, all under :class:`WlmapError`.

Messages keep the reference library's wording (``instance ids count (N) does not match results
count (M)``, ``could not match instance id …``) so tools that grep them keep working, and add the
component and expression they concern.
"""

from __future__ import annotations

from workload_map.errors import WlmapError

__all__ = [
    "DefinitionNotFoundError",
    "EngineError",
    "ExtractionError",
    "InstanceNotFoundError",
    "InvalidDefinitionError",
    "WriteRefusedError",
]


class EngineError(WlmapError):
    """Root of the workload engine's errors."""


class InvalidDefinitionError(EngineError):
    """The Karta is invalid (``invalid karta: …``); nothing is evaluated against it."""


class DefinitionNotFoundError(EngineError):
    """The component lacks the definition an operation needs (``… does not have spec definition``)."""


class ExtractionError(EngineError):
    """A jq expression of the definition failed, or its results do not fit (count, type, empty)."""


class InstanceNotFoundError(EngineError):
    """A pod's instance id is not one of the component's instance ids."""


class WriteRefusedError(EngineError):
    """A write-back was refused; the object is left exactly as it was."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"write to '{path}' refused, nothing was written: {reason}")
        self.path = path
        self.reason = reason
