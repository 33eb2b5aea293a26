"""The command table of ``wlmap``: every command, the module it runs, how it runs, its
connection-flag policy, and its parser.

:data:`TABLE` is read by :mod:`workload_map.cli.main` (the error boundary and the one lazy
import of each command); :func:`build_parser` builds the named command's parser only (with
``only``), since building the whole tree is several ms of every start-up. Every command takes
kubectl's connection flags (:mod:`workload_map.kube.flags`) before or after its name.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import IO, Any, NoReturn

from workload_map.cli.argparse_import import argparse
from workload_map.cli.exits import UsageError
from workload_map.kube.flags import CONNECTION_VALUE_FLAGS, add_connection_flags

__all__ = [
    "COMMANDS",
    "LISTING",
    "TABLE",
    "VALUE_FLAGS",
    "VISIBLE",
    "Command",
    "ParserExit",
    "build_parser",
    "help_width",
]


class Command:
    """One row of the command table.

    A plain slotted class rather than a ``NamedTuple``: the table is built at every start-up,
    and ``typing.NamedTuple`` compiles each (string) annotation and generates the tuple class
    (about 1M instructions of ``wlmap --help``, callgrind).
    """

    __slots__ = (
        "context",
        "file_module",
        "function",
        "kind",
        "module",
        "several_contexts",
        "shared_output",
    )

    def __init__(
        self,
        module: str,
        kind: str = "run",
        *,
        several_contexts: bool = False,
        shared_output: bool = True,
        function: str = "run",
        file_module: str | None = None,
        context: bool = True,
    ) -> None:
        #: the command's module: the one lazy import of each command (``cli.main._load``)
        self.module = module
        #: how it runs: "run" (``run(args, ctx)``, parsed here), "process" (``main(argv)``, a
        #: long-running process with its own parser, given the connection flags from before
        #: its name too) or "raw" (``main(argv, stdin, stdout, stderr)``: every word its own)
        self.kind = kind
        #: ``--context`` may repeat and ``--all-contexts`` is accepted
        self.several_contexts = several_contexts
        #: ``-o`` selects one of the shared formats (config file and $WLMAP_OUTPUT apply)
        self.shared_output = shared_output
        #: the module's function for kind "run"
        self.function = function
        #: the module instead of ``module`` when the command reads files (``-f``): an offline
        #: command loads no cluster code
        self.file_module = file_module
        #: kind "run" only: the command runs in a :mod:`context <workload_map.cli.context>`
        #: (settings, the connection); without, ``function(args, stdout)`` and no context
        #: is loaded (``completion SHELL`` prints a fixed script at every shell's start)
        self.context = context

    def __repr__(self) -> str:
        return f"Command({self.module!r}, {self.kind!r})"


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
    "completion": Command("workload_map.cli.completion_scripts", context=False),
    "__complete": Command("workload_map.cli.completion"),
    "serve": Command("workload_map.web.main", kind="process", several_contexts=True),
    "exporter": Command("workload_map.exporter.main", kind="process"),
    "operator": Command("workload_map.operator.main", kind="process"),
}
#: the commands of ``wlmap --help`` that this module parses (the others bring their parser)
COMMANDS = ("describe", "get", "definitions", "validate", "verify", "jq", "completion", "crd")
#: every command ``wlmap --help`` lists (typos are matched against these)
VISIBLE = (*COMMANDS, "serve", "exporter", "operator")
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
#: the flags before a command that take a value (the next word is not the command)
VALUE_FLAGS = CONNECTION_VALUE_FLAGS | {"-o", "--output", "--config"}

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


class ParserExit(Exception):
    """argparse finished the parse itself (``--help``): the exit status to return."""

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
        raise ParserExit(status)

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
            "--crd",
            action="append",
            metavar="CRDFILE",
            help="also check paths against the schemas of the CRDs in CRDFILE (repeatable: "
            "the root kind's and the kinds its references read)",
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
