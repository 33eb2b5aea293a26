"""What every command gets: streams, environment, settings, and lazy cluster/definitions.

The cluster is connected on first use only (offline commands never import the ``kubernetes``
package), and warnings are held back and printed after the main output, as the reference does.
"""

from __future__ import annotations

import argparse
import marshal
import os
import sys
import zlib
from collections.abc import Callable, Mapping
from typing import IO, TYPE_CHECKING, Any

import msgspec

from workload_map.catalog.definitions import Definitions
from workload_map.cli.config import Settings, load_settings
from workload_map.cli.exits import UsageError
from workload_map.cli.render import Styler, dump_document, wants_color
from workload_map.kube import cache_folder, paths
from workload_map.kube.errors import ClusterError, NotConfigured
from workload_map.kube.options import connection_options

if TYPE_CHECKING:
    from types import ModuleType

    from workload_map.kube import Cluster, ConnectionOptions

__all__ = ["Context", "for_command"]

_PROGRAMS_FILE = "jq-programs.marshal"
_PROGRAMS_FORMAT = 1
#: programs kept at most (the catalog's 46 definitions hold about 400)
_PROGRAMS_MAX = 2000

# what a user who may not list the cluster's Kartas sees on every command (can be turned off)
_KARTA_NOTICES = (
    "not allowed to list Karta definitions",
    "the kartas.run.ai CRD is not installed",
)
# a CLI-only user on a cluster without the CRD would see this on every call: it is said once per
# machine and cluster (a marker under the user's cache directory), and always with -v
_ONCE_PER_CLUSTER = "the kartas.run.ai CRD is not installed"


