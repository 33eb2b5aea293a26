"""The operator's HTTP servers on aiohttp: health probes, metrics, and the TLS webhook server.

All three run on one asyncio loop in a thread of their own; admission handlers are synchronous
(they read caches and run the validator) and run in a thread pool, or on the loop itself when
registered ``inline`` (short CPU work, where a thread hop costs more than it saves). The webhook
server's TLS context asks :class:`TlsSource` for the current certificate on every handshake
(``sni_callback``), so a rotated certificate is served without a restart.
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import ssl
import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from workload_map.operator.errors import ConfigError, OperatorError

if TYPE_CHECKING:
    from aiohttp import web

    from workload_map.operator.controllers import OperatorContext

__all__ = ["Servers", "TlsSource", "parse_bind_address"]

log = logging.getLogger("workload_map.operator.server")

LAG_PERIOD = 0.05  # seconds between the event-loop lag probes of the webhook server


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

        def pick(sock: ssl.SSLObject, _name: str | None, _ctx: ssl.SSLContext) -> None:
            self.handshakes += 1
            current = self.current()
            if current is not None:
                sock.context = current

        outer.sni_callback = pick
        return outer


def _summary_lines(name: str, labels: str, samples: deque[float]) -> list[str]:
    values = sorted(samples)
    sep = "," if labels else ""
    out = []
    for q in (0.5, 0.9, 0.99):
        v = values[min(len(values) - 1, int(q * len(values)))]
        out.append(f'{name}{{{labels}{sep}quantile="{q}"}} {v:.6f}')
    tail = f"{{{labels}}}" if labels else ""
    out.append(f"{name}_sum{tail} {sum(values):.6f}")
    out.append(f"{name}_count{tail} {len(values)}")
    return out


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
    ) -> None:
        self.ctx = ctx
        self.health = health
        self.metrics = metrics
        self.webhook = webhook
        self.tls = tls
        self.loop: asyncio.AbstractEventLoop | None = None
        self.webhook_started = threading.Event()
        self._started = threading.Event()
        self._runners: list[web.AppRunner] = []
        self._thread: threading.Thread | None = None
        self._lag_task: asyncio.Task[None] | None = None
        self._pool = ThreadPoolExecutor(max_workers=8, thread_name_prefix="admission")
        self.error: BaseException | None = None
        self.admissions = 0
        #: seconds each admission request took, per webhook path (the last 10 000 each)
        self.latencies: dict[str, deque[float]] = {}
        #: how late the loop ran a timer due every LAG_PERIOD (the last 10 000): a request
        #: waits at least this long before its handler starts, which handler times miss
        self.loop_lag: deque[float] = deque(maxlen=10_000)

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
        for runner in self._runners:
            await runner.cleanup()

    async def _serve(self) -> None:
        from aiohttp import web

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
            app = web.Application(client_max_size=8 * 1024 * 1024)
            for path, handler in sorted(self.ctx.webhooks.items()):
                app.router.add_post(
                    path, self._admission(handler, inline=path in self.ctx.inline_webhooks)
                )
            await self._site(app, self.webhook, self.tls.server_context())
            self._lag_task = asyncio.get_running_loop().create_task(self._watch_lag())
            self.webhook_started.set()

    async def _site(self, app: web.Application, where: tuple[str, int], tls: Any) -> None:
        from aiohttp import web

        runner = web.AppRunner(app, access_log=None, handle_signals=False)
        await runner.setup()
        site = web.TCPSite(runner, where[0], where[1], ssl_context=tls, reuse_address=True)
        await site.start()
        self._runners.append(runner)

    # -- handlers -------------------------------------------------------------------------

    async def _healthz(self, _request: web.Request) -> web.Response:
        from aiohttp import web

        return web.Response(text="ok")

    def readiness(self) -> dict[str, bool]:
        checks = {name: bool(fn()) for name, fn in list(self.ctx.readiness.items())}
        if self.webhook is not None:
            checks["webhook-server"] = self.webhook_started.is_set() and bool(
                self.tls is not None and self.tls.ready
            )
        return checks

    async def _readyz(self, _request: web.Request) -> web.Response:
        from aiohttp import web

        checks = self.readiness()
        body = "\n".join(f"[{'+' if ok else '-'}]{name}" for name, ok in sorted(checks.items()))
        ok = all(checks.values())
        return web.Response(
            text=body + ("\nok\n" if ok else "\nnot ready\n"), status=200 if ok else 503
        )

    async def _metrics(self, _request: web.Request) -> web.Response:
        from aiohttp import web

        parts = [self._latency_summary()]
        if self.tls is not None:
            name = "workloadmap_operator_webhook_tls_handshakes_total"
            parts.append(
                f"# HELP {name} TLS handshakes of the webhook server (new connections).\n"
                f"# TYPE {name} counter\n{name} {self.tls.handshakes}\n"
            )
        for render in list(self.ctx.metrics):
            try:
                parts.append(render())
            except Exception as exc:
                log.warning("a metrics renderer failed: %s", exc)
        return web.Response(text="".join(parts), content_type="text/plain")

    def _latency_summary(self) -> str:
        name = "workloadmap_operator_admission_duration_seconds"
        lines = [
            f"# HELP {name} Time from receiving an admission request to answering it.",
            f"# TYPE {name} summary",
        ]
        for path, samples in sorted(self.latencies.items()):
            lines += _summary_lines(name, f'path="{path}"', samples)
        if self.loop_lag:
            lag = "workloadmap_operator_webhook_loop_lag_seconds"
            lines += [
                f"# HELP {lag} How late the webhook server's event loop runs a timer.",
                f"# TYPE {lag} summary",
                *_summary_lines(lag, "", self.loop_lag),
            ]
        return "\n".join(lines) + "\n"

    def _admission(
        self, handler: Callable[[dict[str, Any]], dict[str, Any]], *, inline: bool = False
    ) -> Callable[[web.Request], Any]:
        from aiohttp import web

        async def serve(request: web.Request) -> web.Response:
            began = time.perf_counter()
            try:
                review = json.loads(await request.read())
                req = review["request"]
                uid = req["uid"]
            except (ValueError, KeyError, TypeError) as exc:
                return web.Response(status=400, text=f"not an AdmissionReview: {exc}")
            loop = asyncio.get_running_loop()
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
            self.latencies.setdefault(request.path, deque(maxlen=10_000)).append(
                time.perf_counter() - began
            )
            response: dict[str, Any] = {"uid": uid, "allowed": bool(answer.get("allowed"))}
            for key in ("status", "warnings", "auditAnnotations"):
                if answer.get(key):
                    response[key] = answer[key]
            if answer.get("patch"):
                response["patchType"] = "JSONPatch"
                response["patch"] = base64.b64encode(json.dumps(answer["patch"]).encode()).decode()
            out = {
                "apiVersion": review.get("apiVersion", "admission.k8s.io/v1"),
                "kind": "AdmissionReview",
                "response": response,
            }
            return web.json_response(out)

        return serve
