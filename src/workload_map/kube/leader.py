"""Leader election on a ``coordination.k8s.io/v1`` Lease, through the one request path.

client-go's rules: a candidate takes the Lease when it has no holder or when the holder has
not renewed it for ``lease_duration`` (measured on this replica's clock from when the record
was last seen to change, so clocks need not agree); the leader renews every ``retry_period``
and steps down when it could not renew for ``renew_deadline``. Writes carry the Lease's
``resourceVersion``, so two candidates never both win (the loser gets 409 Conflict). After
stepping down :meth:`LeaseElection.run` returns; :meth:`LeaseElection.release` clears the
holder on a graceful shutdown so a standby takes over at its next try.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, Protocol

from workload_map.kube.errors import ClusterError, Conflict, NotFound

__all__ = ["LeaseApi", "LeaseElection"]

log = logging.getLogger("workload_map.kube.leader")


class LeaseApi(Protocol):
    """The calls a Lease needs (:class:`~workload_map.kube.api.Api` has them)."""

    def get(self, path: str, query: Any = None) -> Any: ...

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        query: Any = None,
        content_type: str = ...,
        timeout: float | None = None,
        accept: str = ...,
    ) -> Any: ...


def _micro_time(moment: datetime) -> str:
    """A Kubernetes ``MicroTime``: RFC 3339 in UTC with microseconds."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class LeaseElection:
    """Acquire, renew and release one Lease as ``identity``."""

    def __init__(
        self,
        api: LeaseApi,
        *,
        name: str,
        namespace: str,
        identity: str,
        lease_duration: float,
        renew_deadline: float,
        retry_period: float,
        on_started: Callable[[], None],
        on_stopped: Callable[[], None],
        clock: Callable[[], float] = time.monotonic,
        now: Callable[[], datetime] = lambda: datetime.now(UTC),
        stop: threading.Event | None = None,
    ) -> None:
        self.api = api
        self.name = name
        self.namespace = namespace
        self.identity = identity
        self.lease_duration = lease_duration
        self.renew_deadline = renew_deadline
        self.retry_period = retry_period
        self._on_started = on_started
        self.on_stopped = on_stopped
        self._clock = clock
        self._now = now
        self.stopping = stop or threading.Event()
        self.released = False
        self.leading = False
        self._observed: tuple[Any, ...] | None = None
        self._observed_at = 0.0

    @property
    def path(self) -> str:
        return f"/apis/coordination.k8s.io/v1/namespaces/{self.namespace}/leases/{self.name}"

    def run(self) -> None:
        """Try until this replica leads, lead until a renewal fails for ``renew_deadline``
        (or :meth:`release`), then return; ``on_stopped`` runs when leading ends."""
        while not self._try():
            if self.stopping.wait(self.retry_period):
                return
        self.leading = True
        log.info("became the leader (Lease %s/%s)", self.namespace, self.name)
        threading.Thread(target=self._on_started, name="leader-started", daemon=True).start()
        renewed = self._clock()
        while not self.stopping.wait(self.retry_period):
            if self._try():
                renewed = self._clock()
            elif self._clock() - renewed > self.renew_deadline:
                break
        self.leading = False
        if not self.released:
            log.info("stopped leading (Lease %s/%s)", self.namespace, self.name)
            self.on_stopped()

    def release(self) -> None:
        """Stop renewing and clear the Lease holder if it is still us."""
        self.released = True
        self.stopping.set()
        try:
            lease = self.api.get(self.path)
            if (lease.get("spec") or {}).get("holderIdentity") != self.identity:
                return
            lease["spec"]["holderIdentity"] = None
            self.api.request("PUT", self.path, lease, timeout=5)
            log.info("released the leader Lease %s/%s", self.namespace, self.name)
        except ClusterError as exc:
            log.warning("could not release the leader Lease: %s", exc)

    # -- one try ------------------------------------------------------------------------
    def _try(self) -> bool:
        """Acquire or renew once; True when this replica holds the Lease afterwards."""
        if self.released:
            return False
        now = self._now()
        try:
            lease = self.api.get(self.path)
        except NotFound:
            return self._create(now)
        except ClusterError as exc:
            log.debug("leader election: cannot read the Lease: %s", exc)
            return False
        spec = lease.get("spec") or {}
        holder = spec.get("holderIdentity") or ""
        record = (holder, spec.get("renewTime"), spec.get("leaseTransitions"))
        if record != self._observed:
            self._observed, self._observed_at = record, self._clock()
        duration = float(spec.get("leaseDurationSeconds") or self.lease_duration)
        if holder and holder != self.identity:
            if self._clock() - self._observed_at < duration:
                return False  # held by another replica that renews
        transitions = int(spec.get("leaseTransitions") or 0)
        if holder != self.identity:
            transitions += 1
            spec["acquireTime"] = _micro_time(now)
        spec.update(
            holderIdentity=self.identity,
            leaseDurationSeconds=int(self.lease_duration),
            renewTime=_micro_time(now),
            leaseTransitions=transitions,
        )
        lease["spec"] = spec
        try:
            self.api.request("PUT", self.path, lease)
        except Conflict:
            return False  # another replica wrote first
        except ClusterError as exc:
            log.debug("leader election: cannot write the Lease: %s", exc)
            return False
        return True

    def _create(self, now: datetime) -> bool:
        lease = {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {"name": self.name, "namespace": self.namespace},
            "spec": {
                "holderIdentity": self.identity,
                "leaseDurationSeconds": int(self.lease_duration),
                "acquireTime": _micro_time(now),
                "renewTime": _micro_time(now),
                "leaseTransitions": 0,
            },
        }
        path = f"/apis/coordination.k8s.io/v1/namespaces/{self.namespace}/leases"
        try:
            self.api.request("POST", path, lease)
        except ClusterError as exc:  # 409: another replica created it first
            log.debug("leader election: cannot create the Lease: %s", exc)
            return False
        return True
