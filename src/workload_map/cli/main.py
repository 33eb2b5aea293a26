"""``wlmap``: the command line (also installed as ``kubectl-wlmap``).

One command table (:data:`TABLE`): every command, the module it runs, and whether it talks to
several clusters. Every command takes kubectl's connection flags
(:mod:`workload_map.kube.flags`) before or after its name.

Start-up is most of what a command costs (benchmarks/live_bench.py, docs/cli.md), so the
table's import of the command's module (with the context it runs in) is the one lazy boundary
of each command (:func:`_load`): ``wlmap --help`` loads no command, and only the named
command's parser is built; the official ``kubernetes`` package
stays off every path but exec/auth-provider users' and the processes'. The process ends with
:func:`exit_now` (no interpreter teardown) and runs with a higher first GC threshold.
``main(argv, stdin, stdout, stderr)`` is the one error boundary: it never exits the process and
never prints a traceback for bad input, a bad kubeconfig or an unreachable server: it returns
the exit code of INTERFACES.md.
"""

from __future__ import annotations

import argparse
import io
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import IO, TYPE_CHECKING, Any, NamedTuple, NoReturn

from workload_map import __version__
from workload_map.cli.exits import ERROR, OK, CliError, UsageError
from workload_map.cli.style import Styler, wants_color
from workload_map.cli.suggest import did_you_mean
from workload_map.errors import WlmapError
from workload_map.kube.flags import CONNECTION_VALUE_FLAGS, add_connection_flags

if TYPE_CHECKING:
    from workload_map.kube import Cluster, ConnectionOptions

__all__ = [
    "COMMANDS",
    "LISTING",
    "TABLE",
    "Command",
    "entry",
    "exit_now",
    "kubectl_complete",
    "main",
]


class Command(NamedTuple):
    """One row of the command table."""

    #: the command's module: the one lazy import of each command (see :func:`_load`)
    module: str
    #: how it runs: "run" (``run(args, ctx)``, parsed here), "process" (``main(argv)``, a
    #: long-running process with its own parser, given the connection flags from before its
    #: name too) or "raw" (``main(argv, stdin, stdout, stderr)``: every word is its own)
    kind: str = "run"
    #: ``--context`` may repeat and ``--all-contexts`` is accepted
    several_contexts: bool = False
    #: ``-o`` selects one of the shared formats (config file and $WLMAP_OUTPUT apply)
    shared_output: bool = True
    #: the module's function for kind "run"
    function: str = "run"
    #: the module instead of ``module`` when the command reads files (``-f``): an offline
    #: command loads no cluster code
    file_module: str | None = None


_INSTALL, _UNINSTALL = "definitions install", "definitions uninstall"

#: every command: what ``wlmap NAME`` loads and how it runs
TABLE: dict[str, Command] = {
    "describe": Command(
        "workload_map.cli.describe_live", file_module="workload_map.cli.describe_cmd"
    ),
    "get": Command("workload_map.cli.get_cmd", several_contexts=True),
    "definitions": Command("workload_map.cli.definitions_cmd"),
    _INSTALL: Command("workload_map.cli.definitions_install", shared_output=False),
    _UNINSTALL: Command("workload_map.cli.definitions_install", shared_output=False),
    "validate": Command("workload_map.cli.validate_cmd", function="run_args"),
    "verify": Command("workload_map.cli.verify_cmd"),
    "crd": Command("workload_map.cli.crd_cmd", shared_output=False),
    "jq": Command("workload_map.cli.jq_cli", kind="raw"),
    "completion": Command("workload_map.cli.completion"),
    "__complete": Command("workload_map.cli.completion"),
    "serve": Command("workload_map.web.main", kind="process", several_contexts=True),
    "exporter": Command("workload_map.exporter.main", kind="process"),
    "operator": Command("workload_map.operator.main", kind="process"),
}
#: the commands of ``wlmap --help`` that this module parses (the others bring their parser)
COMMANDS = ("describe", "get", "definitions", "validate", "verify", "jq", "completion", "crd")
_VISIBLE = (*COMMANDS, "serve", "exporter", "operator")
#: each listed command's line in ``wlmap --help``, in its order
_HELP = {
    "describe": "components, pods, gangs and resources of one workload",
    "get": "list workloads with phase, pods and GPUs",
    "definitions": "the workload types wlmap understands",
    "validate": "check a Karta definition file",
    "verify": "prove a Karta definition against workload files (for CI)",
    "crd": "print or server-side apply the Karta CRD",
    "jq": "run a jq program (gojq compatible)",
    "operator": "the in-cluster operator (wlmap operator --help)",
    "exporter": "workloadmap_* Prometheus metrics (wlmap exporter --help)",
    "serve": "the local web view (wlmap serve --help)",
    "completion": "shell completion script",
}
#: ``build_parser``'s ``only`` for ``wlmap --help`` and ``--version`` (no command named): the
#: commands are listed, and none of their parsers gets its arguments
LISTING = ""
_VALUE_FLAGS = CONNECTION_VALUE_FLAGS | {"-o", "--output", "--config"}
_CONTEXT = "workload_map.cli.context"

