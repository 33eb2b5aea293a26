"""The operator's HTTP servers on aiohttp: health probes, metrics, and the TLS webhook server.

All three run on one asyncio loop in a thread of their own; admission handlers are synchronous
(they read caches and run the validator) and run in a thread pool, or on the loop itself when
registered ``inline`` (short CPU work, where a thread hop costs more than it saves). The webhook
server's TLS context asks :class:`TlsSource` for the current certificate on every handshake
(``sni_callback``), so a rotated certificate is served without a restart.

Each admission request is timed in stages, from the moment the loop reads its first bytes off
the connection (a thin protocol wrapper, :class:`_Stamped`, notes it) to the moment its last
byte is handed to the socket: ``queued`` (bytes read -> handler starts: body, parsing, waiting
for the loop), ``body`` (bytes read -> whole body read: a sender that writes its headers and
its body apart), ``handler``, ``write`` (the answer encoded -> its last byte handed to the
socket) and ``total``. Before the first read, ``socket``: how long the
request's bytes already sat in the kernel's receive queue (Linux ``TCP_INFO``
``tcpi_last_data_recv``, in jiffies: 4 ms steps here, so only its mean is exact), the wait a
busy or descheduled loop adds that no timer inside the process sees. The API server's own
webhook histogram has buckets of 5/25/100/500 ms; these stages say where a slow answer was
spent. aiohttp has no hook for "first byte read", hence the wrapper. Every stage and the
handshake read one clock, ``Servers(clock=...)`` (:func:`time.perf_counter` by default), so a
test can move time as it says and check each stage exactly (issue 26).
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import socket
import ssl
import struct
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

import msgspec
from aiohttp import web
from prometheus_client import CONTENT_TYPE_PLAIN_0_0_4, generate_latest
from prometheus_client.core import CounterMetricFamily, Metric
from prometheus_client.registry import Collector

from workload_map.operator.errors import ConfigError, OperatorError
from workload_map.operator.metrics import quantile_summary

if TYPE_CHECKING:
    from workload_map.operator.controllers import OperatorContext

__all__ = ["Servers", "TlsSource", "admission_review", "parse_bind_address"]

log = logging.getLogger("workload_map.operator.server")

LAG_PERIOD = 0.05  # seconds between the event-loop lag probes of the webhook server
STAGES = ("socket", "body", "queued", "handler", "write", "total")
# tcpi_last_data_recv: milliseconds since the last segment arrived (struct tcp_info offset)
_TCPI_LAST_DATA_RECV = 52
_TCP_INFO = getattr(socket, "TCP_INFO", None)


# when the loop read a request's first bytes, and how long they had waited in the kernel's
# receive queue by then (keys made at module level: aiohttp names them so)
_RECEIVED: web.RequestKey[float] = web.RequestKey("received", float)
_IN_KERNEL: web.RequestKey[float] = web.RequestKey("in_kernel", float)


_DECODER = msgspec.json.Decoder()
_ENCODER = msgspec.json.Encoder()


class _Stamped(asyncio.Protocol):
    """Wraps aiohttp's per-connection protocol and notes when the loop first read bytes of
    the next request (the API server does not pipeline: one request at a time per
    connection, so the stamp is taken on the first read after the previous answer)."""

    def __init__(
        self,
        inner: asyncio.Protocol,
        stamps: dict[Any, tuple[float, float]],
        handshakes: Callable[[float], None] | None = None,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self.inner = inner
        self.stamps = stamps
        self.sock: Any = None
        self.clock = clock
        # made when the loop accepts the connection; TLS calls connection_made once the
        # handshake is done: the gap is the handshake, with every wait for the loop in it
        self.accepted = clock()
        self.handshakes = handshakes

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        if self.handshakes is not None:
            self.handshakes(self.clock() - self.accepted)
        if _TCP_INFO is not None:
            self.sock = transport.get_extra_info("socket")
        self.inner.connection_made(transport)

    def data_received(self, data: bytes) -> None:
        if self.inner not in self.stamps:
            self.stamps[self.inner] = (self.clock(), self._in_kernel())
        self.inner.data_received(data)

    def _in_kernel(self) -> float:
        """Seconds since the kernel received the newest segment read now (-1: unknown): for
        a request sent in one write, how long the loop left it unread."""
        if self.sock is None:
            return -1.0
        try:
            info = self.sock.getsockopt(socket.IPPROTO_TCP, _TCP_INFO, 104)
            return float(struct.unpack_from("I", info, _TCPI_LAST_DATA_RECV)[0]) / 1000
        except (OSError, struct.error):
            return -1.0

    def eof_received(self) -> bool | None:
        return self.inner.eof_received()

    def connection_lost(self, exc: Exception | None) -> None:
        self.stamps.pop(self.inner, None)
        self.inner.connection_lost(exc)

    def pause_writing(self) -> None:
        self.inner.pause_writing()

    def resume_writing(self) -> None:
        self.inner.resume_writing()


def parse_bind_address(text: str) -> tuple[str, int] | None:
    """``":8080"`` → ("0.0.0.0", 8080), ``"127.0.0.1:9"`` → as is; ``"0"`` or "" → disabled."""
    if text in ("", "0"):
        return None
    host, sep, port = text.rpartition(":")
    if not sep:
        host, port = "", text
    try:
        number = int(port)
    except ValueError:
        raise ConfigError(f"bind address {text!r} needs a numeric port (e.g. :8080)") from None
    return host.strip("[]") or "0.0.0.0", number


class TlsSource:
    """The serving certificate in force; ``load`` swaps it atomically."""

    def __init__(self) -> None:
        self._ctx: ssl.SSLContext | None = None
        self._lock = threading.Lock()
        self.loads = 0
        #: TLS handshakes served: one per new connection, so with request counts it shows
        #: whether the API server keeps its connections to the webhooks alive
        self.handshakes = 0
        self.serial: int | None = None

    def load(self, cert_file: str, key_file: str) -> None:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.minimum_version = ssl.TLSVersion.TLSv1_2
        ctx.num_tickets = 0  # see server_context
        ctx.load_cert_chain(cert_file, key_file)
        with self._lock:
            self._ctx = ctx
            self.loads += 1
        from cryptography import x509

        with open(cert_file, "rb") as f:
            self.serial = x509.load_pem_x509_certificate(f.read()).serial_number

    @property
    def ready(self) -> bool:
        return self._ctx is not None

    def current(self) -> ssl.SSLContext | None:
        with self._lock:
            return self._ctx

    def server_context(self) -> ssl.SSLContext:
        """A context whose handshakes use whatever certificate is current at that moment."""
        outer = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        outer.minimum_version = ssl.TLSVersion.TLSv1_2
        # no TLS 1.3 session tickets: the API server's webhook client (client-go) keeps no
        # session cache, so it never resumes, and issuing two tickets per new connection
        # was ~0.15 of the ~0.85 ms of CPU OpenSSL spends on a handshake here
        outer.num_tickets = 0

        def pick(sock: ssl.SSLObject, _name: str | None, _ctx: ssl.SSLContext) -> None:
            self.handshakes += 1
            current = self.current()
            if current is not None:
                sock.context = current

        outer.sni_callback = pick
        return outer


def _decode(body: bytes) -> Any:
    """An AdmissionReview's JSON through msgspec (a 3 KB Karta review and its answer: 20 µs
    against 59 µs with the json module, of the ~600 µs a request costs the loop; integers of
    any size stay exact, unlike orjson's), the json module for what msgspec refuses (a float
    beyond double range; NaN is refused by both)."""
    try:
        return _DECODER.decode(body)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return json.loads(body)


def admission_review(review: Mapping[str, Any], answer: Mapping[str, Any]) -> dict[str, Any]:
    """The ``AdmissionReview`` answering ``review`` with an :data:`AdmissionHandler`'s
    ``answer`` (``allowed``; maybe ``status``, ``warnings``, ``auditAnnotations`` and a JSON
    Patch list as ``patch``): the one builder of every webhook's response."""
    request = review["request"]
    response: dict[str, Any] = {"uid": request["uid"], "allowed": bool(answer.get("allowed"))}
    for key in ("status", "warnings", "auditAnnotations"):
        if answer.get(key):
            response[key] = answer[key]
    if answer.get("patch"):
        response["patchType"] = "JSONPatch"
        response["patch"] = base64.b64encode(_ENCODER.encode(answer["patch"])).decode()
    return {
        "apiVersion": review.get("apiVersion", "admission.k8s.io/v1"),
        "kind": "AdmissionReview",
        "response": response,
    }


