"""The metrics server streams the exposition's pieces: plain and gzipped, the same text."""

from __future__ import annotations

import gzip
import urllib.request

from workload_map.exporter import service
from workload_map.exporter.service import MetricsServer


def _pieces() -> list[bytes]:
    small = [f'm{{i="{i}"}} {i}\n'.encode() for i in range(3000)]
    large = b"x" * (service.WRITE_BYTES + 7) + b"\n"
    return [b"# HELP m a\n", *small, large, *small[:5]]


def _get(port: int, gzipped: bool) -> tuple[bytes, dict[str, str]]:
    request = urllib.request.Request(f"http://127.0.0.1:{port}/metrics")
    if gzipped:
        request.add_header("Accept-Encoding", "gzip")
    with urllib.request.urlopen(request, timeout=30) as answer:
        return answer.read(), dict(answer.headers)


def test_pieces_are_served_in_order_plain_and_gzipped() -> None:
    pieces = _pieces()
    server = MetricsServer(lambda: pieces, "127.0.0.1", 0)
    port = server.start()
    try:
        plain, headers = _get(port, gzipped=False)
        assert plain == b"".join(pieces)
        assert int(headers["Content-Length"]) == len(plain)
        assert headers["Content-Type"].startswith("text/plain")
        packed, headers = _get(port, gzipped=True)
        assert headers["Content-Encoding"] == "gzip"
        assert int(headers["Content-Length"]) == len(packed)
        assert gzip.decompress(packed) == plain
    finally:
        server.stop()


def test_blocks_join_small_pieces_and_pass_large_ones_as_they_are() -> None:
    pieces = _pieces()
    blocks = list(service._blocks(pieces, service.WRITE_BYTES))
    assert b"".join(blocks) == b"".join(pieces)
    assert any(b is pieces[-6] for b in blocks)  # the large piece itself, not a copy
    assert len(blocks) == 3
    assert list(service._blocks([], 10)) == []
