"""kubectl's JSONPath template dialect (``-o jsonpath=…``, ``custom-columns``, ``--sort-by``).

kubectl does not speak RFC 9535 JSONPath but its own template language
(k8s.io/client-go/util/jsonpath): text with ``{…}`` actions, ``range``/``end`` loops, ``..``
recursive descent that yields containers only, ``[?(@.x == "y")]`` filters with Go template
comparison rules, and Go's ways of printing values (floats in ``%v`` form, maps and lists as
compact JSON with HTML-safe escapes). No PyPI library implements that dialect (jsonpath-ng and
friends follow Goessner's paper or RFC 9535 and differ on every one of those points), so it is
written here, checked against kubectl's own output in tests/cli/test_jsonpath.py.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from workload_map.cli.exits import JsonPathError

__all__ = [
    "JsonPathError",
    "Template",
    "compile_template",
    "go_json",
    "go_sprint",
    "go_text",
    "relaxed_expression",
]


# --- nodes -------------------------------------------------------------------------------------


@dataclass
class _Text:
    text: str


@dataclass
class _Field:
    name: str


@dataclass
class _Wildcard:
    pass


@dataclass
class _Recursive:
    pass


@dataclass
class _Ident:
    name: str


@dataclass
class _Literal:
    value: Any


@dataclass
class _Slice:
    start: int | None
    end: int | None
    step: int | None
    derived_end: bool = False  # ``[i]``: the end is i+1, and -1 means "to the end"


@dataclass
class _Union:
    branches: list[list[Any]]


@dataclass
class _Filter:
    left: list[Any]
    op: str  # "exists" or a comparison
    right: list[Any]


@dataclass
class _Action:
    nodes: list[Any]


@dataclass
class _Range:
    expr: list[Any]
    body: list[Any] = field(default_factory=list)


# --- parsing -----------------------------------------------------------------------------------

_TERMINATORS = set(" \t\r\n.,[]$@{}")
_SLICE = re.compile(r"^(-?\d*)(:-?\d*)?(:-?\d*)?$")
_DICT_KEY = re.compile(r"^'([^']*)'$")
_FILTER = re.compile(r"^([^!<>=]+)([!<>=]+)(.+?)$", re.S)


class _Scanner:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def peek(self) -> str:
        return self.text[self.pos] if self.pos < len(self.text) else ""


def _parse_action_nodes(inner: str) -> list[Any]:
    """The nodes of one ``{…}`` body (used for filter sides, unions and dict keys)."""
    scanner = _Scanner(inner)
    nodes = _parse_inside(scanner, closing=False)
    return nodes


def _parse_inside(s: _Scanner, *, closing: bool) -> list[Any]:
    """Nodes until the closing ``}`` (consumed) or, for a sub-expression, the end of text."""
    nodes: list[Any] = []
    text = s.text
    while True:
        rest = text[s.pos :]
        if closing and rest.startswith("}"):
            s.pos += 1
            return nodes
        if rest.startswith("[?("):
            nodes.append(_parse_filter(s))
            continue
        if rest.startswith(".."):
            s.pos += 2
            nodes.append(_Recursive())
            nxt = s.peek()
            if nxt and (nxt == "_" or nxt.isalnum()):
                nodes.append(_parse_field(s))
            continue
        if not rest:
            if closing:
                raise JsonPathError("unclosed action")
            return nodes
        ch = rest[0]
        if ch in "\r\n":
            raise JsonPathError("unclosed action")
        if ch in " @$":
            s.pos += 1
        elif ch == "[":
            nodes.extend(_parse_array(s))
        elif ch in "\"'":
            nodes.append(_parse_quote(s, ch))
        elif ch == ".":
            s.pos += 1
            nodes.append(_parse_field(s))
        elif ch in "+-" or ch.isdigit():
            nodes.append(_parse_number(s))
        elif ch == "_" or ch.isalnum():
            start = s.pos
            while s.pos < len(text) and text[s.pos] not in _TERMINATORS:
                s.pos += 1
            word = text[start : s.pos]
            nodes.append(_Literal(word == "true") if word in ("true", "false") else _Ident(word))
        else:
            raise JsonPathError(f"unrecognized character in action: {_go_rune(ch)}")


def _go_rune(ch: str) -> str:
    return f"U+{ord(ch):04X} '{ch}'"


def _parse_field(s: _Scanner) -> Any:
    start = s.pos
    text = s.text
    while s.pos < len(text):
        ch = text[s.pos]
        if ch == "\\":
            s.pos += 2
            continue
        if ch in _TERMINATORS:
            break
        s.pos += 1
    s.pos = min(s.pos, len(text))
    name = text[start : s.pos]
    if name == "*":
        return _Wildcard()
    return _Field(name.replace("\\", ""))


def _parse_number(s: _Scanner) -> Any:
    text = s.text
    start = s.pos
    if text[s.pos] in "+-":
        s.pos += 1
    while s.pos < len(text) and (text[s.pos] == "." or text[s.pos].isdigit()):
        s.pos += 1
    word = text[start : s.pos]
    if re.fullmatch(r"[+-]?\d+", word):
        return _Literal(int(word))
    if not re.fullmatch(r"[+-]?(\d+\.?\d*|\.\d+)", word):  # float() would take "inf", "1e3"
        raise JsonPathError(f"cannot parse number {word}")
    return _Literal(float(word))


def _parse_quote(s: _Scanner, quote: str) -> Any:
    text = s.text
    start = s.pos
    s.pos += 1
    while True:
        if s.pos >= len(text) or text[s.pos] == "\n":
            raise JsonPathError("unterminated quoted string")
        ch = text[s.pos]
        s.pos += 1
        if ch == quote and text[s.pos - 2] != "\\":
            break
    raw = text[start : s.pos]
    return _Text(_unquote(raw))


_ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v", "\\": "\\"}


def _unquote(raw: str) -> str:
    """Go's strconv.Unquote, also for single-quoted strings (kubectl's UnquoteExtend)."""
    quote, body = raw[0], raw[1:-1]
    if "\\" not in body and quote not in body:
        return body
    out: list[str] = []
    i = 0
    while i < len(body):
        ch = body[i]
        if ch == quote:
            raise JsonPathError(f"unquote string {raw} error invalid syntax")
        if ch != "\\":
            out.append(ch)
            i += 1
            continue
        if i + 1 >= len(body):
            raise JsonPathError(f"unquote string {raw} error invalid syntax")
        esc = body[i + 1]
        if esc in _ESCAPES:
            out.append(_ESCAPES[esc])
            i += 2
        elif esc == quote:
            out.append(quote)
            i += 2
        elif esc in "xuU" or esc in "01234567":
            size = {"x": 2, "u": 4, "U": 8}.get(esc, 3)
            digits = body[i + 2 : i + 2 + size] if esc in "xuU" else body[i + 1 : i + 4]
            base = 8 if esc in "01234567" else 16
            try:
                if len(digits) != size:
                    raise ValueError(digits)
                out.append(chr(int(digits, base)))
            except ValueError:
                raise JsonPathError(f"unquote string {raw} error invalid syntax") from None
            i += 2 + size if esc in "xuU" else 4
        else:
            raise JsonPathError(f"unquote string {raw} error invalid syntax")
    return "".join(out)


def _parse_array(s: _Scanner) -> list[Any]:
    text = s.text
    start = s.pos
    while True:
        s.pos += 1
        if s.pos >= len(text) or text[s.pos] == "\n":
            raise JsonPathError("unterminated array")
        if text[s.pos] == "]":
            break
    s.pos += 1
    body = text[start + 1 : s.pos - 1]
    if body == "*":
        body = ":"
    parts = body.split(",")
    if len(parts) > 1:
        branches = []
        for part in parts:
            branches.append(_parse_action_nodes(f"[{part.strip(' ')}]"))
        return [_Union(branches)]
    key = _DICT_KEY.match(body)
    if key is not None:
        return _parse_action_nodes(f".{key.group(1)}")
    m = _SLICE.match(body)
    if m is None:
        raise JsonPathError(f'invalid array index "{body}"' if body else "invalid array index ")
    first, second, third = m.group(1), m.group(2), m.group(3)

    def number(word: str) -> int:
        try:
            return int(word)
        except ValueError:
            raise JsonPathError(f"array index {word} is not a number") from None

    begin = number(first) if first else None
    if second is None:
        # ``[i]``: one element; ``[]`` (empty) is the whole list, as in kubectl
        if first:
            return [_Slice(begin, (begin or 0) + 1, None, derived_end=True)]
        return [_Slice(None, None, None)]
    end = number(second[1:]) if second[1:] else None
    step = number(third[1:]) if third and third[1:] else None
    return [_Slice(begin, end, step)]


def _parse_filter(s: _Scanner) -> Any:
    text = s.text
    s.pos += 3
    start = s.pos
    begin = end = False
    pair = ""
    while True:
        if s.pos >= len(text) or text[s.pos] == "\n":
            raise JsonPathError("unterminated filter")
        ch = text[s.pos]
        s.pos += 1
        if ch in "\"'":
            if not begin:
                begin, pair = True, ch
                continue
            if text[s.pos - 2] != "\\" and ch == pair:
                end = True
        elif ch == ")" and begin == end:
            break
    if s.pos >= len(text) or text[s.pos] != "]":
        s.pos += 1
        raise JsonPathError("unclosed array expect ]")
    s.pos += 1
    inner = text[start : s.pos - 2]
    m = _FILTER.match(inner)
    if m is None:
        return _Filter(_parse_action_nodes(inner), "exists", [])
    return _Filter(_parse_action_nodes(m.group(1)), m.group(2), _parse_action_nodes(m.group(3)))


def _parse_template(text: str) -> list[Any]:
    """Top level: text and actions; ``range``…``end`` become nested blocks."""
    s = _Scanner(text)
    flat: list[Any] = []
    while s.pos < len(text):
        brace = text.find("{", s.pos)
        if brace < 0:
            flat.append(_Text(text[s.pos :]))
            break
        if brace > s.pos:
            flat.append(_Text(text[s.pos : brace]))
        s.pos = brace + 1
        flat.append(_Action(_parse_inside(s, closing=True)))
    return _nest(flat)


def _nest(flat: list[Any]) -> list[Any]:
    root: list[Any] = []
    stack: list[list[Any]] = [root]
    for item in flat:
        nodes = item.nodes if isinstance(item, _Action) else None
        if nodes and isinstance(nodes[0], _Ident) and nodes[0].name == "range":
            block = _Range(nodes[1:])
            stack[-1].append(block)
            stack.append(block.body)
        elif nodes and isinstance(nodes[0], _Ident) and nodes[0].name == "end":
            if len(stack) == 1:
                stack[-1].append(item)  # fails when run, as kubectl does ("nothing to end")
            else:
                stack.pop()
        else:
            stack[-1].append(item)
    return root


# --- evaluation --------------------------------------------------------------------------------


def _go_type(value: Any) -> str:
    if isinstance(value, dict):
        return "map[string]interface {}"
    if isinstance(value, list):
        return "[]interface {}"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int64"
    if isinstance(value, float):
        return "float64"
    if isinstance(value, str):
        return "string"
    return "interface {}"


def _children(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return [value[k] for k in sorted(value)]
    if isinstance(value, list):
        return list(value)
    if isinstance(value, str):
        return list(value.encode("utf-8"))  # Go indexes a string by bytes
    return []


class _Evaluator:
    def __init__(self, allow_missing: bool) -> None:
        self.allow_missing = allow_missing

    def nodes(self, values: list[Any], nodes: Sequence[Any]) -> list[Any]:
        for node in nodes:
            values = self.node(values, node)
        return values

    def node(self, values: list[Any], node: Any) -> list[Any]:
        if isinstance(node, _Text):
            return [node.text]
        if isinstance(node, _Literal):
            return [node.value for _ in values]
        if isinstance(node, _Field):
            return self.field(values, node.name)
        if isinstance(node, _Slice):
            return self.slice(values, node)
        if isinstance(node, _Wildcard):
            out: list[Any] = []
            for value in values:
                if value is not None:
                    out.extend(_children(value))
            return out
        if isinstance(node, _Recursive):
            return self.recursive(values)
        if isinstance(node, _Union):
            out = []
            for branch in node.branches:
                out.extend(self.nodes(values, branch))
            return out
        if isinstance(node, _Filter):
            return self.filter(values, node)
        if isinstance(node, _Ident):
            if node.name == "end":
                raise JsonPathError("not in range, nothing to end")
            if node.name == "range":
                return values
            raise JsonPathError(f"unrecognized identifier {node.name}")
        raise JsonPathError(f"unexpected node {node!r}")  # pragma: no cover - parser guards it

    def field(self, values: list[Any], name: str) -> list[Any]:
        if not values:
            return []
        out = []
        for value in values:
            if isinstance(value, dict) and name in value:
                out.append(value[name])
        if not out and not self.allow_missing:
            raise JsonPathError(f"{name} is not found")
        return out

    def slice(self, values: list[Any], node: _Slice) -> list[Any]:
        out: list[Any] = []
        for value in values:
            if value is None:
                continue
            if not isinstance(value, list):
                raise JsonPathError(f"{_go_type(value)} is not array or slice")
            length = len(value)
            start = 0 if node.start is None else node.start
            if start < 0:
                start += length
            end = length if node.end is None else node.end
            if end < 0 or (end == 0 and node.derived_end):
                end += length
            if end == start:
                continue
            if start >= length or start < 0:
                raise JsonPathError(f"array index out of bounds: index {start}, length {length}")
            if end > length or end < 0:
                raise JsonPathError(f"array index out of bounds: index {end - 1}, length {length}")
            if start > end:
                raise JsonPathError(f"starting index {start} is greater than ending index {end}")
            step = 1
            if node.step is not None:
                if node.step <= 0:
                    raise JsonPathError("step must be > 0")
                step = node.step
            out.extend(value[start:end:step])
        return out

    def recursive(self, values: list[Any]) -> list[Any]:
        out: list[Any] = []
        for value in values:
            if value is None:
                continue
            kids = _children(value)
            if kids:
                out.append(value)
                out.extend(self.recursive(kids))
        return out

    def filter(self, values: list[Any], node: _Filter) -> list[Any]:
        out: list[Any] = []
        for value in values:
            if not isinstance(value, list):
                shown = "<nil>" if value is None else go_text(value)
                raise JsonPathError(f"{shown} is not array or slice and cannot be filtered")
            for item in value:
                if node.op == "exists":
                    try:
                        if self.nodes([item], node.left):
                            out.append(item)
                    except JsonPathError:
                        pass
                    continue
                lefts = self.nodes([item], node.left)
                if not lefts:
                    continue
                if len(lefts) > 1:
                    raise JsonPathError("can only compare one element at a time")
                rights = self.nodes([item], node.right)
                if not rights:
                    continue
                if len(rights) > 1:
                    raise JsonPathError("can only compare one element at a time")
                if _compare(lefts[0], node.op, rights[0]):
                    out.append(item)
        return out


def _basic_kind(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "string"
    raise JsonPathError("invalid type for comparison")


def _compare(left: Any, op: str, right: Any) -> bool:
    """Go template's eq/ne/lt/le/gt/ge: same basic kind only; bools only (in)equal."""
    if op not in ("==", "!=", "<", ">", "<=", ">="):
        raise JsonPathError(f"unrecognized filter operator {op}")
    k1, k2 = _basic_kind(left), _basic_kind(right)
    if k1 != k2:
        raise JsonPathError("incompatible types for comparison")
    if op == "==":
        return bool(left == right)
    if op == "!=":
        return bool(left != right)
    if k1 == "bool":
        raise JsonPathError("invalid type for comparison")
    if op == "<":
        return bool(left < right)
    if op == ">":
        return bool(left > right)
    if op == "<=":
        return bool(left <= right)
    return bool(left >= right)


