"""Colour for the terminal: what ``cli.main`` needs at every start-up (its error lines).

Kept apart from :mod:`workload_map.cli.render` (which re-exports both names for the commands):
render's JSON and YAML writers import ``json`` and the model's YAML loader, five modules
``wlmap --help`` and ``--version`` never use (issue 20 item 9: start-up is counted in imports).
Colour is used only on a terminal and never when ``NO_COLOR`` is set, so piped output is plain
text.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import IO

__all__ = ["Styler", "wants_color"]


def wants_color(stream: IO[str], environ: Mapping[str, str]) -> bool:
    """Colour only on a TTY, and never with ``NO_COLOR`` (any value) or ``TERM=dumb``."""
    if "NO_COLOR" in environ or environ.get("TERM") == "dumb":
        return False
    isatty = getattr(stream, "isatty", None)
    if isatty is None or getattr(stream, "closed", False):  # isatty() on a closed one raises
        return False
    try:
        return bool(isatty())
    except OSError:
        return False


_CODES = {"bold": "1", "dim": "2", "red": "31", "green": "32", "yellow": "33", "cyan": "36"}


class Styler:
    """ANSI styling that is the identity when colour is off."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    def __call__(self, text: str, *styles: str) -> str:
        if not self.enabled or not styles or not text:
            return text
        codes = ";".join(_CODES[s] for s in styles)
        return f"\x1b[{codes}m{text}\x1b[0m"

    def phase(self, text: str) -> str:
        """Colour a phase or pod state by what it means for the user."""
        good = {"Running", "Completed", "Succeeded", "Ready"}
        bad = {"Failed", "Degraded", "Error", "CrashLoopBackOff", "Unknown"}
        words = {w.strip("() ") for w in text.replace(",", " ").split()}
        if words & bad:
            return self(text, "red")
        if words and words <= good:
            return self(text, "green")
        return self(text, "yellow")
