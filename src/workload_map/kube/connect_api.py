"""A long-running process's client: :meth:`Api.connect` on the options its connection flags
selected, once the server has answered.

The operator, the exporter and ``wlmap serve`` start watches that retry for ever; a server
that cannot be reached at start (a wrong kubeconfig, context or port) must instead be one
error line and exit 1 (controller-runtime's managers end the same way), so :func:`open_api`
reads ``/version`` once before handing the client over. A bad kubeconfig never gets that far:
:meth:`Api.connect` resolves it with :func:`workload_map.kube.kubeconfig.resolve`, whose
errors say which file and what is wrong.
"""

from __future__ import annotations

from workload_map.kube.api import Api
from workload_map.kube.errors import ApiError
from workload_map.kube.options import ConnectionOptions

__all__ = ["open_api"]


def open_api(options: ConnectionOptions, *, pooled: bool = True) -> Api:
    """The pooled client for ``options``, after one answer from the server (raises
    :class:`~workload_map.kube.errors.Unreachable` or another ``ClusterError``)."""
    api = Api.connect(options, pooled=pooled)
    try:
        api.request("GET", "/version")
    except ApiError:
        pass  # it answered (a server may refuse /version to some users)
    except BaseException:
        api.close()
        raise
    return api