_DESCRIPTION = "Workload-aware views of any Kubernetes workload type, from Karta definitions."
_EPILOG = """examples:
  wlmap get jobsets -n ml                       list JobSets with phase, pods and GPUs
  wlmap describe jobset/train -n ml             components, pods, gangs and resources
  wlmap describe -f job.yaml --pods pods.yaml   the same view offline, from files
  wlmap definitions                             the workload types wlmap understands
  wlmap validate my-karta.yaml                  check a Karta definition

exit codes: 0 ok, 1 error, 2 usage or unreadable file, 3 not in the cluster,
            4 no definition covers the type, 5 a bare name matches several workloads"""


_DESCRIBE_EPILOG = """examples:
  wlmap describe jobset/train -n ml              live: the object, its pods via owner chains
  wlmap describe jobsets -n ml                   every JobSet of the namespace
  wlmap describe pytorchjob resnet -o json       the same as JSON, stable for scripts
  wlmap describe train                           a bare name, looked up across covered types
  wlmap describe -f lws.yaml --pods pods.yaml    offline, pods from a file (or a List)
  wlmap describe -f my.yaml --definition k.yaml  with your own Karta
  wlmap describe -f all.yaml lws/vllm            pick one workload of a multi-object file
  wlmap describe jobset/train --explain          how each pod was placed and grouped

A file may hold several objects (a stream or a List): the one a definition covers is the
workload; the others only link pods' owner chains. What the definition cannot extract (a bad
quantity, a failing expression) is listed under Errors and printed as a warning; the exit code
stays 0 because the rest of the view is still right."""

_GET_EPILOG = """examples:
  wlmap get jobsets                      in the context's namespace
  wlmap get jobsets,lws -A --stuck       several types; only stuck workloads
  wlmap get rayclusters -A --phase Failed,Degraded
  wlmap get jobsets -w                   list, then print each change
  wlmap get jobsets -o custom-columns=NAME:.name,PHASE:.phases[*]
  wlmap get jobsets -o jsonpath='{range .items[*]}{.name}{"\\n"}{end}'
  wlmap get --all-types -o wide          every covered type, top-level workloads only
  wlmap get jobset/train -o yaml         one workload as YAML"""


_VERIFY_EPILOG = """examples:
  wlmap verify --definition k.yaml job.yaml --dump > expected.yaml   bootstrap a prediction
  wlmap verify --definition k.yaml job.yaml --predict expected.yaml --strict

exit codes: 0 ok, 1 load or validation error, 2 usage, 6 prediction mismatch,
            7 warnings under --strict"""


class _Exit(Exception):
    def __init__(self, status: int) -> None:
        super().__init__(status)
        self.status = status


class _Parser(argparse.ArgumentParser):
    """argparse that writes to the given streams and raises instead of exiting."""

    out: IO[str] = sys.stdout

    def _print_message(self, message: str, file: Any = None) -> None:
        # help and usage go to the injected stdout; errors never reach here (see error()).
        if message:
            self.out.write(message)

    def exit(self, status: int = 0, message: str | None = None) -> NoReturn:
        if message:
            raise UsageError(message.strip().removeprefix("error: "))
        raise _Exit(status)

    def error(self, message: str) -> NoReturn:
        raise UsageError(message, hint=f"see '{self.prog} --help'")

    def _get_formatter(self) -> argparse.HelpFormatter:
        # argparse builds a formatter for every add_argument, and its default width comes from
        # shutil, whose import (bz2, lzma, fnmatch) is ~7M instructions of every command
        formatter: Callable[..., argparse.HelpFormatter] = self.formatter_class
        return formatter(prog=self.prog, width=help_width())


