"""Evaluation on a deep stack, only for the rare evaluation that needs one.

The engine runs under Python's recursion limit as the application set it and never changes
that limit. A few value operations recurse once per nesting level of their input (equality,
ordering, containment on a 10 000-deep document), and non-tail recursive jq functions recurse
once per call up to ``Limits.max_depth``. When such an evaluation hits the recursion limit,
``Program`` runs it once more here: in a fresh thread with a large C stack
(``threading.stack_size``) whose own recursion limit is raised, for that thread only.

Why per thread: ``sys.setrecursionlimit`` is process-wide. Raising it while the deep thread
ran let every other thread recurse past its own (8 MB) C stack in the meantime, and a deep
``path(f)`` on a test's main thread died of a segfault instead of a RecursionError (issue 26).
CPython keeps a per-thread copy of the limit in the thread state and refreshes it from the
process-wide value only when that one is changed; the deep thread sets its copy. Where the
thread state's layout is not one known here (another interpreter or version), or does not
read back as expected, there is no deep stack: the evaluation stays a clean ``RecursionError``
(``JqLimitError`` for the caller), never a crash.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["DEEP_RECURSION_LIMIT", "raise_thread_recursion_limit", "run_deep"]

_T = TypeVar("_T")

# frames allowed on the deep stack; the stack leaves room for C-level recursion on each
DEEP_RECURSION_LIMIT = 60_000
_DEEP_STACK_BYTES = 1024 * 1024 * 1024  # virtual: pages are only used as the stack grows
# threading.stack_size is process-wide too: set, start and reset it under one lock
_LOCK = threading.Lock()


def _limit_fields() -> tuple[int, int] | None:
    """Byte offsets of (recursion remaining, recursion limit) in ``PyThreadState``, or None."""
    if sys.implementation.name != "cpython":
        return None
    try:
        import ctypes  # 6 ms of import, only on the rare deep path
    except ImportError:
        return None
    pointer, cint = ctypes.sizeof(ctypes.c_void_p), ctypes.sizeof(ctypes.c_int)
    # struct _ts begins with prev, next, interp; then 3.11: two ints (_initialized, _static),
    # 3.12: one 32-bit bit field (_status); then the Python recursion counters
    start = {(3, 11): 3 * pointer + 2 * cint, (3, 12): 3 * pointer + 4}.get(sys.version_info[:2])
    if start is None:
        return None
    return start, start + cint


def raise_thread_recursion_limit(limit: int) -> bool:
    """Raise the calling thread's recursion limit to ``limit``, leaving every other thread's
    (and the process-wide value) as they are. False, with nothing changed, where that cannot
    be done safely here. Only for a thread whose C stack can hold ``limit`` frames."""
    fields = _limit_fields()
    if fields is None:
        return False
    import ctypes  # see _limit_fields

    get_state = ctypes.pythonapi.PyThreadState_Get
    get_state.restype = ctypes.c_void_p
    state = get_state()
    if not state:
        return False
    remaining = ctypes.c_int.from_address(state + fields[0])
    current = ctypes.c_int.from_address(state + fields[1])
    depth = current.value - remaining.value
    # the layout is trusted only when it reads back the limit in force and a plausible depth
    if current.value != sys.getrecursionlimit() or not 0 < depth < current.value < limit:
        return False
    current.value = limit
    remaining.value = limit - depth
    return True


def run_deep(fn: Callable[[], _T]) -> _T:
    """``fn()`` on a deep stack; its result, or the exception it raised. A RecursionError
    where no deep stack is available."""
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            if not raise_thread_recursion_limit(DEEP_RECURSION_LIMIT):
                raise RecursionError("no deep stack available")
            box["value"] = fn()
        except BaseException as e:  # handed back to the caller's thread
            box["error"] = e

    thread = threading.Thread(target=target, name="jq-deep-stack", daemon=True)
    with _LOCK:
        try:
            old_size = threading.stack_size(_DEEP_STACK_BYTES)
        except (ValueError, RuntimeError):  # no big thread stacks here: stay too deep
            raise RecursionError("no deep stack available") from None
        try:
            thread.start()
        finally:
            threading.stack_size(old_size)
    thread.join()
    if "error" in box:
        error: BaseException = box.pop("error")
        raise error
    result: _T = box["value"]
    return result
