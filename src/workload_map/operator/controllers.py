"""The one registry of the operator's controllers, and what each is handed when it starts.

This is the operator's public plug-in API (docs/operator.md, "Plugging in a controller"): the
one operator module other rooms (gangs, exporter) import.

A controller is any object with ``name``, ``needs_leader``, ``start(ctx)`` (non-blocking: spawn
threads through ``ctx.spawn``) and ``stop()``. Modules register a *factory*
(``register(factory)``) that gets the parsed configuration and returns a controller, or None to
stay off; ``register_flags(fn)`` adds their command-line flags. The Karta controller, the
webhooks and the certificate manager register here exactly like the gang and metrics
controllers do, so none of them knows about the others.

Example (a later controller)::

    from workload_map.operator import controllers

    class Gangs:
        name = "gangs"
        needs_leader = True            # only the elected replica writes
        def start(self, ctx):
            pods = ctx.informer("/api/v1/pods", transform=trim_pod, kind="Pod", api_version="v1")
            pods.add_handler(lambda event, pod: ...)
        def stop(self):
            ...

    controllers.register_flags(lambda p: p.add_argument("--enable-gangs", action="store_true"))
    controllers.register(lambda cfg: Gangs() if cfg.args.enable_gangs else None)
"""

from __future__ import annotations

import argparse
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from prometheus_client import CollectorRegistry

from workload_map.operator.errors import ConfigError
from workload_map.operator.metrics import process_registry

if TYPE_CHECKING:
    from workload_map.kube.api import Api
    from workload_map.kube.cache import Informer, InformerSet, Transform
    from workload_map.operator.events import EventRecorder

__all__ = [
    "AdmissionHandler",
    "Controller",
    "ControllerFactory",
    "OperatorConfig",
    "OperatorContext",
    "factories",
    "flag_adders",
    "register",
    "register_flags",
]

log = logging.getLogger("workload_map.operator")

#: ``handler(request) -> response``: ``request`` is an AdmissionReview's ``request``; the
#: response needs ``allowed`` and may carry ``status``, ``patch`` (a JSON Patch list) and
#: ``warnings``; the server fills in ``uid`` and ``patchType``.
AdmissionHandler = Callable[[dict[str, Any]], dict[str, Any]]


@runtime_checkable
class Controller(Protocol):
    name: str
    needs_leader: bool

    def start(self, ctx: OperatorContext) -> None: ...

    def stop(self) -> None: ...


@dataclass(frozen=True)
class OperatorConfig:
    """The parsed flags (``args``) plus derived settings every controller may read."""

    args: argparse.Namespace
    namespace: str  # where the operator's own objects live (Lease, Secret, events)
    identity: str  # this replica's name in the Lease


ControllerFactory = Callable[[OperatorConfig], "Controller | None"]

_factories: list[tuple[str, ControllerFactory]] = []
_flag_adders: list[Callable[[argparse.ArgumentParser], None]] = []


def register(factory: ControllerFactory, *, name: str | None = None) -> ControllerFactory:
    """Add a controller factory (once per ``name``, or per factory object when unnamed)."""
    key = name or f"anonymous-{id(factory)}"
    if all(k != key and f is not factory for k, f in _factories):
        _factories.append((key, factory))
    return factory


def register_flags(adder: Callable[[argparse.ArgumentParser], None]) -> None:
    if adder not in _flag_adders:
        _flag_adders.append(adder)


def factories() -> list[ControllerFactory]:
    return [f for _, f in _factories]


def flag_adders() -> list[Callable[[argparse.ArgumentParser], None]]:
    return list(_flag_adders)


@dataclass
class OperatorContext:
    """What a controller gets: the API, shared caches, events, webhooks, health, metrics,
    leadership."""

    config: OperatorConfig
    api: Api
    informers: InformerSet
    events: EventRecorder
    stopping: threading.Event = field(default_factory=threading.Event)
    leader: threading.Event = field(default_factory=threading.Event)
    webhooks: dict[str, AdmissionHandler] = field(default_factory=dict)
    inline_webhooks: set[str] = field(default_factory=set)
    readiness: dict[str, Callable[[], bool]] = field(default_factory=dict)
    #: the process's one metrics registry (``/metrics``): controllers register their own
    #: ``prometheus_client`` counters, gauges and collectors here when they start
    registry: CollectorRegistry = field(default_factory=process_registry)
    threads: list[threading.Thread] = field(default_factory=list)

    def informer(
        self,
        path: str,
        *,
        transform: Transform | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        kind: str | None = None,
        api_version: str | None = None,
    ) -> Informer:
        """The shared watch cache of ``path`` (started on first use, on every replica)."""
        return self.informers.get(
            path,
            transform=transform,
            label_selector=label_selector,
            field_selector=field_selector,
            kind=kind,
            api_version=api_version,
        )

    def add_webhook(self, path: str, handler: AdmissionHandler, *, inline: bool = False) -> None:
        """Serve ``handler`` at ``path`` on the webhook server (every replica).

        ``inline=True`` runs it on the server's event loop instead of a worker thread: only for
        handlers that answer in microseconds and never block (it saves a thread hop per call).
        """
        if path in self.webhooks:
            raise ConfigError(f"webhook path {path} is registered twice")
        self.webhooks[path] = handler
        if inline:
            self.inline_webhooks.add(path)

    def add_readiness(self, name: str, check: Callable[[], bool]) -> None:
        """``/readyz`` answers 200 only while every check returns True."""
        self.readiness[name] = check

    def is_leader(self) -> bool:
        return self.leader.is_set()

    def spawn(self, target: Callable[[], None], name: str) -> threading.Thread:
        """A daemon thread that logs (instead of silently losing) an exception."""

        def run() -> None:
            try:
                target()
            except Exception:
                log.exception("thread %s died", name)

        t = threading.Thread(target=run, name=name, daemon=True)
        t.start()
        self.threads.append(t)
        return t
