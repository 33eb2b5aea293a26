"""The test port picker: below the ephemeral range, never a held port, never the same twice."""

from __future__ import annotations

import socket

import pytest

from hack.localkube import ports


def test_ports_come_from_below_the_ephemeral_range_and_are_never_repeated() -> None:
    low, _high = ports._ephemeral_range()
    picked = [ports.free_port() for _ in range(300)]
    assert len(set(picked)) == len(picked)
    if low - ports._LOWEST >= 2000:
        assert all(ports._LOWEST <= p < low for p in picked), picked


def test_a_held_port_is_skipped(monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        busy = held.getsockname()[1]
        with socket.socket() as other:
            other.bind(("127.0.0.1", 0))
            spare = other.getsockname()[1]
        # two candidates: the held one and a free one; whichever is drawn, the free one is given
        monkeypatch.setattr(ports, "_candidates", lambda: [busy, spare])
        monkeypatch.setattr(ports, "_given", set())
        assert ports.free_port() == spare
        # and not again: the next pick has nowhere left below the range and asks the kernel
        again = ports.free_port()
        assert again not in (busy, spare)


def test_without_room_below_the_range_the_kernel_picks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ports, "_ephemeral_range", lambda: (1024, 65535))
    assert len(ports._candidates()) == 0
    first, second = ports.free_port(), ports.free_port()
    assert first != second and first > 0


def test_parallel_workers_draw_from_disjoint_shares(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ports, "_ephemeral_range", lambda: (32768, 60999))
    shares = []
    for index in range(3):
        monkeypatch.setenv("PYTEST_XDIST_WORKER", f"gw{index}")
        monkeypatch.setenv("PYTEST_XDIST_WORKER_COUNT", "3")
        shares.append(set(ports._candidates()))
    assert not (shares[0] & shares[1]) and not (shares[1] & shares[2])
    assert not (shares[0] & shares[2])
    assert set().union(*shares) == set(range(ports._LOWEST, 32768))
