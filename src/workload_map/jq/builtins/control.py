"""Errors and control: error, halt, halt_error, input_filename and `_stream_event`.

`error/0,1` only build the error (`JqRuntimeError` with `.value`); `catch` is the compiler's."""

from __future__ import annotations

import contextvars
from typing import Any

from workload_map.jq import encode
from workload_map.jq.builtins.marks import builtin
from workload_map.jq.errors import JqHaltError, JqRuntimeError
from workload_map.jq.values import (
    is_number,
    to_int,
    type_error,
    type_error_preview,
)

__all__ = ["INPUT_FILENAME"]


@builtin("_stream_event", 0)
def _stream_event(v: Any) -> Any:
    """A `fromstream` event as it is (an array, or null that adds nothing), else gojq's error."""
    if v is None or type(v) is list:
        return v
    raise JqRuntimeError(f"expected an array but got: {type_error_preview(v)}")


@builtin("error", 0)
def f_error0(v: Any) -> Any:
    raise _error_value(v)


@builtin("error", 1)
def f_error1(_v: Any, x: Any) -> Any:
    raise _error_value(x)


class JqValueError(JqRuntimeError):
    """``error(v)``: the message (``error: <v as JSON>``) is only written when it is read, so
    that a caught error of a large value costs nothing to raise. (Private: callers see a
    JqRuntimeError. It lives here, beside ``error``, because its message needs the encoder,
    which ``errors`` must not import.)"""

    def __init__(self, value: Any):
        Exception.__init__(self, "error")
        self._message: str | None = None
        self.offset = None
        self.program = None
        self.value = value

    @property
    def message(self) -> str:
        if self._message is None:
            v = self.value
            self._message = "error: " + (v if type(v) is str else encode.dumps(v, None))
        return self._message

    @message.setter
    def message(self, text: str) -> None:
        self._message = text


def _error_value(x: Any) -> JqRuntimeError:
    return JqValueError(x)


@builtin("halt", 0, effect="halt")
def f_halt(_v: Any) -> Any:
    err = JqHaltError("halt", value=None, exit_code=0)
    err.value = None
    raise err


@builtin("halt_error", 0, effect="halt")
def f_halt_error0(v: Any) -> Any:
    raise _halt_error(v, 5)


@builtin("halt_error", 1, effect="halt")
def f_halt_error1(v: Any, code: Any) -> Any:
    c = to_int(code) if is_number(code) else None
    if c is None:
        raise type_error("halt_error", code)
    raise _halt_error(v, c)


def _halt_error(v: Any, code: int) -> JqHaltError:
    msg = v if type(v) is str else encode.dumps(v, None)
    err = JqHaltError(f"halt error: {msg}", value=v, exit_code=code)
    err.value = v
    return err


INPUT_FILENAME: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "jq_input_filename", default=None
)
"""What `input_filename` yields: the file the current input came from (`wlmap jq` sets it)."""


@builtin("input_filename", 0, effect="input")
def f_input_filename(_v: Any) -> Any:
    return INPUT_FILENAME.get()
