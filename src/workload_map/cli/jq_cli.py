"""`wlmap jq`: gojq's command line on our engine (flags, output format, messages, exit codes).

Exit codes are gojq's: 0 ok, 1 with `-e` when the last output is false or null, 2 flag error,
3 compile error, 4 with `-e` when there was no output, 5 run-time or input error, or the code
given to `halt_error`. Messages keep gojq's layout with this program's name in front
(`wlmap: expected an object but got: …`, `wlmap: invalid query: …` plus the caret display).
After a run-time error on one input value the next value is still processed, as gojq does.
"""

from __future__ import annotations

import re
import sys
import unicodedata
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import IO, Any

from workload_map import jq
from workload_map.errors import WlmapError
from workload_map.jq import (
    INPUT_FILENAME,
    JqCompileError,
    JqHaltError,
    JqLimitError,
    JqParseError,
    JqRuntimeError,
    JsonDecodeError,
    decode_bytes,
    dumps,
    iter_values,
    loads,
    valid_text,
)

PROG = "wlmap"
_VAR_NAME = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_]*\Z")

HELP = """wlmap jq - run a jq program (gojq semantics) on JSON

Usage:
  wlmap jq [OPTIONS] FILTER [FILE...]

Options:
  -c, --compact-output   output without pretty-printing
  -r, --raw-output       output raw strings
  -j, --join-output      implies -r with no newline delimiter
      --raw-output0      implies -r with NUL character delimiter
  -a, --ascii-output     escape non-ASCII characters
      --tab              use tabs for indentation
      --indent n         number of spaces for indentation
  -n, --null-input       use null as input value
  -R, --raw-input        read input as raw strings
  -s, --slurp            read all inputs into an array
  -e, --exit-status      exit 1 when the last value is false or null
      --arg name value   set a string value to a variable
      --argjson name v   set a JSON value to a variable
      --slurpfile name f set the JSON values of a file (as an array) to a variable
      --rawfile name f   set the contents of a file to a variable
  -f, --from-file f      load the program from a file
      --args             consume remaining arguments as positional string values
      --jsonargs         consume remaining arguments as positional JSON values
  -h, --help             display this help information
"""

_BOOL_LONG = {
    "compact-output": "compact",
    "raw-output": "raw",
    "join-output": "join",
    "raw-output0": "raw0",
    "ascii-output": "ascii",
    "tab": "tab",
    "null-input": "null_input",
    "raw-input": "raw_input",
    "slurp": "slurp",
    "exit-status": "exit_status",
    "help": "help",
    "from-file": "from_file",
    "monochrome-output": "mono",
    "color-output": "color",
}
_BOOL_SHORT = {
    "c": "compact",
    "r": "raw",
    "j": "join",
    "a": "ascii",
    "n": "null_input",
    "R": "raw_input",
    "s": "slurp",
    "e": "exit_status",
    "h": "help",
    "f": "from_file",
    "M": "mono",
    "C": "color",
}


class FlagError(WlmapError):
    """A command-line error (exit code 2)."""


@dataclass
class Options:
    compact: bool = False
    raw: bool = False
    join: bool = False
    raw0: bool = False
    ascii: bool = False
    tab: bool = False
    indent: int | None = None
    null_input: bool = False
    raw_input: bool = False
    slurp: bool = False
    exit_status: bool = False
    help: bool = False
    from_file: bool = False
    mono: bool = False
    color: bool = False
    named: dict[str, str] = field(default_factory=dict)
    named_json: dict[str, str] = field(default_factory=dict)
    slurp_files: dict[str, str] = field(default_factory=dict)
    raw_files: dict[str, str] = field(default_factory=dict)
    positional: list[tuple[str, str]] = field(default_factory=list)  # (kind, text)
    rest: list[str] = field(default_factory=list)


