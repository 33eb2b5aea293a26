"""Where the cluster is and who we are: the one kubeconfig resolution of every process.

kubectl's rules: ``--kubeconfig`` (one file, must exist) > ``$KUBECONFIG`` (a ``:``-separated
list, merged: the first file to name a cluster, user or context wins, and the first non-empty
``current-context``) > ``~/.kube/config``; then the in-cluster service account. Relative paths
in a file are relative to that file. The default namespace comes from the context (or the
service account's namespace file), else ``default``.

Everything a request needs comes out as one :class:`ResolvedConfig`: the server, TLS material
(CA, client certificate, ``insecure-skip-tls-verify``, ``tls-server-name``), the proxy
(``proxy-url``, else ``HTTPS_PROXY``/``HTTP_PROXY`` minus ``NO_PROXY``, as Go's clients read
them; loopback servers never go through one),
the credentials (bearer token or token file, basic auth, an ``exec`` plugin, an
``auth-provider``; run by :mod:`workload_map.kube.auth`), impersonation (the user's ``as``,
``as-groups``, ``as-uid``, ``as-user-extra``; the ``--as``/``--as-group`` flags replace them,
as in kubectl) and the request timeout. The CLI, the operator, the exporter and the web view
all resolve through :func:`resolve`, from the :class:`ConnectionOptions` their flags give.
"""

from __future__ import annotations

import os
from binascii import a2b_base64
from collections.abc import Mapping
from typing import Any

import msgspec

from workload_map.kube import kubeconfig_cache, paths
from workload_map.kube.cache_dir import cache_folder
from workload_map.kube.errors import ClusterError, NotConfigured
from workload_map.kube.options import ConnectionOptions
from workload_map.kube.paths import expand, is_dir, is_file, join, parent
from workload_map.kube.urls import quote
from workload_map.yaml_import import import_yaml

__all__ = [
    "Impersonation",
    "ResolvedConfig",
    "env_proxy",
    "kubeconfig_contexts",
    "kubeconfig_files",
    "kubeconfig_needs_yaml",
    "resolve",
]


class Impersonation(msgspec.Struct, frozen=True):
    """Who the requests act as (kubectl's ``--as``/``--as-group``, or the kubeconfig user's
    ``as``/``as-groups``/``as-uid``/``as-user-extra``)."""

    user: str | None = None
    groups: tuple[str, ...] = ()
    uid: str | None = None
    extra: tuple[tuple[str, str], ...] = ()

    def __bool__(self) -> bool:
        return bool(self.user or self.groups or self.uid or self.extra)

    def headers(self) -> list[tuple[str, str]]:
        """The ``Impersonate-*`` header lines; a group or an extra value is one line each (the
        API server reads every line as one value, a comma is part of the value)."""
        out: list[tuple[str, str]] = []
        if self.user:
            out.append(("Impersonate-User", self.user))
        if self.uid:
            out.append(("Impersonate-Uid", self.uid))
        out.extend(("Impersonate-Group", g) for g in self.groups)
        out.extend((f"Impersonate-Extra-{quote(k, safe='')}", v) for k, v in self.extra)
        return out


class ResolvedConfig(msgspec.Struct, frozen=True):
    """Everything a request needs: the server, TLS material, credentials, impersonation and
    the timeout."""

    server: str
    namespace: str
    context: str | None
    source: str  # a kubeconfig path list, or "in-cluster"
    ca_file: str | None = None
    ca_data: bytes | None = None
    cert_file: str | None = None
    cert_data: bytes | None = None
    key_file: str | None = None
    key_data: bytes | None = None
    token: str | None = None
    token_file: str | None = None
    username: str | None = None
    password: str | None = None
    insecure: bool = False
    tls_server_name: str | None = None
    proxy_url: str | None = None
    #: the user's ``exec`` plugin (run by kube.auth) and ``auth-provider`` (name and config)
    exec_plugin: dict[str, Any] | None = None
    auth_provider: dict[str, Any] | None = None
    user_name: str | None = None
    impersonation: Impersonation = Impersonation()
    timeout: float | None = 30.0  # seconds per request; None: none


