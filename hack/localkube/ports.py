"""Free TCP ports on 127.0.0.1 for servers the tests start as child processes.

A server the test starts in-process binds port 0 and reports its port; a child process (etcd,
kube-apiserver, the operator, prometheus, chromium) needs a number up front, so one is picked,
probed and given to it. Between the probe and the child's bind the port is up for grabs, and
what grabs it is nearly always an outgoing connection: the kernel draws their source ports, and
its own port-0 picks, from the ephemeral range, the same range a port-0 probe returns. So ports
are picked below that range, where only an explicit bind can land, at random (two test runs on
one machine rarely meet) and never twice in one process (a probed port is closed again, so the
kernel could hand the same one to the next probe). The kernel offers nothing that does this:
a listening socket cannot be handed to a child that parses a ``--port`` flag.

Under pytest-xdist (``make unit`` runs the unit tier in parallel processes) each worker draws
from its own share of the range (every Nth port, N the number of workers), so two workers of a
run never probe, hand out and race for the same port.
"""

from __future__ import annotations

import os
import random
import socket
import threading
from pathlib import Path

__all__ = ["free_port"]

_RANGE_FILE = Path("/proc/sys/net/ipv4/ip_local_port_range")
_LOWEST = 20000  # above the registered ports most services listen on
_lock = threading.Lock()
_given: set[int] = set()
_rng = random.Random()


def _ephemeral_range() -> tuple[int, int]:
    try:
        low, high = (int(p) for p in _RANGE_FILE.read_text().split())
    except (OSError, ValueError):
        return 32768, 60999  # Linux's default
    return low, high


def _worker_share() -> tuple[int, int]:
    """This process's index among pytest-xdist's workers and their number; (0, 1) otherwise."""
    name = os.environ.get("PYTEST_XDIST_WORKER", "")
    try:
        count = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
        index = int(name[2:]) if name.startswith("gw") else 0
    except ValueError:
        return 0, 1
    return (index, count) if 0 <= index < count else (0, 1)


def _candidates() -> range:
    low, high = _ephemeral_range()
    index, count = _worker_share()
    if low - _LOWEST >= 2000:
        return range(_LOWEST + index, low, count)
    if 65535 - high >= 2000:
        return range(high + 1 + index, 65536, count)
    return range(0)  # the ephemeral range covers (almost) everything: let the kernel choose


def _probe(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def free_port() -> int:
    """A port on 127.0.0.1 that nothing holds now and that this process never handed out."""
    candidates = _candidates()
    with _lock:
        for _ in range(200 if len(candidates) else 0):
            port = candidates[_rng.randrange(len(candidates))]
            if port not in _given and _probe(port):
                _given.add(port)
                return port
        while True:  # no room below the ephemeral range: the kernel's pick, still never reused
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
                sock.bind(("127.0.0.1", 0))
                port = int(sock.getsockname()[1])
            if port not in _given:
                _given.add(port)
                return port
