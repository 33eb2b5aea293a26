"""The CLI's one error boundary: known errors give their exit code, a bug says it is one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from workload_map.engine import Workload
from workload_map.engine.errors import ExtractionError

ROOT = Path(__file__).resolve().parents[2]
JOB = ROOT / "examples" / "pytorchjob" / "pytorchjob.yaml"


def _raise(error: Exception) -> Any:
    def describe(self: Workload, **_: Any) -> dict[str, Any]:
        raise error

    return describe


def test_an_engine_error_is_a_clear_message_with_exit_1(wlmap: Any, monkeypatch: Any) -> None:
    monkeypatch.setattr(Workload, "describe", _raise(ExtractionError("boom at .spec")))
    result = wlmap(["describe", "-f", str(JOB)])
    assert result.code == 1
    assert "cannot describe PyTorchJob/" in result.err and "boom at .spec" in result.err
    assert "bug" not in result.err


def test_a_bug_is_reported_as_one_not_as_bad_input(wlmap: Any, monkeypatch: Any) -> None:
    monkeypatch.setattr(Workload, "describe", _raise(KeyError("replicas")))
    result = wlmap(["describe", "-f", str(JOB)])
    assert result.code == 1
    assert "internal error (a bug in wlmap): KeyError" in result.err
    assert "please report it" in result.err and "WLMAP_DEBUG=1" in result.err
    assert "cannot describe" not in result.err


def test_wlmap_debug_shows_the_traceback(wlmap: Any, monkeypatch: Any) -> None:
    monkeypatch.setattr(Workload, "describe", _raise(KeyError("replicas")))
    with pytest.raises(KeyError, match="replicas"):
        wlmap(["describe", "-f", str(JOB)], env={"WLMAP_DEBUG": "1"})