class _ServerMetrics(Collector):
    """The servers' own families, read from what they record (in :class:`Servers`)."""

    def __init__(self, servers: Servers) -> None:
        self.servers = servers

    def collect(self) -> Iterator[Metric]:
        sv = self.servers
        yield CounterMetricFamily(
            "workloadmap_operator_admission_requests_total",
            "Admission requests served.",
            value=sv.admissions,
        )
        yield quantile_summary(
            "workloadmap_operator_admission_duration_seconds",
            "Time from receiving an admission request to answering it.",
            ["path"],
            [((p,), s, sum(s), len(s)) for p, s in sorted(list(sv.latencies.items()))],
        )
        if sv.stages:
            yield quantile_summary(
                "workloadmap_operator_webhook_request_seconds",
                "Admission request stages: socket (in the kernel's receive queue before the first"
                " read, jiffy steps), body (first bytes read -> body read), queued (first bytes"
                " read -> handler), handler, write (answer encoded -> sent), total (first bytes"
                " read -> last byte sent); quantiles of the last 10000, sum and count over the"
                " process's life.",
                ["path", "stage"],
                [
                    (key, samples, sv.stage_totals[key][0], sv.stage_totals[key][1])
                    for key, samples in sorted(list(sv.stages.items()))
                ],
            )
        if sv.handshake_times:
            yield quantile_summary(
                "workloadmap_operator_webhook_tls_handshake_seconds",
                "New webhook connections: accepted -> TLS handshake done; quantiles of the last"
                " 10000, sum and count over the process's life.",
                [],
                [((), sv.handshake_times, sv.handshake_total[0], sv.handshake_total[1])],
            )
        if sv.loop_lag:
            lag = list(sv.loop_lag)
            yield quantile_summary(
                "workloadmap_operator_webhook_loop_lag_seconds",
                "How late the webhook server's event loop runs a timer.",
                [],
                [((), lag, sum(lag), len(lag))],
            )
        if sv.tls is not None:
            yield CounterMetricFamily(
                "workloadmap_operator_webhook_tls_handshakes_total",
                "TLS handshakes of the webhook server (new connections).",
                value=sv.tls.handshakes,
            )
        yield from self._loop_thread_times()

    def _loop_thread_times(self) -> Iterator[Metric]:
        """The loop thread's time on a CPU and time runnable but waiting for one (Linux
        schedstat, nanoseconds); nothing where /proc has no schedstat."""
        try:
            with open(f"/proc/self/task/{self.servers.loop_tid}/schedstat") as f:
                running, waiting = (int(x) / 1e9 for x in f.read().split()[:2])
        except (OSError, ValueError):
            return
        family = CounterMetricFamily(
            "workloadmap_operator_webhook_loop_thread_seconds_total",
            "The HTTP servers' loop thread: on a CPU (running) and runnable but waiting for a"
            " CPU (waiting).",
            labels=["state"],
        )
        family.add_metric(["running"], running)
        family.add_metric(["waiting"], waiting)
        yield family


