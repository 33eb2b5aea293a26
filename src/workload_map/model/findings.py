"""What validation reports: one :class:`Finding` per problem, with a JSON-style field path.

Kept apart from the rules so the schema checker, the CLI and the catalog share one shape.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["ERROR", "WARNING", "Finding", "Severity"]

Severity = Literal["error", "warning"]
ERROR: Severity = "error"
WARNING: Severity = "warning"


@dataclass(frozen=True)
class Finding:
    """One problem or piece of advice about a definition.

    ``path`` is JSON-style (``spec.structureDefinition.childComponents[2].podSelector``);
    ``code`` is stable for scripts and tests; ``offset`` is the 0-based position of the fault in
    the jq expression at ``path`` when the finding concerns one.
    """

    path: str
    code: str
    severity: Severity
    message: str
    component: str | None = None
    offset: int | None = None

    @property
    def is_error(self) -> bool:
        return self.severity == ERROR

    def __str__(self) -> str:
        where = self.path or "(definition)"
        extra = []
        if self.component is not None:
            extra.append(f"component {self.component!r}")
        if self.offset is not None:
            extra.append(f"at position {self.offset}")
        suffix = f" [{', '.join(extra)}]" if extra else ""
        return f"{where}: {self.message}{suffix} ({self.code})"
