"""`wlmap serve -f DIR` as the README shows it: a real process, the printed address, a page."""

from __future__ import annotations

import re
import subprocess
import sys
import time
import urllib.error
import urllib.request

from tests.web.conftest import EXAMPLES, ROOT


def test_serve_files_prints_an_address_that_opens() -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "workload_map.cli", "serve", "-f", str(EXAMPLES), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        found = re.search(r"(http://127\.0\.0\.1:\d+)/\?token=(\S+)", line)
        assert found, line
        base, token = found.groups()
        request = urllib.request.Request(base + "/", headers={"Authorization": f"Bearer {token}"})
        deadline = time.monotonic() + 20
        while True:
            try:
                with urllib.request.urlopen(request, timeout=5) as resp:
                    body = resp.read().decode()
                break
            except urllib.error.URLError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        assert ">llm-pretrain</a>" in body
        try:
            urllib.request.urlopen(base + "/", timeout=5)
            raise AssertionError("a request without the token was answered")
        except urllib.error.HTTPError as err:
            assert err.code == 403
    finally:
        proc.terminate()
        proc.wait(20)
    assert proc.returncode == 0


def test_a_sigterm_right_after_the_address_stops_it_cleanly() -> None:
    """The signal handlers are in place before the address is printed: a supervisor that stops
    the server as soon as it is up gets a clean exit, not a death by the signal."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "workload_map.cli", "serve", "-f", str(EXAMPLES), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    try:
        assert proc.stdout is not None
        assert "wlmap serve: open" in proc.stdout.readline()
        proc.terminate()
        proc.wait(60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(20)
    assert proc.returncode == 0


def test_serve_a_missing_folder_is_a_clear_error() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "workload_map.cli", "serve", "-f", "/nonexistent/dir"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1
    assert "error: /nonexistent/dir: no such file or folder" in done.stderr
    assert "Traceback" not in done.stderr