# --- printing like Go --------------------------------------------------------------------------


def _digits(value: float) -> tuple[str, int]:
    """Shortest round-trip digits and the decimal exponent of the first one."""
    _sign, digits, exponent = Decimal(repr(value)).as_tuple()
    text = "".join(str(d) for d in digits).rstrip("0") or "0"
    assert isinstance(exponent, int)
    return text, exponent + len(digits) - 1


def _go_float_v(value: float) -> str:
    """``fmt.Sprint(float64)``: %g with the shortest digits, exponent form outside [-4, 6)."""
    if value != value:
        return "NaN"
    if value in (float("inf"), float("-inf")):
        return "+Inf" if value > 0 else "-Inf"
    if value == 0:
        return "-0" if str(value).startswith("-") else "0"
    sign = "-" if value < 0 else ""
    digits, exp = _digits(abs(value))
    if exp < -4 or exp >= 6:
        mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        return f"{sign}{mantissa}e{'-' if exp < 0 else '+'}{abs(exp):02d}"
    return sign + _fixed(digits, exp)


def _fixed(digits: str, exp: int) -> str:
    if exp < 0:
        return "0." + "0" * (-exp - 1) + digits
    if exp + 1 >= len(digits):
        return digits + "0" * (exp + 1 - len(digits))
    return digits[: exp + 1] + "." + digits[exp + 1 :]


