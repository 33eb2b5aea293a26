"""Leader election of the operator's replicas on a ``coordination.k8s.io`` Lease.

The election itself is :class:`workload_map.kube.leader.LeaseElection` (the one request path);
this module checks the operator's flags and runs it in a thread, with a release on graceful
shutdown (the Lease's holder is cleared, so a standby replica takes over at its next retry
instead of waiting out the lease), after which this replica never writes the Lease again.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from workload_map.kube.api import Api
from workload_map.kube.leader import LeaseElection
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
        self.api = api
        self.name = name
        self.namespace = namespace
        self.identity = identity
        self._election = LeaseElection(
            api,
            name=name,
            namespace=namespace,
            identity=identity,
            lease_duration=lease_duration,
            renew_deadline=renew_deadline,
            retry_period=retry_period,
            on_started=on_started,
            on_stopped=on_stopped,
        )
        self._thread: threading.Thread | None = None

    @property
    def leading(self) -> bool:
        return self._election.leading

    def start(self) -> None:
        def run() -> None:
            try:
                self._election.run()
            except Exception:
                log.exception("leader election failed")
                if not self._election.released:
                    self._election.on_stopped()

        self._thread = threading.Thread(target=run, name="leader-election", daemon=True)
        self._thread.start()

    def release(self) -> None:
        """Stop renewing and clear the Lease holder if it is still us."""
        self._election.release()