def kubeconfig_files(options: ConnectionOptions) -> list[str]:
    """The kubeconfig files that apply, in merge order (may be empty), each as the ``str`` of
    its ``Path`` (:mod:`workload_map.kube.paths`)."""
    if options.kubeconfig:
        path = expand(options.kubeconfig)
        if is_dir(path):
            raise ClusterError(f"kubeconfig {options.kubeconfig}: is a directory, not a file")
        if not is_file(path):
            raise ClusterError(f"kubeconfig {options.kubeconfig}: no such file")
        return [path]
    env = options.environ.get("KUBECONFIG")
    if env:
        listed = [expand(p) for p in env.split(os.pathsep) if p]
        files = [p for p in listed if is_file(p)]
        dirs = [p for p in listed if is_dir(p)]
        if not files and dirs:
            names = ", ".join(dirs)
            raise NotConfigured(
                f"no cluster configured: KUBECONFIG names {names}, which "
                f"{'is a directory' if len(dirs) == 1 else 'are directories'}; KUBECONFIG "
                "lists kubeconfig files (e.g. ~/.kube/config), not folders"
            )
        return files
    home = options.environ.get("HOME")
    default = join(home or paths.home(), ".kube", "config")
    return [default] if is_file(default) else []


def _in_cluster(options: ConnectionOptions) -> bool:
    env = options.environ
    token = join(options.service_account_dir, "token")
    return bool(env.get("KUBERNETES_SERVICE_HOST")) and is_file(token)


def resolve(options: ConnectionOptions) -> ResolvedConfig:
    """The connection the options select; raises :class:`ClusterError`."""
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


class _Merged(msgspec.Struct):
    """The kubeconfig files merged by kubectl's first-wins rules; entries keep their file."""

    source: str
    clusters: dict[str, tuple[dict[str, Any], str]] = msgspec.field(default_factory=dict)
    users: dict[str, tuple[dict[str, Any], str]] = msgspec.field(default_factory=dict)
    contexts: dict[str, dict[str, Any]] = msgspec.field(default_factory=dict)
    current: str = ""


def _read(path: str) -> tuple[bytes, str]:
    try:
        with open(path, "rb") as fh:
            data = fh.read()
        return data, data.decode("utf-8")
    except OSError as exc:
        raise ClusterError(f"kubeconfig {path}: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise ClusterError(f"kubeconfig {path}: not UTF-8 ({exc})") from exc


def _document(path: str, root: str | None) -> Any:
    """The parsed kubeconfig file: from the skeleton :mod:`~workload_map.kube.kubeconfig_cache`
    kept of its last parse when the file is unchanged, else parsed with PyYAML (and its
    skeleton kept for the next command)."""
    data, text = _read(path)
    if root is not None:
        doc = kubeconfig_cache.load(root, path, data, text)
        if doc is not kubeconfig_cache.MISS:
            return doc
    yaml = import_yaml()  # PyYAML only when the cache cannot answer, and the cheap way
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)(text)  # libyaml when built in
    try:
        node = loader.get_single_node()
        doc = None if node is None else loader.construct_document(node)
    except yaml.YAMLError as exc:
        raise ClusterError(f"kubeconfig {path}: not valid YAML: {exc}") from exc
    finally:
        loader.dispose()
    if root is not None and node is not None:
        kept = kubeconfig_cache.skeleton(node, doc, text)
        if kept is not None:
            kubeconfig_cache.store(root, path, data, kept)
    return doc


def kubeconfig_needs_yaml(options: ConnectionOptions) -> bool:
    """Whether resolving ``options`` parses a kubeconfig file with PyYAML: a file applies and
    the cache has no skeleton of it as it is now (so the caller may import PyYAML its own way
    first)."""
    files = kubeconfig_files(options)
    root = cache_folder(options.cache_dir, options.environ)
    if root is None:
        return bool(files)
    for path in files:
        try:
            data, text = _read(path)
        except ClusterError:
            return True  # reported by the resolution itself
        if kubeconfig_cache.load(root, path, data, text) is kubeconfig_cache.MISS:
            return True
    return False


def _merge(files: list[str], root: str | None) -> _Merged:
    merged = _Merged(os.pathsep.join(files))
    for path in files:
        doc = _document(path, root)
        if doc is None:
            continue
        if not isinstance(doc, dict):
            raise ClusterError(f"kubeconfig {path}: expected a mapping, got {type(doc).__name__}")
        for key, table, inner in (
            ("clusters", merged.clusters, "cluster"),
            ("users", merged.users, "user"),
        ):
            for entry in _entries(doc, key, path):
                name, body = str(entry.get("name")), entry.get(inner) or {}
                if not isinstance(body, dict):
                    raise ClusterError(
                        f"kubeconfig {path}: {key} entry {name!r}: {inner} is not a mapping"
                    )
                table.setdefault(name, (body, path))
        for entry in _entries(doc, "contexts", path):
            body = entry.get("context") or {}
            if not isinstance(body, dict):
                raise ClusterError(
                    f"kubeconfig {path}: context {entry.get('name')!r} is not a mapping"
                )
            merged.contexts.setdefault(str(entry.get("name")), body)
        if not merged.current and doc.get("current-context"):
            merged.current = str(doc["current-context"])
    return merged