def parse_flags(argv: Sequence[str]) -> Options:
    """gojq's flag grammar: long flags (`--x`, `--x=v`), bundled short flags, `--` ends flags."""
    opts = Options()
    args = list(argv)
    positional_kind: str | None = None
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            for a in args[i + 1 :]:
                if positional_kind and opts.rest:
                    opts.positional.append((positional_kind, a))
                else:
                    opts.rest.append(a)
            break
        if arg.startswith("--"):
            name, eq, value = arg[2:].partition("=")
            if name in _BOOL_LONG:
                if eq:
                    raise FlagError(f"boolean flag `--{name}' cannot have an argument")
                setattr(opts, _BOOL_LONG[name], True)
            elif name == "indent":
                if not eq:
                    i += 1
                    if i >= len(args):
                        raise FlagError("expected argument for flag `--indent'")
                    value = args[i]
                try:
                    opts.indent = int(value)
                except ValueError:
                    raise FlagError(
                        f"invalid argument for flag `--indent': strconv.Atoi: parsing "
                        f'"{value}": invalid syntax'
                    ) from None
            elif name in ("arg", "argjson", "slurpfile", "rawfile"):
                if i + 2 >= len(args):
                    raise FlagError(f"expected 2 arguments for flag `--{name}'")
                target = {
                    "arg": opts.named,
                    "argjson": opts.named_json,
                    "slurpfile": opts.slurp_files,
                    "rawfile": opts.raw_files,
                }[name]
                key, val = args[i + 1], args[i + 2]
                taken = (opts.named, opts.named_json, opts.slurp_files, opts.raw_files)
                if not any(key in t for t in taken):  # the first definition of a name wins
                    target[key] = val
                i += 2
            elif name in ("args", "jsonargs"):
                positional_kind = name
            else:
                raise FlagError(f"unknown flag `--{name}'")
            i += 1
            continue
        if len(arg) > 1 and arg[0] == "-" and all(c.isascii() and c.isalpha() for c in arg[1:]):
            for c in arg[1:]:
                if c not in _BOOL_SHORT:
                    raise FlagError(f"unknown flag `{c}'")
                setattr(opts, _BOOL_SHORT[c], True)
            i += 1
            continue
        if positional_kind and opts.rest:
            opts.positional.append((positional_kind, arg))
        else:
            opts.rest.append(arg)
        i += 1
    return opts


# ---------------------------------------------------------------------------------------------
# error displays (gojq's cli/error.go)


def _width(s: str) -> int:
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in s)


def _split_lines(text: str) -> list[tuple[str, int]]:
    """(line, start offset) pairs; CR, LF and CRLF all end a line."""
    out: list[tuple[str, int]] = []
    i, n = 0, len(text)
    while i < n:
        j = i
        while j < n and text[j] not in "\r\n":
            j += 1
        out.append((text[i:j], i))
        if j < n and text[j] == "\r" and j + 1 < n and text[j + 1] == "\n":
            j += 1
        i = j + 1
    return out


def _line_at(text: str, offset: int) -> tuple[str, int, int]:
    """gojq's getLineByOffset: (line text, 1-based line number, display column of offset)."""
    linestr, line = "", 0
    for s, start in _split_lines(text):
        line += 1
        linestr = s
        end = start + len(s) + 1
        if end >= offset:
            offset -= start
            break
    offset = min(max(offset - 1, 0), len(linestr))
    # gojq cuts long lines in bytes (48 before the fault, 64 in all) at character boundaries
    raw = linestr.encode("utf-8", "surrogatepass")
    boff = len(linestr[:offset].encode("utf-8", "surrogatepass"))
    if boff > 48:
        skip = len(raw[: boff - 48].decode("utf-8", "ignore").encode("utf-8", "surrogatepass"))
        raw = raw[skip:]
        boff -= skip
    raw = raw[:64]
    text = raw.decode("utf-8", "ignore")
    before = raw[: min(boff, len(raw))].decode("utf-8", "ignore")
    return text, line, _width(before)


def _caret_display(kind: str, name: str, contents: str, offset: int, message: str) -> str:
    """gojq's two layouts: `KIND: LABEL` + line + caret, or `KIND: NAME:LINE` + `N | line`."""
    linestr, line, column = _line_at(contents, offset)
    if kind == "invalid query":
        multi = name != "<arg>" or "\n" in contents or "\r" in contents
        label = contents
    else:
        multi = line > 1
        label = name
    if multi:
        num = str(line)
        return (
            f"{kind}: {name}:{line}\n    {num} | {linestr}\n"
            f"    {' ' * (column + len(num) + 3)}^  {message}"
        )
    return f"{kind}: {label}\n    {linestr}\n    {' ' * column}^  {message}"


# ---------------------------------------------------------------------------------------------
# running


@dataclass
class _Runner:
    opts: Options
    stdout: IO[str]
    stderr: IO[str]
    last_truthy: bool | None = None
    failed: bool = False

    def error(self, message: str) -> None:
        self.stderr.write(f"{PROG}: {message}\n")

    def write(self, value: Any) -> None:
        o = self.opts
        if (o.raw or o.join or o.raw0) and type(value) is str:
            if o.raw0 and "\x00" in value:
                raise _OutputError(
                    "cannot output a string containing NUL character: " + go_quote(value)
                )
            text = valid_text(value)
        elif o.compact:
            text = dumps(value, None, ascii=o.ascii)
        elif o.tab:
            text = dumps(value, 1, tab=True, ascii=o.ascii)
        else:
            text = dumps(value, 2 if o.indent is None else o.indent, ascii=o.ascii)
        if o.raw0:
            text += "\x00"
        elif not o.join:
            text += "\n"
        self.stdout.write(text)
        self.last_truthy = not (value is None or value is False)


class _OutputError(Exception):
    pass


