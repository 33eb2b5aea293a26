"""A new interpreter on this checkout's sources, with no user environment: where the tests of
what a command or an import loads run their probes (a module already imported by the test
process would hide what a fresh start loads)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def fresh_python(
    code: str,
    *args: str,
    home: str | os.PathLike[str] = "/nonexistent",
    stdin: str | None = None,
    timeout: float = 120,
    check: bool = False,
) -> subprocess.CompletedProcess[str]:
    """``python -c CODE ARGS`` run by a new interpreter on ``src``, with only
    ``HOME`` (default: one that does not exist), ``PATH`` and ``PYTHONPATH`` set."""
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        input=stdin,
        capture_output=True,
        text=True,
        env={"HOME": os.fspath(home), "PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT / "src")},
        timeout=timeout,
        check=check,
    )


def compiled_probe(patterns: tuple[str, ...]) -> str:
    """Probe source defining ``compiled()``: for each of ``patterns`` (as text), whether it
    has been compiled in this interpreter (in ``re``'s cache, or alive as a pattern object)."""
    return (
        "import gc, re\n"
        f"patterns = {patterns!r}\n"
        "def compiled():\n"
        "    cached = {key[1] for key in re._cache}\n"
        "    kept = [o.pattern for o in gc.get_objects() if isinstance(o, re.Pattern)]\n"
        "    return [p in cached or p in kept for p in patterns]\n"
    )


__all__ = ["ROOT", "compiled_probe", "fresh_python"]
