"""The jq engine's errors: one root, one class per phase, messages in gojq's words.

Parse and compile errors carry the offset of the fault in the program text, so that callers (the
Karta validator, ``wlmap jq``) can point at it. Runtime errors carry the value the program raised:
``try … catch .`` hands exactly that value to the handler (a string for the engine's own errors,
any JSON value for ``error(v)``).
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "JqBreak",
    "JqCompileError",
    "JqDeadlineError",
    "JqError",
    "JqHaltError",
    "JqLimitError",
    "JqParseError",
    "JqRuntimeError",
]


class JqError(Exception):
    """Root of every error the jq engine raises."""

    def __init__(self, message: str, *, offset: int | None = None, program: str | None = None):
        super().__init__(message)
        self.message = message
        self.offset = offset
        self.program = program

    def __str__(self) -> str:
        return self.message


class JqParseError(JqError):
    """The program text is not valid jq (gojq: ``unexpected token "…"``)."""

    def __init__(
        self,
        message: str,
        *,
        offset: int | None = None,
        program: str | None = None,
        token: str | None = None,
    ):
        super().__init__(message, offset=offset, program=program)
        self.token = token


class JqCompileError(JqError):
    """The program parses but cannot be compiled (``function not defined: f/1``, …)."""


class JqRuntimeError(JqError):
    """An error raised while evaluating; ``value`` is what ``catch`` receives."""

    def __init__(
        self,
        message: str,
        *,
        value: Any = None,
        offset: int | None = None,
        program: str | None = None,
    ):
        super().__init__(message, offset=offset, program=program)
        self.value = message if value is None and not isinstance(self, JqHaltError) else value


class JqHaltError(JqRuntimeError):
    """``halt`` / ``halt_error``: stops the program; ``try`` does not catch it."""

    def __init__(self, message: str, *, value: Any = None, exit_code: int = 5):
        super().__init__(message, value=value)
        self.exit_code = exit_code


class JqLimitError(JqRuntimeError):
    """A configured limit was reached (result cap, deadline, depth); ``try`` does not catch it."""


class JqDeadlineError(JqLimitError):
    """The evaluation ran past its deadline (``Limits.timeout`` seconds)."""

    def __init__(self, timeout: float):
        super().__init__(f"evaluation exceeded the deadline of {timeout:g} s")
        self.timeout = timeout


class JqBreak(Exception):
    """``break $label`` unwinding to its ``label``; never escapes a compiled program."""

    def __init__(self, label_id: int):
        super().__init__(label_id)
        self.label_id = label_id