class Context(msgspec.Struct):
    stdin: IO[str]
    stdout: IO[str]
    stderr: IO[str]
    environ: Mapping[str, str]
    settings: Settings
    connection: ConnectionOptions
    #: the cluster client; None: the real one (see :meth:`cluster`)
    connect: Callable[[ConnectionOptions], Cluster] | None
    style: Styler
    err_style: Styler
    #: every ``--context`` given, before and after the subcommand (the multi-cluster issue
    #: builds on it; ``connection`` has the first)
    contexts: tuple[str, ...] = ()
    all_contexts: bool = False
    #: ``-o`` as given, for a command whose formats are its own (``definitions install``)
    own_output: str | None = None
    #: -v: notices said once per cluster are said every time
    verbose: bool = False
    warnings: list[str] = msgspec.field(default_factory=list)
    _cluster: Cluster | None = None
    _definitions: Definitions | None = None
    #: where the parsed jq programs are kept, under which key, and what was read from there
    _programs: tuple[str, list[Any], dict[str, Any]] | None = None

    @property
    def output(self) -> str:
        return self.settings.output

    def output_for(self, allowed: tuple[str, ...], command: str) -> str:
        """The output format for a command: an explicit ``-o`` must be allowed; an inherited
        one (config file, environment) that does not apply falls back to ``table``."""
        fmt = self.settings.output
        if fmt in allowed:
            return fmt
        if self.settings.output_source == "-o":
            raise UsageError(
                f"{command} does not support -o {fmt} (use one of: {', '.join(allowed)})"
            )
        return "table"

    def write_payload(self, payload: object) -> None:
        """A failed command's machine payload (:class:`~workload_map.cli.exits.CliError`) on
        stdout, as the ``-o json|yaml`` document it asked for (nothing for other formats)."""
        if self.output in ("json", "yaml"):
            self.stdout.write(dump_document(payload, self.output))

    def warn(self, message: str) -> None:
        if message not in self.warnings:
            self.warnings.append(message)

    def flush_warnings(self, prefix: str = "") -> None:
        if self._definitions is not None:  # warnings noted while resolving (stand-ins)
            for message in self._definitions.warnings:
                self.warn(message)
            self._definitions.warnings.clear()
            self._deadline_warnings()
        for message in self.warnings:
            if not self.settings.cluster_karta_warning and message.startswith(_KARTA_NOTICES):
                continue
            if message.startswith(_ONCE_PER_CLUSTER) and not self.verbose:
                if self._said_before(message):
                    continue
            self.stderr.write(f"{self.err_style('warning:', 'yellow')} {prefix}{message}\n")
        self.warnings.clear()

    def _said_before(self, message: str) -> bool:
        """True when ``message`` was already shown for this cluster on this machine; else
        remembers that it is shown now. An unwritable cache only means it is said again."""
        server = str(getattr(self._cluster, "server", "")) if self._cluster is not None else ""
        base = self.environ.get("XDG_CACHE_HOME") or paths.join(
            self.environ.get("HOME") or paths.home(), ".cache"
        )
        # a file name per (cluster, notice): two checksums, not hashlib, whose OpenSSL binding
        # costs every command ~12M instructions of start-up for a marker name
        said = f"{server}\n{message}".encode()
        key = f"{zlib.crc32(said):08x}{zlib.adler32(said):08x}"
        marker = paths.join(base, "workload-map", "notices", key)
        if paths.exists(marker):
            return True
        try:
            os.makedirs(paths.parent(marker), exist_ok=True)
            with open(marker, "w") as file:  # the locale's encoding, as Path.write_text
                file.write(f"{server}\n{message}\n")
        except OSError:
            pass
        return False

    def _timed_out(self) -> list[tuple[str, str]]:
        """(definition, expression) of every expression that ran past its deadline; the engine
        stopped evaluating it for the rest of the command."""
        used = self._definitions.used if self._definitions is not None else []
        if not used:
            return []
        # the engine's boundary: a command that used a definition has loaded the engine by
        # now; one that did not (crd, validate, completion, definitions) never loads it here
        from workload_map.cli.workload_view import timed_out_expressions

        return timed_out_expressions(used)

    def _deadline_warnings(self) -> None:
        for name, text in self._timed_out():
            self.warn(
                f'definition {name}: expression "{text}" ran past its deadline; '
                "it was not evaluated again for the remaining objects of this command"
            )

    def cluster(self) -> Cluster:
        """The connected cluster (raises :class:`~workload_map.cluster.ClusterError`)."""
        if self._cluster is None:
            self.check_kubeconfig()
            if self.connect is None:
                self.connect = _cluster_services().connection.connect
            self._cluster = self.connect(self.connection)
        return self._cluster

    def check_kubeconfig(self) -> None:
        """A ``--kubeconfig`` that names no file is an unreadable file (exit 2), in every
        command that connects."""
        kubeconfig = self.connection.kubeconfig
        if kubeconfig is not None and not paths.is_file(paths.expand(kubeconfig)):
            raise UsageError(f"--kubeconfig {kubeconfig}: no such file")

    def optional_cluster(self, *, explicit_only: bool = False) -> Cluster | None:
        """The cluster when one is configured, else None (silently, like the reference)."""

        if explicit_only and not self.connection.explicit:
            return None
        try:
            return self.cluster()
        except NotConfigured:
            return None
        except ClusterError as exc:
            self.warn(f"could not read Karta definitions from the cluster: {exc}")
            return None

    def definitions(self, cluster: Cluster | None) -> Definitions:
        """Catalog definitions merged with ``cluster``'s Kartas (warnings collected)."""
        if self._definitions is None:
            self._recall_programs()
            if cluster is None:  # offline: the core's catalog, no cluster code
                self._definitions = Definitions.builtin()
            else:
                self._definitions = _cluster_services().definitions.load(cluster)
        return self._definitions

    def _recall_programs(self) -> None:
        """The jq programs earlier commands parsed, rebuilt instead of parsed again (the
        definitions' programs are the same on every command: ``jq.trees``). They are kept in
        the cache folder under the parser's own files' sizes and times, so a changed parser
        (an upgrade, an edit) starts over; an unreadable file is a cache miss."""
        # jq is loaded by then in every command that evaluates (its engine imports it); the
        # others (definitions, completion) evaluate nothing and load no jq for this
        jq = sys.modules.get("workload_map.jq")
        root = cache_folder(self.connection.cache_dir, self.environ)
        if root is None or jq is None:
            return
        folder = os.path.dirname(str(jq.__file__))
        key: list[Any] = [_PROGRAMS_FORMAT]
        try:
            for name in ("ast.py", "lexer.py", "parser.py", "trees.py"):
                st = os.stat(os.path.join(folder, name))
                key.extend((st.st_size, st.st_mtime_ns))
        except OSError:
            return
        path = paths.join(root, _PROGRAMS_FILE)
        kept: dict[str, Any] = {}
        try:
            with open(path, "rb") as file:
                # loads of the bytes: load(file) reads each object's bytes by a call of its own
                data = marshal.loads(file.read())
            if type(data) is tuple and len(data) == 2 and data[0] == key and type(data[1]) is dict:
                kept = data[1]
        except (OSError, EOFError, ValueError, TypeError):
            pass
        jq.keep_trees(kept)
        self._programs = (path, key, kept)

    def keep_programs(self) -> None:
        """Keep the programs this command parsed for the next ones (see
        :meth:`_recall_programs`); failures only mean they are parsed again."""
        jq = sys.modules.get("workload_map.jq")
        if self._programs is None or jq is None:
            return
        fresh = jq.fresh_trees()
        if not fresh:
            return
        path, key, kept = self._programs
        # bounded: a file past the bound starts over with this command's programs
        programs = {**kept, **fresh} if len(kept) + len(fresh) <= _PROGRAMS_MAX else fresh
        try:
            paths.replace_file(path, marshal.dumps((key, programs)), 0o600)
        except (OSError, ValueError):  # ValueError: a value marshal cannot write
            pass

    @property
    def degraded(self) -> bool:
        """True when a definition the command used was a broken cluster Karta (or stood in
        for one), or one of its expressions ran past its deadline: the command then exits 1
        after printing what it could."""
        if self._definitions is None:
            return False
        return self._definitions.degraded or bool(self._timed_out())


