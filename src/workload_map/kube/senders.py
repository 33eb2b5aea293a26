"""The senders: how a built request reaches the API server, behind one protocol.

:class:`WireSender` keeps one connection per thread and is what a command line uses (it starts
in a few milliseconds: :mod:`workload_map.kube.wire` over ``_socket`` and ``_ssl``); the pooled
:class:`PooledSender` shares a bounded set of kept-alive connections between the threads of a
long-running process (operator, exporter, web view). Both open connections the same way (TLS
from the resolved configuration, ``proxy-url`` tunnels, ``tls-server-name``) and retry once,
on a fresh connection, a request whose kept-alive connection the server had closed meanwhile
(idempotent methods only). A kept-alive connection the server closed while it was idle is
noticed before it is reused (it reads as ready: the server's close), so writes, which are not
retried, do not meet it. Watches get a connection of their own, closed at their end.
"""

from __future__ import annotations

import _thread
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from workload_map.kube.auth import ClientCertificate
from workload_map.kube.errors import ClusterError
from workload_map.kube.kubeconfig import ResolvedConfig
from workload_map.kube.paths import join
from workload_map.kube.urls import hostname_of, port_of, split_url
from workload_map.kube.wire import CertificateError, Connection, TLSContext, TLSError

if TYPE_CHECKING:
    from workload_map.kube.wire import Connection, Response

__all__ = ["PooledSender", "Reply", "Sender", "WireSender", "cause", "ssl_context"]

_IDEMPOTENT = frozenset({"GET", "HEAD", "PUT", "DELETE", "OPTIONS"})


class Reply(Protocol):
    """An answer whose body is read as it arrives; ``finish`` hands the connection back."""

    status: int

    def getheader(self, name: str, default: str = "") -> str: ...

    def read1(self, amount: int = ...) -> bytes: ...

    def finish(self, *, reuse: bool) -> None: ...

    def abort(self) -> None:
        """End the exchange from another thread: a blocked read returns."""


class Sender(Protocol):
    """Sends one request (target: path and query, already encoded) and returns its answer."""

    def send(
        self,
        method: str,
        target: str,
        headers: list[tuple[str, str]],
        body: bytes | None,
        *,
        timeout: float | None,
        stream: bool = False,
    ) -> Reply: ...

    def reset(self) -> None:
        """Forget TLS material and connections (new client credentials)."""

    def close(self) -> None: ...


class _Reply:
    def __init__(
        self, response: Response, conn: Connection, done: Callable[[Connection, bool], None]
    ) -> None:
        self._response = response
        self._conn = conn
        self._done = done
        self.status = response.status
        self._finished = False

    def getheader(self, name: str, default: str = "") -> str:
        return self._response.getheader(name, default)

    def read1(self, amount: int = 1 << 16) -> bytes:
        return self._response.read1(amount)

    def finish(self, *, reuse: bool) -> None:
        if not self._finished:
            self._finished = True
            self._done(self._conn, reuse and not self._response.will_close)

    def abort(self) -> None:
        try:
            self._conn.shutdown()
        except OSError:  # already closed: the read has ended anyway
            pass


class _Connections:
    """What both senders share: opening a connection as the configuration says."""

    def __init__(
        self,
        resolved: ResolvedConfig,
        client_certificate: Callable[[], ClientCertificate | None] = lambda: None,
    ) -> None:
        self._resolved = resolved
        self._client_certificate = client_certificate
        scheme, netloc, _ = split_url(resolved.server)
        host = hostname_of(netloc)
        if scheme not in ("https", "http") or not host:
            raise ClusterError(f"server {resolved.server!r}: expected an https:// or http:// URL")
        self._tls_wanted = scheme == "https"
        self.host = host
        self.port = port_of(netloc) or (443 if self._tls_wanted else 80)
        self._proxy: tuple[str, int] | None = None
        if resolved.proxy_url:
            scheme, netloc, _ = split_url(resolved.proxy_url)
            host = hostname_of(netloc)
            if scheme != "http" or not host:
                raise ClusterError(
                    f"proxy-url {resolved.proxy_url!r}: only http:// proxies are supported"
                )
            self._proxy = (host, port_of(netloc) or 3128)
        self._ssl: TLSContext | None = None
        self._ssl_lock = _thread.allocate_lock()  # threading.Lock: no threading import

    def open(self, timeout: float | None) -> Connection:
        return Connection(
            self.host,
            self.port,
            timeout=timeout,
            tls=self._context() if self._tls_wanted else None,
            server_hostname=self._resolved.tls_server_name or self.host,
            proxy=self._proxy,
        )

    def forget_tls(self) -> None:
        with self._ssl_lock:
            self._ssl = None

    def _context(self) -> TLSContext:
        with self._ssl_lock:
            if self._ssl is None:
                self._ssl = ssl_context(self._resolved, self._client_certificate())
            return self._ssl

    @staticmethod
    def exchange(
        conn: Connection,
        method: str,
        target: str,
        headers: list[tuple[str, str]],
        body: bytes | None,
        timeout: float | None,
    ) -> Response:
        conn.settimeout(timeout)
        return conn.request(method, target, headers, body)


