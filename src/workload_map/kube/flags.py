"""kubectl's connection flags, defined once for every command and process.

``wlmap`` (every subcommand, before or after the subcommand's name), ``wlmap serve``,
``wlmap exporter``, ``wlmap operator`` and the ``workload-map-operator`` entry point add the
same flags with :func:`add_connection_flags` and turn them into one
:class:`~workload_map.kube.options.ConnectionOptions` with
:func:`~workload_map.kube.options.connection_options`; which
kubeconfig applies (``--kubeconfig``, then ``$KUBECONFIG``, then ``~/.kube/config``, then the
in-cluster service account, as kubectl) is decided by
:func:`workload_map.kube.kubeconfig.resolve` alone. It lives in the I/O layer, beside
the options it builds, because the operator's own entry point may not import the command line's
modules (tests/test_rooms.py); it imports only the standard library (not even the options'
msgspec): ``wlmap --help`` builds a parser, and nothing more. The read-write client the processes open
from the options: :func:`workload_map.kube.connect_api.open_api`.
"""

from __future__ import annotations

import argparse
import re
from typing import Any

__all__ = ["CONNECTION_VALUE_FLAGS", "add_connection_flags", "parse_timeout"]

#: the connection flags that take a value (a scan for the subcommand's name skips their values)
CONNECTION_VALUE_FLAGS = frozenset(
    {
        "--kubeconfig",
        "--context",
        "--as",
        "--as-group",
        "--request-timeout",
        "--cache-dir",
        "-n",
        "--namespace",
    }
)

_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


def parse_timeout(text: str) -> float | None:
    """kubectl's ``--request-timeout``: seconds (``30``, ``2.5``) or a Go duration (``5s``,
    ``1m30s``, ``500ms``); ``0`` means no timeout (None). Raises ``ValueError``."""
    value = text.strip()
    try:
        seconds = float(value)
    except ValueError:
        parts = re.findall(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)", value)
        if not parts or "".join(n + u for n, u in parts) != value:
            raise ValueError(
                f"invalid --request-timeout {text!r}: expected seconds (30, 2.5) or a "
                "duration (5s, 1m, 500ms); 0 means no timeout"
            ) from None
        seconds = sum(float(n) * _UNITS[u] for n, u in parts)
    if seconds != seconds or seconds < 0 or seconds == float("inf"):
        raise ValueError(f"invalid --request-timeout {text!r}: must be a finite, non-negative time")
    return seconds or None


class _ContextOnce(argparse.Action):
    """``--context`` of a command that talks to one cluster: a second one is a usage error
    (the last one silently winning would act on a cluster the user may not have meant)."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        given = getattr(namespace, self.dest, None)
        if isinstance(given, list) and given:
            parser.error(
                f"--context given more than once ({given[0]}, {values}): "
                "this command talks to one cluster"
            )
        setattr(namespace, self.dest, [values])


def add_connection_flags(
    parser: argparse.ArgumentParser | Any,
    *,
    several_contexts: bool = False,
    several_namespaces: bool = False,
    suppress: bool = False,
    context_dest: str = "contexts",
    namespace_help: str = "namespace (default: the context's)",
) -> None:
    """kubectl's connection flags on ``parser`` (a parser or an argument group).

    ``several_contexts`` (``get``, ``serve``): ``--context`` may repeat and ``--all-contexts``
    is accepted; elsewhere a second ``--context`` is a usage error. ``several_namespaces``:
    ``-n`` may repeat (``serve``). ``suppress`` leaves a flag the user did not give out of the
    parsed namespace (a subcommand's copy of flags the main parser also has).
    ``context_dest`` names where the contexts go (a list), so that contexts given before and
    after a subcommand can be counted together."""

    def default(value: Any) -> Any:
        return argparse.SUPPRESS if suppress else value

    parser.add_argument(
        "--kubeconfig",
        metavar="FILE",
        default=default(None),
        help="kubeconfig file (default: $KUBECONFIG, ~/.kube/config, else in-cluster)",
    )
    if several_contexts:
        parser.add_argument(
            "--context",
            dest=context_dest,
            metavar="NAME",
            action="append",
            default=default(None),
            help="kubeconfig context to use (repeatable)",
        )
        parser.add_argument(
            "--all-contexts",
            action="store_true",
            default=default(False),
            help="every context of the kubeconfig",
        )
    else:
        parser.add_argument(
            "--context",
            dest=context_dest,
            metavar="NAME",
            action=_ContextOnce,
            default=default(None),
            help="kubeconfig context to use",
        )
    parser.add_argument(
        "-n",
        "--namespace",
        metavar="NS",
        action="append" if several_namespaces else "store",
        default=default(None),
        help=namespace_help,
    )
    parser.add_argument(
        "--as", dest="as_user", metavar="USER", default=default(None), help="impersonate this user"
    )
    parser.add_argument(
        "--as-group",
        dest="as_groups",
        action="append",
        metavar="GROUP",
        default=default(None),
        help="impersonate this group (repeatable)",
    )
    parser.add_argument(
        "--cache-dir",
        metavar="DIR",
        default=default(None),
        help="where discovery is cached (default: $XDG_CACHE_HOME/workload-map or "
        "~/.cache/workload-map; empty: no cache)",
    )
    parser.add_argument(
        "--request-timeout",
        metavar="DURATION",
        default=default(None),
        help="per-request timeout: seconds or a duration such as 5s, 1m (0 = none; default 30s)",
    )