def _go_json_float(value: float) -> str:
    """encoding/json's float64: fixed, or exponent form below 1e-6 and from 1e21."""
    if value != value or value in (float("inf"), float("-inf")):
        raise JsonPathError(f"json: unsupported value: {value}")
    if value == 0:
        return "-0" if str(value).startswith("-") else "0"
    sign = "-" if value < 0 else ""
    digits, exp = _digits(abs(value))
    if abs(value) < 1e-6 or abs(value) >= 1e21:
        mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        return f"{sign}{mantissa}e{'-' if exp < 0 else '+'}{abs(exp)}"
    return sign + _fixed(digits, exp)


_JSON_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028"}
_JSON_ESCAPES["\u2029"] = "\\u2029"


def _go_json_string(text: str) -> str:
    encoded = json.dumps(text, ensure_ascii=False)
    for raw, escaped in _JSON_ESCAPES.items():
        encoded = encoded.replace(raw, escaped)
    return encoded


def go_json(value: Any) -> str:
    """``json.Marshal`` as Go writes it: compact, keys sorted, ``<>&`` escaped."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _go_json_float(value)
    if isinstance(value, str):
        return _go_json_string(value)
    if isinstance(value, dict):
        return (
            "{"
            + ",".join(f"{_go_json_string(str(k))}:{go_json(value[k])}" for k in sorted(value))
            + "}"
        )
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(go_json(v) for v in value) + "]"
    return _go_json_string(str(value))


def go_sprint(value: Any) -> str:
    """``fmt.Sprint`` of a decoded JSON value (kubectl's custom-columns cells): maps as
    ``map[k:v]`` with sorted keys, lists as ``[a b]``, null as ``<nil>``."""
    if value is None:
        return "<nil>"
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{go_sprint(value[k])}" for k in sorted(value)) + "]"
    if isinstance(value, (list, tuple)):
        return "[" + " ".join(go_sprint(v) for v in value) + "]"
    return go_text(value)


def go_text(value: Any) -> str:
    """How kubectl's JSONPath prints one result: strings as is, numbers as Go prints them,
    maps, lists and null as JSON."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _go_float_v(value)
    return go_json(value)


# --- public API --------------------------------------------------------------------------------


class Template:
    """A parsed template; :meth:`render` gives kubectl's text, :meth:`find` the raw results."""

    def __init__(self, source: str, items: list[Any], *, allow_missing: bool = True) -> None:
        self.source = source
        self._items = items
        self._eval = _Evaluator(allow_missing)

    def find(self, data: Any) -> list[list[Any]]:
        """One list of values per top-level text/action (kubectl's FindResults)."""
        try:
            return list(self._run(self._items, data))
        except RecursionError:
            raise JsonPathError(
                f'error executing jsonpath "{self.source}": value nested too deep'
            ) from None
        except JsonPathError as exc:
            raise JsonPathError(f'error executing jsonpath "{self.source}": {exc}') from None

    def _run(self, items: list[Any], data: Any) -> Iterator[list[Any]]:
        for item in items:
            if isinstance(item, _Text):
                yield [item.text]
            elif isinstance(item, _Action):
                yield self._eval.nodes([data], item.nodes)
            else:
                for value in self._eval.nodes([data], item.expr):
                    yield from self._run(item.body, value)

    def render(self, data: Any) -> str:
        """The printed text, as ``kubectl … -o jsonpath=TEMPLATE`` writes it for one object."""
        return "".join(" ".join(go_text(v) for v in values) for values in self.find(data))


def compile_template(text: str, *, allow_missing: bool = True) -> Template:
    """Parse a kubectl JSONPath template; :class:`JsonPathError` names it when it is bad."""
    try:
        return Template(text, _parse_template(text), allow_missing=allow_missing)
    except JsonPathError as exc:
        raise JsonPathError(f"error parsing jsonpath {text}, {exc}") from None


_RELAXED = re.compile(r"^\{\.?([^{}]+)\}$|^\.?([^{}]+)$")


def relaxed_expression(text: str) -> str:
    """kubectl's RelaxedJSONPathExpression: ``.a.b``, ``a.b``, ``{.a.b}`` all mean ``{.a.b}``."""
    if not text:
        return text
    m = _RELAXED.match(text)
    if m is None:
        raise JsonPathError(
            "unexpected path string, expected a 'name1.name2' or '.name1.name2' or "
            f"'{{name1.name2}}' or '{{.name1.name2}}', got {text!r}"
        )
    return "{." + (m.group(1) or m.group(2)) + "}"
