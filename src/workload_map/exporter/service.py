"""One running exporter: inventory, the watches feeding it, the collector and its HTTP server.

The HTTP side is aiohttp, the operator's and the web view's stack, on a loop thread of its own:
the exposition of a large cluster takes a second of CPU (docs/metrics.md), built in a worker
thread so that the loop keeps answering, and never on the operator's webhook loop. It answers
with :meth:`WorkloadCollector.exposition_chunks` (memoised text, kept byte-identical to
``prometheus_client.generate_latest`` of the collector by the tests) rather than re-formatting
every series per scrape: ``benchmarks/exporter_bench.py`` measures both. The pieces are the
memo's own bytes and are streamed as they are (joined a megabyte at a time on the way out), so
that a scrape of 10k workloads never holds a second copy of a 100 MB text; a gzipped answer is
compressed piece by piece in the worker thread.

The collector is served on its own address, not registered in the operator's registry: the
workload series must come from one scrape target only (the leader's, apart from the operator's
``--metrics-bind-address`` metrics), or every ``group_left`` join would see them twice.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import zlib
from collections.abc import Callable, Iterator, Sequence

from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST

from workload_map.cluster.feed import InformerSource, InventoryFeed
from workload_map.cluster.inventory import Inventory, NamespaceFilter
from workload_map.exporter.collector import ExporterHealth, LabelPolicy, WorkloadCollector
from workload_map.exporter.settings import ExporterSettings
from workload_map.kube.cache import InformerSet
from workload_map.kube.transport import Transport

__all__ = ["ExporterService", "MetricsServer"]

log = logging.getLogger("workload_map.exporter")


class ExporterService:
    """``start()`` watches and serves; ``stop()`` ends both. ``port`` is the bound port."""

    def __init__(
        self,
        settings: ExporterSettings,
        transport: Transport,
        informers: InformerSet | InformerSource,
        *,
        is_leader: Callable[[], bool] = lambda: True,
    ) -> None:
        self.settings = settings
        self.inventory = Inventory(
            namespaces=NamespaceFilter(
                frozenset(settings.include_namespaces), frozenset(settings.exclude_namespaces)
            )
        )
        self.feed = InventoryFeed(
            self.inventory,
            transport,
            informers,
            namespaces=settings.include_namespaces,
            rediscover_seconds=settings.rediscover_seconds,
        )
        # not synced until _sync has seen full caches and evaluated every workload once
        self.health = ExporterHealth(is_leader=is_leader, synced=False)
        self.collector = WorkloadCollector(
            self.inventory,
            health=self.health,
            labels=LabelPolicy(settings.workload_labels),
        )
        self._server = MetricsServer(
            self.collector.exposition_chunks, settings.host, settings.port, ready=lambda: self.ready
        )
        self._stopping = threading.Event()
        self.port = settings.port

    def start(self) -> ExporterService:
        self.feed.start()
        self.port = self._server.start()
        threading.Thread(target=self._sync, name="exporter-sync", daemon=True).start()
        log.info("workload metrics on %s:%d", self.settings.host, self.port)
        return self

    def _sync(self) -> None:
        """Record when the caches are complete; evaluate every workload once (which also
        warms the views, so the first scrape is cheap); then, and only then, serve workload
        series (``workloadmap_exporter_synced`` 1, ready)."""
        while not self._stopping.is_set():
            if self.feed.wait_synced(5.0):
                self.health.last_sync = self.feed.last_sync
                self.health.informers = self.feed.informers()
                self.inventory.entries()
                self.health.synced = True
                log.info("caches synced and every workload evaluated: serving workload series")
                return

    @property
    def ready(self) -> bool:
        """Whether the exporter serves workload series (its readiness)."""
        return self.health.synced

    def stop(self) -> None:
        self._stopping.set()
        self.feed.stop()
        self._server.stop()


#: how much of the exposition one write hands to the transport (pieces are joined up to it)
WRITE_BYTES = 1 << 20


class MetricsServer:
    """``GET /metrics`` (and ``/``) answering the pieces ``exposition()`` returns, one after
    the other (gzipped when asked), on an aiohttp loop in a thread of its own; the exposition
    is built in a worker thread. ``/readyz`` answers 503 until ``ready()`` (the caches synced
    and the fleet evaluated), ``/healthz`` 200 while the server runs."""

    def __init__(
        self,
        exposition: Callable[[], Sequence[bytes]],
        host: str,
        port: int,
        *,
        ready: Callable[[], bool] = lambda: True,
    ) -> None:
        self.exposition = exposition
        self.ready = ready
        self.host = host
        self.port = port
        self._loop: asyncio.AbstractEventLoop | None = None
        self._runner: web.AppRunner | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> int:
        """Listen (errors raise here, as a taken port does) and return the bound port."""
        loop = asyncio.new_event_loop()
        app = web.Application()
        app.router.add_get("/metrics", self._metrics)
        app.router.add_get("/", self._metrics)
        app.router.add_get("/readyz", self._readyz)
        app.router.add_get("/healthz", self._healthz)
        runner = web.AppRunner(app, access_log=None, handle_signals=False)
        try:
            loop.run_until_complete(runner.setup())
            site = web.TCPSite(runner, self.host, self.port, reuse_address=True)
            loop.run_until_complete(site.start())
        except BaseException:
            loop.run_until_complete(runner.cleanup())
            loop.close()
            raise
        self._loop, self._runner = loop, runner
        bound = runner.addresses[0]
        self.port = int(bound[1])
        self._thread = threading.Thread(target=loop.run_forever, name="exporter-http", daemon=True)
        self._thread.start()
        return self.port

    async def _metrics(self, request: web.Request) -> web.StreamResponse:
        gzipped = "gzip" in request.headers.get("Accept-Encoding", "")
        try:
            body = await asyncio.get_running_loop().run_in_executor(None, self._body, gzipped)
        except Exception:  # a bug must show as a failed scrape, not a dead server
            log.exception("scrape failed")
            return web.Response(status=500, text="the exporter failed to build the exposition")
        headers = {"Content-Type": CONTENT_TYPE_LATEST}
        if gzipped:
            headers["Content-Encoding"] = "gzip"
        response = web.StreamResponse(headers=headers)
        response.content_length = sum(len(piece) for piece in body)
        await response.prepare(request)
        for block in _blocks(body, WRITE_BYTES):
            await response.write(block)
        await response.write_eof()
        return response

    async def _readyz(self, _request: web.Request) -> web.Response:
        if self.ready():
            return web.Response(text="ok\n")
        return web.Response(status=503, text="caches not synced yet\n")

    async def _healthz(self, _request: web.Request) -> web.Response:
        return web.Response(text="ok\n")

    def _body(self, gzipped: bool) -> Sequence[bytes]:
        body = self.exposition()
        if not gzipped:
            return body
        # the gzip container (wbits 31) at level 1, as gzip.compress(compresslevel=1) made it:
        # compressed piece by piece, never joined (the compressed text is a tenth of it)
        packer = zlib.compressobj(1, zlib.DEFLATED, 31)
        out = [packer.compress(piece) for piece in body]
        out.append(packer.flush())
        return [piece for piece in out if piece]

    def stop(self) -> None:
        loop, runner = self._loop, self._runner
        if loop is None or runner is None:
            return
        asyncio.run_coroutine_threadsafe(runner.cleanup(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        if self._thread is not None:
            self._thread.join(10)
        loop.close()
        self._loop = None


def _blocks(pieces: Sequence[bytes], size: int) -> Iterator[bytes]:
    """The pieces in order, small ones joined up to about ``size`` bytes (one write each: a
    write per workload's piece would be 100k awaits), large ones as they are."""
    held: list[bytes] = []
    count = 0
    for piece in pieces:
        if len(piece) >= size:
            if held:
                yield b"".join(held)
                held, count = [], 0
            yield piece
            continue
        held.append(piece)
        count += len(piece)
        if count >= size:
            yield b"".join(held)
            held, count = [], 0
    if held:
        yield b"".join(held)
