"""Where the cluster is and who we are: kubeconfig (files, contexts) or in-cluster config.

kubectl's rules: ``--kubeconfig`` (one file, must exist) > ``$KUBECONFIG`` (a ``:``-separated
list, merged) > ``~/.kube/config``; then the in-cluster service account. The default namespace
comes from the context (or the service account's namespace file), else ``default``. The official
``kubernetes`` package is imported here only, and only when a live command needs a cluster.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from workload_map.cluster.errors import ClusterError, NotConfigured

__all__ = ["ConnectionOptions", "ResolvedConfig", "kubeconfig_files", "resolve"]

_SA_DIR = Path("/var/run/secrets/kubernetes.io/serviceaccount")


@dataclass(frozen=True)
class ConnectionOptions:
    """What the user asked for on the command line (kubectl's global flags)."""

    kubeconfig: str | None = None
    context: str | None = None
    namespace: str | None = None
    impersonate_user: str | None = None
    timeout: float = 30.0
    environ: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    service_account_dir: Path = _SA_DIR  # where a pod's token, CA and namespace are mounted

    @property
    def explicit(self) -> bool:
        """True when the user named a kubeconfig or context (so the cluster is wanted)."""
        return self.kubeconfig is not None or self.context is not None


@dataclass
class ResolvedConfig:
    """A ready ``kubernetes.client.Configuration`` plus what it came from."""

    configuration: Any
    namespace: str
    context: str | None
    source: str  # a kubeconfig path list, or "in-cluster"

    @property
    def server(self) -> str:
        return str(getattr(self.configuration, "host", "") or "")


def kubeconfig_files(options: ConnectionOptions) -> list[Path]:
    """The kubeconfig files that apply, in merge order (may be empty)."""
    if options.kubeconfig:
        path = Path(options.kubeconfig).expanduser()
        if not path.is_file():
            raise ClusterError(f"kubeconfig {options.kubeconfig}: no such file")
        return [path]
    env = options.environ.get("KUBECONFIG")
    if env:
        return [Path(p).expanduser() for p in env.split(os.pathsep) if p and Path(p).is_file()]
    home = options.environ.get("HOME")
    default = Path(home) / ".kube" / "config" if home else Path.home() / ".kube" / "config"
    return [default] if default.is_file() else []


def _in_cluster(options: ConnectionOptions) -> bool:
    env = options.environ
    token = options.service_account_dir / "token"
    return bool(env.get("KUBERNETES_SERVICE_HOST")) and token.is_file()


def resolve(options: ConnectionOptions) -> ResolvedConfig:
    """Load the client configuration the options select; raises :class:`ClusterError`."""
    files = kubeconfig_files(options)
    if files:
        return _from_kubeconfig(files, options)
    if _in_cluster(options):
        return _from_service_account(options)
    listed = [p for p in options.environ.get("KUBECONFIG", "").split(os.pathsep) if p]
    if listed:
        names = ", ".join(listed)
        raise NotConfigured(
            f"no cluster configured: KUBECONFIG names {names}, which "
            f"{'does' if len(listed) == 1 else 'do'} not exist; fix KUBECONFIG or pass "
            "--kubeconfig FILE"
        )
    raise NotConfigured(
        "no cluster configured: no kubeconfig ($KUBECONFIG, ~/.kube/config) and not running "
        "inside a cluster; pass --kubeconfig, or describe a file offline with -f FILE"
    )


def _from_kubeconfig(files: list[Path], options: ConnectionOptions) -> ResolvedConfig:
    from kubernetes import client, config  # type: ignore[import-untyped]
    from kubernetes.config.config_exception import (  # type: ignore[import-untyped]
        ConfigException,
    )

    joined = os.pathsep.join(str(f) for f in files)
    try:
        contexts, current = config.list_kube_config_contexts(joined)
    except (ConfigException, OSError, ValueError) as exc:
        raise ClusterError(f"kubeconfig {joined}: {exc}") from exc
    chosen: dict[str, Any] | None = current if isinstance(current, dict) else None
    if options.context is not None:
        chosen = next((c for c in contexts or [] if c.get("name") == options.context), None)
        if chosen is None:
            names = ", ".join(sorted(str(c.get("name")) for c in contexts or [])) or "none"
            raise ClusterError(
                f'context "{options.context}" not found in kubeconfig {joined} (contexts: {names})'
            )
    if chosen is None:
        raise ClusterError(f"kubeconfig {joined}: no current-context set; pass --context")
    configuration = client.Configuration()
    try:
        config.load_kube_config(
            config_file=joined,
            context=chosen.get("name"),
            client_configuration=configuration,
            persist_config=False,
        )
    except (ConfigException, OSError, ValueError, TypeError) as exc:
        raise ClusterError(f"kubeconfig {joined}: {exc}") from exc
    _tune(configuration)
    context_body = chosen.get("context") or {}
    namespace = options.namespace or context_body.get("namespace") or "default"
    return ResolvedConfig(configuration, str(namespace), str(chosen.get("name")), joined)


def _from_service_account(options: ConnectionOptions) -> ResolvedConfig:
    from kubernetes import client
    from kubernetes.config.config_exception import ConfigException
    from kubernetes.config.incluster_config import (  # type: ignore[import-untyped]
        InClusterConfigLoader,
    )

    sa_dir = options.service_account_dir
    configuration = client.Configuration()
    loader = InClusterConfigLoader(
        token_filename=str(sa_dir / "token"),
        cert_filename=str(sa_dir / "ca.crt"),
        environ=dict(options.environ),
    )
    try:
        loader.load_and_set(configuration)
    except (ConfigException, OSError) as exc:
        raise ClusterError(f"in-cluster configuration: {exc}") from exc
    _tune(configuration)
    namespace = options.namespace
    if namespace is None:
        try:
            namespace = (sa_dir / "namespace").read_text().strip() or "default"
        except OSError:
            namespace = "default"
    return ResolvedConfig(configuration, namespace, None, "in-cluster")


def _tune(configuration: Any) -> None:
    # One quick retry instead of urllib3's three: an unreachable server should fail fast.
    configuration.retries = 1
