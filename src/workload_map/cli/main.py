"""``wlmap``: the command line's boundary (also installed as ``kubectl-wlmap``).

The command table (:mod:`workload_map.cli.commands`) says what each command loads and how it
runs; this module finds the command a command line names, parses it, runs it, and is the one
error boundary: ``main(argv, stdin, stdout, stderr)`` never exits the process and never prints a
traceback for bad input, a bad kubeconfig or an unreachable server: it returns the exit code of
INTERFACES.md.

Start-up is most of what a command costs (benchmarks/live_bench.py, docs/cli.md), so the
table's import of the command's module (with the context it runs in) is the one lazy boundary
of each command (:func:`_load`): ``wlmap --help`` and ``--version`` load no command, and only
the named command's parser is built; the official ``kubernetes`` package stays off every path
but exec/auth-provider users' and the processes'. The process ends with :func:`exit_now` (no
interpreter teardown) and runs with a higher first GC threshold.
"""

from __future__ import annotations

import io
import os
import sys
import types
from collections.abc import Callable, Mapping, Sequence
from typing import IO, TYPE_CHECKING, Any, NoReturn

from workload_map import __version__
from workload_map.cli.argparse_import import argparse
from workload_map.cli.commands import (
    LISTING,
    TABLE,
    VALUE_FLAGS,
    VISIBLE,
    Command,
    ParserExit,
    build_parser,
)
from workload_map.cli.exits import ERROR, OK, CliError, UsageError
from workload_map.cli.style import Styler, wants_color
from workload_map.cli.suggest import did_you_mean
from workload_map.errors import WlmapError

if TYPE_CHECKING:
    from workload_map.kube import Cluster, ConnectionOptions

__all__ = ["entry", "exit_now", "kubectl_complete", "main", "program_name"]

#: the module every parsed command runs in (settings, the connection), loaded with the command
_CONTEXT = "workload_map.cli.context"


def program_name(argv0: str) -> str:
    """``kubectl wlmap`` when run as kubectl's plugin binary ``kubectl-wlmap``, else ``wlmap``."""
    return "kubectl wlmap" if os.path.basename(argv0).startswith("kubectl-") else "wlmap"


def _first_positional(argv: Sequence[str]) -> tuple[int, str] | None:
    skip = False
    for index, token in enumerate(argv):
        if skip:
            skip = False
            continue
        if token == "--":
            return None
        if token.startswith("-"):
            if token in VALUE_FLAGS:
                skip = True
            continue
        return index, token
    return None


