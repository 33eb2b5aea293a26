"""HTTP/1.1 requests over one kept-alive socket: the small part of HTTP the transport speaks.

Why not a library: the Kubernetes clients cost 0.6-2 s of import, and even the standard
library's ``http.client`` costs about as much as ``ssl`` itself, because it parses headers with
the ``email`` package (measured in docs/kube.md). What the API server's answers need is small
and fixed: a status line, headers, and a body framed by ``Content-Length``,
``Transfer-Encoding: chunked`` or the end of the connection; plus a ``CONNECT`` tunnel for
``proxy-url``. Request bodies are sent whole with a ``Content-Length``. Nothing here retries or
follows redirects (the API server does not redirect); timeouts are the socket's, set by the
caller.
"""

from __future__ import annotations

import io
import socket
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import ssl

__all__ = ["Connection", "ProtocolError", "Response"]

_MAX_LINE = 65536
_MAX_HEADERS = 200


class ProtocolError(OSError):
    """The peer did not speak HTTP/1.1 as expected (bad status line, framing, early close)."""


class Response:
    """Status, headers (lower-case names) and the body, read as it arrives."""

    def __init__(
        self, file: io.BufferedReader, status: int, headers: dict[str, str], version: str
    ) -> None:
        self._file = file
        self.status = status
        self.headers = headers
        encoding = headers.get("transfer-encoding", "").lower()
        self._chunked = "chunked" in encoding
        length = headers.get("content-length")
        self._remaining: int | None = None
        if not self._chunked and length is not None:
            try:
                self._remaining = int(length)
            except ValueError:
                raise ProtocolError(f"bad Content-Length {length!r}") from None
        connection = headers.get("connection", "").lower()
        self.will_close = (
            "close" in connection
            or (version == "HTTP/1.0" and "keep-alive" not in connection)
            or (not self._chunked and self._remaining is None)
        )
        self._chunk_left = 0
        self._done = status in (204, 304) or self._remaining == 0

    def getheader(self, name: str, default: str = "") -> str:
        return self.headers.get(name.lower(), default)

    def read1(self, amount: int = 1 << 16) -> bytes:
        """Some of the body as soon as it arrives (b"" at its end)."""
        if self._done:
            return b""
        if self._chunked:
            return self._read_chunked(amount)
        if self._remaining is not None:
            data = self._file.read1(min(amount, self._remaining))
            if not data:
                raise ProtocolError("connection closed before the end of the body")
            self._remaining -= len(data)
            self._done = self._remaining == 0
            return bytes(data)
        data = self._file.read1(amount)
        self._done = not data
        return bytes(data)

    def read(self) -> bytes:
        """The rest of the body."""
        parts: list[bytes] = []
        while True:
            chunk = self.read1()
            if not chunk:
                return b"".join(parts)
            parts.append(chunk)

    def _read_chunked(self, amount: int) -> bytes:
        if self._chunk_left == 0:
            line = _line(self._file)
            try:
                size = int(line.split(b";", 1)[0].strip(), 16)
            except ValueError:
                raise ProtocolError(f"bad chunk size {line[:40]!r}") from None
            if size == 0:
                while _line(self._file) not in (b"\r\n", b"\n", b""):
                    pass  # trailers
                self._done = True
                return b""
            self._chunk_left = size
        data = self._file.read1(min(amount, self._chunk_left))
        if not data:
            raise ProtocolError("connection closed inside a chunk")
        self._chunk_left -= len(data)
        if self._chunk_left == 0 and _line(self._file) not in (b"\r\n", b"\n"):
            raise ProtocolError("chunk not followed by CRLF")
        return bytes(data)


def _line(file: io.BufferedReader) -> bytes:
    line = file.readline(_MAX_LINE + 1)
    if len(line) > _MAX_LINE:
        raise ProtocolError("header line too long")
    return line


