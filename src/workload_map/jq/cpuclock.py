"""The jq deadline's clock: the evaluating thread's CPU time, less its full garbage collections.

A deadline measures the work a program does. Wall time would charge an evaluation for a loaded
machine or for another thread holding the GIL, so the clock is the thread's CPU time. One more
cost lands on whichever thread happens to trigger it: a full (oldest-generation) collection
walks every tracked object of the process. In a long-running operator, or late in a test run,
that is hundreds of milliseconds owed to everything else the process holds, enough to trip a
definition's 50 ms deadline on a cheap expression. Full collections are timed by a
``gc.callbacks`` hook and taken off the clock. Young collections stay charged: they are cheap
and proportional to what the evaluation itself allocates, and each costs the hook one early
return. No library offers a per-thread CPU clock net of collections, hence this module.
"""

from __future__ import annotations

import _thread
import gc
import time

__all__ = ["clock", "thread_time"]

_OLDEST = 2
#: the thread CPU clock this module reads (a seam: a test injects a clock it advances itself)
thread_time = time.thread_time


class _PerThread(_thread._local):  # threading.local, without importing threading
    started: float | None = None  # a full collection under way on this thread
    spent = 0.0  # CPU seconds this thread's full collections took


_state = _PerThread()


def _on_collection(phase: str, info: dict[str, int]) -> None:
    if info.get("generation") != _OLDEST:
        return
    if phase == "start":
        _state.started = thread_time()
        return
    started = _state.started
    if started is not None:
        _state.started = None
        _state.spent += thread_time() - started


def clock() -> float:
    """CPU seconds of the calling thread, less those its full collections took."""
    return thread_time() - _state.spent


gc.callbacks.append(_on_collection)
