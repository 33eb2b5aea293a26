"""Which Karta describes a workload type: the built-in catalog, overridden by the cluster's.

Seed with the catalog (origin ``catalog``), then list ``run.ai/v1alpha1 kartas``; a cluster Karta
replaces the catalog's definition of the same root GVK wholesale (origin ``cluster``). Any
failure to read the cluster degrades to the catalog with a warning, never an error: the
catalog alone is still a useful answer.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from workload_map.cluster.errors import ApiError, ClusterError, Forbidden, NotFound
from workload_map.errors import WlmapError

if TYPE_CHECKING:
    from workload_map.cluster.client import Cluster
    from workload_map.model import GVK, Karta

__all__ = [
    "KARTAS_PATH",
    "AmbiguousDefinition",
    "Definition",
    "Definitions",
    "catalog_definition",
    "gvk_text",
]

KARTAS_PATH = "/apis/run.ai/v1alpha1/kartas"


def gvk_text(gvk: GVK) -> str:
    """``group/version, Kind=kind`` as users read it: ``v1, Kind=Pod`` for the core group
    (Go's ``GroupVersionKind.String()`` would print ``/v1``)."""
    return f"{gvk.api_version}, Kind={gvk.kind}"


class AmbiguousDefinition(WlmapError):
    """Several cluster Kartas claim the same GVK."""


@dataclass(frozen=True)
class Definition:
    """One usable definition and where it came from."""

    karta: Karta
    name: str
    origin: str  # "catalog", "cluster" or "file"
    raw: dict[str, Any] | None = None  # the object as stored; None: dump the model on demand

    @property
    def source(self) -> dict[str, Any]:
        """The definition as a Karta object (what ``-o json|yaml`` prints)."""
        if self.raw is not None:
            return self.raw
        from workload_map.model import dump_karta

        return dump_karta(self.karta)

    @property
    def gvk(self) -> GVK | None:
        return self.karta.root_gvk

    @property
    def kind(self) -> str | None:
        gvk = self.gvk
        return gvk.kind if gvk and gvk.kind else None

    def gvk_key(self) -> str:
        gvk = self.gvk
        return str(gvk) if gvk else ""


def _sort_key(d: Definition) -> tuple[bool, str, str]:
    gvk = d.gvk
    complete = gvk is not None and bool(gvk.version) and bool(gvk.kind)
    return (not complete, d.gvk_key(), d.name)


class Definitions:
    """The merged set of definitions plus the warnings gathered while building it."""

    def __init__(self, items: Iterable[Definition], warnings: Iterable[str] = ()) -> None:
        self._items = sorted(items, key=_sort_key)
        self.warnings = list(warnings)

    @classmethod
    def load(cls, cluster: Cluster | None, *, page_size: int = 500) -> Definitions:
        """Catalog definitions, replaced per GVK by the cluster's Kartas when one is given."""
        warnings: list[str] = []
        seeds = _catalog_definitions()
        if cluster is None:
            return cls(seeds)
        cluster_defs = _cluster_definitions(cluster, warnings, page_size)
        claimed = {d.gvk for d in cluster_defs if d.gvk is not None}
        merged = [d for d in seeds if d.gvk not in claimed] + cluster_defs
        by_gvk: dict[GVK, list[str]] = {}
        for d in cluster_defs:
            if d.gvk is not None:
                by_gvk.setdefault(d.gvk, []).append(d.name)
        for gvk, names in sorted(by_gvk.items(), key=lambda kv: str(kv[0])):
            if len(names) > 1:
                warnings.append(
                    f"{len(names)} cluster Karta definitions claim {gvk_text(gvk)}: "
                    + ", ".join(sorted(names))
                )
        return cls(merged, warnings)

    def all(self) -> list[Definition]:
        """Sorted by GVK string then name; definitions lacking a version or kind last."""
        return list(self._items)

    def resolve(self, gvk: GVK) -> Definition | None:
        """The definition of exactly this GVK; :class:`AmbiguousDefinition` when several."""
        found = [d for d in self._items if d.gvk == gvk]
        if len(found) > 1:
            names = ", ".join(sorted(d.name for d in found))
            raise AmbiguousDefinition(
                f"{len(found)} Karta definitions claim {gvk_text(gvk)} ({names}); "
                "delete all but one"
            )
        return found[0] if found else None

    def for_group_kind(self, group: str, kind: str) -> list[Definition]:
        """Definitions of this group/kind at any version."""
        return [d for d in self._items if d.gvk and d.gvk.group == group and d.gvk.kind == kind]

    def by_root_kind(
        self, kind: str, group: str | None = None, version: str | None = None
    ) -> list[Definition]:
        """Definitions whose root Kind matches case-insensitively, optionally narrowed."""
        kind = kind.lower()
        out = []
        for d in self._items:
            gvk = d.gvk
            if gvk is None or gvk.kind.lower() != kind:
                continue
            if group is not None and gvk.group != group:
                continue
            if version is not None and gvk.version != version:
                continue
            out.append(d)
        return out

    def by_name(self, name: str) -> Definition | None:
        """The definition with this exact name, the cluster's preferred."""
        found = [d for d in self._items if d.name == name]
        found.sort(key=lambda d: d.origin != "cluster")
        return found[0] if found else None

    def kinds(self) -> list[str]:
        """Every root Kind covered (for suggestions and completion)."""
        return sorted({d.kind for d in self._items if d.kind})


def _catalog_definitions() -> list[Definition]:
    from workload_map.catalog import catalog

    return [Definition(karta, karta.name or "", "catalog") for karta in catalog.list()]


def catalog_definition(gvk: GVK) -> tuple[Definition | None, list[Definition]]:
    """Offline fast path: the catalog's definition of exactly ``gvk`` (else None) and those of
    the same group/kind at other versions, loading only the files that can match."""
    from workload_map.catalog import catalog

    exact = catalog.get(gvk.group, gvk.version, gvk.kind)
    if exact is not None:
        return Definition(exact, exact.name or "", "catalog"), []
    others = [Definition(k, k.name or "", "catalog") for k in catalog.find(gvk.group, gvk.kind)]
    return None, others


def _cluster_definitions(cluster: Cluster, warnings: list[str], page_size: int) -> list[Definition]:
    from workload_map.model import load_karta

    items: list[dict[str, Any]] = []
    token: str | None = None
    try:
        while True:
            query = [("limit", str(page_size))] + ([("continue", token)] if token else [])
            doc = cluster.transport.get(KARTAS_PATH, query)
            items.extend(i for i in doc.get("items") or [] if isinstance(i, dict))
            token = (doc.get("metadata") or {}).get("continue") or None
            if not token:
                break
    except NotFound:
        warnings.append("the kartas.run.ai CRD is not installed; showing built-in definitions only")
        return []
    except Forbidden:
        warnings.append(
            "not allowed to list Karta definitions (kartas.run.ai) in this cluster; showing "
            "built-in definitions only (ask for the `list` verb on kartas.run.ai)"
        )
        return []
    except (ApiError, ClusterError) as exc:
        warnings.append(f"could not read Karta definitions from the cluster: {exc}")
        return []
    out = []
    for item in items:
        item = {"apiVersion": "run.ai/v1alpha1", "kind": "Karta", **item}
        name = str((item.get("metadata") or {}).get("name") or "")
        try:
            karta = load_karta(item)
        except (WlmapError, ValueError, TypeError, KeyError) as exc:
            warnings.append(f'skipping Karta definition "{name}": {exc}')
            continue
        if not isinstance(karta, _karta_type()):
            warnings.append(f'skipping Karta definition "{name}": not a single Karta')
            continue
        if karta.root_gvk is None or not karta.root_gvk.kind:
            warnings.append(f'skipping Karta definition "{name}": its root component has no kind')
            continue
        out.append(Definition(karta, name, "cluster", item))
    return out


def _karta_type() -> type:
    from workload_map.model import Karta

    return Karta
