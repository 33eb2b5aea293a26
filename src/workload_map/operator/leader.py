# mypy: disable-error-code="no-untyped-call"
"""Leader election on a ``coordination.k8s.io`` Lease, through ``kubernetes.leaderelection``.

The library acquires and renews; this module runs it in a thread, points its ``LeaseLock`` at
the operator's ApiClient, and adds what it lacks: a release on graceful shutdown (the Lease's
holder is cleared, so a standby replica takes over at its next retry instead of waiting out
the lease), after which this replica's lock refuses to write again.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

from workload_map.kube.api import Api
from workload_map.kube.errors import ClusterError
from workload_map.operator.errors import ConfigError

__all__ = ["LeaderElector"]

log = logging.getLogger("workload_map.operator.leader")


class LeaderElector:
    def __init__(
        self,
        api: Api,
        *,
        name: str,
        namespace: str,
        identity: str,
        lease_duration: float,
        renew_deadline: float,
        retry_period: float,
        on_started: Callable[[], None],
        on_stopped: Callable[[], None],
    ) -> None:
        if retry_period < 1:
            raise ConfigError("--leader-elect-retry-period must be at least 1s")
        if renew_deadline <= 1.2 * retry_period:
            raise ConfigError("--leader-elect-renew-deadline must exceed 1.2 x the retry period")
        if lease_duration <= renew_deadline:
            raise ConfigError("--leader-elect-lease-duration must exceed the renew deadline")
        from kubernetes import client
        from kubernetes.leaderelection import electionconfig, leaderelection
        from kubernetes.leaderelection.resourcelock.leaselock import LeaseLock

        class _Lock(LeaseLock):
            released = False

            def create(self, *args: Any, **kwargs: Any) -> bool:
                return False if self.released else bool(super().create(*args, **kwargs))

            def update(self, *args: Any, **kwargs: Any) -> bool:
                return False if self.released else bool(super().update(*args, **kwargs))

        self.api = api
        self.name = name
        self.namespace = namespace
        self.identity = identity
        self.lock = _Lock(name, namespace, identity)
        self.lock.api_instance = client.CoordinationV1Api(api.client)
        self._on_stopped = on_stopped
        self.config = electionconfig.Config(
            self.lock,
            lease_duration=int(lease_duration),
            renew_deadline=int(renew_deadline),
            retry_period=int(retry_period),
            onstarted_leading=on_started,
            onstopped_leading=self._stopped,
        )
        self._election = leaderelection.LeaderElection(self.config)
        self.leading = False
        self._thread: threading.Thread | None = None

    def _stopped(self) -> None:
        if not self.lock.released:
            self._on_stopped()

    def start(self) -> None:
        def run() -> None:
            try:
                self._election.run()
            except Exception:
                log.exception("leader election failed")
                self._stopped()

        self._thread = threading.Thread(target=run, name="leader-election", daemon=True)
        self._thread.start()

    def release(self) -> None:
        """Stop renewing and clear the Lease holder if it is still us."""
        self.lock.released = True
        path = f"/apis/coordination.k8s.io/v1/namespaces/{self.namespace}/leases/{self.name}"
        try:
            lease = self.api.get(path)
            if (lease.get("spec") or {}).get("holderIdentity") != self.identity:
                return
            lease["spec"]["holderIdentity"] = None
            self.api.request("PUT", path, lease, timeout=5)
            log.info("released the leader Lease %s/%s", self.namespace, self.name)
        except ClusterError as exc:
            log.warning("could not release the leader Lease: %s", exc)