def main(
    argv: Sequence[str] | None = None,
    stdin: IO[str] | None = None,
    stdout: IO[str] | None = None,
    stderr: IO[str] | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    connect: Callable[[ConnectionOptions], Cluster] | None = None,
    prog: str | None = None,
) -> int:
    """Run ``wlmap`` with ``argv`` (without the program name); returns the exit code.
    ``prog`` is the name usage lines show (default: from ``sys.argv[0]`` when ``argv`` is None)."""
    if prog is None:
        prog = program_name(sys.argv[0]) if argv is None else "wlmap"
    argv = list(sys.argv[1:] if argv is None else argv)
    stdin = stdin if stdin is not None else sys.stdin
    stdout = stdout if stdout is not None else sys.stdout
    stderr = stderr if stderr is not None else sys.stderr
    env = dict(os.environ if environ is None else environ)

    first = _first_positional(argv)
    if first is not None and first[1] == "help":  # `wlmap help [COMMAND]`, as git and kubectl
        argv = [*argv[first[0] + 1 : first[0] + 2], "--help"]
        first = _first_positional(argv)

    err_style = Styler(wants_color(stderr, env))
    ctx = None
    try:
        name = _command_name(argv, first)
        if name is not None and name not in TABLE:
            raise UsageError(
                f'unknown command "{name}" for "wlmap"',
                hint=did_you_mean(name, VISIBLE) or f"see '{prog} --help'",
            )
        command = TABLE[name] if name is not None else None
        if command is not None and command.kind != "run":
            assert first is not None  # a named command
            return _run_own_parser(command, argv, first[0], (stdin, stdout, stderr))
        parser = build_parser(stdout, prog, LISTING if name is None else name)
        try:
            args, extra = parser.parse_known_args(argv)
        except ParserExit as done:
            return done.status
        if extra:
            where = f"{prog} {args.command}" if args.command else prog
            raise UsageError(
                f"unrecognized arguments: {' '.join(extra)}", hint=f"see '{where} --help'"
            )
        if args.version:
            stdout.write(f"{__version__}\n")
            return OK
        if command is None or name is None:
            parser.print_help()
            return OK
        if not command.context:  # _load's boundary, without the context
            return int(getattr(_import(command.module), command.function)(args, stdout))
        module, context = _load(command, args)
        ctx = context.for_command(
            name,
            args,
            (stdin, stdout, stderr),
            env,
            err_style,
            connect,
            several_contexts=command.several_contexts,
            shared_output=command.shared_output,
        )
        if name == "__complete":  # completion reads the command tree it completes
            return int(module.complete(args.words, ctx, lambda: build_parser(stdout, prog)))
        code = int(getattr(module, command.function)(args, ctx))
        # an answer resting on a broken cluster Karta is shown, but is not a success
        return ERROR if code == OK and ctx.degraded else code
    except CliError as exc:
        if exc.payload is not None and ctx is not None:
            ctx.write_payload(exc.payload)
        if ctx is not None:
            ctx.flush_warnings()
        _print_error(stderr, err_style, exc.message, exc.hint)
        return exc.code
    except KeyboardInterrupt:
        stderr.write("\n")
        return 130
    except BrokenPipeError:
        return OK
    except WlmapError as exc:  # a known failure a command did not map itself
        if ctx is not None:
            ctx.flush_warnings()
        _print_error(stderr, err_style, str(exc), None)
        return ERROR
    except Exception as exc:  # a bug: say so briefly; the traceback only on request
        if env.get("WLMAP_DEBUG"):
            raise
        if ctx is not None:
            ctx.flush_warnings()
        message = f"internal error (a bug in wlmap): {type(exc).__name__}: {exc}"
        hint = "please report it with the command line; WLMAP_DEBUG=1 shows the traceback"
        _print_error(stderr, err_style, message, hint)
        return ERROR
    finally:
        if ctx is not None:
            ctx.flush_warnings()
            ctx.keep_programs()


def _command_name(argv: Sequence[str], first: tuple[int, str] | None) -> str | None:
    """The table's key for ``argv``: the first word, or ``definitions install|uninstall``."""
    if first is None:
        return None
    index, word = first
    if word == "definitions":
        rest = _first_positional(argv[index + 1 :])
        if rest is not None and rest[1] in ("install", "uninstall"):
            return f"definitions {rest[1]}"
    return word


def _load(command: Command, args: argparse.Namespace) -> tuple[Any, Any]:
    """The one lazy boundary of each command: its module, and the :mod:`context
    <workload_map.cli.context>` a parsed command runs in (settings, the connection, the cluster
    client on first use), imported when that command runs. Start-up is most of what a command
    costs, so ``wlmap --help`` imports neither, and no command imports another's needs
    (tests/cli/test_startup.py pins the module sets)."""
    reads_files = command.file_module is not None and getattr(args, "file", None) is not None
    name = command.file_module if reads_files and command.file_module else command.module
    standing_in = _stand_ins(_DEFERRED)
    try:
        _import_msgspec()
        return _import(name), _import(_CONTEXT)
    finally:
        for module in standing_in:
            if sys.modules.get(module.__name__) is module:
                del sys.modules[module.__name__]


#: modules that a command's imports bind but that no command uses while it runs: ``dataclasses``
#: imports ``inspect`` (with ``ast``, ``dis`` and ``tokenize``: ~20M instructions of a live
#: ``get``'s 440M, callgrind) only to write the signature of a dataclass declared without a
#: docstring, and ``copy`` (with ``weakref``, ~1M) for ``asdict``; msgspec's package imports its
#: ``inspect`` (its type descriptions, ~5M) and, for its JSON Schema generator, ``textwrap``
#: (~4M); ``urllib.parse`` imports ``ipaddress`` (~5M) for bracketed IPv6 hosts only; the jq
#: encoder ``heapq`` for ``limit``-like builtins. Each is a :class:`_Deferred` stand-in while
#: the command's modules load.
_DEFERRED = ("inspect", "msgspec.inspect", "textwrap", "ipaddress", "copy", "heapq")


