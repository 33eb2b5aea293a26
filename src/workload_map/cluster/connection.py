"""Connecting a command to its cluster: :func:`workload_map.kube.client.connect`, with PyYAML
imported the core's cheaper way first.

The kubeconfig is YAML and the I/O layer imports PyYAML plainly (it imports nothing of the
project but the error root); the core's :func:`~workload_map.model.yaml_import.import_yaml`
skips a pattern compilation that is a good part of a live command's start-up, so it runs
first here, where both layers may be imported.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from workload_map.kube.client import connect as kube_connect
from workload_map.kube.kubeconfig import kubeconfig_needs_yaml
from workload_map.model.yaml_import import import_yaml

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