def _head(file: io.BufferedReader) -> tuple[str, int, dict[str, str]]:
    status_line = _line(file)
    if not status_line:
        raise ConnectionResetError("the server closed the connection without answering")
    parts = status_line.decode("latin-1").rstrip("\r\n").split(" ", 2)
    if len(parts) < 2 or not parts[0].startswith("HTTP/") or not parts[1].isdigit():
        raise ProtocolError(f"not an HTTP response: {status_line[:60]!r}")
    headers: dict[str, str] = {}
    for _ in range(_MAX_HEADERS):
        line = _line(file)
        if line in (b"\r\n", b"\n", b""):
            return parts[0], int(parts[1]), headers
        name, sep, value = line.decode("latin-1").partition(":")
        if not sep:
            raise ProtocolError(f"bad header line {line[:60]!r}")
        key = name.strip().lower()
        value = value.strip()
        headers[key] = f"{headers[key]}, {value}" if key in headers else value
    raise ProtocolError("too many headers")


class Connection:
    """One TCP (optionally TLS, optionally through an HTTP CONNECT proxy) connection."""

    def __init__(
        self,
        host: str,
        port: int,
        *,
        timeout: float | None,
        tls: ssl.SSLContext | None = None,
        server_hostname: str | None = None,
        proxy: tuple[str, int] | None = None,
    ) -> None:
        self.host, self.port = host, port
        self.timeout = timeout
        self._tls = tls
        self._server_hostname = server_hostname or host
        self._proxy = proxy
        self.sock: socket.socket | None = None
        self._file: io.BufferedReader | None = None

    @property
    def authority(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self.port}"

    def connect(self) -> None:
        host, port = self._proxy or (self.host, self.port)
        # create_connection hands the host to getaddrinfo, which takes bytes (typeshed: str)
        sock = socket.create_connection((_ascii(host), port), timeout=self.timeout)  # type: ignore[arg-type]
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if self._proxy is not None:
                request = f"CONNECT {self.authority} HTTP/1.1\r\nHost: {self.authority}\r\n\r\n"
                sock.sendall(request.encode("latin-1"))
                reader = sock.makefile("rb")
                _, status, _ = _head(reader)
                reader.close()
                if status != 200:
                    raise ProtocolError(f"proxy refused CONNECT {self.authority}: HTTP {status}")
            if self._tls is not None:
                sock = self._tls.wrap_socket(sock, server_hostname=_ascii(self._server_hostname))
        except BaseException:
            sock.close()
            raise
        self.sock = sock
        self._file = sock.makefile("rb")

    def settimeout(self, timeout: float | None) -> None:
        self.timeout = timeout
        if self.sock is not None:
            self.sock.settimeout(timeout)

    def request(
        self, method: str, target: str, headers: list[tuple[str, str]], body: bytes | None = None
    ) -> Response:
        """Send ``method target`` (with ``body``) and read the response head (the body is the
        caller's to read)."""
        if self.sock is None:
            self.connect()
        assert self.sock is not None and self._file is not None
        lines = [f"{method} {target} HTTP/1.1", f"Host: {self.authority}"]
        lines.extend(f"{k}: {v}" for k, v in headers)
        if body is not None or method in ("POST", "PUT", "PATCH"):
            lines.append(f"Content-Length: {len(body or b'')}")
        data = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
        self.sock.sendall(data + body if body else data)
        version, status, head = _head(self._file)
        while 100 <= status < 200:  # interim answers carry no body
            version, status, head = _head(self._file)
        return Response(self._file, status, head, version)

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
        if self.sock is not None:
            self.sock.close()
        self._file = self.sock = None


def _ascii(host: str) -> str | bytes:
    """A host name as ``socket``/``ssl`` take it: an ASCII name as bytes, which they use as is
    instead of running it through the IDNA codec (the identity for ASCII labels; importing the
    codec, ``stringprep`` and ``unicodedata`` is ~4 ms of every live command's start)."""
    return host.encode("ascii") if host.isascii() else host
