"""A deduplicating work queue with per-key retry backoff, drained by worker threads.

The ``kubernetes`` Python client has informers but no work queue (client-go's ``workqueue``
has no counterpart there), so this small one is written here: a key queued several times
before a worker takes it is reconciled once, a key is never reconciled by two workers at once,
and a failed key comes back after an exponential delay. It sits beside the watch caches
(:mod:`workload_map.kube.cache`) as shared controller machinery: the operator's Karta
controller and the gang controller both drain one.
"""

from __future__ import annotations

import heapq
import logging
import threading
import time
from collections.abc import Callable

__all__ = ["WorkQueue"]

log = logging.getLogger("workload_map.kube.workqueue")


class WorkQueue:
    """Keys to reconcile; ``reconcile(key)`` returns seconds until a requeue, or None."""

    def __init__(
        self,
        name: str,
        reconcile: Callable[[str], float | None],
        *,
        workers: int = 2,
        base_delay: float = 0.1,
        max_delay: float = 60.0,
    ) -> None:
        self.name = name
        self._reconcile = reconcile
        self._workers = workers
        self._base = base_delay
        self._max = max_delay
        self._cond = threading.Condition()
        self._ready: list[str] = []
        self._queued: set[str] = set()
        self._active: set[str] = set()
        self._dirty: set[str] = set()  # queued again while active
        self._delayed: list[tuple[float, str]] = []
        self._failures: dict[str, int] = {}
        self._stop = False
        self._threads: list[threading.Thread] = []
        self.processed = 0

    def start(self) -> None:
        for i in range(self._workers):
            t = threading.Thread(target=self._work, name=f"{self.name}-{i}", daemon=True)
            t.start()
            self._threads.append(t)

    def stop(self, timeout: float = 5.0) -> None:
        with self._cond:
            self._stop = True
            self._cond.notify_all()
        for t in self._threads:
            t.join(timeout)

    def add(self, key: str) -> None:
        with self._cond:
            if key in self._active:
                self._dirty.add(key)
            elif key not in self._queued:
                self._queued.add(key)
                self._ready.append(key)
                self._cond.notify()

    def add_after(self, key: str, delay: float) -> None:
        with self._cond:
            heapq.heappush(self._delayed, (time.monotonic() + delay, key))
            self._cond.notify()

    def idle(self) -> bool:
        """Nothing queued, delayed-and-due or being worked on."""
        return self.pending() == 0

    def pending(self) -> int:
        """Keys queued, delayed and due, or being worked on (queued again while worked on
        included): 0 when :meth:`idle`. Delayed keys not yet due are not pending."""
        with self._cond:
            now = time.monotonic()
            due = {key for t, key in self._delayed if t <= now}
            return len(set(self._ready) | self._active | self._dirty | due)

    def _next(self) -> str | None:
        with self._cond:
            while not self._stop:
                now = time.monotonic()
                while self._delayed and self._delayed[0][0] <= now:
                    _, key = heapq.heappop(self._delayed)
                    if key in self._active:
                        self._dirty.add(key)
                    elif key not in self._queued:
                        self._queued.add(key)
                        self._ready.append(key)
                if self._ready:
                    key = self._ready.pop(0)
                    self._queued.discard(key)
                    self._active.add(key)
                    return key
                wait = self._delayed[0][0] - now if self._delayed else None
                self._cond.wait(wait)
            return None

    def _done(self, key: str, requeue: float | None, failed: bool) -> None:
        with self._cond:
            self._active.discard(key)
            if failed:
                n = self._failures.get(key, 0) + 1
                self._failures[key] = n
                requeue = min(self._max, self._base * 2 ** (n - 1))
            else:
                self._failures.pop(key, None)
            if key in self._dirty:
                self._dirty.discard(key)
                if key not in self._queued:
                    self._queued.add(key)
                    self._ready.append(key)
            elif requeue is not None:
                heapq.heappush(self._delayed, (time.monotonic() + requeue, key))
            self._cond.notify_all()

    def _work(self) -> None:
        while True:
            key = self._next()
            if key is None:
                return
            requeue: float | None = None
            failed = False
            try:
                requeue = self._reconcile(key)
            except Exception as exc:
                failed = True
                log.warning("%s: reconciling %s failed (will retry): %s", self.name, key, exc)
            self.processed += 1
            self._done(key, requeue, failed)
