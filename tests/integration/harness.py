"""A real Kubernetes control plane for the integration tests: etcd, kube-apiserver,
kube-controller-manager and (on request) kube-scheduler on loopback, plus fake nodes.

A Kubernetes tool has to be tested against Kubernetes, and these machines have no Docker, so the
tests run the genuine binaries (built from their Go modules by ``hack/build-apiserver.sh``) the way
controller-runtime's envtest does: fresh etcd data dir, free ports, a throw-away CA, an admin
client certificate in ``system:masters``. The workload-aware scheduling API is on
(``GenericWorkload`` + ``scheduling.k8s.io/v1beta1``) unless a plane is started without it. The
controller-manager runs only the garbage collector, the namespace controller, the PodGroup
protection controller and ClusterRole aggregation; no kubelet runs, so pods stay Pending (or merely bound, with a scheduler)
until a test sets their status through the status subresource. Nodes are fake: Node objects with
capacity and a Ready condition, the way k8s.io/kubernetes' scheduler_perf makes them; with node
lifecycle off nothing ever marks them NotReady.

``WLMAP_TEST_KUBECONFIG`` swaps the local control plane for any existing cluster; the ``Cluster``
helpers (apply, set_status, install_crd, namespaces) work the same on both.

One module per concern: ``hack.localkube.plane`` (binaries, certificates, the control plane's
processes; shared with ``make demo-cluster``, hence outside ``tests/``), ``kube`` (the client
side: ``Cluster``, ``Kube``, ``open_kube``) and ``nodes`` (``FakeNodes``); this module
re-exports their names, so ``from tests.integration.harness import ...`` keeps working.
"""

from __future__ import annotations

from hack.localkube.plane import (
    _LIVE,
    _LIVE_LOCK,
    BUILD_HINT,
    CONTROLLERS,
    WORKLOAD_API,
    BinariesMissing,
    HarnessError,
    LocalControlPlane,
    _PortClash,
    cache_dir,
    find_binaries,
    find_controllers,
    start_timeout,
    tail,
)
from hack.localkube.plane import Proc as _Proc
from hack.localkube.plane import spawn as _spawn
from tests.ports import free_port

from .kube import (
    CRD_DIGEST_ANNOTATION,
    FIELD_MANAGER,
    SERVER_METADATA,
    Cluster,
    Kube,
    load_objects,
    open_kube,
)
from .nodes import DEFAULT_NODE_CAPACITY, FAKE_NODE_LABEL, FakeNodes, random_suffix

__all__ = [
    "BUILD_HINT",
    "CONTROLLERS",
    "CRD_DIGEST_ANNOTATION",
    "DEFAULT_NODE_CAPACITY",
    "FAKE_NODE_LABEL",
    "FIELD_MANAGER",
    "SERVER_METADATA",
    "WORKLOAD_API",
    "_LIVE",
    "_LIVE_LOCK",
    "BinariesMissing",
    "Cluster",
    "FakeNodes",
    "HarnessError",
    "Kube",
    "LocalControlPlane",
    "_PortClash",
    "_Proc",
    "_spawn",
    "cache_dir",
    "find_binaries",
    "find_controllers",
    "free_port",
    "load_objects",
    "open_kube",
    "random_suffix",
    "start_timeout",
    "tail",
]