def for_command(
    name: str,
    args: argparse.Namespace,
    streams: tuple[IO[str], IO[str], IO[str]],
    env: Mapping[str, str],
    err_style: Styler,
    connect: Callable[[ConnectionOptions], Cluster] | None,
    *,
    several_contexts: bool,
    shared_output: bool,
) -> Context:
    """The context ``wlmap NAME`` runs in, from its parsed flags: the settings, and the
    connection with the command's ``--context`` policy (contexts given before and after the
    subcommand count together). ``connect``: the cluster client (None: the real one, loaded
    on first use)."""
    stdin, stdout, stderr = streams
    output = getattr(args, "output", None)
    settings = load_settings(getattr(args, "config", None), output if shared_output else None, env)
    contexts = (
        *(getattr(args, "contexts_before", None) or ()),
        *(getattr(args, "contexts", None) or ()),
    )
    all_contexts = bool(getattr(args, "all_contexts", False))
    if not several_contexts:
        if len(contexts) > 1:
            raise UsageError(
                f"--context given more than once ({', '.join(contexts)}): "
                f"`wlmap {name}` talks to one cluster"
            )
        if all_contexts:
            raise UsageError(f"`wlmap {name}` does not take --all-contexts: name one --context")
    try:
        options = connection_options(args, env, contexts=contexts)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    return Context(
        stdin=stdin,
        stdout=stdout,
        stderr=stderr,
        environ=env,
        settings=settings,
        connection=options,
        contexts=contexts,
        all_contexts=all_contexts,
        own_output=None if shared_output else output,
        verbose=bool(getattr(args, "verbose", False)),
        connect=connect,
        style=Styler(wants_color(stdout, env)),
        err_style=err_style,
    )


def _cluster_services() -> ModuleType:
    """The connection boundary, the one lazy import besides the command table's: the cluster
    client (sockets, TLS, the kubeconfig reader) and the services over it load when a command
    first talks to a cluster, so an offline command (``describe -f``, ``validate``,
    ``verify``, ``definitions`` without a cluster) enters no cluster code
    (tests/cli/test_startup.py)."""
    import workload_map.cluster.connection
    import workload_map.cluster.definitions

    return workload_map.cluster
