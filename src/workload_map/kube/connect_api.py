"""The one way from kubectl's connection flags to the shared read-write
:class:`~workload_map.kube.api.Api` (the operator, the exporter, ``wlmap serve``, and the
command line's writes: ``crd apply``, ``definitions install|uninstall``).

The kubeconfig is resolved first by :func:`workload_map.kube.kubeconfig.resolve`, the
resolver ``wlmap get`` uses, so a missing, unreadable or malformed file, an unknown context
and kubectl's precedence are the same in every command and process, with the same messages
(never the ``kubernetes`` loader's exception and traceback).
"""

from __future__ import annotations

from typing import Any

from workload_map.kube.api import Api, Impersonation, load_configuration
from workload_map.kube.errors import ApiError, ClusterError
from workload_map.kube.kubeconfig import resolve
from workload_map.kube.options import ConnectionOptions

__all__ = ["open_api"]


def open_api(
    options: ConnectionOptions,
    *,
    impersonate_uid: str | None = None,
    check: bool = True,
) -> Api:
    """The read-write client for ``options``; with ``check``, the server has answered once.

    The kubeconfig is resolved by :func:`~workload_map.kube.kubeconfig.resolve` (the
    precedence, the merge, every error message), then handed to the ``kubernetes`` loader as
    the exact file list and context it chose. ``check`` reads ``/version`` so that a process
    whose server cannot be reached says so and ends, instead of starting watches that retry
    forever (what controller-runtime does at start too)."""
    resolved = resolve(options)
    flags = Impersonation(
        user=options.impersonate_user, groups=options.impersonate_groups, uid=impersonate_uid
    )
    try:
        if resolved.source == "in-cluster":
            configuration = _in_cluster_configuration()
            configuration.impersonation = flags
        else:
            configuration = load_configuration(resolved.source, resolved.context, impersonate=flags)
    except ClusterError:
        raise
    except Exception as exc:  # the kubernetes loader's own exception types: still a bad config
        raise ClusterError(f"kubeconfig {resolved.source}: {exc}") from exc
    # the client needs a number: "no timeout" (0) keeps its default per request
    api = (
        Api(configuration)
        if options.timeout is None
        else Api(configuration, timeout=options.timeout)
    )
    if check:
        try:
            api.request("GET", "/version")
        except ApiError:
            pass  # it answered (some servers refuse /version to anonymous users)
        except Exception:
            api.close()
            raise
    return api


def _in_cluster_configuration() -> Any:
    """The service account's configuration (``$KUBECONFIG`` naming only missing files must not
    send the ``kubernetes`` loader to them, as :func:`load_configuration` would)."""
    from kubernetes import client, config

    configuration = client.Configuration()
    config.load_incluster_config(client_configuration=configuration)  # type: ignore[no-untyped-call]
    return configuration
