"""The operator's controller plug-ins, found through the ``workload_map.operator.controllers``
entry-point group.

A distribution (workload-map itself for its gang and metrics rooms, or anyone else's) plugs
controllers into ``wlmap operator`` by declaring an entry point in that group::

    [project.entry-points."workload_map.operator.controllers"]
    gangs = "workload_map.gangs.operator:register"  # a callable, called once with no arguments
    mine = "my_pkg.operator"                        # or a module: its ``register()`` is called

A module named without a function has its ``register`` called if it defines one (so an install
whose metadata still names the module behaves as one naming ``module:register``); a module
without one is taken to register on import, as older plug-ins do. workload-map's own plug-ins
register nothing at import. Either way the plug-in registers with :mod:`workload_map.operator.controllers` (``register``,
``register_flags``), so the operator names no room and a new controller needs no edit here.
The entry points are read (``importlib.metadata``) only when the operator starts, never when
``wlmap`` starts: scanning every installed distribution's metadata costs milliseconds that no
other command should pay.

A plug-in that fails to load stops the operator from starting (exit 1, every failure named by
its entry point, value and distribution): a cluster admin who installed the gang controller
expects gangs enforced, and a pod that crash-loops with the reason in its log is noticed where an
operator running Ready without one of its controllers is not. To run without a broken plug-in,
name it in ``WLMAP_OPERATOR_SKIP_PLUGINS`` (comma-separated entry-point names). The mechanism is
the standard library's; this module holds only the policy (laziness, errors, skipping).
"""

from __future__ import annotations

import os
import types
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, NamedTuple

from workload_map.operator.errors import OperatorError

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

__all__ = [
    "GROUP",
    "SKIP_ENV",
    "PluginFailure",
    "PluginLoadError",
    "load_plugins",
]

GROUP = "workload_map.operator.controllers"
SKIP_ENV = "WLMAP_OPERATOR_SKIP_PLUGINS"


class PluginFailure(NamedTuple):
    name: str  # the entry point's name
    value: str  # what it points at: "module" or "module:attribute"
    distribution: str  # the distribution that declares it ("?" when unknown)
    cause: BaseException


class PluginLoadError(OperatorError):
    """One or more controller plug-ins could not be loaded; the operator does not start."""

    def __init__(self, failures: Sequence[PluginFailure]) -> None:
        self.failures = tuple(failures)
        lines = [
            f"controller plug-in {f.name!r} (entry point {f.name} = {f.value!r} in group {GROUP} "
            f"of distribution {f.distribution}) failed to load: "
            f"{type(f.cause).__name__}: {f.cause}"
            for f in self.failures
        ]
        names = ",".join(f.name for f in self.failures)
        lines.append(f"fix or uninstall it, or skip it with {SKIP_ENV}={names}")
        super().__init__("; ".join(lines))


def _skipped(env: str | None) -> frozenset[str]:
    return frozenset(n.strip() for n in (env or "").split(",") if n.strip())


def _distribution(ep: EntryPoint) -> str:
    dist = getattr(ep, "dist", None)
    return str(dist.name) if dist is not None else "?"


def load_plugins(entry_points: Iterable[EntryPoint] | None = None) -> list[str]:
    """Load every controller plug-in (those of ``entry_points``, default: the installed
    ``workload_map.operator.controllers`` group) except the skipped ones; return the names
    loaded, in load order (by entry-point name, so registration order does not depend on the
    order distributions were installed in). Raises :class:`PluginLoadError` naming every
    plug-in that failed, after trying them all."""
    if entry_points is None:
        from importlib.metadata import entry_points as installed

        entry_points = installed(group=GROUP)
    skip = _skipped(os.environ.get(SKIP_ENV))
    loaded: list[str] = []
    failures: list[PluginFailure] = []
    for ep in sorted(entry_points, key=lambda e: (e.name, e.value)):
        if ep.name in skip:
            continue
        try:
            target = ep.load()
            if isinstance(target, types.ModuleType):
                # a module's register(), if it has one; else it registered on import
                target = getattr(target, "register", None)
                if target is None:
                    loaded.append(ep.name)
                    continue
            if not callable(target):
                raise TypeError(f"{ep.value} is neither a module nor a callable")
            target()
        except Exception as exc:  # every failure is reported, named by its entry point
            failures.append(PluginFailure(ep.name, ep.value, _distribution(ep), exc))
            continue
        loaded.append(ep.name)
    if failures:
        raise PluginLoadError(failures)
    return loaded
