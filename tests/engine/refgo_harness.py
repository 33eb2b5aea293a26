"""The reference Go harness (``benchmarks/refgo``) as the engine tests load it.

``benchmarks/refgo`` is not a package on ``sys.path``: its modules are loaded by path, once per
process, and shared by the differential test (``test_reference_diff``) and the harness's own
test (``test_reference_diff_harness``).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

__all__ = ["ROOT", "refgo_client", "refgo_workloads", "start_refgo"]

ROOT = Path(__file__).resolve().parents[2]


def _load(name: str) -> ModuleType:
    """A module of benchmarks/refgo (not a package on sys.path), loaded once."""
    qualified = f"wlmap_refgo_{name}"
    if qualified in sys.modules:
        return sys.modules[qualified]
    path = ROOT / "benchmarks" / "refgo" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(qualified, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[qualified] = module
    spec.loader.exec_module(module)
    return module


refgo_client = _load("client")
refgo_workloads = _load("workloads")


def start_refgo() -> Any:
    """The built harness, or the test skipped with the reason it is unavailable (no Go, no
    module proxy)."""
    try:
        return refgo_client.RefGo(refgo_client.build())
    except refgo_client.RefGoUnavailable as err:
        pytest.skip(f"reference harness unavailable: {err}")
