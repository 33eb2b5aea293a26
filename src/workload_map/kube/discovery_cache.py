"""Discovery remembered on disk between commands, as kubectl keeps ``~/.kube/cache/discovery``.

A live command otherwise spends two of its requests (``/api`` and ``/apis``, aggregated) on
what rarely changes. The file lives under the cache folder (``--cache-dir``, else
``$XDG_CACHE_HOME/workload-map``, else ``~/.cache/workload-map``), in ``discovery/``, one file
per server URL and trust anchor (CA, TLS server name, ``insecure``): a cluster recreated at the
same address (a kind cluster, the test API server) has a new CA and so another file. The user's
identity is not in the key, as in kubectl: the API server serves discovery to every
authenticated user (``system:discovery``).

A file older than :data:`TTL`, unreadable, corrupt or written by another format is ignored and
discovery is read from the server again. The caller re-discovers once when the cached answer
lacks what a command asks for (:class:`~workload_map.kube.client.Cluster`). Writes go to a
temporary file renamed over the old one, so a concurrent reader sees a whole file or none.
"""

import os
import re
import time
from binascii import crc32
from collections.abc import Callable
from typing import TYPE_CHECKING

import msgspec

from workload_map.kube.cache_dir import cache_root
from workload_map.kube.discovery import APIResource
from workload_map.kube.paths import PathText, join, replace_file

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["TTL", "DiscoveryCache", "cache_root"]

#: how long a cached discovery is trusted (kubectl's default is six hours too)
TTL = 6 * 3600.0
_FORMAT = 1


# real annotations (no ``from __future__ import annotations`` here): msgspec reads _File's
# field types when its decoder is made, at import, and would compile each one written as text
class _File(msgspec.Struct, frozen=True):
    format: int
    server: str
    written: float
    resources: tuple[APIResource, ...]


_ENCODER = msgspec.json.Encoder()
_DECODER = msgspec.json.Decoder(_File)


class DiscoveryCache:
    """One server's discovery file; every failure to read or write it is silent (the server
    is asked instead)."""

    def __init__(
        self,
        root: PathText,
        server: str,
        trust: tuple[str, ...] = (),
        *,
        ttl: float = TTL,
        clock: Callable[[], float] = time.time,
    ) -> None:
        # crc32, not hashlib: hashlib (with OpenSSL's _hashlib) and tempfile would be most of
        # what this module adds to a command's imports; the key only tells clusters apart
        digest = f"{crc32(chr(0).join((server, *trust)).encode()):08x}"
        host = re.sub(r"[^A-Za-z0-9.-]+", "_", server.split("://", 1)[-1]).strip("_")[:64]
        self.file = join(root, "discovery", f"{host or 'server'}-{digest}.json")
        self.server = server
        self.ttl = ttl
        self.clock = clock

    @property
    def path(self) -> "Path":
        """:attr:`file` as a ``Path``."""
        from pathlib import Path

        return Path(self.file)

    def load(self) -> list[APIResource] | None:
        """The cached resources, or None when there is no fresh, readable file."""
        try:
            with open(self.file, "rb") as fh:
                data = fh.read()
            doc = _DECODER.decode(data)
        except (OSError, msgspec.DecodeError, ValueError):
            return None
        age = self.clock() - doc.written
        if doc.format != _FORMAT or doc.server != self.server or not 0 <= age < self.ttl:
            return None
        return list(doc.resources)

    def store(self, resources: list[APIResource]) -> None:
        """Write the file atomically (a temporary file renamed over it); errors are ignored:
        a read-only home only costs the next command its discovery requests."""
        doc = _File(_FORMAT, self.server, self.clock(), tuple(resources))
        try:
            replace_file(self.file, _ENCODER.encode(doc), 0o640)
        except OSError:
            pass

    def drop(self) -> None:
        """Forget the file (its answer was found stale)."""
        try:
            os.unlink(self.file)
        except OSError:
            pass