def help_width() -> int:
    """argparse's default help width (``shutil.get_terminal_size().columns - 2``: $COLUMNS,
    else the terminal of ``sys.__stdout__``, else 80), without importing shutil."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
        columns = columns or 80
    return columns - 2


def _add_globals(
    parser: argparse.ArgumentParser, *, suppress: bool, several_contexts: bool = False
) -> None:
    """kubectl's connection flags (:mod:`workload_map.kube.flags`, the same set every
    command and process takes) and the output flags. The main parser's copy (before the
    subcommand) collects contexts apart, so that ``--context`` before and after the subcommand
    can be counted together; it accepts several, the command's policy is applied after."""
    g = parser.add_argument_group("cluster and output (kubectl style)")
    add_connection_flags(
        g,
        several_contexts=several_contexts or not suppress,
        suppress=suppress,
        context_dest="contexts" if suppress else "contexts_before",
    )
    g.add_argument(
        "-o",
        "--output",
        metavar="FORMAT",
        default=argparse.SUPPRESS if suppress else None,
        help="table, wide, json, yaml, name, jsonpath=TEMPLATE or custom-columns=SPEC "
        "(default: table, or the config file's)",
    )
    g.add_argument(
        "--config",
        metavar="FILE",
        default=argparse.SUPPRESS if suppress else None,
        help="wlmap config file (default: $WLMAP_CONFIG, $KARTA_CONFIG, "
        "~/.config/wlmap/config.yaml, ~/.karta/config.yaml)",
    )
    g.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        default=argparse.SUPPRESS if suppress else False,
        help="say every notice each time (the missing Karta CRD is otherwise said once per "
        "cluster)",
    )


