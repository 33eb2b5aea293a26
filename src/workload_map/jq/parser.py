"""Recursive-descent parser for gojq's grammar, producing the tree of ``ast.py``.

Precedence, loosest first, as in gojq's ``parser.go.y``: ``|`` (right; ``def``, ``as`` and
``label`` swallow the rest of the pipe), ``,`` (left), ``//`` (right), ``= |= += -= *= /= %= //=``
(non-associative), ``or``, ``and``, comparisons (non-associative), ``+ -``, ``* / %``, then terms
with postfix suffixes (``.name``, ``[…]``, ``?``). ``try`` and ``catch`` bodies are postfix terms;
``reduce``/``foreach`` sources are full expressions without pipe and comma. Object values are
expressions joined by ``|``.

Only real nesting is bounded (``MAX_DEPTH``), so that deep programs fail with a clean
``JqParseError`` within Python's default recursion limit (the parser never raises it); chains of
any length (``a | b | …``, ``a, b, …``, ``1 + 1 + …``, ``.a.b.c…``) are built in loops.
"""

from __future__ import annotations

from workload_map.jq import ast
from workload_map.jq.errors import JqCompileError, JqParseError
from workload_map.jq.lexer import Lexer, Token, quote_token

__all__ = ["MAX_DEPTH", "parse"]

# Real nesting levels (parentheses, brackets, objects, bodies, arguments, interpolations):
# each costs a few Python frames to parse, compile and run, and this bound keeps all three well
# inside Python's default recursion limit. Chains (pipes, commas, operators, suffixes) are loops
# and do not count.
MAX_DEPTH = 100


_UPDATE_OPS = frozenset({"=", "|=", "+=", "-=", "*=", "/=", "%=", "//="})
_COMPARE_OPS = frozenset({"==", "!=", "<", "<=", ">", ">="})
# binary precedence: (level, associativity)
_BINARY: dict[str, tuple[int, str]] = {"//": (1, "right")}
_BINARY.update({op: (2, "none") for op in _UPDATE_OPS})
_BINARY.update({"or": (3, "left"), "and": (4, "left")})
_BINARY.update({op: (5, "none") for op in _COMPARE_OPS})
_BINARY.update({"+": (6, "left"), "-": (6, "left"), "*": (7, "left"), "/": (7, "left")})
_BINARY["%"] = (7, "left")


_SUFFIX_START = frozenset({"[", "?", "."})


def _parse_number(text: str) -> int | float:
    if any(c in text for c in ".eE"):
        try:
            return float(text)
        except ValueError:  # pragma: no cover - the lexer only accepts valid numbers
            return float("inf")
    return int(text)