class _Deferred(types.ModuleType):
    """A stand-in in ``sys.modules`` for a module not imported yet: an ``import`` of it binds the
    stand-in, whose first attribute read imports the real module (then in ``sys.modules`` for
    every later import) and answers from it. So a module bound while the command's modules
    load costs nothing until something uses it, and then works as imported. Only the import
    statement binds it; ``from MODULE import NAME`` reads the attribute, so it loads the real
    module as before.

    Why not :class:`importlib.util.LazyLoader`, which makes such stand-ins too: on Python 3.11
    an ``import`` statement of a module already in ``sys.modules`` reads its ``__spec__`` (to
    see whether it is still initialising), and any attribute read runs a lazy module; so the
    ``import inspect`` of ``dataclasses`` would load it at once (``inspect``, ``ast``, ``dis``,
    ``tokenize``: a live ``get`` measured 446M instructions with it against 408M, callgrind).
    A stand-in here is a plain module object, whose ``__spec__`` is its own attribute."""

    def __getattr__(self, name: str) -> Any:
        if sys.modules.get(self.__name__) is self:
            del sys.modules[self.__name__]
        return getattr(_import(self.__name__), name)


def _stand_ins(names: Sequence[str], kind: type[_Deferred] | None = None) -> list[_Deferred]:
    """A :class:`_Deferred` (or ``kind``) in ``sys.modules`` for each of ``names`` not imported
    yet (the caller removes those still there once its imports are done)."""
    out = []
    for name in names:
        if name not in sys.modules:
            sys.modules[name] = stand_in = (kind or _Deferred)(name)
            out.append(stand_in)
    return out


def _import_msgspec() -> None:
    """Import msgspec (every command's context needs it) without ``typing_extensions``.

    msgspec's C core and its ``_utils`` import ``typing_extensions`` when it is installed, only
    to also recognise that package's ``TypedDict`` and ``get_type_hints``; without it they use
    :mod:`typing`'s, which is all this project declares (no module imports
    ``typing_extensions``). Importing it costs about 9M instructions of a live ``get``'s 470M
    (callgrind, docs/cli.md). So it is hidden for msgspec's import only (a ``None`` in
    ``sys.modules`` makes the import fail, which msgspec handles), then left importable for
    anything that asks later (aiohttp in the processes)."""
    if "msgspec" in sys.modules or "typing_extensions" in sys.modules:
        return
    sys.modules["typing_extensions"] = None  # type: ignore[assignment]
    posix = hasattr(os, "uname") and "uuid" not in sys.modules
    standing_in = _stand_ins(("platform",), _Platform) if posix else []
    import typing

    forward_ref = typing.ForwardRef
    typing.ForwardRef = _ForwardRefProbe  # type: ignore[misc,assignment]
    try:
        import msgspec  # noqa: F401
    finally:
        typing.ForwardRef = forward_ref  # type: ignore[misc]
        if "typing_extensions" in sys.modules and sys.modules["typing_extensions"] is None:
            del sys.modules["typing_extensions"]
        for module in standing_in:
            if sys.modules.get(module.__name__) is module:
                del sys.modules[module.__name__]


class _ForwardRefProbe:
    """``typing.ForwardRef`` while msgspec imports: its ``_utils`` builds ``ForwardRef("Foo",
    is_class=True)`` once, only to learn whether the keyword exists (it does on every Python
    this project supports), and throws it away. The real one calls the ``compile`` builtin,
    whose first call in a process builds the ``ast`` module's ~120 node types (~10M
    instructions of a live ``get``, callgrind) that nothing else on a command's path needs.
    Same signature, nothing built; msgspec's own calls, later, reach the real class."""

    def __init__(
        self, arg: str, is_argument: bool = True, module: Any = None, *, is_class: bool = False
    ) -> None:
        pass