def _int_at_least_zero(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must not be negative, got {value}")
    return value


def _flag_value(text: str) -> bool:
    """A kubectl-style boolean flag value (``--show-events=false``)."""
    value = {"true": True, "1": True, "t": True, "false": False, "0": False, "f": False}.get(
        text.strip().lower()
    )
    if value is None:
        raise argparse.ArgumentTypeError(f"expected true or false, got {text!r}")
    return value


def program_name(argv0: str) -> str:
    """``kubectl wlmap`` when run as kubectl's plugin binary ``kubectl-wlmap``, else ``wlmap``."""
    return "kubectl wlmap" if os.path.basename(argv0).startswith("kubectl-") else "wlmap"


def build_parser(
    out: IO[str], prog: str = "wlmap", only: str | None = None
) -> argparse.ArgumentParser:
    """The command tree; with ``only`` (a command the arguments name), that command's parser
    alone: its help, usage and errors are the same, and building the ten others costs several
    ms of every start-up (each parser looks up gettext catalogs and formats its arguments).
    With ``only`` = :data:`LISTING`, the commands' list alone (``wlmap --help``, the same
    text)."""
    _Parser.out = out
    parser = _Parser(
        prog=prog,
        description=_DESCRIPTION,
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    _add_globals(parser, suppress=False)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    if only == LISTING:
        # nothing is parsed after a command here (main() runs none): its arguments and the
        # connection flags of each (a quarter of the start-up of `wlmap --help`) are not built
        for name, text in _HELP.items():
            sub.add_parser(name, help=text, add_help=False)
        return parser

    raw = argparse.RawDescriptionHelpFormatter
    if only in (None, "describe"):
        d = sub.add_parser(
            "describe",
            formatter_class=raw,
            epilog=_DESCRIBE_EPILOG,
            help=_HELP["describe"],
            description="Describe one workload: live (TYPE/NAME or TYPE NAME) or "
            "offline from a file (-f FILE).",
        )
        d.add_argument("target", nargs="*", metavar="TYPE[/NAME] [NAME]")
        d.add_argument(
            "-f",
            "--file",
            metavar="FILE",
            help="read the workload from FILE (- = stdin); TYPE/NAME then picks one of its objects",
        )
        d.add_argument(
            "--pods",
            metavar="FILE",
            help="with -f: the workload's pods (YAML/JSON stream "
            "or List; other objects link owner chains)",
        )
        d.add_argument("--definition", metavar="FILE", help="use the Karta in FILE")
        d.add_argument(
            "--ref",
            action="append",
            metavar="FILE",
            help="with -f: objects the definition's references read (a TrainJob's runtime, "
            "…); repeatable; the file's other objects count too",
        )
        d.add_argument(
            "-A",
            "--all-namespaces",
            action="store_true",
            help="with a TYPE alone: in every namespace",
        )
        d.add_argument(
            "-l", "--selector", metavar="SELECTOR", help="with a TYPE alone: a label selector"
        )
        d.add_argument(
            "--explain", action="store_true", help="show how each pod was attributed and grouped"
        )
        d.add_argument(
            "--show-events",
            type=_flag_value,
            nargs="?",
            const=True,
            default=True,
            metavar="true|false",
            help="live: show the workload's events and its objects' warnings (default true; "
            "--show-events=false leaves them out, as with kubectl)",
        )
        d.add_argument(
            "--pod-limit",
            type=_int_at_least_zero,
            default=20,
            metavar="N",
            help="pods shown per component, unhealthy first (0 = all; default 20)",
        )
        d.add_argument(
            "--component-limit",
            type=_int_at_least_zero,
            default=0,
            metavar="N",
            help="components shown, those with problems first (0 = all; default)",
        )
        _add_globals(d, suppress=True)

    if only in (None, "get"):
        g = sub.add_parser(
            "get",
            formatter_class=raw,
            epilog=_GET_EPILOG,
            help=_HELP["get"],
            description="List workloads of a type (or of every covered type).",
        )
        g.add_argument(
            "target",
            nargs="*",
            metavar="TYPE[/NAME]",
            help="TYPE[,TYPE...] [NAME...], or TYPE/NAME [TYPE/NAME...]",
        )
        g.add_argument(
            "-A", "--all-namespaces", action="store_true", help="list in every namespace"
        )
        g.add_argument(
            "-l", "--selector", metavar="SELECTOR", help="label selector on the workload"
        )
        g.add_argument(
            "--phase",
            action="append",
            default=[],
            metavar="PHASE",
            help="keep workloads in this phase (repeatable, comma lists)",
        )
        g.add_argument(
            "--all-types", action="store_true", help="every covered type; only top-level workloads"
        )
        g.add_argument(
            "--chunk-size",
            type=int,
            default=500,
            metavar="N",
            help="list page size (default 500, 0 = no paging)",
        )
        g.add_argument(
            "-w", "--watch", action="store_true", help="after listing, watch for changes"
        )
        g.add_argument(
            "--watch-only", action="store_true", help="watch for changes without listing first"
        )
        g.add_argument("--no-headers", action="store_true", help="no header line in tables")
        g.add_argument("--show-labels", action="store_true", help="a LABELS column, last")
        g.add_argument(
            "-L",
            "--label-columns",
            action="append",
            default=[],
            metavar="KEY",
            help="a column per label key (repeatable, comma lists)",
        )
        g.add_argument(
            "--sort-by",
            metavar="JSONPATH",
            help="sort by this field of each -o json item (e.g. .createdAt, .metadata.name)",
        )
        g.add_argument(
            "--stuck",
            action="store_true",
            help="only workloads with pods Unschedulable or gangs short of their minimum",
        )
        _add_globals(g, suppress=True, several_contexts=True)

    if only in (None, "definitions"):
        f = sub.add_parser(
            "definitions",
            help=_HELP["definitions"],
            description="List definitions (built-in catalog + the cluster's Kartas) or show one; "
            "`definitions install|uninstall NAME…|--all` applies built-in definitions to the "
            "cluster as Kartas (see `wlmap definitions install --help`).",
        )
        f.add_argument("name", nargs="?", metavar="NAME")
        f.add_argument("--group", help="only definitions of this API group")
        f.add_argument("--kind", help="only this Kind (needs --group)")
        f.add_argument(
            "--version",
            dest="def_version",
            metavar="VERSION",
            help="only this version (needs --kind)",
        )
        f.add_argument(
            "--component-limit",
            type=_int_at_least_zero,
            default=3,
            metavar="N",
            help="components listed per definition (default 3, 0 = all)",
        )
        _add_globals(f, suppress=True)

    if only in (None, "validate"):
        v = sub.add_parser(
            "validate",
            help=_HELP["validate"],
            description="Validate a Karta definition offline.",
        )
        v.add_argument("file", metavar="FILE|-")
        v.add_argument(
            "--crd", metavar="CRDFILE", help="also check paths against this CRD's schema"
        )
        _add_globals(v, suppress=True)

    if only in (None, "verify"):
        y = sub.add_parser(
            "verify",
            formatter_class=raw,
            epilog=_VERIFY_EPILOG,
            help=_HELP["verify"],
            description="Read workload files through a Karta definition and compare what it implies "
            "with an expected prediction.",
        )
        y.add_argument("--definition", required=True, metavar="FILE", help="the Karta to prove")
        y.add_argument("workloads", nargs="+", metavar="WORKLOAD_FILE", help="workload objects")
        y.add_argument(
            "--ref",
            action="append",
            metavar="FILE",
            help="objects the definition's references read (repeatable; the workload files' "
            "other objects count too)",
        )
        y.add_argument("--predict", metavar="FILE", help="the expected prediction (docs/verify.md)")
        y.add_argument("--strict", action="store_true", help="warnings fail the run (exit 7)")
        y.add_argument(
            "--dump",
            action="store_true",
            help="print what the definition implies, as a --predict file",
        )
        _add_globals(y, suppress=True)

    if only in (_INSTALL, _UNINSTALL):  # `definitions install|uninstall`: reserved words
        verb = only.split()[1]
        i = sub.add_parser(
            "definitions",
            description=(
                "Apply built-in definitions to the cluster as Karta objects (server-side apply; "
                "a user's own Karta of the same type is never replaced)"
                if verb == "install"
                else "Delete installed copies of built-in definitions (a user's own Karta is kept)"
            ),
        )
        i.add_argument("verb", choices=(verb,), metavar=verb)
        i.add_argument("names", nargs="*", metavar="NAME", help="built-in definition names")
        i.add_argument(
            "--all",
            dest="all_definitions",
            action="store_true",
            help="every built-in definition"
            + (
                " whose kind the cluster serves (the others are listed)"
                if verb == "install"
                else ""
            ),
        )
        i.add_argument("--dry-run", action="store_true", help="ask the server, change nothing")
        if verb == "install":
            i.add_argument(
                "--force",
                action="store_true",
                help="take over a Karta of the same name that is not a catalog copy (never "
                "deletes another Karta of the same type)",
            )
            i.add_argument(
                "--include-unserved",
                action="store_true",
                help="with --all, also the definitions of kinds the cluster does not serve "
                "(each then says CRDNotFound until its CRD is installed)",
            )
        _add_globals(i, suppress=True)

    if only in (None, "crd"):
        r = sub.add_parser(
            "crd",
            help=_HELP["crd"],
            description="Print the Karta CRD of this wlmap version, or server-side apply it "
            "(the chart's CRD-upgrade hook runs `wlmap crd apply`).",
        )
        r.add_argument(
            "verb",
            choices=("show", "apply"),
            metavar="VERB",
            help="show: print the CRD as YAML; apply: server-side apply it and wait until "
            "Established",
        )
        r.add_argument(
            "--dry-run", action="store_true", help="with apply: ask the server, change nothing"
        )
        r.add_argument(
            "--timeout",
            type=float,
            default=60.0,
            metavar="SECONDS",
            help="with apply: wait this long for Established (default 60)",
        )
        _add_globals(r, suppress=True)

    if only is None:  # listed in `wlmap --help` only
        sub.add_parser("jq", help=_HELP["jq"], add_help=False)
        # processes with their own flags (the connection flags are the same set); listed here
        # for `wlmap --help`
        sub.add_parser("operator", help=_HELP["operator"])
        sub.add_parser("exporter", help=_HELP["exporter"])
        sub.add_parser("serve", help=_HELP["serve"])

    if only in (None, "completion"):
        c = sub.add_parser(
            "completion",
            help=_HELP["completion"],
            description="Print a completion script: source <(wlmap completion bash)",
        )
        c.add_argument("shell", choices=("bash", "zsh", "fish"))

    if only in (None, "__complete"):
        h = sub.add_parser("__complete")
        h.add_argument("words", nargs=argparse.REMAINDER)
        _add_globals(h, suppress=True)
    # keep the hidden command out of help listings
    sub._choices_actions = [a for a in sub._choices_actions if a.dest != "__complete"]
    return parser


def _first_positional(argv: Sequence[str]) -> tuple[int, str] | None:
    skip = False
    for index, token in enumerate(argv):
        if skip:
            skip = False
            continue
        if token == "--":
            return None
        if token.startswith("-"):
            if token in _VALUE_FLAGS:
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
                hint=did_you_mean(name, _VISIBLE) or f"see '{prog} --help'",
            )
        command = TABLE[name] if name is not None else None
        if command is not None and command.kind != "run":
            assert first is not None  # a named command
            return _run_own_parser(command, argv, first[0], (stdin, stdout, stderr))
        parser = build_parser(stdout, prog, LISTING if name is None else name)
        try:
            args, extra = parser.parse_known_args(argv)
        except _Exit as done:
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
    return _import(name), _import(_CONTEXT)


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
