"""Tokenizer for jq programs, following gojq's lexer token for token.

The parser pulls one token at a time (``Lexer.next``); string literals are scanned in segments
(``Lexer.string_segment``) so that the parser can parse the query inside ``\\(…)`` with the same
lexer. Offsets are character offsets into the program text; like gojq, a parse error reports the
offset just past the offending token.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from workload_map.jq.errors import JqParseError

__all__ = ["KEYWORDS", "Lexer", "Token"]

KEYWORDS = frozenset(
    {
        "or",
        "and",
        "module",
        "import",
        "include",
        "def",
        "as",
        "label",
        "break",
        "null",
        "true",
        "false",
        "if",
        "then",
        "elif",
        "else",
        "end",
        "try",
        "catch",
        "reduce",
        "foreach",
    }
)

# Token kinds: "IDENT", "KEYWORD", "FIELD" (".name"), "VAR" ("$name"), "MODIDENT", "MODVAR",
# "NUMBER", "FORMAT" ("@name"), "QUOTE" (start of a string literal), "OP" (punctuation and
# operators; text holds the operator), "EOF".

_OPERATORS_3 = ("?//", "//=")
_OPERATORS_2 = ("|=", "+=", "-=", "*=", "/=", "%=", "==", "!=", ">=", "<=", "//", "..")
_SINGLE = set(".[]{}(),:;|+-*/%=<>?$@")

_ESCAPES = {'"': '"', "/": "/", "\\": "\\", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


def _ident_start(ch: str) -> bool:
    return ("a" <= ch <= "z") or ("A" <= ch <= "Z") or ch == "_"


def _ident_char(ch: str) -> bool:
    return _ident_start(ch) or ("0" <= ch <= "9")


def _digit(ch: str) -> bool:
    return "0" <= ch <= "9"


#: One token: its kind, its text (decoded name for FIELD/VAR) and its source span. Declared
#: with types, not string annotations, as everything that ``typing.NamedTuple`` is given as a
#: string becomes a ``ForwardRef``, built by the ``compile`` builtin (see docs/cli.md#start-up).
Token = NamedTuple(  # noqa: UP014
    "Token", [("kind", str), ("text", str), ("start", int), ("end", int)]
)


_new_tuple = tuple.__new__


# whitespace and comments; in a comment a backslash carries on past the next character,
# including a line break (gojq's Tcl-style continuation)
_SKIP_RE = r"(?:[ \t\n\r]+|#(?:\\\r\n|\\[\s\S]|\\$|[^\\\r\n])*)*"
_SPACE_START = frozenset(" \t\n\r#")
_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
_TOKEN_RE = (
    rf"(?P<ident>{_NAME}(?:::{_NAME})?)"
    rf"|(?P<field>\.{_NAME})"
    rf"|(?P<var>\${_NAME}(?:::{_NAME})?)"
    r"|(?P<format>@[A-Za-z0-9_]+)"
    r"|(?P<op>\?//|//=|\|=|\+=|-=|\*=|/=|%=|==|!=|>=|<=|//|\.\.|[.\[\]{}(),:;|+\-*/%=<>?])"
)


_PLAIN_SEGMENT_RE = r'[^"\\]*"'
# compiled by the first Lexer (~1 ms): importing the package parses nothing
_SKIP: re.Pattern[str]
_TOKEN: re.Pattern[str]
_PLAIN_SEGMENT: re.Pattern[str]


def _compile_patterns() -> None:
    global _SKIP, _TOKEN, _PLAIN_SEGMENT
    _SKIP, _TOKEN = re.compile(_SKIP_RE), re.compile(_TOKEN_RE)
    _PLAIN_SEGMENT = re.compile(_PLAIN_SEGMENT_RE)
    Lexer.compiled = True


class Lexer:
    """Pull tokenizer over one program text."""

    compiled = False

    def __init__(self, source: str) -> None:
        if not Lexer.compiled:
            _compile_patterns()
        self.src = source
        self.pos = 0
        self.n = len(source)

    def error(self, message: str, offset: int, token: str) -> JqParseError:
        return JqParseError(message, offset=offset, program=self.src, token=token)

    def _skip_space(self) -> None:
        self.pos = _SKIP.match(self.src, self.pos).end()  # type: ignore[union-attr]

    def _scan_ident(self, i: int) -> int:
        src, n = self.src, self.n
        while i < n and _ident_char(src[i]):
            i += 1
        return i

    def _scan_module(self, j: int) -> tuple[int, bool]:
        src, n = self.src, self.n
        if j + 2 < n and src[j] == ":" and src[j + 1] == ":" and _ident_start(src[j + 2]):
            return self._scan_ident(j + 2), True
        return j, False

    def _scan_number(self, i: int, state: str) -> tuple[int, bool]:
        """Return (end, ok); mirrors gojq's number state machine."""
        src, n = self.src, self.n
        while True:
            ch = src[i] if i < n else ""
            if state in ("lead", "float"):
                if ch and _digit(ch):
                    i += 1
                elif ch == ".":
                    i += 1
                    if state != "lead":
                        return i, False
                    state = "float"
                elif ch in ("e", "E"):
                    i += 1
                    if i < n and src[i] in "+-":
                        i += 1
                    state = "explead"
                else:
                    if ch and _ident_start(ch):
                        return i + 1, False
                    return i, True
            else:
                if not (ch and _digit(ch)):
                    if ch and _ident_start(ch):
                        return i + 1, False
                    return i, state != "explead"
                i += 1
                state = "exp"

    def next(self) -> Token:
        src, n = self.src, self.n
        i = self.pos
        if i < n and src[i] in _SPACE_START:
            i = _SKIP.match(src, i).end()  # type: ignore[union-attr]
            self.pos = i
        if i >= n:
            return _new_tuple(Token, ("EOF", "", n, n))
        ch = src[i]
        if not (
            "0" <= ch <= "9" or ch == '"' or (ch == "." and i + 1 < n and "0" <= src[i + 1] <= "9")
        ):
            m = _TOKEN.match(src, i)
            if m is not None:
                j = m.end()
                self.pos = j
                kind = m.lastgroup
                if kind == "ident":
                    text = m.group()
                    if "::" in text:
                        return _new_tuple(Token, ("MODIDENT", text, i, j))
                    return _new_tuple(
                        Token, ("KEYWORD" if text in KEYWORDS else "IDENT", text, i, j)
                    )
                if kind == "field":
                    return _new_tuple(Token, ("FIELD", src[i + 1 : j], i, j))
                if kind == "var":
                    text = src[i + 1 : j]
                    return _new_tuple(Token, ("MODVAR" if "::" in text else "VAR", text, i, j))
                if kind == "format":
                    return _new_tuple(Token, ("FORMAT", src[i:j], i, j))
                return _new_tuple(Token, ("OP", m.group(), i, j))
        if _ident_start(ch):
            j = self._scan_ident(i + 1)
            j, module = self._scan_module(j)
            self.pos = j
            text = src[i:j]
            if module:
                return _new_tuple(Token, ("MODIDENT", text, i, j))
            return _new_tuple(Token, ("KEYWORD" if text in KEYWORDS else "IDENT", text, i, j))
        if _digit(ch):
            j, ok = self._scan_number(i + 1, "lead")
            self.pos = j
            if not ok:
                raise self.error(f"invalid token {_quote(src[i:j])}", j, src[i:j])
            return _new_tuple(Token, ("NUMBER", src[i:j], i, j))
        if ch == ".":
            nxt = src[i + 1] if i + 1 < n else ""
            if nxt == ".":
                self.pos = i + 2
                return _new_tuple(Token, ("OP", "..", i, i + 2))
            if nxt and _ident_start(nxt):
                j = self._scan_ident(i + 2)
                self.pos = j
                return _new_tuple(Token, ("FIELD", src[i + 1 : j], i, j))
            if nxt and _digit(nxt):
                j, ok = self._scan_number(i + 2, "float")
                self.pos = j
                if not ok:
                    raise self.error(f"invalid token {_quote(src[i:j])}", j, src[i:j])
                return _new_tuple(Token, ("NUMBER", src[i:j], i, j))
            self.pos = i + 1
            return _new_tuple(Token, ("OP", ".", i, i + 1))
        if ch == "$":
            nxt = src[i + 1] if i + 1 < n else ""
            if nxt and _ident_start(nxt):
                j = self._scan_ident(i + 2)
                j, module = self._scan_module(j)
                self.pos = j
                return _new_tuple(Token, ("MODVAR" if module else "VAR", src[i + 1 : j], i, j))
        if ch == "@":
            nxt = src[i + 1] if i + 1 < n else ""
            if nxt and _ident_char(nxt):
                j = self._scan_ident(i + 1)
                self.pos = j
                return _new_tuple(Token, ("FORMAT", src[i:j], i, j))
        if ch == '"':
            self.pos = i + 1
            return _new_tuple(Token, ("QUOTE", '"', i, i + 1))
        for op in _OPERATORS_3:
            if src.startswith(op, i):
                self.pos = i + 3
                return _new_tuple(Token, ("OP", op, i, i + 3))
        for op in _OPERATORS_2:
            if src.startswith(op, i):
                self.pos = i + 2
                return _new_tuple(Token, ("OP", op, i, i + 2))
        self.pos = i + 1
        return _new_tuple(Token, ("OP", ch, i, i + 1))

    def string_segment(self) -> tuple[str, str, int, int]:
        """Scan literal text from ``pos`` to the next ``\\(`` or closing quote.

        Returns (decoded text, terminator ``"`` or ``\\(``, start, end-after-terminator).
        """
        src, n = self.src, self.n
        start = i = self.pos
        m = _PLAIN_SEGMENT.match(src, i)
        if m is not None:  # no escapes up to the closing quote
            j = m.end()
            self.pos = j
            return src[i : j - 1], '"', start, j
        out: list[str] = []
        while i < n:
            ch = src[i]
            if ch == '"':
                self.pos = i + 1
                return "".join(out), '"', start, i + 1
            if ch == "\\":
                if i + 1 >= n:
                    break
                esc = src[i + 1]
                if esc == "(":
                    self.pos = i + 2
                    return "".join(out), "\\(", start, i + 2
                if esc == "u":
                    code, i = self._unicode_escape(i)
                    out.append(code)
                    continue
                if esc in _ESCAPES:
                    out.append(_ESCAPES[esc])
                    i += 2
                    continue
                tok = src[i : i + 2]
                raise JqParseError(
                    f'invalid escape sequence "{tok}" in string literal',
                    offset=i + 2,
                    program=src,
                    token=tok,
                )
            out.append(ch)
            i += 1
        self.pos = n
        raise JqParseError("unterminated string literal", offset=n, program=src, token="")

    def _unicode_escape(self, i: int) -> tuple[str, int]:
        src, n = self.src, self.n
        hexdigits = "0123456789abcdefABCDEF"
        for j in range(1, 5):
            k = i + 1 + j
            if k >= n or src[k] not in hexdigits:
                tok = src[i : min(k, n)]
                raise JqParseError(
                    f'invalid escape sequence "{tok}" in string literal',
                    offset=min(k, n),
                    program=src,
                    token=tok,
                )
        code = int(src[i + 2 : i + 6], 16)
        i += 6
        if 0xD800 <= code < 0xDC00:
            if (
                src.startswith("\\u", i)
                and i + 6 <= n
                and all(c in hexdigits for c in src[i + 2 : i + 6])
            ):
                low = int(src[i + 2 : i + 6], 16)
                if 0xDC00 <= low < 0xE000:
                    return chr(0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)), i + 6
            return "\ufffd", i
        if 0xDC00 <= code < 0xE000:
            return "\ufffd", i
        return chr(code), i


def _quote(text: str) -> str:
    out = ['"']
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch < " ":
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def quote_token(text: str) -> str:
    """JSON-quote a token for an error message (``unexpected token "…"``)."""
    return _quote(text)
