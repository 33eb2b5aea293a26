"""HTTP/1.1 requests over one kept-alive socket: the small part of HTTP the transport speaks.

Why not a library: the Kubernetes clients cost 0.6-2 s of import, and even the standard
library's ``http.client`` costs about as much as ``ssl`` itself, because it parses headers with
the ``email`` package (measured in docs/kube.md). What the API server's answers need is small
and fixed: a status line, headers, and a body framed by ``Content-Length``,
``Transfer-Encoding: chunked`` or the end of the connection; plus a ``CONNECT`` tunnel for
``proxy-url``. Request bodies are sent whole with a ``Content-Length``. Nothing here retries or
follows redirects (the API server does not redirect); timeouts are the socket's, set by the
caller.

TCP and TLS come from the C modules under ``socket`` and ``ssl`` (``_socket``, ``_ssl``), not
from those modules: importing them builds their enum classes from the C constants (``ssl``'s
options, alerts and versions, ``socket``'s families and flags), about 25M instructions, a
sixteenth of a live ``get``, for classes a client that connects, shakes hands, writes and reads
never sees. What ``ssl.SSLSocket`` adds over ``_ssl``'s object and is needed here is small: the
handshake on connect, a write loop, and a peer's EOF without ``close_notify`` read as the end
(``suppress_ragged_eofs``); the errors are the same classes (``ssl`` re-exports ``_ssl``'s).
"""

from __future__ import annotations

import _socket
import _ssl
import io
from typing import Protocol, cast

__all__ = ["Connection", "ProtocolError", "Response", "TLSContext", "TLSError"]

#: what ``ssl.SSLError`` and ``ssl.SSLCertVerificationError`` are
TLSError = _ssl.SSLError
CertificateError = _ssl.SSLCertVerificationError

_MAX_LINE = 65536
_MAX_HEADERS = 200


class ProtocolError(OSError):
    """The peer did not speak HTTP/1.1 as expected (bad status line, framing, early close)."""


