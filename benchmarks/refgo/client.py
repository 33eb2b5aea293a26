"""Python side of wlmap-refgo: build the reference-library harness and talk JSON to it.

Used by ``tests/engine/test_reference_diff.py`` (differential test) and
``benchmarks/reference_bench.py`` (speed ratio). The harness itself is Go
(``benchmarks/refgo/*.go``); this module only builds it through ``build.sh`` (cached outside the
checkout) and turns Python values into the JSON it reads, so YAML-loaded manifests (dates,
timestamps) cross the boundary unchanged in meaning.
"""

from __future__ import annotations

import datetime as _dt
import json
import shutil
import subprocess
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

__all__ = [
    "REFERENCE_MODULE",
    "REFERENCE_VERSION",
    "RefGo",
    "RefGoUnavailable",
    "build",
    "to_json",
]

HERE = Path(__file__).resolve().parent
BUILD_SCRIPT = HERE / "build.sh"
REFERENCE_MODULE = "github.com/run-ai/karta"
REFERENCE_VERSION = "v0.1.1-0.20260708043952-998140308a96"


class RefGoUnavailable(RuntimeError):
    """The harness cannot be built here (no Go toolchain, no module proxy); ``str()`` says why."""


def _json_default(value: Any) -> Any:
    if isinstance(value, _dt.datetime):
        text = value.isoformat()
        return text[:-6] + "Z" if text.endswith("+00:00") else text
    if isinstance(value, _dt.date):
        return value.isoformat()
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    raise TypeError(f"cannot send a {type(value).__name__} to wlmap-refgo")


def to_json(value: Any) -> str:
    """JSON text of a YAML-loaded value (timestamps as RFC 3339 text, as Kubernetes prints)."""
    return json.dumps(value, default=_json_default, separators=(",", ":"))


def build(timeout: float = 900.0) -> Path:
    """Build (or reuse) the harness and return the binary's path."""
    if shutil.which("go") is None:
        raise RefGoUnavailable(
            "the Go toolchain ('go') is not on PATH; the reference-library harness "
            "(benchmarks/refgo) needs Go >= 1.26.3 and the Go module proxy"
        )
    try:
        done = subprocess.run(
            ["bash", str(BUILD_SCRIPT)],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired as err:
        raise RefGoUnavailable(f"building wlmap-refgo took over {timeout:.0f} s") from err
    if done.returncode != 0:
        detail = (done.stderr or done.stdout).strip().splitlines()[-5:]
        raise RefGoUnavailable("building wlmap-refgo failed: " + " | ".join(detail))
    binary = Path(done.stdout.strip().splitlines()[-1])
    if not binary.is_file():
        raise RefGoUnavailable(f"build.sh reported {binary}, which does not exist")
    return binary


class RefGo:
    """A built harness binary."""

    def __init__(self, binary: Path):
        self.binary = binary

    def _run(self, mode: str, payload: str, timeout: float) -> dict[str, Any]:
        done = subprocess.run(
            [str(self.binary), mode],
            input=payload,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        if done.returncode != 0:
            raise RuntimeError(f"wlmap-refgo {mode} failed: {done.stderr.strip()}")
        result: dict[str, Any] = json.loads(done.stdout)
        return result

    def describe(
        self,
        karta: Mapping[str, Any],
        obj: Mapping[str, Any],
        pods: Iterable[Mapping[str, Any]] = (),
        *,
        uid: str | None = None,
        timeout: float = 120.0,
    ) -> dict[str, Any]:
        """What the reference library computes for one workload (see benchmarks/refgo/report.go)."""
        request: dict[str, Any] = {"karta": karta, "object": obj, "pods": list(pods)}
        if uid is not None:
            request["uid"] = uid
        return self._run("describe", to_json(request), timeout)

    def describe_many(
        self, requests: Iterable[Mapping[str, Any]], *, timeout: float = 600.0
    ) -> list[dict[str, Any]]:
        """One report per ``{"karta", "object", "pods", "uid"?}`` request, in one process.

        A request the harness cannot decode (or on which the library panics) yields
        ``{"error": "…"}`` in its place.
        """
        result = self._run("describe-many", to_json({"requests": list(requests)}), timeout)
        reports: list[dict[str, Any]] = result["reports"]
        return reports

    def bench(
        self,
        kartas: Mapping[str, Mapping[str, Any]],
        workloads: Iterable[tuple[str, Mapping[str, Any], list[Mapping[str, Any]]]],
        *,
        sections: Iterable[str] = ("attribution", "status", "tree"),
        repeat: int = 1,
        timeout: float = 900.0,
    ) -> dict[str, Any]:
        """Timings of the reference library over ``(karta name, object, pods)`` workloads."""
        request = {
            "kartas": kartas,
            "workloads": [
                {"karta": name, "object": obj, "pods": pods} for name, obj, pods in workloads
            ],
            "sections": list(sections),
            "repeat": repeat,
        }
        return self._run("bench", to_json(request), timeout)
