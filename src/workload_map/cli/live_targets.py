"""TYPE resolution against a cluster: a TYPE token is matched like kubectl does (plural,
singular, short name, kind, ``kind.version.group``, ``resource.group``) against discovery, then
tied to a definition (exact GVK first, then the same group/kind at another version). Tokens
discovery does not know are matched against the definitions' kinds: the type is then covered
but not installed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from workload_map.catalog.registry import version_priority
from workload_map.catalog.resolution import resolve_gvk
from workload_map.cli.exits import AMBIGUOUS, CliError, UsageError
from workload_map.cli.targets import (
    NotInstalled,
    Target,
    definition_kind_match,
    no_definition_error,
    type_candidates,
)
from workload_map.kube.errors import ApiError
from workload_map.model import GVK

if TYPE_CHECKING:
    from workload_map.catalog.definitions import Definitions
    from workload_map.kube.client import Cluster
    from workload_map.kube.discovery import APIResource

__all__ = ["ambiguous_name_error", "covered_targets", "find_by_name", "resolve_type"]


def resolve_type(
    token: str, cluster: Cluster, definitions: Definitions, *, warn: Any = None
) -> Target:
    """The served resource and definition a TYPE token means; raises :class:`CliError`
    (usage for ambiguity, 3 via :class:`NotInstalled`, 4 when nothing covers it)."""

    matches = cluster.match_type(token)
    if not matches:
        covered = definition_kind_match(token, definitions)
        if covered:
            raise NotInstalled(covered[0].kind or token)
        raise no_definition_error(
            type_token=token, candidates=type_candidates(cluster, definitions)
        )
    group_kinds = sorted({(r.group, r.kind) for r in matches})
    if len(group_kinds) > 1:
        covered_gks = [gk for gk in group_kinds if definitions.for_group_kind(*gk)]
        if len(covered_gks) == 1:
            group_kinds = covered_gks
        else:
            options = sorted(
                {r.qualified for r in matches if r.preferred} or {r.qualified for r in matches}
            )
            raise UsageError(
                f'the type "{token}" is ambiguous: it names '
                + ", ".join(f"{k}.{g}" if g else k for g, k in group_kinds),
                hint="use one of: " + ", ".join(options),
            )
    group, kind = group_kinds[0]
    served = [r for r in matches if (r.group, r.kind) == (group, kind)]
    served.sort(key=lambda r: (not r.preferred, version_priority(r.version)))
    return _target(group, kind, served, definitions, warn)


def _target(
    group: str, kind: str, served: list[APIResource], definitions: Definitions, warn: Any
) -> Target:
    """The served version (in ``served``'s order) a definition covers exactly, else the first
    one with the fallback definition (and its warning); exit 4 when nothing covers the kind."""

    wanted = GVK(group, served[0].version, kind)
    found = resolve_gvk(wanted, definitions, other_versions=[r.version for r in served[1:]])
    if found is None:
        raise no_definition_error(gvk=wanted)
    if warn is not None and found.note:
        warn(found.note)
    res = next(r for r in served if r.version == found.wanted.version)
    return Target(res, found.definition)


def covered_targets(cluster: Cluster, definitions: Definitions) -> list[Target]:
    """One served resource per covered group/kind (the version with an exact definition)."""

    # Every covered kind the server serves: a kind missing from a disk-cached discovery may
    # have been installed since, so this sweep reads discovery from the server (once).
    cluster.resources(fresh=True)
    out = []
    seen: set[tuple[str, str]] = set()
    for d in definitions.all():
        gvk = d.gvk
        if gvk is None or (gvk.group, gvk.kind) in seen:
            continue
        served = cluster.served_versions(gvk.group, gvk.kind)
        if not served:
            continue
        seen.add((gvk.group, gvk.kind))
        served.sort(key=lambda r: version_priority(r.version))
        out.append(_target(gvk.group, gvk.kind, served, definitions, None))
    return out


def find_by_name(
    name: str, cluster: Cluster, definitions: Definitions
) -> list[tuple[Target, dict[str, Any]]]:
    """Every covered workload called ``name`` in the current namespace (bare-name lookup)."""

    found = []
    for target in covered_targets(cluster, definitions):
        ns = cluster.namespace if target.resource.namespaced else None
        try:
            found.append((target, cluster.get(target.resource, name, ns)))
        except ApiError:
            continue
    return found


def ambiguous_name_error(
    name: str, found: list[tuple[Target, dict[str, Any]]], verb: str
) -> CliError:
    """Exit 5: a bare name that several workloads carry."""

    names = ", ".join(f"{t.resource.kind.lower()}/{name}" for t, _ in found)
    first = found[0][0].resource.kind.lower()
    return CliError(
        f'the name "{name}" matches several workloads: {names}',
        AMBIGUOUS,
        hint=f"give the TYPE too, e.g. wlmap {verb} {first}/{name}",
    )
