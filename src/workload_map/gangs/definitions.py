"""Which Karta describes a kind, for the gang room: the cluster's Kartas, then the catalog.

The CLI resolves definitions the same way (``cluster.definitions``); here the cluster's Kartas
arrive through a watch, so the index is fed event by event and answers from memory (the pod
webhook asks on every request). A cluster Karta that fails validation is not used; the
catalog's definition of that kind, if any, keeps serving it.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from workload_map.errors import WlmapError
from workload_map.model import Karta

__all__ = ["KartaIndex", "has_gangs"]


def has_gangs(karta: Karta | None) -> bool:
    gang = karta.gang_scheduling if karta is not None else None
    return gang is not None and (gang.pod_group is not None or bool(gang.pod_groups))


class KartaIndex:
    """Cluster Kartas by root (apiVersion, kind), over the built-in catalog; thread-safe."""

    def __init__(self, *, catalog: bool = True) -> None:
        self._lock = threading.Lock()
        self._by_name: dict[str, tuple[str, str, Karta] | None] = {}
        self._by_gvk: dict[tuple[str, str], Karta] = {}
        self._catalog = catalog
        self.errors: dict[str, str] = {}
        self.generation = 0
        self._from_catalog: dict[tuple[str, str], Karta | None] = {}

    def apply(self, event: str, obj: Mapping[str, Any]) -> None:
        from workload_map.model import load_karta, validate

        name = str((obj.get("metadata") or {}).get("name") or "")
        with self._lock:
            self._by_name.pop(name, None)
            self.errors.pop(name, None)
            if event != "DELETED":
                try:
                    karta = load_karta(dict(obj))
                    problems = [f for f in validate(karta) if f.severity == "error"]
                except WlmapError as err:
                    self.errors[name] = str(err)
                else:
                    gvk = karta.root_gvk
                    if problems:
                        self.errors[name] = "; ".join(f"{f.path}: {f.message}" for f in problems)
                    elif gvk is not None:
                        self._by_name[name] = (gvk.api_version, gvk.kind, karta)
            self._by_gvk = {
                (entry[0], entry[1]): entry[2]
                for _, entry in sorted(self._by_name.items())
                if entry is not None
            }
            self.generation += 1

    def resolve(self, api_version: str, kind: str) -> Karta | None:
        found = self._by_gvk.get((api_version, kind))
        if found is not None or not self._catalog:
            return found
        key = (api_version, kind)
        if key not in self._from_catalog:
            from workload_map.catalog import catalog

            # one Karta object per kind: the engine prepares (parses, indexes) it once
            hit = catalog.resolve(api_version, kind)
            self._from_catalog[key] = hit[0] if hit is not None else None
        return self._from_catalog[key]

    def kartas(self) -> list[Karta]:
        """Every definition in force: the cluster's, then the catalog's not overridden."""
        out = list(self._by_gvk.values())
        if self._catalog:
            from workload_map.catalog import catalog

            for listed in catalog.list():
                gvk = listed.root_gvk
                if gvk is not None and (gvk.api_version, gvk.kind) not in self._by_gvk:
                    karta = self.resolve(gvk.api_version, gvk.kind)
                    out.append(karta if karta is not None else listed)
        return out
