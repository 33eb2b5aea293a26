"""Which Karta describes a kind, for the gang room: the cluster's Kartas, then the catalog.

The rule is the CLI's one resolver (``catalog.resolution.resolve_gvk`` over
``catalog.definitions``); here
the cluster's Kartas arrive through a watch, so the index is fed event by event and answers
from memory (the pod webhook asks on every request). A cluster Karta that fails validation is
not used; the catalog's definition of that kind, if any, keeps serving it.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from workload_map.catalog.definitions import (
    AmbiguousDefinition,
    BrokenKarta,
    Definition,
    Definitions,
    parse_cluster_kartas,
)
from workload_map.catalog.resolution import resolve_gvk
from workload_map.model import GVK, Karta

__all__ = ["KartaIndex", "has_gangs"]


def has_gangs(karta: Karta | None) -> bool:
    gang = karta.gang_scheduling if karta is not None else None
    return gang is not None and (gang.pod_group is not None or bool(gang.pod_groups))


class KartaIndex:
    """Cluster Kartas by name, resolved over the built-in catalog; thread-safe.

    The rule is the CLI's (:func:`workload_map.catalog.resolution.resolve_gvk` over
    :class:`~workload_map.catalog.definitions.Definitions`): a cluster Karta of the exact GVK
    replaces the catalog's, an outdated cluster copy of a built-in yields to it, else the most
    stable definition of the same group and kind. Unlike a command, the gang room never uses an
    invalid Karta (it resolves to the catalog's, else to nothing) nor guesses between several
    claiming one GVK (nothing, and an entry in :attr:`errors`). Answers are memoised per
    (apiVersion, kind) until the next event.
    """

    def __init__(self, *, catalog: bool = True) -> None:
        self._lock = threading.Lock()
        #: per cluster Karta name: what parsing it gave (definitions, unusable, warnings)
        self._parsed: dict[str, tuple[list[Definition], list[BrokenKarta], list[str]]] = {}
        self._catalog = catalog
        self.errors: dict[str, str] = {}
        self.generation = 0
        self._definitions: Definitions | None = None
        self._memo: dict[tuple[str, str], Karta | None] = {}
        #: :meth:`with_gangs`'s answers, reset with ``_memo`` (after it: a reader that finds
        #: this one new finds ``_memo`` new too)
        self._gangs: dict[tuple[str, str], Karta | None] = {}
        self._builtin: dict[str, Karta] = {}

    def apply(self, event: str, obj: Mapping[str, Any]) -> None:
        name = str((obj.get("metadata") or {}).get("name") or "")
        parsed = None if event == "DELETED" else parse_cluster_kartas([dict(obj)])
        with self._lock:
            if parsed is None:
                self._parsed.pop(name, None)
            else:
                self._parsed[name] = parsed
            entries = [self._parsed[n] for n in sorted(self._parsed)]
            definitions = Definitions.from_parsed(
                [d for e in entries for d in e[0]],
                [b for e in entries for b in e[1]],
                [w for e in entries for w in e[2]],
            )
            self.errors = {b.name: b.problem for b in definitions.broken}
            self._definitions = definitions
            self._memo = {}
            self._gangs = {}
            self.generation += 1

    def _current(self) -> Definitions:
        with self._lock:
            if self._definitions is None:
                self._definitions = Definitions.from_objects(())
            return self._definitions

    def resolve(self, api_version: str, kind: str) -> Karta | None:
        key = (api_version, kind)
        memo = self._memo
        if key in memo:
            return memo[key]
        found = self._resolve(api_version, kind)
        memo[key] = found
        return found

    def with_gangs(self, api_version: str, kind: str) -> Karta | None:
        """:meth:`resolve`'s Karta if it has gang instructions (:func:`has_gangs`), else None;
        memoised alike: the gang controller asks it per workload of every resync."""
        key = (api_version, kind)
        memo = self._gangs
        if key in memo:
            return memo[key]
        karta = self.resolve(api_version, kind)
        found = memo[key] = karta if has_gangs(karta) else None
        return found

    def covers(self, api_version: str, kind: str) -> bool:
        """Whether the kind's definition has gang instructions (:meth:`with_gangs`)."""
        key = (api_version, kind)
        memo = self._gangs
        if key in memo:
            return memo[key] is not None
        return self.with_gangs(api_version, kind) is not None

    def _resolve(self, api_version: str, kind: str) -> Karta | None:
        definitions = self._current()
        try:
            resolution = resolve_gvk(GVK.from_api_version(api_version, kind), definitions)
        except AmbiguousDefinition as err:
            with self._lock:
                self.errors[f"{api_version}, Kind={kind}"] = str(err)
            return None
        if resolution is None:
            return None
        chosen = resolution.definition
        if not chosen.valid or (not self._catalog and chosen.origin == "catalog"):
            return None
        if chosen.origin == "catalog":
            # one Karta object per built-in across events: the engine prepares it once
            with self._lock:
                return self._builtin.setdefault(chosen.name, chosen.karta)
        return chosen.karta

    def kartas(self) -> list[Karta]:
        """Every definition in force: per root GVK, the one :meth:`resolve` answers."""
        definitions = self._current()
        gvks = {d.gvk for d in definitions.all() if d.gvk is not None and d.gvk.kind}
        out: list[Karta] = []
        for gvk in sorted(gvks, key=str):
            karta = self.resolve(gvk.api_version, gvk.kind)
            if karta is not None and all(karta is not k for k in out):
                out.append(karta)
        return out
