"""Evaluation on a deep stack, only for the rare evaluation that needs one.

The engine runs under Python's default recursion limit and never changes it at import. A few
value operations recurse once per nesting level of their input (equality, ordering, containment
on a 10 000-deep document), and non-tail recursive jq functions recurse once per call up to
``Limits.max_depth``. When such an evaluation hits the recursion limit, ``Program`` runs it once
more here: in a fresh thread with a large C stack (``threading.stack_size``), with the recursion
limit raised only for the duration of that call. The limit is process-wide, so the calls are
serialised and the previous limit is always restored.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["DEEP_RECURSION_LIMIT", "run_deep"]

_T = TypeVar("_T")

# frames allowed on the deep stack; the stack leaves room for C-level recursion on each
DEEP_RECURSION_LIMIT = 60_000
_DEEP_STACK_BYTES = 1024 * 1024 * 1024  # virtual: pages are only used as the stack grows
_LOCK = threading.Lock()


def run_deep(fn: Callable[[], _T]) -> _T:
    """``fn()`` on a deep stack; its result, or the exception it raised."""
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = fn()
        except BaseException as e:  # handed back to the caller's thread
            box["error"] = e

    with _LOCK:
        old_limit = sys.getrecursionlimit()
        thread = threading.Thread(target=target, name="jq-deep-stack", daemon=True)
        try:
            old_size = threading.stack_size(_DEEP_STACK_BYTES)
        except (ValueError, RuntimeError):  # no big thread stacks here: stay too deep
            raise RecursionError("no deep stack available") from None
        try:
            sys.setrecursionlimit(max(old_limit, DEEP_RECURSION_LIMIT))
            thread.start()
        finally:
            threading.stack_size(old_size)
        try:
            thread.join()
        finally:
            sys.setrecursionlimit(old_limit)
    if "error" in box:
        error: BaseException = box.pop("error")
        raise error
    result: _T = box["value"]
    return result
