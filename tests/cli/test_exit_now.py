"""``wlmap`` ends without the interpreter's teardown, yet keeps what a normal exit guarantees:
buffered output written, ``atexit`` handlers run, the exit code, a live non-daemon thread
joined."""

from __future__ import annotations

import subprocess
import sys


def _run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )


def test_buffered_output_atexit_and_code_survive() -> None:
    done = _run(
        "import atexit, sys\n"
        "atexit.register(lambda: print('atexit ran'))\n"
        "from workload_map.cli.main import exit_now\n"
        "sys.stdout.write('partial line without newline ')\n"
        "sys.stderr.write('to stderr')\n"
        "exit_now(3)\n"
    )
    assert done.returncode == 3
    assert done.stdout == "partial line without newline atexit ran\n"
    assert done.stderr == "to stderr"


def test_a_running_non_daemon_thread_is_joined() -> None:
    done = _run(
        "import threading, time\n"
        "from workload_map.cli.main import exit_now\n"
        "def late():\n"
        "    time.sleep(0.3)\n"
        "    print('thread finished', flush=True)\n"
        "threading.Thread(target=late).start()\n"
        "exit_now(0)\n"
    )
    assert done.returncode == 0
    assert done.stdout == "thread finished\n"


def test_the_command_line_exits_with_its_code() -> None:
    ok = subprocess.run(
        [sys.executable, "-m", "workload_map.cli", "--version"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert (ok.returncode, ok.stdout.strip()) == (0, __import__("workload_map").__version__)
    bad = subprocess.run(
        [sys.executable, "-m", "workload_map.cli", "nosuchcommand"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert bad.returncode == 2
    assert 'unknown command "nosuchcommand"' in bad.stderr
