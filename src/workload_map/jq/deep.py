"""Evaluation within a safe depth on every thread, and on a deep stack when it needs one.

The engine never changes Python's recursion limit (it is process-wide: that is the
application's setting). Two things keep an evaluation from running past its thread's C stack
whatever limit the application set:

* ``run_bounded``: on CPython 3.11 every generator resumed and every C-level recursion (list
  equality, the C JSON encoder) takes C stack, counted by the recursion limit. Under a limit far
  above the default (an application's ``sys.setrecursionlimit(100_000)``; Hypothesis raises it
  during ``@given`` tests) a deep jq recursion on an ordinary 8 MB stack segfaulted before it
  reached the limit (issue 26: ``path(f)`` 20 000 deep dies at about 21 000 counts). Past
  ``SAFE_RECURSION_LIMIT`` an evaluation's first attempt runs with its thread's counter moved
  up by the excess, so Python raises ``RecursionError`` at ``SAFE_RECURSION_LIMIT``, the
  counter is moved back, and the evaluation is retried on a deep stack. CPython 3.12 and later
  bound C recursion on their own (a separate C recursion limit): nothing to do there.
* ``run_deep``: the retry, in a fresh thread with a large C stack (``threading.stack_size``)
  whose own recursion limit is set to ``DEEP_RECURSION_LIMIT``, for that thread only. CPython
  keeps a per-thread copy of the limit in the thread state and refreshes it from the
  process-wide value only when that one is changed; the deep thread sets its copy (raising
  ``sys.setrecursionlimit`` instead let every other thread recurse past its own stack).

Where the thread state's layout is not one known here (another interpreter or version), or does
not read back as expected, there is no deep stack: the evaluation stays a clean
``RecursionError`` (``JqLimitError`` for the caller), never a crash.
"""

from __future__ import annotations

import _thread
import sys
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = [
    "BOUND_ABOVE",
    "DEEP_RECURSION_LIMIT",
    "SAFE_RECURSION_LIMIT",
    "raise_thread_recursion_limit",
    "run_bounded",
    "run_deep",
]

_T = TypeVar("_T")

# frames allowed on the deep stack; the stack leaves room for C-level recursion on each
DEEP_RECURSION_LIMIT = 60_000
#: the most recursion an evaluation's first attempt may use on an ordinary thread: 4 000
#: counts of the heaviest measured kind (a generator resumed: ~400 bytes of C stack each) are
#: 1.6 MB, a fifth of a default 8 MB thread stack. Python's default limit (1 000) is below it,
#: and so are the limits Hypothesis sets, so most programs never pay for the bound.
SAFE_RECURSION_LIMIT = 4_000
_DEEP_STACK_BYTES = 1024 * 1024 * 1024  # virtual: pages are only used as the stack grows
# threading.stack_size is process-wide too: set, start and reset it under one lock
_LOCK = _thread.allocate_lock()


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


def _counters() -> tuple[Any, Any] | None:
    """The calling thread's (recursion remaining, recursion limit) as writable ``c_int``s, when
    the layout is known and reads back the limit in force and a plausible depth; else None."""
    fields = _limit_fields()
    if fields is None:
        return None
    import ctypes  # see _limit_fields

    get_state = ctypes.pythonapi.PyThreadState_Get
    get_state.restype = ctypes.c_void_p
    state = get_state()
    if not state:
        return None
    remaining = ctypes.c_int.from_address(state + fields[0])
    current = ctypes.c_int.from_address(state + fields[1])
    if current.value != sys.getrecursionlimit() or not 0 < current.value - remaining.value:
        return None
    return remaining, current


def raise_thread_recursion_limit(limit: int) -> bool:
    """Make ``limit`` the calling thread's recursion limit, leaving every other thread's (and
    the process-wide value) as they are: raised in the thread state, or, under a process-wide
    limit above it, reached that much earlier (the thread's depth counter moved up by the
    difference, for the rest of the thread's life). False, with nothing changed, where that
    cannot be done safely here. Only for a thread whose C stack can hold ``limit`` frames."""
    counters = _counters()
    if counters is None:
        return False
    remaining, current = counters
    depth = current.value - remaining.value
    if depth >= limit:
        return False
    if current.value < limit:
        current.value = limit
        remaining.value = limit - depth
    else:
        remaining.value -= current.value - limit
    return True


#: an evaluation runs under ``run_bounded`` when ``sys.getrecursionlimit()`` is above this (read
#: at each evaluation: the application may change it). Only CPython 3.11 lets a raised
#: recursion limit run a thread past its C stack; elsewhere the bound never applies.
BOUND_ABOVE = (
    SAFE_RECURSION_LIMIT
    if sys.implementation.name == "cpython" and sys.version_info[:2] == (3, 11)
    else sys.maxsize
)


def run_bounded(fn: Callable[..., _T], *args: Any) -> _T:
    """``fn(*args)`` with the calling thread recursing at most ``SAFE_RECURSION_LIMIT`` deep: a
    ``RecursionError`` past it (the caller retries on the deep stack), with the thread's counter
    restored before the error reaches the caller. Nothing is moved on a thread whose own limit
    is not the process-wide one (a deep-stack thread: its limit is already its own)."""
    counters = _counters()
    if counters is None:
        return fn(*args)
    remaining, current = counters
    excess = current.value - SAFE_RECURSION_LIMIT
    if excess <= 0:
        return fn(*args)
    remaining.value -= excess
    try:
        return fn(*args)
    finally:
        # Py_SetRecursionLimit keeps each thread's depth (limit - remaining) as it changes the
        # limit, so adding the excess back is right even if the limit changed meanwhile
        remaining.value += excess


def _without_tracebacks(error: BaseException) -> BaseException:
    """``error`` with its traceback, and those of the errors it was raised from, dropped here:
    a traceback holds every frame of the deep stack, and freeing them on the caller's thread
    (finalising the generators they hold) would recurse on its small stack."""
    seen: set[int] = set()
    todo: list[BaseException | None] = [error]
    while todo:
        e = todo.pop()
        if e is None or id(e) in seen:
            continue
        seen.add(id(e))
        e.__traceback__ = None
        todo += [e.__cause__, e.__context__]
    return error


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
            box["error"] = _without_tracebacks(e)

    import threading  # the first deep retry of the process (a command's start needs none)

    thread = threading.Thread(target=target, name="jq-deep-stack", daemon=True)
    with _LOCK:
        try:
            old_size = _thread.stack_size(_DEEP_STACK_BYTES)
        except (ValueError, RuntimeError):  # no big thread stacks here: stay too deep
            raise RecursionError("no deep stack available") from None
        try:
            thread.start()
        finally:
            _thread.stack_size(old_size)
    thread.join()
    if "error" in box:
        error: BaseException = box.pop("error")
        raise error
    result: _T = box["value"]
    return result
