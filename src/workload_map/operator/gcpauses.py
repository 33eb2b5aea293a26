"""The operator's garbage-collector pauses: measured, and kept short once the caches are full.

CPython's cyclic collector holds the GIL for the whole of a collection, so every thread (the
webhook server's loop included) waits while it walks the tracked objects; a full collection
walks every long-lived one, and the shared caches hold hundreds of thousands (each cached
Karta, CRD or pod is a tree of dicts and lists: 2000 Kartas are 90 000 objects, a full
collection of them took 109 ms on the loaded project machine). Once the caches have synced,
``settle_when`` runs one collection and moves what survives into the permanent generation
(``gc.freeze``; measured: the next full collection 0.003 ms), so later collections only walk what
arrived after it; the process reports ready only after that pause. Pauses are exported per
generation.
No library does this: it is two interpreter calls plus a ``gc.callbacks`` timer.
"""

from __future__ import annotations

import gc
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from typing import Any

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from workload_map.operator.metrics import quantile_summary

__all__ = ["READINESS", "GcPauses", "settle_when"]

METRIC = "workloadmap_operator_gc_pause_seconds"
READINESS = "gc-settled"  # the readiness check that waits for the freeze


class GcPauses(Collector):
    """Times each collection (``gc.callbacks``); the last 10 000 per generation.

    ``clock`` (seconds, default :func:`time.perf_counter`) is read at each collection's start
    and stop; a test passes one that moves a fixed step per look, so each pause and the settle
    collection measure as a count of collections, on any machine under any load (issue 26).
    """

    def __init__(self, *, clock: Callable[[], float] = time.perf_counter) -> None:
        self._clock = clock
        self.samples: dict[int, deque[float]] = {g: deque(maxlen=10_000) for g in range(3)}
        self.freezes = 0
        #: the one full collection before the freeze (seconds), kept apart from the samples:
        #: it runs before the replica reports ready, so it never holds up a request
        self.settle_seconds = 0.0
        self.settling = False
        self._began = 0.0
        gc.callbacks.append(self._on_gc)

    def close(self) -> None:
        if self._on_gc in gc.callbacks:
            gc.callbacks.remove(self._on_gc)

    def _on_gc(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._began = self._clock()
        elif self._began:
            took = self._clock() - self._began
            if self.settling:
                self.settle_seconds += took
            else:
                self.samples[int(info.get("generation", 0))].append(took)

    def collect(self) -> Iterator[Metric]:
        """The pauses per generation, the freezes and the settle collection (a collector of
        the process's registry: ``registry.register(pauses)``)."""
        yield quantile_summary(
            METRIC,
            "Cyclic garbage-collector pauses (every thread waits), per generation.",
            ["generation"],
            [((str(g),), list(s), sum(s), len(s)) for g, s in sorted(list(self.samples.items()))],
            quantiles=(0.5, 0.99, 1.0),
        )
        yield CounterMetricFamily(
            "workloadmap_operator_gc_freezes_total",
            "Objects frozen after cache sync.",
            value=self.freezes,
        )
        yield GaugeMetricFamily(
            "workloadmap_operator_gc_settle_seconds",
            "The full collection before the freeze (before ready).",
            value=self.settle_seconds,
        )


def settle_when(
    ready: Callable[[], bool], stopping: threading.Event, pauses: GcPauses | None = None
) -> threading.Thread:
    """In the background: once ``ready()`` (the caches synced), collect and freeze, once.
    Objects that arrive later are collected as usual; frozen ones that later become garbage
    are still freed by reference counting (only a cycle among them would stay)."""

    def run() -> None:
        while not stopping.is_set():
            try:
                now = bool(ready())
            except Exception:  # a readiness check that fails now may pass later: keep polling
                now = False
            if now:
                if pauses is not None:
                    pauses.settling = True
                try:
                    gc.collect()
                finally:
                    if pauses is not None:
                        pauses.settling = False
                gc.freeze()
                if pauses is not None:
                    pauses.freezes += 1
                return
            stopping.wait(0.5)

    thread = threading.Thread(target=run, name="gc-settle", daemon=True)
    thread.start()
    return thread