class Response:
    """Status, headers (lower-case names) and the body, read as it arrives."""

    def __init__(
        self, file: io.BufferedReader[_Stream], status: int, headers: dict[str, str], version: str
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


def _line(file: io.BufferedReader[_Stream]) -> bytes:
    line = file.readline(_MAX_LINE + 1)
    if len(line) > _MAX_LINE:
        raise ProtocolError("header line too long")
    return line


def _head(file: io.BufferedReader[_Stream]) -> tuple[str, int, dict[str, str]]:
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


class TLSContext(_ssl._SSLContext):
    """A client TLS context: what ``ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)`` makes (the
    server's certificate and name verified), without the ``ssl`` module."""

    __slots__ = ()

    def __new__(cls) -> TLSContext:
        return super().__new__(cls, _ssl.PROTOCOL_TLS_CLIENT)

    def skip_verification(self) -> None:
        self.check_hostname = False
        self.verify_mode = _ssl.CERT_NONE


class _TLSObject(Protocol):
    """``_ssl._SSLSocket`` (the object ``ssl.SSLSocket`` keeps as ``_sslobj``; no stub)."""

    def do_handshake(self) -> None: ...

    def read(self, size: int, buffer: memoryview, /) -> int: ...

    def write(self, data: memoryview, /) -> int: ...


class _Wrap(Protocol):
    def __call__(
        self, sock: _Socket, server_side: bool, server_hostname: str | None, /
    ) -> _TLSObject: ...


class _Socket(_socket.socket):
    """A socket ``_ssl`` can wrap: it keeps a weak reference to it (``socket.socket``'s slot)."""

    __slots__ = ("__weakref__",)


class _Stream(io.RawIOBase):
    """A connection's bytes, plain or through TLS, for a buffered reader (``socket.makefile``'s
    ``SocketIO``); closing it leaves the socket open."""

    def __init__(self, sock: _Socket, tls: _TLSObject | None) -> None:
        super().__init__()
        self._sock = sock
        self.tls = tls

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        if self.tls is None:
            return self._sock.recv_into(buffer)
        try:
            return self.tls.read(len(buffer), buffer)
        except TLSError as exc:
            if exc.args[0] == _ssl.SSL_ERROR_EOF:  # ssl.SSLSocket's suppress_ragged_eofs
                return 0
            raise

    def sendall(self, data: bytes) -> None:
        if self.tls is None:
            self._sock.sendall(data)
            return
        view = memoryview(data)
        while view:
            view = view[self.tls.write(view) :]


def _tcp(host: str | bytes, port: int, timeout: float | None) -> _Socket:
    """``socket.create_connection``: each address ``getaddrinfo`` gives in turn, raising the
    first address's error when none connects."""
    error: OSError | None = None
    for family, kind, proto, _name, address in _socket.getaddrinfo(
        host, port, 0, _socket.SOCK_STREAM
    ):
        sock = None
        try:
            sock = _Socket(family, kind, proto)
            sock.settimeout(timeout)
            sock.connect(address)
            return sock
        except OSError as exc:
            error = error or exc
            if sock is not None:
                sock.close()
    raise error or OSError("getaddrinfo returns an empty list")


class Connection:
    """One TCP (optionally TLS, optionally through an HTTP CONNECT proxy) connection."""

    def __init__(
        self,
        host: str,
        port: int,
        *,
        timeout: float | None,
        tls: TLSContext | None = None,
        server_hostname: str | None = None,
        proxy: tuple[str, int] | None = None,
    ) -> None:
        self.host, self.port = host, port
        self.timeout = timeout
        self._tls = tls
        self._server_hostname = server_hostname or host
        self._proxy = proxy
        self.sock: _Socket | None = None
        self._stream: _Stream | None = None
        self._file: io.BufferedReader[_Stream] | None = None

    @property
    def authority(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self.port}"

    def connect(self) -> None:
        host, port = self._proxy or (self.host, self.port)
        sock = _tcp(_ascii(host), port, self.timeout)
        stream = _Stream(sock, None)
        try:
            sock.setsockopt(_socket.IPPROTO_TCP, _socket.TCP_NODELAY, 1)
            if self._proxy is not None:
                request = f"CONNECT {self.authority} HTTP/1.1\r\nHost: {self.authority}\r\n\r\n"
                sock.sendall(request.encode("latin-1"))
                reader = io.BufferedReader(stream)
                _, status, _ = _head(reader)
                reader.detach()
                if status != 200:
                    raise ProtocolError(f"proxy refused CONNECT {self.authority}: HTTP {status}")
            if self._tls is not None:
                wrap = cast(_Wrap, self._tls._wrap_socket)  # type: ignore[attr-defined]
                stream.tls = wrap(sock, False, _idna(self._server_hostname))
                stream.tls.do_handshake()
        except BaseException:
            sock.close()
            raise
        self.sock, self._stream = sock, stream
        self._file = io.BufferedReader(stream)

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
        assert self._stream is not None and self._file is not None
        lines = [f"{method} {target} HTTP/1.1", f"Host: {self.authority}"]
        lines.extend(f"{k}: {v}" for k, v in headers)
        if body is not None or method in ("POST", "PUT", "PATCH"):
            lines.append(f"Content-Length: {len(body or b'')}")
        data = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
        self._stream.sendall(data + body if body else data)
        version, status, head = _head(self._file)
        while 100 <= status < 200:  # interim answers carry no body
            version, status, head = _head(self._file)
        return Response(self._file, status, head, version)

    def shutdown(self) -> None:
        """End the connection from another thread: a blocked read returns."""
        sock, stream = self.sock, self._stream
        if sock is not None and stream is not None:
            # as ssl.SSLSocket.shutdown: later reads are the bare socket's (its end), not TLS
            stream.tls = None
            sock.shutdown(_socket.SHUT_RDWR)

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
        if self.sock is not None:
            self.sock.close()
        self._file = self.sock = self._stream = None


def _ascii(host: str) -> str | bytes:
    """A host name as ``socket``/``ssl`` take it: an ASCII name as bytes, which they use as is
    instead of running it through the IDNA codec (the identity for ASCII labels; importing the
    codec, ``stringprep`` and ``unicodedata`` is ~4 ms of every live command's start)."""
    return host.encode("ascii") if host.isascii() else host


def _idna(host: str) -> str:
    """The server name TLS checks, as ``ssl`` hands it over (an ASCII name as it is)."""
    return host if host.isascii() else host.encode("idna").decode("ascii")
