"""The one place requests happen: ``get(path, query) -> JSON`` and ``stream`` for watches.

Everything above (discovery, paging, owner chains, definitions) is written against the
:class:`Transport` protocol, so unit tests drive it with an in-memory API and the integration
tests with a real kube-apiserver. Transport failures become :mod:`workload_map.kube.errors`.

Which client, and why requests do not go through it
---------------------------------------------------
The project's one Kubernetes client (CLI, library, operator) is the official ``kubernetes``
package, pinned ``>=37.0.2,<38``: the Kubernetes project's own client, its release 37 knows
the v1.37 API (its models keep ``spec.schedulingGroup``; lightkube-models 1.37 does too, kr8s
has no models), and only it brings what the operator needs (``watch``, ``informer``,
``leaderelection`` with ``LeaseLock``). Measured with
``benchmarks/clients_bench.py`` (medians of 5-7 fresh interpreters; a LIST of 93 pods from a
127.0.0.1 server, 20 times; three runs on the 2-core development machine while it ran 8 engineers'
tests and builds, load 8-13, so absolute numbers are inflated 3-5x and only the ranking is
meaningful):

=============================  ===========  =============  ============  ==========
client                         import       1st LIST       LIST typed    LIST raw
=============================  ===========  =============  ============  ==========
kubernetes 37.0.2              0.8-1.9 s    2.2-4.5 s      86-161 ms     11-20 ms
lightkube 1.0.1 (models 1.37)  0.65-1.6 s   0.35-0.87 s    9-23 ms       --
kr8s 0.20.15                   0.85-2.2 s   0.42-1.1 s     146-434 ms    126-437 ms
wlmap: socket + ssl (here)     0.19-0.34 s  72-155 ms      --            8-17 ms
=============================  ===========  =============  ============  ==========

("1st LIST" is configuration, connection and the first request after the import; the typed
clients build their models then, the kubernetes client's first pydantic validation alone costs
seconds.) None of the three imports quickly: ``import kubernetes`` runs the package
``__init__``, which imports ``kubernetes.client`` (every generated model and API class,
pydantic), ``config`` (google-auth, requests, oauthlib), ``dynamic``, ``watch``, ``stream``,
``leaderelection`` and ``informer``; any ``import kubernetes.x.y`` runs that ``__init__``
first, and the package has no lazy-import switch. lightkube and kr8s pay for httpx and
pydantic/msgspec/anyio likewise. A CLI that is to start in 300 ms cannot afford any of them,
and it never needs typed models (workloads, pods and scheduling objects stay dicts).

So live commands send the same wire requests the official client's
``ApiClient.call_api(..., _preload_content=False)`` sends, over :mod:`workload_map.kube.wire`
(a socket, ``ssl`` and HTTP/1.1 framing; even the standard library's ``http.client`` costs as
much import time as ``ssl`` because of the ``email`` package). The supported parts of the
official client are still used where they are needed: its ``kubernetes.config`` loader for
kubeconfig users with an exec or auth-provider plugin (:mod:`workload_map.kube.kubeconfig`),
its objects accepted everywhere by the library (:mod:`workload_map.engine.objects`, without an
``ApiClient`` per object), and the operator's watches and leader election, where start-up does
not matter.

Timeouts: every request has one timeout (``--request-timeout``, default 30 s) applied to the
connect, to each read and to the whole request, as kubectl applies its ``http.Client`` timeout;
the error names the server and the timeout. 0 means no timeout, as in kubectl.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from workload_map.kube.errors import ClusterError, Unreachable, api_error
from workload_map.kube.kubeconfig import ResolvedConfig
from workload_map.kube.options import ConnectionOptions

if TYPE_CHECKING:
    import ssl

    from workload_map.kube.wire import Connection, Response

__all__ = ["KubeTransport", "Transport", "format_timeout"]

_USER_AGENT = "wlmap/0.1.0"
_CHUNK = 1 << 16


class Transport(Protocol):
    """A read-only Kubernetes API: GET ``path`` with ``query``; returns the decoded JSON."""

    namespace: str
    context: str | None
    server: str

    def get(
        self, path: str, query: Sequence[tuple[str, str]] = (), *, accept: str | None = None
    ) -> Any: ...


def format_timeout(seconds: float | None) -> str:
    """``30s``, ``2.5s``, ``1m30s``: how kubectl prints a duration."""
    if seconds is None:
        return "no timeout"
    if seconds < 60:
        return f"{seconds:g}s"
    minutes, rest = divmod(seconds, 60)
    return f"{int(minutes)}m{rest:g}s" if rest else f"{int(minutes)}m"


class KubeTransport:
    """:class:`Transport` over :mod:`~workload_map.kube.wire` with the kubeconfig's TLS and
    credentials."""

    def __init__(self, resolved: ResolvedConfig, options: ConnectionOptions) -> None:
        from urllib.parse import urlsplit

        self.namespace = resolved.namespace
        self.context = resolved.context
        self.server = resolved.server
        self.timeout = options.timeout if options.timeout else None
        self._resolved = resolved
        parts = urlsplit(resolved.server)
        if parts.scheme not in ("https", "http") or not parts.hostname:
            raise ClusterError(f"server {resolved.server!r}: expected an https:// or http:// URL")
        self._scheme = parts.scheme
        self._host = parts.hostname
        self._port = parts.port or (443 if parts.scheme == "https" else 80)
        self._prefix = parts.path.rstrip("/")
        self._headers = {"User-Agent": _USER_AGENT, "Accept-Encoding": "gzip"}
        if resolved.username and resolved.password and not resolved.token:
            import base64

            basic = base64.b64encode(f"{resolved.username}:{resolved.password}".encode()).decode()
            self._headers["Authorization"] = f"Basic {basic}"
        if options.impersonate_user:
            self._headers["Impersonate-User"] = options.impersonate_user
        self._groups = tuple(options.impersonate_groups)
        self._ssl: ssl.SSLContext | None = None
        self._local = threading.local()
        self._down: Unreachable | None = None

    # -- the Transport protocol ---------------------------------------------------------------
    def get(
        self, path: str, query: Sequence[tuple[str, str]] = (), *, accept: str | None = None
    ) -> Any:
        if self._down is not None:
            # The server already timed out or refused this command: say so at once instead of
            # waiting out the timeout again for every remaining request.
            raise Unreachable(str(self._down))
        started = time.monotonic()
        try:
            status, body = self._request(path, query, accept or "application/json", started)
        except Unreachable as exc:
            self._down = exc
            raise
        if status >= 400:
            raise api_error(status, body, path)
        try:
            return json.loads(body)
        except ValueError as exc:
            raise ClusterError(f"the API server sent non-JSON for {path}: {exc}") from exc

    def stream(
        self, path: str, query: Sequence[tuple[str, str]] = (), *, timeout: float | None = None
    ) -> Iterator[Any]:
        """A watch: each newline-delimited JSON document of the response, decoded.

        ``timeout`` bounds the connect and each read (a watch has no total bound: pass
        ``timeoutSeconds`` in ``query`` so the server ends it); default: the request timeout.
        """
        read_timeout = timeout if timeout is not None else self.timeout
        conn = self._connection(fresh=True, timeout=read_timeout)
        try:
            try:
                response = self._send(conn, path, query, "application/json", read_timeout)
            except TimeoutError as exc:
                raise self._timed_out(path, read_timeout) from exc
            except OSError as exc:
                raise self._unreachable(exc) from exc
            if response.status >= 400:
                raise api_error(response.status, _decoded(response, response.read()), path)
            buffer = b""
            while True:
                try:
                    chunk = response.read1(_CHUNK)
                except TimeoutError as exc:
                    raise self._timed_out(path, read_timeout) from exc
                except OSError as exc:
                    raise self._unreachable(exc) from exc
                if not chunk:
                    break
                buffer += chunk
                *lines, buffer = buffer.split(b"\n")
                for line in lines:
                    if line.strip():
                        yield _decode(line, path)
            if buffer.strip():
                yield _decode(buffer, path)
        finally:
            conn.close()

    # -- internals ----------------------------------------------------------------------------
    def _request(
        self, path: str, query: Sequence[tuple[str, str]], accept: str, started: float
    ) -> tuple[int, bytes]:
        for attempt in (0, 1):
            conn = self._connection(fresh=False, timeout=self.timeout)
            reused = getattr(self._local, "used", False)
            try:
                response = self._send(conn, path, query, accept, self.timeout)
                body = self._read_all(response, started)
            except TimeoutError as exc:
                self._drop()
                raise self._timed_out(path, self.timeout) from exc
            except (ConnectionResetError, BrokenPipeError) as exc:
                # A kept-alive connection the server closed meanwhile: retry once, fresh.
                self._drop()
                if reused and attempt == 0:
                    continue
                raise self._unreachable(exc) from exc
            except OSError as exc:
                self._drop()
                raise self._unreachable(exc) from exc
            self._local.used = True
            if response.will_close:
                self._drop()
            return response.status, body
        raise AssertionError("unreachable")  # pragma: no cover

    def _send(
        self,
        conn: Connection,
        path: str,
        query: Sequence[tuple[str, str]],
        accept: str,
        timeout: float | None,
    ) -> Response:
        from urllib.parse import quote, urlencode

        url = quote(self._prefix + path, safe="/:@!$&'()*+,;=-._~%")
        if query:
            url += f"?{urlencode(list(query))}"
        headers = [*self._headers.items(), ("Accept", accept)]
        token = self._token()
        if token:
            headers.append(("Authorization", f"Bearer {token}"))
        headers.extend(("Impersonate-Group", group) for group in self._groups)
        conn.settimeout(timeout)
        return conn.get(url, headers)

    def _read_all(self, response: Response, started: float) -> bytes:
        parts: list[bytes] = []
        while True:
            chunk = response.read1(_CHUNK)
            if not chunk:
                break
            parts.append(chunk)
            if self.timeout is not None and time.monotonic() - started > self.timeout:
                raise TimeoutError  # a server trickling bytes: the whole request is bounded too
        return _decoded(response, b"".join(parts))

    def _token(self) -> str | None:
        resolved = self._resolved
        if resolved.token:
            return resolved.token
        if resolved.token_file:
            cached = getattr(self._local, "token", None)
            if cached is None:
                try:
                    with open(resolved.token_file, encoding="utf-8") as handle:
                        cached = handle.read().strip()
                except OSError as exc:
                    raise ClusterError(f"token file {resolved.token_file}: {exc.strerror}") from exc
                self._local.token = cached
            return str(cached)
        return None

    def _connection(self, *, fresh: bool, timeout: float | None) -> Connection:
        from workload_map.kube.wire import Connection

        conn: Connection | None = None if fresh else getattr(self._local, "conn", None)
        if conn is not None:
            return conn
        proxy: tuple[str, int] | None = None
        if self._resolved.proxy_url:
            from urllib.parse import urlsplit

            p = urlsplit(self._resolved.proxy_url)
            if p.scheme != "http" or not p.hostname:
                raise ClusterError(
                    f"proxy-url {self._resolved.proxy_url!r}: only http:// proxies are supported"
                )
            proxy = (p.hostname, p.port or 3128)
        conn = Connection(
            self._host,
            self._port,
            timeout=timeout,
            tls=self._ssl_context() if self._scheme == "https" else None,
            server_hostname=self._resolved.tls_server_name or self._host,
            proxy=proxy,
        )
        if not fresh:
            self._local.conn = conn
            self._local.used = False
        return conn

    def _drop(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
        self._local.conn = None

    def _ssl_context(self) -> ssl.SSLContext:
        if self._ssl is None:
            self._ssl = _ssl_context(self._resolved)
        return self._ssl

    def _timed_out(self, path: str, timeout: float | None) -> Unreachable:
        return Unreachable(
            f"the API server at {self.server} did not answer GET {path} within "
            f"{format_timeout(timeout)} (--request-timeout)"
        )

    def _unreachable(self, exc: BaseException) -> Unreachable:
        return Unreachable(f"cannot reach the cluster at {self.server}: {_cause(exc)}")

    def close(self) -> None:
        self._drop()


def _decoded(response: Response, body: bytes) -> bytes:
    if response.getheader("Content-Encoding").lower() == "gzip":
        import gzip

        try:
            return gzip.decompress(body)
        except (OSError, EOFError) as exc:
            raise ClusterError(f"the API server sent a corrupt gzip body: {exc}") from exc
    return body


def _decode(line: bytes, path: str) -> Any:
    try:
        return json.loads(line)
    except ValueError as exc:
        raise ClusterError(f"the API server sent non-JSON in the watch of {path}: {exc}") from exc


def _cause(exc: BaseException) -> str:
    import ssl

    if isinstance(exc, ssl.SSLCertVerificationError):
        return f"TLS certificate not trusted ({exc.verify_message or exc})"
    text = getattr(exc, "strerror", None) or str(exc)
    return text or type(exc).__name__


def _ssl_context(resolved: ResolvedConfig) -> ssl.SSLContext:
    """Only the kubeconfig's CA (the system store when it names none), its client certificate,
    or no verification when it says ``insecure-skip-tls-verify`` (kubectl does not warn)."""
    import ssl

    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    if resolved.insecure:
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    elif resolved.ca_data or resolved.ca_file:
        try:
            if resolved.ca_data:
                ctx.load_verify_locations(cadata=resolved.ca_data.decode("ascii", "replace"))
            else:
                ctx.load_verify_locations(cafile=resolved.ca_file)
        except (OSError, ssl.SSLError, ValueError) as exc:
            what = resolved.ca_file or "certificate-authority-data"
            raise ClusterError(f"certificate authority {what}: {_cause(exc)}") from exc
    else:
        ctx.load_default_certs()
    if resolved.cert_data or resolved.cert_file:
        _load_client_cert(ctx, resolved)
    return ctx


def _load_client_cert(ctx: ssl.SSLContext, resolved: ResolvedConfig) -> None:
    import ssl

    if resolved.cert_file and resolved.key_file and not (resolved.cert_data or resolved.key_data):
        try:
            ctx.load_cert_chain(resolved.cert_file, resolved.key_file)
        except (OSError, ssl.SSLError) as exc:
            raise ClusterError(f"client certificate {resolved.cert_file}: {_cause(exc)}") from exc
        return
    # ssl only loads certificates from files. Where the system has memory-backed files (Linux
    # memfd) the inline ones are handed over as such: the key never reaches a disk, and no
    # temporary directory (tempfile, random, shutil) is set up on every live command. Else they
    # go to a private temporary directory, removed at once.
    from pathlib import Path

    try:
        cert = resolved.cert_data or Path(resolved.cert_file or "").read_bytes()
        key = resolved.key_data or Path(resolved.key_file or "").read_bytes()
        if _load_from_memory(ctx, cert, key):
            return
        import tempfile

        with tempfile.TemporaryDirectory(prefix="wlmap-") as tmp:
            cert_path, key_path = Path(tmp) / "cert.pem", Path(tmp) / "key.pem"
            cert_path.write_bytes(cert)
            key_path.touch(mode=0o600)
            key_path.write_bytes(key)
            ctx.load_cert_chain(str(cert_path), str(key_path))
    except (OSError, ssl.SSLError) as exc:
        raise ClusterError(
            f"client certificate and key of the kubeconfig user: {_cause(exc)}"
        ) from exc


def _load_from_memory(ctx: ssl.SSLContext, cert: bytes, key: bytes) -> bool:
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