class _Parser:
    def __init__(self, source: str) -> None:
        self.src = source
        self.lex = Lexer(source)
        self.tok: Token = self.lex.next()
        self.depth = -1  # the top-level query is not nested

    # --- helpers ------------------------------------------------------------------------------
    def advance(self) -> Token:
        tok = self.tok
        self.tok = self.lex.next()
        return tok

    def unexpected(self, tok: Token | None = None) -> JqParseError:
        tok = tok or self.tok
        if tok.kind == "EOF":
            return JqParseError("unexpected EOF", offset=tok.end, program=self.src, token="")
        text = self.src[tok.start : tok.end]
        return JqParseError(
            f"unexpected token {quote_token(text)}", offset=tok.end, program=self.src, token=text
        )

    def is_op(self, text: str) -> bool:
        return self.tok.kind == "OP" and self.tok.text == text

    def is_kw(self, text: str) -> bool:
        return self.tok.kind == "KEYWORD" and self.tok.text == text

    def expect_op(self, text: str) -> Token:
        if not self.is_op(text):
            raise self.unexpected()
        return self.advance()

    def expect_kw(self, text: str) -> Token:
        if not self.is_kw(text):
            raise self.unexpected()
        return self.advance()

    def enter(self) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise JqParseError(
                f"query too deep (more than {MAX_DEPTH} nested levels)",
                offset=self.tok.start,
                program=self.src,
                token=self.src[self.tok.start : self.tok.end],
            )

    # --- grammar ------------------------------------------------------------------------------
    def program(self) -> ast.Node:
        if self.tok.kind == "EOF":
            raise JqCompileError('missing query (try ".")', offset=0, program=self.src)
        if self.is_kw("module"):
            # `module {…};` metadata is accepted and ignored, as gojq does without modules
            self.advance()
            if not self.is_op("{"):
                raise self.unexpected()
            self.object()
            self.expect_op(";")
        if self.is_kw("import") or self.is_kw("include"):
            # gojq without a module loader: `cannot load module: "path"`
            start = self.advance().start
            path = self.string(None)
            if not isinstance(path, ast.Literal):
                raise self.unexpected()
            raise JqCompileError(
                f"cannot load module: {quote_token(path.value)}", offset=start, program=self.src
            )
        defs: list[ast.FuncDef] = []
        while self.is_kw("def"):
            defs.append(self.funcdef())
        if self.tok.kind == "EOF":
            if defs:
                raise JqCompileError(
                    'missing query (try ".")', offset=len(self.src), program=self.src
                )
            raise self.unexpected()
        body = self.pipe()
        if self.tok.kind != "EOF":
            raise self.unexpected()
        if defs:
            body = ast.WithDefs(tuple(defs), body, offset=defs[0].offset)
        return body

    def pipe(self) -> ast.Node:
        """A full query: one level of real nesting (parentheses, brackets, bodies, arguments).

        ``a | b | c`` is collected in a loop and folded to the right, so a long pipe costs no
        recursion; ``def``, ``label`` and ``as`` bind the rest of the pipe (a nested level each).
        """
        self.enter()
        try:
            tok = self.tok
            if tok.kind == "KEYWORD" and (tok.text == "def" or tok.text == "label"):
                return self._binder()
            left = self.comma()
            tok = self.tok
            if tok.kind != "OP" or tok.text != "|":
                return left
            items = [left]
            offsets: list[int] = []
            while tok.kind == "OP" and tok.text == "|":
                offsets.append(tok.start)
                self.advance()
                tok = self.tok
                if tok.kind == "KEYWORD" and (tok.text == "def" or tok.text == "label"):
                    items.append(self.pipe())
                    break
                items.append(self.comma())
                tok = self.tok
            node = items[-1]
            for i in range(len(items) - 2, -1, -1):
                node = ast.Pipe(items[i], node, offset=offsets[i])
            return node
        finally:
            self.depth -= 1

    def _binder(self) -> ast.Node:
        """``def …; rest`` or ``label $name | rest``."""
        if self.is_kw("def"):
            start = self.tok.start
            defs = [self.funcdef()]
            while self.is_kw("def"):
                defs.append(self.funcdef())
            return ast.WithDefs(tuple(defs), self.pipe(), offset=start)
        start = self.expect_kw("label").start
        if self.tok.kind != "VAR":
            raise self.unexpected()
        name = self.advance().text
        self.expect_op("|")
        return ast.Label(name, self.pipe(), offset=start)

    def comma(self) -> ast.Node:
        """``a, b, c`` (left-associative, built in a loop); an operand may be ``E as $p | body``."""
        left: ast.Node | None = None
        comma_at = 0
        while True:
            tok = self.tok
            if tok.kind == "KEYWORD" and (tok.text == "def" or tok.text == "label"):
                operand = self.pipe()
            else:
                operand = self.binary(1)
                if self.is_kw("as"):
                    self.advance()
                    patterns = [self.pattern()]
                    while self.is_op("?//"):
                        self.advance()
                        patterns.append(self.pattern())
                    self.expect_op("|")
                    operand = ast.Bind(operand, tuple(patterns), self.pipe(), offset=tok.start)
            left = operand if left is None else ast.Comma(left, operand, offset=comma_at)
            if not self.is_op(","):
                return left
            comma_at = self.advance().start

    def binary(self, min_level: int) -> ast.Node:
        """Binary operators by precedence climbing. Chains (``1 + 1 + …``, ``a // b // …``) are
        built in loops; only the precedence levels recurse."""
        left = self.postfix()
        if min_level > 1:
            return self._binary_loop(left, min_level)
        left = self._binary_loop(left, 2)
        tok = self.tok
        if tok.kind != "OP" or tok.text != "//":
            return left
        operands = [left]
        offsets: list[int] = []
        while tok.kind == "OP" and tok.text == "//":
            offsets.append(tok.start)
            self.advance()
            operands.append(self._binary_loop(self.postfix(), 2))
            tok = self.tok
        node = operands[-1]
        for i in range(len(operands) - 2, -1, -1):
            node = ast.Alt(operands[i], node, offset=offsets[i])
        return node

    def _binary_loop(self, left: ast.Node, min_level: int) -> ast.Node:
        last_nonassoc = 0
        while True:
            tok = self.tok
            if tok.kind == "OP" or (tok.kind == "KEYWORD" and tok.text in ("and", "or")):
                info = _BINARY.get(tok.text)
            else:
                info = None
            if info is None:
                return left
            level, assoc = info
            if level < min_level or level == 1:
                return left
            if assoc == "none" and last_nonassoc == level:
                raise self.unexpected()
            self.advance()
            right = self._binary_loop(self.postfix(), level + 1)
            op = tok.text
            if op in _UPDATE_OPS:
                left = ast.Update(op, left, right, offset=tok.start)
            else:
                left = ast.Binary(op, left, right, offset=tok.start)
            last_nonassoc = level if assoc == "none" else 0

    def postfix(self) -> ast.Node:
        """A term with its suffixes (``.a``, ``[…]``, ``?``), or a unary ``-``/``+`` term."""
        tok = self.tok
        if tok.kind == "OP" and (tok.text == "-" or tok.text == "+"):
            self.advance()
            self.enter()
            try:
                operand = self.postfix()
            finally:
                self.depth -= 1
            return ast.Unary(tok.text, operand, offset=tok.start)
        term = self.primary()
        tok = self.tok
        if tok.kind != "FIELD" and (tok.kind != "OP" or tok.text not in _SUFFIX_START):
            return term
        return self._suffixes(term)

    def _suffixes(self, term: ast.Node) -> ast.Node:
        """Suffix chains are loops, not nesting: ``.a.a.a…`` has no depth limit."""
        suffixed = False  # whether `term` ends with an index/iterate suffix of this chain
        while True:
            tok = self.tok
            kind = tok.kind
            if kind != "FIELD" and (kind != "OP" or tok.text not in _SUFFIX_START):
                return term
            if kind == "OP" and tok.text == "?":
                self.advance()
                last_only = (
                    suffixed
                    and isinstance(term, (ast.Index, ast.Slice, ast.Iterate))
                    and not isinstance(term.target, ast.Identity)
                )
                term = ast.Optional(term, not last_only, offset=tok.start)
                suffixed = False
                continue
            suffixed = True
            if kind == "FIELD":
                self.advance()
                term = ast.Index(
                    term, ast.Literal(tok.text, "string", offset=tok.start + 1), offset=tok.start
                )
            elif tok.kind == "OP" and tok.text == "[":
                term = self.bracket_suffix(term)
            elif tok.kind == "OP" and tok.text == ".":
                self.advance()
                if self.is_op("["):
                    term = self.bracket_suffix(term)
                elif self.tok.kind == "QUOTE":
                    key = self.string(None)
                    term = ast.Index(term, key, offset=tok.start)
                else:
                    raise self.unexpected()
            else:
                return term

    def bracket_suffix(self, term: ast.Node) -> ast.Node:
        start = self.expect_op("[").start
        if self.is_op("]"):
            self.advance()
            return ast.Iterate(term, offset=start)
        if self.is_op(":"):
            self.advance()
            end = self.pipe()
            self.expect_op("]")
            return ast.Slice(term, None, end, offset=start)
        index = self.pipe()
        if self.is_op(":"):
            self.advance()
            if self.is_op("]"):
                self.advance()
                return ast.Slice(term, index, None, offset=start)
            end = self.pipe()
            self.expect_op("]")
            return ast.Slice(term, index, end, offset=start)
        self.expect_op("]")
        return ast.Index(term, index, offset=start)

    def string(self, fmt: str | None) -> ast.Node:
        """Parse a string literal; the current token is its opening quote."""
        quote = self.tok
        if quote.kind != "QUOTE":
            raise self.unexpected()
        segment: str | None
        segment, term, _s, _e = self.lex.string_segment()
        if term == '"' and fmt is None:  # the common case: no interpolation
            self.tok = self.lex.next()
            return ast.Literal(segment, "string", offset=quote.start)
        parts: list[str | ast.Node] = []
        text: list[str] = []
        while True:
            if segment is None:
                segment, term, _s, _e = self.lex.string_segment()
            text.append(segment)
            segment = None
            if term == '"':
                break
            if text and "".join(text):
                parts.append("".join(text))
            text = []
            self.tok = self.lex.next()
            query = self.pipe()
            if not self.is_op(")"):
                raise self.unexpected()
            parts.append(query)
            # continue scanning the string right after ")"
            self.lex.pos = self.tok.end
        if "".join(text):
            parts.append("".join(text))
        self.tok = self.lex.next()
        if fmt is None and all(isinstance(p, str) for p in parts):
            return ast.Literal(
                "".join(p for p in parts if isinstance(p, str)), "string", offset=quote.start
            )
        return ast.Str(tuple(parts), fmt, offset=quote.start)

    def primary(self) -> ast.Node:
        tok = self.tok
        kind = tok.kind
        if kind == "OP":
            op = tok.text
            if op == ".":
                self.advance()
                if self.tok.kind == "QUOTE":
                    return ast.Index(
                        ast.Identity(offset=tok.start), self.string(None), offset=tok.start
                    )
                if self.is_op("["):
                    return self.bracket_suffix(ast.Identity(offset=tok.start))
                return ast.Identity(offset=tok.start)
            if op == "..":
                self.advance()
                return ast.RecurseAll(offset=tok.start)
            if op == "(":
                self.advance()
                inner = self.pipe()
                self.expect_op(")")
                return inner
            if op == "[":
                self.advance()
                if self.is_op("]"):
                    self.advance()
                    return ast.Array(None, offset=tok.start)
                body = self.pipe()
                self.expect_op("]")
                return ast.Array(body, offset=tok.start)
            if op == "{":
                return self.object()
            raise self.unexpected()
        if kind == "FIELD":
            self.advance()
            return ast.Index(
                ast.Identity(offset=tok.start),
                ast.Literal(tok.text, "string", offset=tok.start + 1),
                offset=tok.start,
            )
        if kind == "NUMBER":
            self.advance()
            return ast.Literal(_parse_number(tok.text), "number", offset=tok.start)
        if kind == "QUOTE":
            return self.string(None)
        if kind == "FORMAT":
            self.advance()
            if self.tok.kind == "QUOTE":
                return self.string(tok.text)
            return ast.Format(tok.text, offset=tok.start)
        if kind == "VAR":
            self.advance()
            return ast.Var(tok.text, offset=tok.start)
        if kind == "MODVAR":
            self.advance()
            return ast.Var(tok.text, offset=tok.start)
        if kind in ("IDENT", "MODIDENT"):
            self.advance()
            args: list[ast.Node] = []
            if self.is_op("("):
                self.advance()
                args.append(self.pipe())
                while self.is_op(";"):
                    self.advance()
                    args.append(self.pipe())
                self.expect_op(")")
            return ast.Call(tok.text, tuple(args), offset=tok.start)
        if kind == "KEYWORD":
            word = tok.text
            if word == "null":
                self.advance()
                return ast.Literal(None, "null", offset=tok.start)
            if word in ("true", "false"):
                self.advance()
                return ast.Literal(word == "true", "boolean", offset=tok.start)
            if word == "if":
                return self.if_()
            if word == "try":
                self.advance()
                body = self.postfix_nested()
                catch = None
                if self.is_kw("catch"):
                    self.advance()
                    catch = self.postfix_nested()
                return ast.Try(body, catch, offset=tok.start)
            if word in ("reduce", "foreach"):
                return self.reduce_foreach()
            if word == "break":
                self.advance()
                if self.tok.kind != "VAR":
                    raise self.unexpected()
                name = self.advance().text
                return ast.Break(name, offset=tok.start)
        raise self.unexpected()

    def postfix_nested(self) -> ast.Node:
        self.enter()
        try:
            return self.postfix()
        finally:
            self.depth -= 1

    def if_(self) -> ast.Node:
        start = self.expect_kw("if").start
        cond = self.pipe()
        self.expect_kw("then")
        then = self.pipe()
        elifs: list[tuple[ast.Node, ast.Node]] = []
        otherwise: ast.Node | None = None
        while self.is_kw("elif"):
            self.advance()
            c = self.pipe()
            self.expect_kw("then")
            elifs.append((c, self.pipe()))
        if self.is_kw("else"):
            self.advance()
            otherwise = self.pipe()
        self.expect_kw("end")
        return ast.If(cond, then, tuple(elifs), otherwise, offset=start)

    def reduce_foreach(self) -> ast.Node:
        tok = self.advance()
        self.enter()
        try:
            source = self.binary(1)
        finally:
            self.depth -= 1
        self.expect_kw("as")
        pattern = self.pattern()
        self.expect_op("(")
        init = self.pipe()
        self.expect_op(";")
        update = self.pipe()
        if tok.text == "reduce":
            self.expect_op(")")
            return ast.Reduce(source, pattern, init, update, offset=tok.start)
        extract = None
        if self.is_op(";"):
            self.advance()
            extract = self.pipe()
        self.expect_op(")")
        return ast.Foreach(source, pattern, init, update, extract, offset=tok.start)

    def funcdef(self) -> ast.FuncDef:
        start = self.expect_kw("def").start
        if self.tok.kind != "IDENT":
            raise self.unexpected()
        name = self.advance().text
        params: list[str] = []
        if self.is_op("("):
            self.advance()
            while True:
                if self.tok.kind == "IDENT":
                    params.append(self.advance().text)
                elif self.tok.kind == "VAR":
                    params.append("$" + self.advance().text)
                else:
                    raise self.unexpected()
                if self.is_op(";"):
                    self.advance()
                    continue
                self.expect_op(")")
                break
        self.expect_op(":")
        body = self.pipe()
        self.expect_op(";")
        return ast.FuncDef(name, tuple(params), body, offset=start)

    def pattern(self) -> ast.Pattern:
        tok = self.tok
        if tok.kind == "VAR":
            self.advance()
            return ast.PVar(tok.text, offset=tok.start)
        self.enter()
        try:
            return self._compound_pattern(tok)
        finally:
            self.depth -= 1

    def _compound_pattern(self, tok: Token) -> ast.Pattern:
        if self.is_op("["):
            self.advance()
            elements = [self.pattern()]
            while self.is_op(","):
                self.advance()
                elements.append(self.pattern())
            self.expect_op("]")
            return ast.PArray(tuple(elements), offset=tok.start)
        if self.is_op("{"):
            self.advance()
            entries = [self.object_pattern_entry()]
            while self.is_op(","):
                self.advance()
                entries.append(self.object_pattern_entry())
            self.expect_op("}")
            return ast.PObject(tuple(entries), offset=tok.start)
        raise self.unexpected()

    def object_pattern_entry(self) -> tuple[ast.Node, ast.Pattern | None, bool]:
        tok = self.tok
        if tok.kind == "VAR":
            self.advance()
            key: ast.Node = ast.Var(tok.text, offset=tok.start)
            if self.is_op(":"):
                self.advance()
                return key, self.pattern(), False
            return key, None, False
        key, computed = self.object_key()
        self.expect_op(":")
        return key, self.pattern(), computed

    def object_key(self) -> tuple[ast.Node, bool]:
        """A key of an object or an object pattern other than ``$var``: a name or keyword, a
        string, or ``(expression)`` (computed)."""
        tok = self.tok
        if tok.kind in ("IDENT", "KEYWORD"):
            self.advance()
            return ast.Literal(tok.text, "string", offset=tok.start), False
        if tok.kind == "QUOTE":
            return self.string(None), False
        if self.is_op("("):
            self.advance()
            key = self.pipe()
            self.expect_op(")")
            return key, True
        raise self.unexpected()

    def object(self) -> ast.Node:
        start = self.expect_op("{").start
        entries: list[ast.ObjectEntry] = []
        if self.is_op("}"):
            self.advance()
            return ast.Object((), offset=start)
        self.enter()
        while True:
            entries.append(self.object_entry())
            if self.is_op(","):
                self.advance()
                if self.is_op("}"):
                    self.advance()
                    break
                continue
            self.expect_op("}")
            break
        self.depth -= 1
        return ast.Object(tuple(entries), offset=start)

    def object_entry(self) -> ast.ObjectEntry:
        tok = self.tok
        computed = False
        key: ast.Node
        if tok.kind == "VAR":
            self.advance()
            key = ast.Var(tok.text, offset=tok.start)
        else:
            key, computed = self.object_key()
            if computed:  # `{(k): v}` needs its value
                self.expect_op(":")
                return ast.ObjectEntry(key, self.object_value(), True)
        if self.is_op(":"):
            self.advance()
            return ast.ObjectEntry(key, self.object_value(), computed)
        return ast.ObjectEntry(key, None, computed)

    def object_value(self) -> ast.Node:
        """An object value: expressions joined by ``|`` (folded to the right, no recursion)."""
        items = [self.binary(1)]
        offsets: list[int] = []
        while self.is_op("|"):
            offsets.append(self.advance().start)
            items.append(self.binary(1))
        node = items[-1]
        for i in range(len(items) - 2, -1, -1):
            node = ast.Pipe(items[i], node, offset=offsets[i])
        return node


def parse(source: str) -> ast.Node:
    """Parse a jq program into its tree; raises ``JqParseError``. Uncached: the engine parses
    through :func:`jq.trees.parse <workload_map.jq.trees.parse>`, which caches by text and
    rebuilds the trees kept between commands without importing this module."""
    try:
        tree: ast.Node = _Parser(source).program()
        return tree
    except RecursionError:
        raise JqParseError(
            "query too deep (Python recursion limit reached)", offset=0, program=source, token=""
        ) from None