def _entries(doc: dict[str, Any], key: str, path: str) -> list[dict[str, Any]]:
    value = doc.get(key) or []
    if not isinstance(value, list) or not all(isinstance(e, dict) and "name" in e for e in value):
        raise ClusterError(f"kubeconfig {path}: {key} must be a list of named entries")
    return value


def kubeconfig_contexts(options: ConnectionOptions) -> list[str]:
    """The context names of the kubeconfig files that apply (for completion)."""
    files = kubeconfig_files(options)
    root = cache_folder(options.cache_dir, options.environ)
    return sorted(_merge(files, root).contexts) if files else []


def _from_kubeconfig(files: list[str], options: ConnectionOptions) -> ResolvedConfig:
    merged = _merge(files, cache_folder(options.cache_dir, options.environ))
    name = options.context or merged.current
    if not name:
        raise ClusterError(f"kubeconfig {merged.source}: no current-context set; pass --context")
    context = merged.contexts.get(name)
    if context is None:
        names = ", ".join(sorted(merged.contexts)) or "none"
        what = "context" if options.context else "current-context"
        raise ClusterError(
            f'{what} "{name}" not found in kubeconfig {merged.source} (contexts: {names})'
        )
    cluster_name, user_name = str(context.get("cluster") or ""), str(context.get("user") or "")
    if cluster_name not in merged.clusters:
        raise ClusterError(
            f'kubeconfig {merged.source}: context "{name}" names cluster "{cluster_name}", '
            "which is not defined"
        )
    cluster, cluster_file = merged.clusters[cluster_name]
    user, user_file = merged.users.get(user_name, ({}, cluster_file))
    namespace = options.namespace or context.get("namespace") or "default"
    server = str(cluster.get("server") or "")
    if not server:
        raise ClusterError(f'kubeconfig {merged.source}: cluster "{cluster_name}" has no server')
    where = f'kubeconfig {merged.source}: cluster "{cluster_name}"'
    common: dict[str, Any] = {
        "namespace": str(namespace),
        "context": name,
        "source": merged.source,
        "server": server.rstrip("/"),
        "ca_file": _path(cluster.get("certificate-authority"), cluster_file),
        "ca_data": _b64(
            cluster.get("certificate-authority-data"), f"{where}: certificate-authority-data"
        ),
        "insecure": bool(cluster.get("insecure-skip-tls-verify")),
        "tls_server_name": cluster.get("tls-server-name") or None,
        "proxy_url": cluster.get("proxy-url") or env_proxy(server, options.environ),
    }
    who = f'kubeconfig {merged.source}: user "{user_name}"'
    exec_plugin = user.get("exec") or None
    if exec_plugin is not None and not isinstance(exec_plugin, dict):
        raise NotConfigured(f"{who}: exec must be a mapping")
    provider = user.get("auth-provider") or None
    if provider is not None and not isinstance(provider, dict):
        raise NotConfigured(f"{who}: auth-provider must be a mapping")
    return ResolvedConfig(
        **common,
        cert_file=_path(user.get("client-certificate"), user_file),
        cert_data=_b64(user.get("client-certificate-data"), f"{who}: client-certificate-data"),
        key_file=_path(user.get("client-key"), user_file),
        key_data=_b64(user.get("client-key-data"), f"{who}: client-key-data"),
        token=str(user["token"]) if user.get("token") else None,
        token_file=_path(user.get("tokenFile"), user_file),
        username=str(user["username"]) if user.get("username") else None,
        password=str(user["password"]) if user.get("password") else None,
        exec_plugin=_exec_paths(exec_plugin, user_file) if exec_plugin else None,
        auth_provider=provider,
        user_name=user_name or None,
        impersonation=_impersonation(options, user, f"kubeconfig {merged.source}", user_name),
        timeout=_timeout(options),
    )