_GO_ESCAPES = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t",
               "\v": "\\v", "\\": "\\\\", '"': '\\"'}  # fmt: skip


def go_quote(s: str) -> str:
    """Go's strconv.Quote (`%q`): printable text as is, control characters as `\\xNN`."""
    out = ['"']
    for c in s:
        if c in _GO_ESCAPES:
            out.append(_GO_ESCAPES[c])
        elif ord(c) < 0x20 or ord(c) == 0x7F:
            out.append(f"\\x{ord(c):02x}")
        elif not c.isprintable() and c != " ":
            out.append(f"\\u{ord(c):04x}" if ord(c) < 0x10000 else f"\\U{ord(c):08x}")
        else:
            out.append(c)
    out.append('"')
    return "".join(out)


def _read_file(name: str, stdin: IO[str] | IO[bytes] | None) -> str:
    """A file's text (`-` is stdin); OSError carries gojq's `open NAME: reason` text."""
    if name == "-" and stdin is not None:
        data = stdin.read()
        return decode_bytes(data) if isinstance(data, bytes) else data
    try:
        with open(name, "rb") as f:
            return decode_bytes(f.read())
    except OSError as e:
        reason = e.strerror.lower() if e.strerror else str(e)
        raise OSError(f"open {name}: {reason}") from None


def _json_error_display(name: str, contents: str, err: Any) -> str:
    offset = len(contents) + 1 if err.message == "unexpected EOF" else err.offset + 1
    return _caret_display("invalid json", name, contents, offset, err.message)


def _sources(
    files: list[str], stdin: IO[str] | IO[bytes] | None
) -> Iterator[tuple[str, str | None, str]]:
    """(name, text, error) per input source: stdin, or each file in order."""
    if not files:
        yield "<stdin>", _read_file("-", stdin) if stdin is not None else "", ""
        return
    for name in files:
        try:
            yield name, _read_file(name, stdin), ""
        except OSError as e:
            yield name, None, str(e)


def _values(opts: Options, name: str, text: str) -> Iterator[tuple[Any, str]]:
    """(value, "") per input value of one source, or (None, error display) where it fails."""
    text = valid_text(text)  # a text stdin may hold undecodable bytes as lone surrogates
    if opts.raw_input:
        lines = text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        for line in lines:
            yield line, ""
        return
    try:
        for value in iter_values(text):
            yield value, ""
    except JsonDecodeError as e:
        yield None, _json_error_display(name, text, e)


def _inputs(
    opts: Options, files: list[str], stdin: IO[str] | IO[bytes] | None
) -> Iterator[tuple[Any, str, str | None]]:
    """Every input value as (value, "", file name), or (None, message, name) where a source
    fails. The name is what `input_filename` gives, as gojq: `<stdin>` for standard input
    (slurped or not, and for `-`), null for slurped files."""
    if opts.slurp:
        collected: list[Any] = []
        raw: list[str] = []
        for name, text, error in _sources(files, stdin):
            if text is None:
                yield None, error, None
                continue
            if opts.raw_input:
                raw.append(text)
                continue
            for value, problem in _values(opts, name, text):
                if problem:
                    yield None, problem, None
                    return
                collected.append(value)
        yield ("".join(raw) if opts.raw_input else collected), "", None if files else "<stdin>"
        return
    for name, text, error in _sources(files, stdin):
        filename = "<stdin>" if name == "-" else name
        if text is None:
            yield None, error, filename
            continue
        for value, problem in _values(opts, name, text):
            yield value, problem, filename


def main(
    argv: Sequence[str],
    stdin: IO[str] | IO[bytes] | None = None,
    stdout: IO[str] | None = None,
    stderr: IO[str] | None = None,
) -> int:
    """Run `wlmap jq ARGV…`; returns the exit code."""
    out = stdout if stdout is not None else sys.stdout
    err = stderr if stderr is not None else sys.stderr
    if stdin is None:
        stdin = sys.stdin.buffer if hasattr(sys.stdin, "buffer") else sys.stdin
    try:
        opts = parse_flags(argv)
    except FlagError as e:
        err.write(f"{PROG}: {e}\n")
        return 2
    if opts.help:
        out.write(HELP)
        return 0
    runner = _Runner(opts, out, err)
    try:
        return _run(opts, runner, stdin)
    except BrokenPipeError:  # the reader went away (`| head`): stop quietly
        return 1
    except KeyboardInterrupt:  # Ctrl-C: stop as gojq does, without a traceback (128 + SIGINT)
        return 130
    except (RecursionError, MemoryError) as e:
        runner.error(f"{type(e).__name__}: the input or program is too large or too deep")
        return 5


