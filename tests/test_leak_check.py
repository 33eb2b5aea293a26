"""The module-end check sees this process's running children, and only those."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import _child_processes


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_running_children_are_seen_until_they_end() -> None:
    child = subprocess.Popen(["sleep", "60"])
    try:
        seen = _child_processes()
        assert seen.get(child.pid) == "sleep 60"
    finally:
        child.kill()
        child.wait(10)
    assert child.pid not in _child_processes()