def _closed_by_peer(conn: Connection) -> bool:
    """Whether an idle kept-alive connection has something to read: the server's close (or
    bytes nobody asked for); either way it must not carry another request."""
    import select

    sock = conn.sock
    if sock is None:
        return True
    try:
        readable, _, _ = select.select([sock], [], [], 0)
    except (OSError, ValueError):
        return True
    return bool(readable)


class WireSender:
    """One kept-alive connection per thread: the command line's sender."""

    def __init__(
        self,
        resolved: ResolvedConfig,
        client_certificate: Callable[[], ClientCertificate | None] = lambda: None,
    ) -> None:
        self._connections = _Connections(resolved, client_certificate)
        self._local = _thread._local()  # threading.local, without importing threading

    def send(
        self,
        method: str,
        target: str,
        headers: list[tuple[str, str]],
        body: bytes | None,
        *,
        timeout: float | None,
        stream: bool = False,
    ) -> Reply:
        if stream:
            own = self._connections.open(timeout)
            try:
                response = _Connections.exchange(own, method, target, headers, body, timeout)
            except BaseException:
                own.close()
                raise
            return _Reply(response, own, lambda c, _reuse: c.close())
        for attempt in (0, 1):
            kept: Connection | None = getattr(self._local, "conn", None)
            if kept is not None and _closed_by_peer(kept):
                self._drop()
                kept = None
            reused = kept is not None
            conn = kept if kept is not None else self._connections.open(timeout)
            self._local.conn = conn
            try:
                response = _Connections.exchange(conn, method, target, headers, body, timeout)
            except (ConnectionResetError, BrokenPipeError):
                self._drop()
                if reused and attempt == 0 and method in _IDEMPOTENT:
                    continue  # the server closed the kept-alive connection meanwhile
                raise
            except BaseException:
                self._drop()
                raise
            return _Reply(response, conn, self._finished)
        raise AssertionError("unreachable")  # pragma: no cover

    def _finished(self, conn: Connection, reuse: bool) -> None:
        if not reuse:
            conn.close()
            if getattr(self._local, "conn", None) is conn:
                self._local.conn = None

    def _drop(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
        self._local.conn = None

    def reset(self) -> None:
        self._connections.forget_tls()
        self._drop()

    def close(self) -> None:
        self._drop()


class PooledSender:
    """Kept-alive connections shared by every thread (at most ``max_idle`` kept idle): the
    sender of long-running processes, whose many threads would otherwise each hold one."""

    def __init__(
        self,
        resolved: ResolvedConfig,
        client_certificate: Callable[[], ClientCertificate | None] = lambda: None,
        *,
        max_idle: int = 8,
    ) -> None:
        self._connections = _Connections(resolved, client_certificate)
        self._idle: list[Connection] = []
        self._lock = _thread.allocate_lock()  # threading.Lock
        self._max_idle = max_idle
        self._generation = 0  # connections of an older generation are not reused (reset)
        self._born: dict[int, int] = {}

    def send(
        self,
        method: str,
        target: str,
        headers: list[tuple[str, str]],
        body: bytes | None,
        *,
        timeout: float | None,
        stream: bool = False,
    ) -> Reply:
        for attempt in (0, 1):
            conn, reused = self._take(timeout, fresh=stream or attempt > 0)
            try:
                response = _Connections.exchange(conn, method, target, headers, body, timeout)
            except (ConnectionResetError, BrokenPipeError):
                self._discard(conn)
                if reused and attempt == 0 and method in _IDEMPOTENT:
                    continue  # the server closed the idle connection meanwhile
                raise
            except BaseException:
                self._discard(conn)
                raise
            if stream:
                return _Reply(response, conn, lambda c, _reuse: self._discard(c))
            return _Reply(response, conn, self._give_back)
        raise AssertionError("unreachable")  # pragma: no cover

    def _take(self, timeout: float | None, *, fresh: bool) -> tuple[Connection, bool]:
        while not fresh:
            with self._lock:
                if not self._idle:
                    break
                idle = self._idle.pop()
            if not _closed_by_peer(idle):
                return idle, True
            self._discard(idle)
        conn = self._connections.open(timeout)
        with self._lock:
            self._born[id(conn)] = self._generation
        return conn, False

    def _give_back(self, conn: Connection, reuse: bool) -> None:
        with self._lock:
            current = self._born.get(id(conn)) == self._generation
            if reuse and current and len(self._idle) < self._max_idle:
                self._idle.append(conn)
                return
        self._discard(conn)

    def _discard(self, conn: Connection) -> None:
        with self._lock:
            self._born.pop(id(conn), None)
        conn.close()

    def reset(self) -> None:
        self._connections.forget_tls()
        with self._lock:
            self._generation += 1
            idle, self._idle = self._idle, []
        for conn in idle:
            self._discard(conn)

    def close(self) -> None:
        self.reset()


def cause(exc: BaseException) -> str:
    """What went wrong with a connection, in words (a TLS failure says which)."""
    if isinstance(exc, CertificateError):
        return f"TLS certificate not trusted ({exc.verify_message or exc})"
    text = getattr(exc, "strerror", None) or str(exc)
    return text or type(exc).__name__


def ssl_context(resolved: ResolvedConfig, exec_cert: ClientCertificate | None = None) -> TLSContext:
    """Only the kubeconfig's CA (the system store when it names none), its client certificate
    (or the one an exec plugin gave), or no verification when it says
    ``insecure-skip-tls-verify`` (kubectl does not warn)."""
    ctx = TLSContext()
    if resolved.insecure:
        ctx.skip_verification()
    elif resolved.ca_data or resolved.ca_file:
        try:
            if resolved.ca_data:
                ctx.load_verify_locations(cadata=resolved.ca_data.decode("ascii", "replace"))
            else:
                ctx.load_verify_locations(cafile=resolved.ca_file)
        except (OSError, TLSError, ValueError) as exc:
            what = resolved.ca_file or "certificate-authority-data"
            raise ClusterError(f"certificate authority {what}: {cause(exc)}") from exc
    else:
        ctx.set_default_verify_paths()  # ssl.SSLContext.load_default_certs() on Linux and macOS
    if exec_cert is not None:
        _load_pem(ctx, exec_cert.cert, exec_cert.key)
    elif resolved.cert_data or resolved.cert_file:
        _load_client_cert(ctx, resolved)
    return ctx


def _load_client_cert(ctx: TLSContext, resolved: ResolvedConfig) -> None:
    if resolved.cert_file and resolved.key_file and not (resolved.cert_data or resolved.key_data):
        try:
            ctx.load_cert_chain(resolved.cert_file, resolved.key_file)
        except (OSError, TLSError) as exc:
            raise ClusterError(f"client certificate {resolved.cert_file}: {cause(exc)}") from exc
        return
    # ssl only loads certificates from files. Where the system has memory-backed files (Linux
    # memfd) the inline ones are handed over as such: the key never reaches a disk, and no
    # temporary directory (tempfile, random, shutil) is set up on every live command. Else they
    # go to a private temporary directory, removed at once.
    try:
        cert = resolved.cert_data or _read_bytes(resolved.cert_file or "")
        key = resolved.key_data or _read_bytes(resolved.key_file or "")
    except OSError as exc:
        raise ClusterError(
            f"client certificate and key of the kubeconfig user: {cause(exc)}"
        ) from exc
    _load_pem(ctx, cert, key)


def _read_bytes(path: str) -> bytes:
    """``Path(path).read_bytes()`` (``""`` is the current folder): no pathlib for it."""
    with open(join(path), "rb") as file:
        return file.read()


def _load_pem(ctx: TLSContext, cert: bytes, key: bytes) -> None:
    try:
        if _load_from_memory(ctx, cert, key):
            return
        import tempfile
        from pathlib import Path

        with tempfile.TemporaryDirectory(prefix="wlmap-") as tmp:
            cert_path, key_path = Path(tmp) / "cert.pem", Path(tmp) / "key.pem"
            cert_path.write_bytes(cert)
            key_path.touch(mode=0o600)
            key_path.write_bytes(key)
            ctx.load_cert_chain(str(cert_path), str(key_path))
    except (OSError, TLSError) as exc:
        raise ClusterError(
            f"client certificate and key of the kubeconfig user: {cause(exc)}"
        ) from exc


def _load_from_memory(ctx: TLSContext, cert: bytes, key: bytes) -> bool:
    """Load the client certificate and key from memory-backed files; False where the system
    has none (no ``os.memfd_create``, no ``/proc``). A bad certificate still raises."""
    import os

    memfd_create = getattr(os, "memfd_create", None)
    if memfd_create is None or not os.path.isdir("/proc/self/fd"):
        return False
    fds: list[int] = []
    try:
        for data in (cert, key):
            fd = memfd_create("wlmap-client-cert", getattr(os, "MFD_CLOEXEC", 0))
            fds.append(fd)
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
        ctx.load_cert_chain(f"/proc/self/fd/{fds[0]}", f"/proc/self/fd/{fds[1]}")
    finally:
        for fd in fds:
            os.close(fd)
    return True
