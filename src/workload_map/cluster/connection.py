"""Connecting a command to its cluster: :func:`workload_map.kube.client.connect`, with PyYAML
imported (:func:`~workload_map.yaml_import.import_yaml`, the cheap way) before the client is
built, and only when a kubeconfig file is to be parsed: the I/O layer itself imports it the
same way when it parses one, so this only moves the import ahead of the connection's set-up.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from workload_map.kube.client import connect as kube_connect
from workload_map.kube.kubeconfig import kubeconfig_needs_yaml
from workload_map.yaml_import import import_yaml

if TYPE_CHECKING:
    from workload_map.kube.client import Cluster
    from workload_map.kube.options import ConnectionOptions

__all__ = ["connect"]


def connect(options: ConnectionOptions) -> Cluster:
    """A read client for the kubeconfig/context/in-cluster config the options select."""
    # only when a kubeconfig file is to be parsed: in a pod, with no configuration (the
    # catalog-only answer of `definitions`), or with the file's parse cached, PyYAML is not
    # needed at all
    if kubeconfig_needs_yaml(options):
        import_yaml()

    return kube_connect(options)