class Servers:
    """Health (:8081), metrics (:8080) and, when enabled, webhooks (:9443, TLS)."""

    def __init__(
        self,
        ctx: OperatorContext,
        *,
        health: tuple[str, int] | None,
        metrics: tuple[str, int] | None,
        webhook: tuple[str, int] | None,
        tls: TlsSource | None,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self.ctx = ctx
        #: seconds, read for every request stage and handshake (see the module's docstring)
        self.clock = clock
        self.health = health
        self.metrics = metrics
        self.webhook = webhook
        self.tls = tls
        self.loop: asyncio.AbstractEventLoop | None = None
        self.webhook_started = threading.Event()
        self._started = threading.Event()
        self._runners: list[web.AppRunner] = []
        self._listeners: list[asyncio.AbstractServer] = []
        #: connection protocol -> when the loop read the first bytes of its current request,
        #: and how long they had been in the kernel's receive queue (-1: unknown)
        self._received: dict[Any, tuple[float, float]] = {}
        self._thread: threading.Thread | None = None
        self._lag_task: asyncio.Task[None] | None = None
        self._pool = ThreadPoolExecutor(max_workers=8, thread_name_prefix="admission")
        self.error: BaseException | None = None
        self.admissions = 0
        #: seconds each admission request took, per webhook path (the last 10 000 each)
        self.latencies: dict[str, deque[float]] = {}
        #: per (path, stage): seconds of each request's stage, the last 10 000 (STAGES)
        self.stages: dict[tuple[str, str], deque[float]] = {}
        #: per (path, stage): running sum and count over the process's life (exact means)
        self.stage_totals: dict[tuple[str, str], list[float]] = {}
        #: how late the loop ran a timer due every LAG_PERIOD (the last 10 000): a request
        #: waits at least this long before its handler starts, which handler times miss
        self.loop_lag: deque[float] = deque(maxlen=10_000)
        #: accept -> TLS handshake done, seconds, per new webhook connection (the last
        #: 10 000; sum and count over the life): time a new connection of the API server
        #: spends before its first request can be read, outside every request stage
        self.handshake_times: deque[float] = deque(maxlen=10_000)
        self.handshake_total = [0.0, 0.0]
        #: the loop thread's kernel id: its /proc schedstat tells time on a CPU from time
        #: runnable but waiting for one (a lag the process itself cannot remove)
        self.loop_tid: int | None = None
        ctx.registry.register(_ServerMetrics(self))

    # -- lifecycle ------------------------------------------------------------------------

    def start(self, timeout: float = 30.0) -> None:
        self._thread = threading.Thread(target=self._main, name="http-servers", daemon=True)
        self._thread.start()
        if not self._started.wait(timeout):
            raise OperatorError("the HTTP servers did not start in time")
        if self.error is not None:
            raise self.error

    def stop(self) -> None:
        loop = self.loop
        if loop is None:
            return
        fut = asyncio.run_coroutine_threadsafe(self._cleanup(), loop)
        try:
            fut.result(10)
        except Exception as exc:
            log.warning("stopping the HTTP servers: %s", exc)
        loop.call_soon_threadsafe(loop.stop)
        if self._thread is not None:
            self._thread.join(10)
        self._pool.shutdown(wait=False, cancel_futures=True)

    def _main(self) -> None:
        loop = asyncio.new_event_loop()
        self.loop = loop
        self.loop_tid = threading.get_native_id()
        asyncio.set_event_loop(loop)
        try:
            loop.run_until_complete(self._serve())
        except BaseException as exc:
            self.error = exc
            self._started.set()
            return
        self._started.set()
        loop.run_forever()
        loop.close()

    async def _watch_lag(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            due = loop.time() + LAG_PERIOD
            await asyncio.sleep(LAG_PERIOD)
            self.loop_lag.append(max(0.0, loop.time() - due))

    async def _cleanup(self) -> None:
        if self._lag_task is not None:
            self._lag_task.cancel()
        for listener in self._listeners:
            listener.close()
            await listener.wait_closed()
        for runner in self._runners:
            await runner.cleanup()

    async def _serve(self) -> None:
        if self.health is not None:
            app = web.Application()
            app.router.add_get("/healthz", self._healthz)
            app.router.add_get("/readyz", self._readyz)
            await self._site(app, self.health, None)
        if self.metrics is not None:
            app = web.Application()
            app.router.add_get("/metrics", self._metrics)
            await self._site(app, self.metrics, None)
        if self.webhook is not None:
            assert self.tls is not None
            app = web.Application(
                client_max_size=8 * 1024 * 1024, middlewares=[self._stamp_middleware()]
            )
            for path, handler in sorted(self.ctx.webhooks.items()):
                app.router.add_post(
                    path, self._admission(handler, inline=path in self.ctx.inline_webhooks)
                )
            await self._site(app, self.webhook, self.tls.server_context(), stamped=True)
            self._lag_task = asyncio.get_running_loop().create_task(self._watch_lag())
            self.webhook_started.set()

    async def _site(
        self, app: web.Application, where: tuple[str, int], tls: Any, *, stamped: bool = False
    ) -> None:
        runner = web.AppRunner(app, access_log=None, handle_signals=False)
        await runner.setup()
        self._runners.append(runner)
        if not stamped:
            site = web.TCPSite(runner, where[0], where[1], ssl_context=tls, reuse_address=True)
            await site.start()
            return
        # aiohttp's own listener, with each connection's protocol wrapped to stamp arrivals;
        # runner.cleanup() still closes the connections (they register with runner.server)
        server = runner.server
        assert server is not None
        stamps = self._received
        listener = await asyncio.get_running_loop().create_server(
            lambda: _Stamped(server(), stamps, self._handshake_done, self.clock),
            where[0],
            where[1],
            ssl=tls,
            reuse_address=True,
        )
        self._listeners.append(listener)

    def _handshake_done(self, seconds: float) -> None:
        self.handshake_times.append(seconds)
        self.handshake_total[0] += seconds
        self.handshake_total[1] += 1

    # -- handlers -------------------------------------------------------------------------

    async def _healthz(self, _request: web.Request) -> web.Response:
        return web.Response(text="ok")

    def readiness(self) -> dict[str, bool]:
        checks = {name: bool(fn()) for name, fn in list(self.ctx.readiness.items())}
        if self.webhook is not None:
            checks["webhook-server"] = self.webhook_started.is_set() and bool(
                self.tls is not None and self.tls.ready
            )
        return checks

    async def _readyz(self, _request: web.Request) -> web.Response:
        checks = self.readiness()
        body = "\n".join(f"[{'+' if ok else '-'}]{name}" for name, ok in sorted(checks.items()))
        ok = all(checks.values())
        return web.Response(
            text=body + ("\nok\n" if ok else "\nnot ready\n"), status=200 if ok else 503
        )

    async def _metrics(self, _request: web.Request) -> web.Response:
        # the process's registry: these servers' families and every controller's (the text
        # format generate_latest writes, with the header prometheus_client's own server pairs
        # it with)
        return web.Response(
            body=generate_latest(self.ctx.registry),
            headers={"Content-Type": CONTENT_TYPE_PLAIN_0_0_4},
        )

    def _stamp_middleware(self) -> Any:
        """Middleware: every request on the webhook server (a 404 too) takes its connection's
        arrival stamp, so a request that never reaches a handler leaves none for the next."""
        stamps = self._received

        @web.middleware
        async def take(request: web.Request, handler: Any) -> Any:
            stamp = stamps.pop(request.protocol, None)
            if stamp is not None:
                request[_RECEIVED], request[_IN_KERNEL] = stamp
            return await handler(request)

        return take

    def _record(self, path: str, values: dict[str, float]) -> None:
        for step, value in values.items():
            key = (path, step)
            self.stages.setdefault(key, deque(maxlen=10_000)).append(value)
            acc = self.stage_totals.setdefault(key, [0.0, 0.0])
            acc[0] += value
            acc[1] += 1

    def _admission(
        self, handler: Callable[[dict[str, Any]], dict[str, Any]], *, inline: bool = False
    ) -> Callable[[web.Request], Any]:
        clock = self.clock

        async def serve(request: web.Request) -> web.Response:
            began = clock()
            try:
                body = await request.read()
            finally:
                # a stamp taken while the body was read belongs to this request, not the next
                self._received.pop(request.protocol, None)
            read = clock()
            received = float(request.get(_RECEIVED, began))
            in_kernel = float(request.get(_IN_KERNEL, -1.0))
            try:
                review = _decode(body)
                req = review["request"]
                if not isinstance(req, dict) or "uid" not in req:
                    raise KeyError("request.uid")  # a review without one cannot be answered
            except (ValueError, KeyError, TypeError) as exc:
                return web.Response(status=400, text=f"not an AdmissionReview: {exc}")
            loop = asyncio.get_running_loop()
            started = clock()
            try:
                if inline:
                    answer = handler(req)
                else:
                    answer = await loop.run_in_executor(self._pool, handler, req)
            except Exception as exc:
                log.exception("admission handler %s failed", request.path)
                answer = {
                    "allowed": False,
                    "status": {"code": 500, "message": f"internal error: {exc}"},
                }
            self.admissions += 1
            handled = clock()
            self.latencies.setdefault(request.path, deque(maxlen=10_000)).append(handled - began)
            out = admission_review(review, answer)
            reply = web.Response(body=_ENCODER.encode(out), content_type="application/json")
            encoded = clock()
            # sent here rather than by aiohttp after return, so "total" ends at the last byte
            # (prepare and write_eof are no-ops the second time)
            await reply.prepare(request)
            await reply.write_eof()
            sent = clock()
            stages = {
                "body": read - received,
                "queued": started - received,
                "handler": handled - started,
                # the send itself, and any preemption right after it: the woken reader often
                # takes the CPU first on a busy machine, so this part can overlap the caller's
                # own read of the answer
                "write": sent - encoded,
                "total": sent - received,
            }
            if in_kernel >= 0:
                stages["socket"] = in_kernel
            self._record(request.path, stages)
            return reply

        return serve