class _Platform(_Deferred):
    """``platform`` while msgspec's C core imports ``uuid`` (for its UUID type): ``uuid`` asks
    ``platform.system()`` once, at its import, and loading ``platform`` for it (its regular
    expressions, ``sys.version`` parsing) costs ~9M instructions of a live ``get`` (callgrind).
    The answer is the kernel's name, as ``platform.system()`` gives it on a POSIX system
    (``uuid`` asks on no other); any other attribute is the real module's."""

    @staticmethod
    def system() -> str:
        return os.uname().sysname


def _import(name: str) -> Any:
    """The module ``name``, through the import statement's machinery (``__import__``), not
    ``importlib.import_module``: ``python -X importtime`` reports only the former, and the
    start-up test reads which modules a command loads from it."""
    return __import__(name, fromlist=["__name__"])


def _run_own_parser(
    command: Command, argv: list[str], index: int, streams: tuple[IO[str], IO[str], IO[str]]
) -> int:
    """A command with its own parser. A process (serve, exporter, operator) parses the same
    connection flags, so those given before its name are passed on, in front (``wlmap
    --kubeconfig F operator`` is ``wlmap operator --kubeconfig F``); ``jq``'s words are its
    own. argparse ends the process on a usage error or ``--help``: its code is returned."""
    rest = argv[index + 1 :]
    module = _import(command.module)  # _load's boundary: no context needed
    try:
        if command.kind == "raw":
            return int(module.main(rest, *streams))
        return int(module.main([*argv[:index], *rest]))
    except SystemExit as done:
        code = done.code
        return code if isinstance(code, int) else (0 if code is None else 2)


def _print_error(stderr: IO[str], style: Any, message: str, hint: str | None) -> None:
    stderr.write(f"{style('error:', 'red', 'bold')} {message}\n")
    if hint:
        stderr.write(f"{hint}\n")


def kubectl_complete() -> None:
    """Entry point ``kubectl_complete-wlmap``: kubectl (1.26+) runs it for ``kubectl wlmap <TAB>``
    with the words after ``wlmap``, and reads Cobra's protocol back: one candidate per line,
    then ``:DIRECTIVE`` (4: no file names, 0: let the shell complete files)."""
    words = sys.argv[1:]
    if words[:1] == ["__complete"]:  # some plugin managers call it the way Cobra's own is called
        words = words[1:]
    out = io.StringIO()
    main(["__complete", *words], io.StringIO(), out, io.StringIO())
    current = words[-1] if words else ""
    lines = [line for line in out.getvalue().splitlines() if line]
    if lines != [":files"]:  # the word under the cursor narrows the list, as shells would
        lines = [line for line in lines if line.startswith(current)]
    if lines == [":files"]:
        sys.stdout.write(":0\n")
    else:
        sys.stdout.write("".join(f"{line}\n" for line in lines) + ":4\n")
    sys.stdout.flush()


def entry() -> None:
    """Console-script entry point (``wlmap`` and ``kubectl-wlmap``)."""
    import gc

    # A command allocates mostly objects that live to its end (modules, classes, definitions,
    # the parsed input) and few cycles: with Python's first-generation threshold (700) the
    # collector walks them hundreds of times during start-up (~7% of a describe's CPU). The
    # operator sets its own thresholds (--gc-thresholds).
    gc.set_threshold(50_000, 20, 10)
    try:
        code = main()
        sys.stdout.flush()
    except BrokenPipeError:
        # Output piped into `head` etc.: silence the flush error at exit too.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        code = OK
    exit_now(code)


def exit_now(code: int) -> NoReturn:
    """End the process without the interpreter's teardown once the command is done.

    Tearing down every imported module and freeing the objects one by one costs about 30 ms
    of CPU after the output is written (10% of a live ``get``); nothing of it is observable.
    What a normal exit does that matters is kept: the ``atexit`` handlers run (a
    ``weakref.finalize`` of a temporary directory, logging) and the streams are flushed. While
    a non-daemon thread still runs (an embedding caller's), the normal exit joins it instead.
    """
    import atexit

    threading = sys.modules.get("threading")
    if threading is not None and any(
        t.is_alive() and not t.daemon and t is not threading.main_thread()
        for t in threading.enumerate()
    ):
        raise SystemExit(code)
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe or stream: nothing left to write
            pass
    os._exit(code)


if __name__ == "__main__":
    entry()