def _run(opts: Options, runner: _Runner, stdin: IO[str] | IO[bytes] | None) -> int:
    if opts.indent is not None:
        if opts.indent > 9:
            runner.error(f"too many indentation count: {opts.indent}")
            return 5
        if opts.indent < 0:
            runner.error(f"negative indentation count: {opts.indent}")
            return 5
    variables: dict[str, Any] = {}
    named: dict[str, Any] = {}
    # argv holds undecodable bytes as lone surrogates: gojq reads them as U+FFFD
    for key, value in opts.named.items():
        variables[key] = named[key] = valid_text(value)
    for key, text in opts.named_json.items():
        try:
            variables[key] = named[key] = loads(text)
        except JsonDecodeError as e:
            runner.error(_json_error_display(f"${key}", text, e))
            return 5
    positional: list[Any] = []
    for kind, text in opts.positional:
        if kind == "args":
            positional.append(valid_text(text))
            continue
        try:
            positional.append(loads(text))
        except JsonDecodeError as e:
            runner.error(_json_error_display("--jsonargs", text, e))
            return 5
    variables["ARGS"] = {"named": named, "positional": positional}

    for key in [*opts.named, *opts.named_json]:
        if not _VAR_NAME.match(key):
            runner.error(f"compile error: invalid variable name: ${key}")
            return 3
    for key, path in opts.slurp_files.items():
        try:
            text = _read_file(path, None)
        except OSError as e:
            runner.error(str(e))
            return 5
        slurped = list(_values(Options(), path, text))
        problem = next((p for _, p in slurped if p), "")
        if problem:
            runner.error(problem)
            return 5
        variables[key] = named[key] = [v for v, _ in slurped]
    for key, path in opts.raw_files.items():
        try:
            variables[key] = named[key] = _read_file(path, None)
        except OSError as e:
            runner.error(str(e))
            return 5
    rest = list(opts.rest)
    if opts.from_file:
        if not rest:
            runner.error("expected a query file for flag `-f'")
            return 5
        try:
            query, qname = _read_file(rest[0], None), rest[0]
        except OSError as e:
            runner.error(str(e))
            return 5
        files = rest[1:]
    elif rest:
        query, files, qname = valid_text(rest[0].strip()), rest[1:], "<arg>"
    else:
        query, files, qname = ".", [], "<arg>"
    try:
        program = _compile(jq, query, list(variables))
    except JqParseError as e:
        # gojq: the error offset is the end of the bad token; the caret goes under its start
        offset = (e.offset or 0) - len(e.token or "") + 1
        runner.error(_caret_display("invalid query", qname, query, offset, e.message))
        return 3
    except JqCompileError as e:
        runner.error(f"compile error: {e.message}")
        return 3

    values: Iterator[tuple[Any, str, str | None]] = (
        iter([(None, "", None)]) if opts.null_input else _inputs(opts, files, stdin)
    )
    token = INPUT_FILENAME.set(None)
    try:
        return _evaluate(opts, runner, program, values, variables)
    finally:
        INPUT_FILENAME.reset(token)


def _evaluate(
    opts: Options,
    runner: _Runner,
    program: Any,
    values: Iterator[tuple[Any, str, str | None]],
    variables: dict[str, Any],
) -> int:
    """Run the program on every input; the exit code as gojq's."""
    exit_code = 0
    limits = _unlimited(jq)
    for value, problem, filename in values:
        INPUT_FILENAME.set(filename)
        if problem:
            runner.error(problem)
            exit_code = 5
            continue
        try:
            for result in _iterate(program, value, variables, limits):
                runner.write(result)
        except JqHaltError as e:
            _report_halt(runner, e)
            runner.stdout.flush()
            return e.exit_code
        except JqLimitError as e:
            runner.error(e.message)
            exit_code = 5
        except JqRuntimeError as e:
            runner.error(e.message)
            exit_code = 5
        except _OutputError as e:
            runner.error(str(e))
            exit_code = 5
    if exit_code:
        return exit_code
    if opts.exit_status:
        if runner.last_truthy is None:
            return 4
        return 0 if runner.last_truthy else 1
    return 0


def _report_halt(runner: _Runner, e: Any) -> None:
    value = getattr(e, "value", None)
    if value is None:
        return
    if type(value) is str:
        runner.stderr.write(value)
    else:
        runner.stderr.write(dumps(value, None) + "\n")


def _compile(jq: Any, query: str, names: list[str]) -> Any:
    return jq.compile(query, variables=[f"${n}" for n in names])


def _unlimited(jq: Any) -> Any:
    import dataclasses

    return dataclasses.replace(jq.DEFAULT_LIMITS, max_results=None, timeout=None, max_depth=100_000)


def _iterate(program: Any, value: Any, variables: dict[str, Any], limits: Any) -> Iterator[Any]:
    bound = {f"${k}": v for k, v in variables.items()}
    return iter(program.iter(value, variables=bound, limits=limits))
