"""The module-end check sees this process's running children, and only those."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from tests.conftest import _child_processes


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_running_children_are_seen_until_they_end() -> None:
    child = subprocess.Popen(["sleep", "60"])
    try:
        assert child.pid in _child_processes()
        # Popen returns when exec has closed the error pipe, which the kernel does before it
        # writes the new program's arguments: /proc/PID/cmdline may read empty for a moment
        for _ in range(500):
            command = _child_processes().get(child.pid)
            if command:
                break
            time.sleep(0.01)
        assert command == "sleep 60"
    finally:
        child.kill()
        child.wait(10)
    assert child.pid not in _child_processes()
