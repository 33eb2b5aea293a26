"""A local Kubernetes for development: a real control plane (etcd, kube-apiserver,
kube-controller-manager, kube-scheduler, built by ``make apiserver``) on loopback with fake GPU
nodes, the workload-map operator, Prometheus and the web view as child processes.

Both the integration tests (``tests/integration``) and ``make demo-cluster``
(``hack/demo-cluster.py``) run on it, so what the demo shows is what the suite checks. It lives
beside the development scripts rather than in ``src/workload_map``: it starts processes from a
developer's build cache and writes throw-away certificates, which an installed package must
never do, so it is kept out of the wheel (``packages.find`` looks in ``src/`` only); and it
lives outside ``tests/`` because the demo is not a test and should not import one.

- ``ports``: free loopback ports for child processes;
- ``plane``: the binaries, certificates and control-plane processes (``LocalControlPlane``);
- ``nodes``: the Node object of a fake node (capacity, Ready, no kubelet);
- ``operator``: ``python -m workload_map.operator`` as a child process, and the gang pod webhook
  it serves;
- ``prometheus``: Debian's prometheus as a child process, and its HTTP query API.
"""
