"""The one request path: build a request, send it, retry what may be retried, map errors.

Every request of every process goes through :class:`KubeTransport`: the command line's reads,
its writes (``crd apply``, ``definitions install``), the operator and its controllers, the
exporter and the web view, their watches and watch caches. It builds the request from the one
:class:`~workload_map.kube.kubeconfig.ResolvedConfig` (server prefix, ``Accept``, credentials,
``Impersonate-*`` lines, ``User-Agent``), hands it to a :class:`~workload_map.kube.senders.Sender`
(the per-thread wire connection of a command, or the pool of a long-running process), and:

* bounds every request by the configured timeout (connect, each read and the whole request;
  a watch by its read timeout, the server ending it by ``timeoutSeconds``);
* retries an idempotent read (GET) answered 429 or 5xx with exponential backoff, honouring
  ``Retry-After`` (at most :data:`READ_RETRIES` times, each wait at most :data:`MAX_WAIT`);
  the sleep and the clock are injected, so tests count retries instead of timing them;
* on 401 asks the credentials for new ones once (an exec plugin runs again, an auth-provider
  is reloaded, a token file is read again) and sends the request again;
* turns an error status into :mod:`workload_map.kube.errors` (not found, conflict, invalid,
  gone, too many requests, forbidden, …) whose message names the verb and the object.

Which sender costs what at start-up (and why neither is a Kubernetes client package) is
measured in docs/kube.md.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, Protocol

import msgspec

from workload_map.kube.auth import Credentials
from workload_map.kube.errors import ApiError, ClusterError, Unreachable, api_error
from workload_map.kube.kubeconfig import Impersonation, ResolvedConfig
from workload_map.kube.senders import PooledSender, WireSender, cause
from workload_map.kube.urls import encode_query, quote, split_url

if TYPE_CHECKING:
    from workload_map.kube.senders import Reply, Sender

__all__ = [
    "MAX_WAIT",
    "READ_RETRIES",
    "KubeTransport",
    "Transport",
    "format_timeout",
]

_USER_AGENT = "wlmap/0.1.0"
_CHUNK = 1 << 16
#: how many times a GET answered 429 or 5xx is sent again
READ_RETRIES = 4
#: the longest wait between two tries (a larger Retry-After is cut to this)
MAX_WAIT = 10.0
_BACKOFF = 0.5  # the first wait without Retry-After; doubled per try
_RETRIED = frozenset({429, 500, 502, 503, 504})
#: an answer's JSON, read by msgspec's C decoder into the same dicts, lists and scalars as
#: json.loads (which reads what it refuses): 1.5x faster on pod lists, a pod list of a fleet
#: being most of what ``get -A`` reads (docs/cli.md)
_JSON = msgspec.json.Decoder()


class Transport(Protocol):
    """A Kubernetes API to read: GET ``path`` with ``query``; returns the decoded JSON."""

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


def retry_after(value: str) -> float | None:
    """Seconds of a ``Retry-After`` header (delta-seconds; the API server sends no dates)."""
    try:
        seconds = float(value.strip())
    except ValueError:
        return None
    return seconds if seconds >= 0 else None


class KubeTransport:
    """The request path over one resolved configuration and one sender.

    ``remember_unreachable``: once the server timed out or refused, later requests fail at
    once with the same error (a command should not wait out the timeout per request; a
    long-running process keeps trying).
    """

    def __init__(
        self,
        resolved: ResolvedConfig,
        *,
        sender: Sender | None = None,
        credentials: Credentials | None = None,
        pooled: bool = False,
        pool_size: int = 8,
        remember_unreachable: bool = False,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.resolved = resolved
        self.namespace = resolved.namespace
        self.context = resolved.context
        self.server = resolved.server
        self.timeout = resolved.timeout
        self.impersonation: Impersonation = resolved.impersonation
        self.credentials = credentials or Credentials(resolved)
        if sender is None:
            certificate = self.credentials.client_certificate
            sender = (
                PooledSender(resolved, certificate, max_idle=pool_size)
                if pooled
                else WireSender(resolved, certificate)
            )
        self.sender = sender
        self._prefix = split_url(resolved.server)[2].rstrip("/")
        self._fixed = [
            ("User-Agent", _USER_AGENT),
            ("Accept-Encoding", "gzip"),
            *resolved.impersonation.headers(),
        ]
        self._remember = remember_unreachable
        self._down: Unreachable | None = None
        self._sleep = sleep
        self._clock = clock
        self.calls = 0  # requests sent (retries included): for tests and benchmarks
        self.writes = 0
        self.retries = 0

    # -- building ------------------------------------------------------------------------
    def target(self, path: str, query: Sequence[tuple[str, str]] = ()) -> str:
        """The request target: the server's path prefix, ``path`` quoted, the query encoded."""
        url = quote(self._prefix + path, safe="/:@!$&'()*+,;=-._~%")
        return f"{url}?{encode_query(query)}" if query else url

    def headers(self, accept: str, content_type: str | None) -> list[tuple[str, str]]:
        """Every header of a request: fixed ones, ``Accept``, credentials, impersonation."""
        out = [*self._fixed, ("Accept", accept)]
        if content_type is not None:
            out.append(("Content-Type", content_type))
        auth = self.credentials.authorization()
        if auth:
            out.append(("Authorization", auth))
        return out

    # -- the Transport protocol ----------------------------------------------------------
    def get(
        self, path: str, query: Sequence[tuple[str, str]] = (), *, accept: str | None = None
    ) -> Any:
        return self.request("GET", path, query=query, accept=accept or "application/json")

    # -- any request ---------------------------------------------------------------------
    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        query: Sequence[tuple[str, str]] = (),
        content_type: str = "application/json",
        accept: str = "application/json",
        timeout: float | None = None,
        verb: str | None = None,
        what: str | None = None,
        raw: bool = False,
    ) -> Any:
        """One request; the decoded JSON answer (``{}`` when empty; ``raw``: the body's
        bytes). ``verb`` and ``what`` name the operation and the object in errors (default:
        the method and the path)."""
        if self._down is not None:
            raise Unreachable(str(self._down))
        data = None if body is None else json.dumps(body).encode()
        wait_for = timeout if timeout is not None else self.timeout
        refreshed = False
        tries = 0
        while True:
            try:
                status, payload, headers = self._once(
                    method,
                    path,
                    query,
                    data,
                    content_type if data is not None else None,
                    accept,
                    wait_for,
                )
            except Unreachable as exc:
                if self._remember:
                    self._down = exc
                raise
            if status == 401 and not refreshed and self.credentials.refresh():
                refreshed = True
                self._after_refresh()
                continue
            if method == "GET" and status in _RETRIED and tries < READ_RETRIES:
                self._sleep(self._wait(tries, headers.get("retry-after", "")))
                tries += 1
                self.retries += 1
                continue
            break
        if status >= 400:
            raise api_error(status, payload, what or path, verb or method)
        if raw:
            return payload
        if not payload:
            return {}
        try:
            return _JSON.decode(payload)
        except (msgspec.DecodeError, msgspec.ValidationError):
            pass  # what the standard library reads otherwise (1e400, a lone surrogate) or not
        try:
            return json.loads(payload)
        except ValueError as exc:
            raise ApiError(0, f"the API server sent non-JSON to {method} {path}: {exc}") from exc

    def stream(
        self,
        path: str,
        query: Sequence[tuple[str, str]] = (),
        *,
        timeout: float | None = None,
        opened: Callable[[Reply], None] | None = None,
    ) -> Iterator[Any]:
        """A watch: each newline-delimited JSON document of the response, decoded.

        ``timeout`` bounds the connect and each read (a watch has no total bound: pass
        ``timeoutSeconds`` in ``query`` so the server ends it); default: the request timeout.
        An error status raises at once (the caller decides about retrying a watch).
        ``opened`` gets the response once it is open (its ``abort`` ends a blocked read).
        """
        read_timeout = timeout if timeout is not None else self.timeout
        target = self.target(path, query)
        refreshed = False
        while True:
            reply = self._send(
                "GET", target, None, None, "application/json", read_timeout, path, stream=True
            )
            if reply.status == 401 and not refreshed and self.credentials.refresh():
                reply.finish(reuse=False)
                refreshed = True
                self._after_refresh()
                continue
            break
        if opened is not None:
            opened(reply)
        try:
            if reply.status >= 400:
                body = self._read_all(reply, path, read_timeout, total=None)
                raise api_error(reply.status, body, path, "WATCH")
            buffer = b""
            while True:
                chunk = self._read1(reply, path, read_timeout)
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
            reply.finish(reuse=False)

    def close(self) -> None:
        self.sender.close()

    # -- internals -----------------------------------------------------------------------
    def _once(
        self,
        method: str,
        path: str,
        query: Sequence[tuple[str, str]],
        data: bytes | None,
        content_type: str | None,
        accept: str,
        timeout: float | None,
    ) -> tuple[int, bytes, dict[str, str]]:
        started = self._clock()
        reply = self._send(
            method, self.target(path, query), data, content_type, accept, timeout, path
        )
        try:
            body = self._read_all(reply, path, timeout, total=started)
        except BaseException:
            reply.finish(reuse=False)
            raise
        reply.finish(reuse=True)
        headers = {"retry-after": reply.getheader("Retry-After")}
        return reply.status, body, headers

    def _send(
        self,
        method: str,
        target: str,
        data: bytes | None,
        content_type: str | None,
        accept: str,
        timeout: float | None,
        path: str,
        *,
        stream: bool = False,
    ) -> Reply:
        self.calls += 1
        if method != "GET":
            self.writes += 1
        headers = self.headers(accept, content_type)
        try:
            return self.sender.send(method, target, headers, data, timeout=timeout, stream=stream)
        except TimeoutError as exc:
            raise self._timed_out(method, path, timeout) from exc
        except OSError as exc:
            raise self._unreachable(exc) from exc

    def _read1(self, reply: Reply, path: str, timeout: float | None) -> bytes:
        try:
            return reply.read1(_CHUNK)
        except TimeoutError as exc:
            raise self._timed_out("GET", path, timeout) from exc
        except OSError as exc:
            raise self._unreachable(exc) from exc

    def _read_all(
        self, reply: Reply, path: str, timeout: float | None, *, total: float | None
    ) -> bytes:
        parts: list[bytes] = []
        while True:
            chunk = self._read1(reply, path, timeout)
            if not chunk:
                break
            parts.append(chunk)
            if total is not None and timeout is not None and self._clock() - total > timeout:
                # a server trickling bytes: the whole request is bounded too
                raise self._timed_out("GET", path, timeout)
        body = b"".join(parts)
        if reply.getheader("Content-Encoding").lower() == "gzip":
            import gzip

            try:
                return gzip.decompress(body)
            except (OSError, EOFError) as exc:
                raise ClusterError(f"the API server sent a corrupt gzip body: {exc}") from exc
        return body

    def _wait(self, tries: int, header: str) -> float:
        asked = retry_after(header) if header else None
        wait = asked if asked is not None else _BACKOFF * 2**tries
        return min(wait, MAX_WAIT)

    def _after_refresh(self) -> None:
        # an exec plugin may hand out a new client certificate: build TLS again
        if self.credentials.client_certificate() is not None:
            self.sender.reset()

    def _timed_out(self, method: str, path: str, timeout: float | None) -> Unreachable:
        return Unreachable(
            f"the API server at {self.server} did not answer {method} {path} within "
            f"{format_timeout(timeout)} (--request-timeout)"
        )

    def _unreachable(self, exc: BaseException) -> Unreachable:
        return Unreachable(f"cannot reach the cluster at {self.server}: {_cause(exc)}")


def _decode(line: bytes, path: str) -> Any:
    try:
        return json.loads(line)
    except ValueError as exc:
        raise ClusterError(f"the API server sent non-JSON in the watch of {path}: {exc}") from exc


def _cause(exc: BaseException) -> str:
    return cause(exc)
