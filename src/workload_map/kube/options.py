"""What the user asked for on the command line (kubectl's global flags), as one value.

Its own module because every command builds one, offline ones too, while only a command that
talks to a cluster needs :mod:`workload_map.kube.kubeconfig` to resolve it. Every process (the
CLI's reads and writes, the operator, the exporter, the web view) resolves its connection from
one of these: :func:`connection_options` reads it off the parsed flags of
:func:`workload_map.kube.flags.add_connection_flags`.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping

import msgspec

from workload_map.kube.flags import parse_timeout

__all__ = ["SERVICE_ACCOUNT_DIR", "ConnectionOptions", "connection_options"]

#: where a pod's service-account token, CA and namespace are mounted (a string, not a
#: ``Path``: every command builds the options, and pathlib is not imported for them)
SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"


class ConnectionOptions(msgspec.Struct, frozen=True):
    """What the user asked for on the command line (kubectl's global flags)."""

    kubeconfig: str | None = None
    context: str | None = None
    namespace: str | None = None
    impersonate_user: str | None = None
    impersonate_groups: tuple[str, ...] = ()
    timeout: float | None = 30.0  # seconds per request (connect, read and total); None: none
    environ: Mapping[str, str] = msgspec.field(default_factory=lambda: dict(os.environ))
    service_account_dir: str | os.PathLike[str] = SERVICE_ACCOUNT_DIR
    impersonate_uid: str | None = None  # --as-uid (the operator's flag)
    #: --cache-dir: where discovery is kept between commands ("" none; None the default)
    cache_dir: str | None = None

    @property
    def explicit(self) -> bool:
        """True when the user named a kubeconfig or context (so the cluster is wanted)."""
        return self.kubeconfig is not None or self.context is not None


def connection_options(
    args: argparse.Namespace,
    environ: Mapping[str, str],
    *,
    default_timeout: float | None = 30.0,
    contexts: tuple[str, ...] | None = None,
) -> ConnectionOptions:
    """The connection :func:`workload_map.kube.flags.add_connection_flags`'s flags in ``args``
    select (one context: the first of ``contexts``, default the parsed ``--context``s), with
    ``environ`` for $KUBECONFIG and $HOME. Raises ``ValueError`` for a bad
    ``--request-timeout``."""
    if contexts is None:
        contexts = tuple(getattr(args, "contexts", None) or ())
    namespace = getattr(args, "namespace", None)
    if isinstance(namespace, list):  # a repeatable -n: the first is the default namespace
        namespace = namespace[0] if namespace else None
    timeout_text = getattr(args, "request_timeout", None)
    return ConnectionOptions(
        kubeconfig=getattr(args, "kubeconfig", None),
        context=contexts[0] if contexts else None,
        namespace=namespace,
        impersonate_user=getattr(args, "as_user", None),
        impersonate_groups=tuple(getattr(args, "as_groups", None) or ()),
        impersonate_uid=getattr(args, "as_uid", None),
        timeout=default_timeout if timeout_text is None else parse_timeout(str(timeout_text)),
        environ=environ,
        cache_dir=getattr(args, "cache_dir", None),
    )
