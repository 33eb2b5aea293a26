"""The built-in catalog in the cluster: install and uninstall as Karta objects.

Installed copies are server-side applied with one field manager and carry the catalog's
version and a digest of their spec in annotations, so a stale copy is recognisable (by
``wlmap definitions install`` and by the operator's ``Catalog`` condition). A user's own Karta
is never clobbered: one of the same name is taken over only with ``force``, one of another
name for the same GVK is always left alone (``force`` never deletes), and uninstall only
removes copies that carry the catalog annotations.

Cluster access shared by two rooms: the CLI's ``wlmap definitions install|uninstall`` and the
operator's ``--install-catalog`` controller (:mod:`workload_map.operator.catalog_installer`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from workload_map import __version__
from workload_map.catalog import catalog
from workload_map.catalog.stamps import (
    CATALOG_DIGEST_ANNOTATION,
    CATALOG_VERSION_ANNOTATION,
    catalog_digest,
    copy_stamp,
    derived_labels,
    root_gvk,
)
from workload_map.errors import WlmapError
from workload_map.kube.discovery import discover
from workload_map.kube.errors import ApiError, NotFound
from workload_map.kube.pager import list_all

if TYPE_CHECKING:
    from workload_map.kube.api import Api

__all__ = [
    "FIELD_MANAGER",
    "InstallResult",
    "UnknownDefinition",
    "install",
    "installable",
    "served_gvks",
    "uninstall",
]

FIELD_MANAGER = "workload-map-catalog"
KARTAS = "/apis/run.ai/v1alpha1/kartas"


class UnknownDefinition(WlmapError):
    """A name given to install/uninstall is not a built-in definition."""


@dataclass(frozen=True)
class InstallResult:
    name: str
    # created, updated, unchanged, skipped, deleted, absent, failed; not-served: the cluster
    # serves no such kind (installed later, once its CRD is there)
    action: str
    detail: str = ""

    @property
    def failed(self) -> bool:
        return self.action == "failed"

    def __str__(self) -> str:
        return f"{self.name}: {self.action}" + (f" ({self.detail})" if self.detail else "")


def installable(names: Iterable[str] = (), *, all_: bool = False) -> list[dict[str, Any]]:
    """The catalog objects to apply, with labels and catalog annotations."""

    objects = {o["metadata"]["name"]: o for o in catalog.as_cluster_objects()}
    wanted = sorted(objects) if all_ else list(dict.fromkeys(names))
    unknown = [n for n in wanted if n not in objects]
    if unknown:
        raise UnknownDefinition(
            f"not a built-in definition: {', '.join(unknown)} (see `wlmap definitions`)"
        )
    out = []
    for name in wanted:
        obj = objects[name]
        meta = obj["metadata"]
        meta["labels"] = {**(meta.get("labels") or {}), **(derived_labels(obj) or {})}
        meta["annotations"] = {
            **(meta.get("annotations") or {}),
            CATALOG_VERSION_ANNOTATION: __version__,
            CATALOG_DIGEST_ANNOTATION: catalog_digest(obj),
        }
        out.append(obj)
    return out


def served_gvks(api: Api) -> set[tuple[str, str, str]]:
    """(group, version, kind) of every resource the cluster serves (discovery)."""
    return {(r.group, r.version, r.kind) for r in discover(api.transport())}


def _list_kartas(api: Api) -> list[dict[str, Any]]:
    return list_all(api.transport(), KARTAS, what="kartas.run.ai")[0]


def install(
    api: Api,
    names: Iterable[str] = (),
    *,
    all_: bool = False,
    dry_run: bool = False,
    force: bool = False,
    served: set[tuple[str, str, str]] | None = None,
) -> list[InstallResult]:
    """Apply the named (or all) built-in definitions; one result per definition. ``served``
    (from :func:`served_gvks`): only definitions of a kind the cluster serves are applied,
    the others come back ``not-served`` (a Karta of a kind without its CRD only says
    CRDNotFound until the CRD comes)."""
    wanted = installable(names, all_=all_)
    results: list[InstallResult] = []
    if served is not None:
        kept = []
        for obj in wanted:
            gvk = root_gvk(obj)
            if gvk is None or gvk in served:
                kept.append(obj)
                continue
            group, version, kind = gvk
            results.append(
                InstallResult(obj["metadata"]["name"], "not-served", f"{kind}.{version}.{group}")
            )
        wanted = kept
    existing = _list_kartas(api)
    by_name = {k["metadata"]["name"]: k for k in existing}
    for obj in wanted:
        name = obj["metadata"]["name"]
        gvk = root_gvk(obj)
        rivals = sorted(
            k["metadata"]["name"]
            for k in existing
            if k["metadata"]["name"] != name and root_gvk(k) == gvk
        )
        if rivals:
            results.append(
                InstallResult(
                    name,
                    "skipped",
                    f"Karta {', '.join(rivals)} already defines this type; it is kept "
                    "(delete it first to use the built-in definition)",
                )
            )
            continue
        current = by_name.get(name)
        notes = ""
        if current is not None:
            stamp = copy_stamp(current)
            if stamp is None and not force:
                results.append(
                    InstallResult(
                        name,
                        "skipped",
                        "a Karta of this name exists and is not a catalog copy "
                        "(--force takes it over)",
                    )
                )
                continue
            if stamp is not None and stamp.is_current(obj):
                if stamp.version == obj["metadata"]["annotations"][CATALOG_VERSION_ANNOTATION]:
                    results.append(InstallResult(name, "unchanged"))
                    continue
            elif stamp is not None:
                notes = f"stale copy from workload-map {stamp.version or '?'}"
            else:
                notes = "took over a user's Karta of this name (--force)"
        try:
            api.apply(
                f"{KARTAS}/{name}",
                obj,
                FIELD_MANAGER,
                force=force or current is not None,
                dry_run=dry_run,
            )
        except ApiError as exc:
            results.append(InstallResult(name, "failed", exc.detail or str(exc)))
            continue
        action = "created" if current is None else "updated"
        if dry_run:
            notes = "; ".join(x for x in (notes, "dry run") if x)
        results.append(InstallResult(name, action, notes))
    return results


def uninstall(
    api: Api, names: Iterable[str] = (), *, all_: bool = False, dry_run: bool = False
) -> list[InstallResult]:
    """Delete installed catalog copies; a Karta without the catalog annotations is kept."""
    wanted = [o["metadata"]["name"] for o in installable(names, all_=all_)]
    results = []
    for name in wanted:
        try:
            current = api.get(f"{KARTAS}/{name}")
        except NotFound:
            results.append(InstallResult(name, "absent"))
            continue
        if copy_stamp(current) is None:
            results.append(InstallResult(name, "skipped", "not a catalog copy; kept"))
            continue
        query = [("dryRun", "All")] if dry_run else []
        try:
            api.request("DELETE", f"{KARTAS}/{name}", query=query)
        except NotFound:
            results.append(InstallResult(name, "absent"))
            continue
        except ApiError as exc:
            results.append(InstallResult(name, "failed", exc.detail or str(exc)))
            continue
        results.append(InstallResult(name, "deleted", "dry run" if dry_run else ""))
    return results
