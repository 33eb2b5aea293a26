"""Which Karta describes a workload type: the built-in catalog, overridden by the cluster's.

This module is the data and the merge rule only, so offline commands use it without cluster
code: reading the cluster's Karta objects is :func:`workload_map.cluster.definitions.load`.

The catalog is the seed (origin ``catalog``); the cluster's ``run.ai/v1alpha1 kartas`` replace
the catalog's definition of the same root GVK wholesale (origin ``cluster``). Failing to read
the cluster degrades to the catalog with a warning, never an error: the catalog alone is still
a useful answer.

A cluster Karta that does not load or does not validate is kept, flagged (``problem``): where
the catalog covers its GVK the catalog's definition stands in and a warning says so (its
``note``); where it does not, the broken definition is what resolves, so a command shows the
workloads with the error instead of hiding them. ``broken`` lists them for ``wlmap
definitions``.

Catalog files are parsed only for the group/kinds a command asks about (a live ``get TYPE``
touches one file, not fifty); listing every definition loads them all.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import msgspec

from workload_map.catalog import catalog
from workload_map.catalog.stamps import copy_stamp
from workload_map.errors import WlmapError
from workload_map.model import GVK, Karta, dump_karta, load_karta

__all__ = [
    "AmbiguousDefinition",
    "BrokenKarta",
    "Definition",
    "Definitions",
    "gvk_text",
    "parse_cluster_kartas",
]


def gvk_text(gvk: GVK) -> str:
    """``group/version, Kind=kind`` as users read it: ``v1, Kind=Pod`` for the core group
    (Go's ``GroupVersionKind.String()`` would print ``/v1``)."""
    return f"{gvk.api_version}, Kind={gvk.kind}"


class AmbiguousDefinition(WlmapError):
    """Several cluster Kartas claim the same GVK."""


class Definition(msgspec.Struct, frozen=True):
    """One definition and where it came from.

    ``problem``: why this cluster Karta cannot be used (invalid); ``note``: set on a catalog
    definition standing in for a broken cluster Karta of the same GVK.
    """

    karta: Karta
    name: str
    origin: str  # "catalog", "cluster" or "file"
    raw: dict[str, Any] | None = None  # the object as stored; None: dump the model on demand
    problem: str | None = None
    note: str | None = None
    stale: str | None = None  # a cluster copy of a built-in that is older than it: why

    @property
    def source(self) -> dict[str, Any]:
        """The definition as a Karta object (what ``-o json|yaml`` prints)."""
        if self.raw is not None:
            return self.raw
        return dump_karta(self.karta)

    @property
    def gvk(self) -> GVK | None:
        return self.karta.root_gvk

    @property
    def kind(self) -> str | None:
        gvk = self.gvk
        return gvk.kind if gvk and gvk.kind else None

    @property
    def valid(self) -> bool:
        return self.problem is None

    def gvk_key(self) -> str:
        gvk = self.gvk
        return str(gvk) if gvk else ""


class BrokenKarta(msgspec.Struct, frozen=True):
    """A cluster Karta that could not be used, with the reason (``wlmap definitions`` flags it)."""

    name: str
    problem: str
    gvk: str | None = None  # its root GVK as ``group/version, Kind=kind`` when readable
    raw: dict[str, Any] | None = None


def _sort_key(d: Definition) -> tuple[bool, str, str]:
    gvk = d.gvk
    complete = gvk is not None and bool(gvk.version) and bool(gvk.kind)
    return (not complete, d.gvk_key(), d.name)


class Definitions:
    """The merged set of definitions plus the warnings gathered while building it.

    Built from explicit ``items`` it is exactly those; :meth:`load` builds a lazy one whose
    catalog part is read per group/kind on demand.
    """

    def __init__(
        self,
        items: Iterable[Definition],
        warnings: Iterable[str] = (),
        *,
        broken: Iterable[BrokenKarta] = (),
    ) -> None:
        self._items: list[Definition] | None = sorted(items, key=_sort_key)
        self._cluster: list[Definition] = []
        self._lazy = False
        self._catalog_gks: set[tuple[str, str]] = set()
        self._catalog: dict[tuple[str, str], list[Definition]] = {}
        self.warnings = list(warnings)
        self.broken = list(broken)
        self.degraded = False  # a resolved definition was invalid or stood in for one
        self.used: list[Definition] = []  # what resolve() answered, in order
        self._notices: set[str | None] = set()  # notes that only inform (stale copies)

    @classmethod
    def builtin(cls) -> Definitions:
        """The catalog's definitions, read per group/kind on demand (no cluster)."""
        out = cls(())
        out._lazy = True
        out._items = None
        return out

    @classmethod
    def from_objects(cls, items: Iterable[dict[str, Any]]) -> Definitions:
        """The catalog replaced per GVK by these cluster Karta objects (a list or a watch's
        cache)."""
        return cls.from_parsed(*parse_cluster_kartas(items))

    @classmethod
    def from_parsed(
        cls,
        definitions: Iterable[Definition],
        broken: Iterable[BrokenKarta] = (),
        warnings: Iterable[str] = (),
    ) -> Definitions:
        """As :meth:`from_objects`, from what :func:`parse_cluster_kartas` made of them (a
        watch parses each object once, when it changes)."""
        out = cls((), warnings, broken=broken)
        out._lazy = True
        out._items = None
        out._adopt(list(definitions))
        return out

    def _adopt(self, cluster_defs: list[Definition]) -> None:
        """Take the cluster's definitions (over the lazy catalog); warn on shared GVKs."""
        self._cluster = cluster_defs
        by_gvk: dict[GVK, list[str]] = {}
        for d in cluster_defs:
            if d.gvk is not None:
                by_gvk.setdefault(d.gvk, []).append(d.name)
        for gvk, names in sorted(by_gvk.items(), key=lambda kv: str(kv[0])):
            if len(names) > 1:
                self.warnings.append(
                    f"{len(names)} cluster Karta definitions claim {gvk_text(gvk)}: "
                    + ", ".join(sorted(names))
                )

    # -- the lazy catalog ---------------------------------------------------------------------
    def _group_kind(self, group: str, kind: str) -> list[Definition]:
        """Every definition of ``group``/``kind`` (cluster ones replacing catalog ones)."""
        if not self._lazy:
            items = self._items or []
            return [d for d in items if d.gvk and d.gvk.group == group and d.gvk.kind == kind]
        key = (group, kind)
        if key not in self._catalog:
            self._catalog[key] = self._merge(_catalog_group_kind(group, kind), group, kind)
        return self._catalog[key]

    def _merge(self, seeds: list[Definition], group: str, kind: str) -> list[Definition]:
        mine = [d for d in self._cluster if d.gvk and d.gvk.group == group and d.gvk.kind == kind]
        out = list(mine)
        for seed in seeds:
            claims = [d for d in mine if d.gvk == seed.gvk]
            stale = [_stale_copy(d, seed) for d in claims if d.valid]
            if stale and all(stale):
                # never silently prefer an outdated copy of the catalog over the catalog
                stale_claims = [
                    Definition(d.karta, d.name, d.origin, d.raw, stale=why)
                    for d, why in zip([d for d in claims if d.valid], stale, strict=True)
                ]
                out = [d for d in out if all(d is not c for c in claims)]
                out += stale_claims + [d for d in claims if not d.valid]
                notice = "; ".join(d.stale or "" for d in stale_claims)
                out.append(Definition(seed.karta, seed.name, seed.origin, seed.raw, note=notice))
                self._notices.add(notice)
            elif not claims:
                out.append(seed)
            elif all(not d.valid for d in claims):
                names = ", ".join(f'"{d.name}"' for d in claims)
                note = (
                    f"cluster Karta {names} for {gvk_text(seed.gvk)} is invalid "  # type: ignore[arg-type]
                    f"({claims[0].problem}); using the built-in catalog definition {seed.name}"
                )
                out.append(Definition(seed.karta, seed.name, seed.origin, seed.raw, note=note))
        return sorted(out, key=_sort_key)

    def _everything(self) -> list[Definition]:
        if self._items is None:
            seeds = _catalog_definitions()
            gks = sorted({(d.gvk.group, d.gvk.kind) for d in seeds if d.gvk is not None})
            gks += sorted(
                {(d.gvk.group, d.gvk.kind) for d in self._cluster if d.gvk is not None} - set(gks)
            )
            items: list[Definition] = []
            for group, kind in gks:
                if (group, kind) not in self._catalog:
                    own = [
                        d for d in seeds if d.gvk and d.gvk.group == group and d.gvk.kind == kind
                    ]
                    self._catalog[(group, kind)] = self._merge(own, group, kind)
                items.extend(self._catalog[(group, kind)])
            items.extend(d for d in self._cluster if d.gvk is None)
            self._items = sorted(items, key=_sort_key)
        return self._items

    # -- queries ------------------------------------------------------------------------------
    def all(self) -> list[Definition]:
        """Sorted by GVK string then name; definitions lacking a version or kind last."""
        return list(self._everything())

    def resolve(self, gvk: GVK) -> Definition | None:
        """The definition of exactly this GVK; :class:`AmbiguousDefinition` when several valid
        ones claim it. An invalid cluster Karta resolves only where no catalog one stands in."""
        found = [d for d in self._group_kind(gvk.group, gvk.kind) if d.gvk == gvk]
        usable = [d for d in found if d.valid and not d.stale] or found
        if len(usable) > 1:
            names = ", ".join(sorted(d.name for d in usable))
            raise AmbiguousDefinition(
                f"{len(usable)} Karta definitions claim {gvk_text(gvk)} ({names}); "
                "delete all but one"
            )
        chosen = usable[0] if usable else None
        if chosen is not None and all(chosen is not d for d in self.used):
            self.used.append(chosen)
        if chosen is not None and chosen.note in self._notices:  # a stale copy set aside
            if chosen.note not in self.warnings:
                self.warnings.append(str(chosen.note))
        elif chosen is not None and (chosen.note or chosen.problem):
            # the command's answer rests on a broken cluster Karta: say so, and exit non-zero
            self.degraded = True
            message = chosen.note or (
                f'cluster Karta "{chosen.name}" for {gvk_text(gvk)} is invalid '
                f"({chosen.problem}) and the catalog does not cover {gvk.kind}; its workloads "
                "are shown with the error"
            )
            if message not in self.warnings:
                self.warnings.append(message)
        return chosen

    def for_group_kind(self, group: str, kind: str) -> list[Definition]:
        """Definitions of this group/kind at any version."""
        return list(self._group_kind(group, kind))

    def by_root_kind(
        self, kind: str, group: str | None = None, version: str | None = None
    ) -> list[Definition]:
        """Definitions whose root Kind matches case-insensitively, optionally narrowed."""
        kind = kind.lower()
        out = []
        for d in self._everything():
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
        found = [d for d in self._everything() if d.name == name]
        found.sort(key=lambda d: d.origin != "cluster")
        return found[0] if found else None

    def kinds(self) -> list[str]:
        """Every root Kind covered (for suggestions and completion)."""
        return sorted({d.kind for d in self._everything() if d.kind})


def _catalog_definitions() -> list[Definition]:
    return [Definition(karta, karta.name or "", "catalog") for karta in catalog.list()]


def _catalog_group_kind(group: str, kind: str) -> list[Definition]:
    return [Definition(k, k.name or "", "catalog") for k in catalog.find(group, kind)]


def _stale_copy(cluster_def: Definition, seed: Definition) -> str | None:
    """Why a cluster Karta installed from the catalog (it carries the catalog digest
    annotation) is outdated against this release's built-in ``seed``; None when current or
    the user's own definition (no annotation)."""
    stamp = copy_stamp(cluster_def.raw or {})
    if stamp is None:
        return None
    built_in = catalog.document(seed.name)
    if built_in is None or stamp.is_current(built_in):
        return None
    version = stamp.version or "an older release"
    return (
        f'cluster Karta "{cluster_def.name}" is a stale copy of the built-in definition '
        f"{seed.name} (installed from workload-map {version}); using the built-in; "
        f"run wlmap definitions install {seed.name}"
    )


def _raw_gvk(item: dict[str, Any]) -> str | None:
    try:
        kind = item["spec"]["structureDefinition"]["rootComponent"]["kind"]
        text = f"{kind.get('group') or ''}/{kind['version']}".lstrip("/")
        return f"{text}, Kind={kind['kind']}"
    except (KeyError, TypeError, AttributeError):
        return None


def _problem_text(findings: list[Any]) -> str:
    first = findings[0]
    where = f"{first.path}: " if getattr(first, "path", "") else ""
    more = f" (and {len(findings) - 1} more)" if len(findings) > 1 else ""
    return f"{where}{first.message}{more}"


def parse_cluster_kartas(
    items: Iterable[dict[str, Any]],
) -> tuple[list[Definition], list[BrokenKarta], list[str]]:
    """Cluster Karta objects as (definitions, unusable ones, warnings)."""
    warnings: list[str] = []
    broken: list[BrokenKarta] = []
    return _parse_definitions(items, warnings, broken), broken, warnings


def _parse_definitions(
    items: Iterable[dict[str, Any]], warnings: list[str], broken: list[BrokenKarta]
) -> list[Definition]:
    """Cluster Karta objects as definitions: unloadable ones only in ``broken``, invalid ones
    flagged (``problem``)."""
    items = list(items)
    if not items:
        return []
    # start-up boundary: the validator (model.validation) loads only when the cluster holds
    # Kartas (tests/cli/test_startup.py: get and describe never load it otherwise)
    from workload_map.model import validate

    out = []
    for item in items:
        item = {"apiVersion": "run.ai/v1alpha1", "kind": "Karta", **item}
        name = str((item.get("metadata") or {}).get("name") or "")
        try:
            karta = load_karta(item)
        # the loader reports every malformed field as a KartaLoadError (fuzzed in
        # tests/model/test_fuzz.py); anything else is a bug and surfaces as one
        except (WlmapError, RecursionError) as exc:
            problem = str(exc) or type(exc).__name__
            broken.append(BrokenKarta(name, problem, _raw_gvk(item), item))
            warnings.append(f'cluster Karta "{name}" cannot be loaded: {problem}')
            continue
        if not isinstance(karta, _karta_type()):
            broken.append(BrokenKarta(name, "not a single Karta", _raw_gvk(item), item))
            warnings.append(f'cluster Karta "{name}" cannot be loaded: not a single Karta')
            continue
        if karta.root_gvk is None or not karta.root_gvk.kind:
            problem = "its root component has no kind"
            broken.append(BrokenKarta(name, problem, None, item))
            warnings.append(f'cluster Karta "{name}" cannot be used: {problem}')
            continue
        invalid: str | None
        try:
            errors = [f for f in validate(karta) if f.is_error]
        except RecursionError:
            invalid = "the definition nests too deeply"
        else:
            invalid = _problem_text(errors) if errors else None
        if invalid is not None:
            broken.append(BrokenKarta(name, invalid, gvk_text(karta.root_gvk), item))
        out.append(Definition(karta, name, "cluster", item, problem=invalid))
    return out


def _karta_type() -> type:
    return Karta
