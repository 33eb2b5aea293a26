"""TCP and TLS client connections, made with the C modules under ``socket`` and ``ssl``.

Why not ``socket`` and ``ssl`` themselves: both are Python layers over ``_socket`` and
``_ssl`` that build, when imported, an enum of every constant their C module exports (address
families, socket kinds and flags; TLS options, alerts, error numbers, verify flags and modes,
protocol versions, record and message types). That is 27M instructions, 6 % of a live ``wlmap
get`` (callgrind, docs/kube.md), for a command line that opens one connection. What a client
connection uses of them is small, and is here: resolve and connect with a timeout (as
``socket.create_connection``), a TLS context (:class:`TlsContext`, the same C type
``ssl.SSLContext`` extends: certificates, verification and the host name check are OpenSSL's
through the same calls), the handshake, reads and writes under the socket's timeout, and the end
of the stream as ``ssl`` reports it to a file (a TLS stream cut without its close alert reads
as its end). The error classes are the ones ``ssl`` and ``socket`` export
(``ssl.SSLError`` is ``_ssl.SSLError``; a timeout is ``TimeoutError``).

The long-running processes use the same code: only their start-up does not count.
"""

from __future__ import annotations

import _socket
import _ssl
import io
import sys
from typing import Any, Protocol

__all__ = [
    "CERT_NONE",
    "IPPROTO_TCP",
    "SHUT_RDWR",
    "TCP_NODELAY",
    "CertificateError",
    "Socket",
    "SslError",
    "Stream",
    "TlsContext",
    "client_context",
    "load_default_certs",
    "open_tcp",
]

CERT_NONE = _ssl.CERT_NONE
SHUT_RDWR = _socket.SHUT_RDWR
IPPROTO_TCP = _socket.IPPROTO_TCP
TCP_NODELAY = _socket.TCP_NODELAY
#: ``ssl.SSLError`` and ``ssl.SSLCertVerificationError`` (``ssl`` exports these classes)
SslError = _ssl.SSLError
CertificateError = _ssl.SSLCertVerificationError


class Socket(_socket.socket):
    """A TCP socket (``socket.socket`` without the Python layer: no ``makefile``, no enums)."""

    __slots__ = ("__weakref__",)  # the TLS connection over it holds it weakly, as ssl's does


class TlsContext(_ssl._SSLContext):
    """A client TLS context (``ssl.SSLContext(PROTOCOL_TLS_CLIENT)`` is this C type with
    Python helpers on top): the server's certificate is required and its host name checked."""

    __slots__ = ()


class _TlsObject(Protocol):
    """The C TLS connection ``TlsContext._wrap_socket`` makes (``ssl.SSLSocket._sslobj``)."""

    def do_handshake(self) -> None: ...
    def read(self, size: int, buffer: Any = ..., /) -> Any: ...
    def write(self, data: Any, /) -> int: ...


def client_context() -> TlsContext:
    """A new client context: verification required, host names checked (OpenSSL's defaults of
    ``PROTOCOL_TLS_CLIENT``, what ``ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)`` gives)."""
    return TlsContext(_ssl.PROTOCOL_TLS_CLIENT)


def load_default_certs(context: TlsContext) -> None:
    """The system's trust anchors (``ssl.SSLContext.load_default_certs``: OpenSSL's default
    paths; on Windows the system stores, which only ``ssl`` reads)."""
    if sys.platform == "win32":  # pragma: no cover (the certificate stores of Windows)
        import ssl

        for store in ("CA", "ROOT"):
            ssl.SSLContext._load_windows_store_certs(  # type: ignore[attr-defined]
                context, store, ssl.Purpose.SERVER_AUTH
            )
    context.set_default_verify_paths()


def open_tcp(host: str | bytes, port: int, timeout: float | None) -> Socket:
    """A connected TCP socket (``socket.create_connection``): each address the name resolves to
    in turn, the first error raised when none connects."""
    errors: list[OSError] = []
    for family, kind, proto, _, address in _socket.getaddrinfo(host, port, 0, _socket.SOCK_STREAM):
        sock = None
        try:
            sock = Socket(family, kind, proto)
            sock.settimeout(timeout)
            sock.connect(address)
            return sock
        except OSError as exc:
            errors[:] = [exc]  # create_connection raises the last address's error
            if sock is not None:
                sock.close()
    if errors:
        raise errors[0]
    raise OSError("getaddrinfo returns an empty list")


class Stream(io.RawIOBase):
    """The byte stream of a connected socket, through TLS when ``tls`` is given: what
    ``socket.makefile("rb")`` reads (``socket.SocketIO`` of a socket or of an
    ``ssl.SSLSocket``). Once a read timed out the stream refuses to read, as ``SocketIO``
    does (the bytes in flight are lost); the end of a TLS stream cut without its close alert
    reads as its end (``ssl``'s ``suppress_ragged_eofs``)."""

    def __init__(self, sock: Socket, tls: _TlsObject | None = None) -> None:
        super().__init__()
        self.sock = sock
        self._tls = tls
        self._timed_out = False

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if self.closed:
            raise ValueError("I/O operation on closed stream")
        if self._timed_out:
            raise OSError("cannot read from timed out object")
        try:
            if self._tls is None:
                return self.sock.recv_into(buffer)
            view = memoryview(buffer)
            try:
                return int(self._tls.read(len(view), view))
            except SslError as exc:
                if exc.args and exc.args[0] == _ssl.SSL_ERROR_EOF:
                    return 0
                raise
        except TimeoutError:
            self._timed_out = True
            raise

    def sendall(self, data: bytes) -> None:
        """Write all of ``data`` (``socket.sendall``, ``SSLSocket.sendall``)."""
        if self._tls is None:
            self.sock.sendall(data)
            return
        view = memoryview(data)
        while view:
            view = view[self._tls.write(view) :]

    @classmethod
    def tls(cls, sock: Socket, context: TlsContext, server_hostname: str | bytes) -> Stream:
        """The stream of a TLS client connection over ``sock``, its handshake done (as
        ``ssl.SSLContext.wrap_socket`` with the handshake on connect)."""
        host = (
            server_hostname.decode("ascii")
            if isinstance(server_hostname, bytes)
            else (server_hostname.encode("idna").decode("ascii"))
        )
        tls: _TlsObject = context._wrap_socket(  # type: ignore[attr-defined]
            sock, False, host, owner=None, session=None
        )
        tls.do_handshake()
        return cls(sock, tls)
