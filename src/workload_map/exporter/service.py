"""One running exporter: inventory, the watches feeding it, the collector and its HTTP server.

The HTTP side is the standard library's threaded server, as ``prometheus_client``'s own
``start_http_server`` is, but it answers with :meth:`WorkloadCollector.exposition` (memoised
text, identical to ``generate_latest``'s) rather than re-formatting every series per scrape.
It stays apart from the operator's aiohttp servers and their ``--metrics-bind-address`` metrics.
"""

from __future__ import annotations

import gzip
import logging
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry

from workload_map.cluster.feed import InformerSource, InventoryFeed
from workload_map.cluster.inventory import Inventory, NamespaceFilter
from workload_map.exporter.collector import ExporterHealth, LabelPolicy, WorkloadCollector
from workload_map.exporter.settings import ExporterSettings
from workload_map.kube.cache import InformerSet
from workload_map.kube.transport import Transport

__all__ = ["ExporterService"]

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
        self.health = ExporterHealth(is_leader=is_leader)
        self.registry = CollectorRegistry()
        self.collector = WorkloadCollector(
            self.inventory,
            health=self.health,
            labels=LabelPolicy(settings.workload_labels),
        )
        self.registry.register(self.collector)
        self._server: Any = None
        self._stopping = threading.Event()
        self.port = settings.port

    def start(self) -> ExporterService:
        self.feed.start()
        server = ThreadingHTTPServer((self.settings.host, self.settings.port), self._handler())
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, name="exporter-http", daemon=True).start()
        self._server = server
        self.port = int(server.server_address[1])
        threading.Thread(target=self._sync, name="exporter-sync", daemon=True).start()
        log.info("workload metrics on %s:%d", self.settings.host, self.port)
        return self

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        collector = self.collector

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                if self.path.split("?")[0] not in ("/metrics", "/"):
                    self.send_error(404, "only /metrics is served here")
                    return
                try:
                    body = collector.exposition()
                except Exception:  # a bug must show as a failed scrape, not a dead server
                    log.exception("scrape failed")
                    self.send_error(500, "the exporter failed to build the exposition")
                    return
                self.send_response(200)
                if "gzip" in (self.headers.get("Accept-Encoding") or ""):
                    body = gzip.compress(body, compresslevel=1)
                    self.send_header("Content-Encoding", "gzip")
                self.send_header("Content-Type", CONTENT_TYPE_LATEST)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                log.debug("%s " + format, self.address_string(), *args)

        return Handler

    def _sync(self) -> None:
        """Record when the caches are complete; then warm the views so the first scrape is
        cheap."""
        while not self._stopping.is_set():
            if self.feed.wait_synced(5.0):
                self.health.last_sync = self.feed.last_sync
                self.health.informers = self.feed.informers()
                self.inventory.entries()
                return

    def stop(self) -> None:
        self._stopping.set()
        self.feed.stop()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