def env_proxy(server: str, environ: Mapping[str, str]) -> str | None:
    """The proxy the environment names for ``server`` (Go's ``ProxyFromEnvironment``):
    ``HTTPS_PROXY`` for https servers, ``HTTP_PROXY`` for http ones (lower-case names too),
    unless ``NO_PROXY`` lists the host (``*``, a host, a domain suffix, an IP or a CIDR
    range); loopback hosts never use a proxy."""
    https = server.startswith("https:")
    names = ("HTTPS_PROXY", "https_proxy") if https else ("HTTP_PROXY", "http_proxy")
    proxy = next((environ[n] for n in names if environ.get(n)), "")
    if not proxy:
        return None  # the usual case: nothing more is imported
    import ipaddress
    from urllib.parse import urlsplit

    host = (urlsplit(server).hostname or "").lower()
    if not host or host == "localhost":
        return None
    try:
        address: ipaddress.IPv4Address | ipaddress.IPv6Address | None = ipaddress.ip_address(host)
    except ValueError:
        address = None
    if address is not None and address.is_loopback:
        return None
    for entry in (environ.get("NO_PROXY") or environ.get("no_proxy") or "").split(","):
        entry = entry.strip().lower()
        if not entry:
            continue
        if entry == "*":
            return None
        if address is not None and "/" in entry:
            try:
                if address in ipaddress.ip_network(entry, strict=False):
                    return None
            except ValueError:
                pass
            continue
        name = entry.rsplit(":", 1)[0] if entry.count(":") == 1 else entry  # host:port
        if host == name.lstrip(".") or host.endswith("." + name.lstrip(".")):
            return None
    return proxy if "://" in proxy else f"http://{proxy}"


def _timeout(options: ConnectionOptions) -> float | None:
    return options.timeout if options.timeout else None  # 0: no timeout, as in kubectl


def _exec_paths(plugin: dict[str, Any], base: str) -> dict[str, Any]:
    """A relative ``command`` with a slash is relative to the kubeconfig file (client-go)."""
    command = str(plugin.get("command") or "")
    if "/" in command and not command.startswith("/"):
        return {**plugin, "command": join(parent(base), command)}
    return plugin


def _impersonation(
    options: ConnectionOptions, user: dict[str, Any], where: str, user_name: str
) -> Impersonation:
    """The flags when given (they replace the kubeconfig's fields, as kubectl's do), else the
    kubeconfig user's ``as`` fields."""
    if options.impersonate_user or options.impersonate_groups or options.impersonate_uid:
        return _flags(options)
    groups = user.get("as-groups") or []
    extra = user.get("as-user-extra") or {}
    if not isinstance(groups, list) or not all(isinstance(g, str) for g in groups):
        raise NotConfigured(f"{where}: users[{user_name}].as-groups must be strings")
    if not isinstance(extra, dict):
        raise NotConfigured(f"{where}: users[{user_name}].as-user-extra must be a map")
    return Impersonation(
        user=str(user["as"]) if user.get("as") else None,
        groups=tuple(groups),
        uid=str(user["as-uid"]) if user.get("as-uid") else None,
        extra=tuple((str(k), str(v)) for k, vs in extra.items() for v in (vs or [])),
    )


def _path(value: Any, base: str) -> str | None:
    if not value:
        return None
    path = expand(str(value))
    return path if path.startswith("/") else join(parent(base), path)


def _b64(value: Any, where: str) -> bytes | None:
    if not value:
        return None
    try:
        return _b64decode(str(value))
    except ValueError as exc:
        raise ClusterError(f"{where}: not valid base64 ({exc})") from exc


def _b64decode(text: str) -> bytes:
    """``base64.b64decode(text, validate=False)``, without importing base64 (and struct) for it."""
    try:
        data = text.encode("ascii")
    except UnicodeEncodeError:
        raise ValueError("string argument should contain only ASCII characters") from None
    return a2b_base64(data, strict_mode=False)


def _from_service_account(options: ConnectionOptions) -> ResolvedConfig:
    env = options.environ
    host, port = env.get("KUBERNETES_SERVICE_HOST", ""), env.get("KUBERNETES_SERVICE_PORT", "443")
    if ":" in host and not host.startswith("["):  # an IPv6 address
        host = f"[{host}]"
    sa_dir = options.service_account_dir
    ca = join(sa_dir, "ca.crt")
    namespace = options.namespace
    if namespace is None:
        try:
            with open(join(sa_dir, "namespace")) as fh:  # the locale encoding, as read_text
                namespace = fh.read().strip() or "default"
        except OSError:
            namespace = "default"
    server = f"https://{host}:{port or '443'}"
    return ResolvedConfig(
        server=server,
        proxy_url=env_proxy(server, env),
        namespace=namespace,
        context=None,
        source="in-cluster",
        ca_file=ca if is_file(ca) else None,
        token_file=join(sa_dir, "token"),
        impersonation=_flags(options),
        timeout=_timeout(options),
    )


def _flags(options: ConnectionOptions) -> Impersonation:
    return Impersonation(
        user=options.impersonate_user,
        groups=options.impersonate_groups,
        uid=options.impersonate_uid,
    )
