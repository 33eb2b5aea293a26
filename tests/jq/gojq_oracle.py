"""Runs the gojq binary (v0.12.18, installed by hack/install-gojq.sh) as the test oracle."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from workload_map.jq.decode import loads
from workload_map.jq.encode import dumps

VERSION = "0.12.18"


def gojq_path() -> Path | None:
    """The pinned gojq binary: $WLMAP_CACHE/bin/gojq, else one on PATH reporting the version."""
    cache = Path(os.environ.get("WLMAP_CACHE", Path.home() / ".cache" / "workload-map"))
    candidates = [cache / "bin" / "gojq"]
    found = shutil.which("gojq")
    if found:
        candidates.append(Path(found))
    for c in candidates:
        if c.is_file() and os.access(c, os.X_OK):
            out = subprocess.run([c, "--version"], capture_output=True, text=True, check=False)
            if f"gojq {VERSION}" in out.stdout:
                return c
    return None


def require_gojq() -> Path:
    path = gojq_path()
    if path is None:
        pytest.skip(f"gojq {VERSION} is not installed (run `make gojq` / hack/install-gojq.sh)")
    return path


def run_gojq(
    gojq: Path, args: list[str], stdin: str = "", env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    full_env = {**os.environ, **(env or {})}
    full_env.pop("NO_COLOR", None)
    full_env.pop("GOJQ_COLORS", None)
    return subprocess.run(
        [str(gojq), *args], input=stdin, capture_output=True, text=True, env=full_env, timeout=60
    )


def gojq_calls(gojq: Path, cases: list[tuple[str, Any, list[Any]]]) -> list[Any]:
    """Evaluate each `(expr, input, args)` in one gojq run: `input | expr` with `$x0`, `$x1`, …
    bound to the arguments.

    Each result is `{"ok": [outputs…]}` or `{"error": value}` (what `catch` sees).
    """
    if len(cases) > 200:  # keep the command line short
        return gojq_calls(gojq, cases[:200]) + gojq_calls(gojq, cases[200:])
    parts = []
    for i, (expr, _inp, args) in enumerate(cases):
        binds = "".join(f"$cases[{i}][2][{j}] as $x{j} | " for j in range(len(args)))
        parts.append(f"(try {{ok: [{binds}$cases[{i}][1] | {expr}]}} catch {{error: .}})")
    program = "[" + ", ".join(parts) + "]"
    payload = dumps([[expr, inp, args] for expr, inp, args in cases], None)
    proc = run_gojq(gojq, ["-nc", "--argjson", "cases", payload, program])
    if proc.returncode != 0:
        raise AssertionError(f"gojq failed: {proc.stderr}")
    result: list[Any] = loads(proc.stdout)
    return result
